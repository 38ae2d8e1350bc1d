"""A stage in words on its page: its two descriptions (`render.story.describe`), made once per
view and shared, and the long one written under the figure.

The long description is tied to its figure by the page's keyboard grids (aria-describedby, in
the browser: convviz/player/grid.js), and a still stage's arrival words ride with it (a stage
without a player: grid.js has the announcer say them when it is reached). One element a stage,
no widget.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import streamlit as st

from convviz.model.lecture import CHAIN_PAGE, Stage
from convviz.render.panel import Panel
from convviz.render.story.describe import Description, describe, grid_words
from convviz.render.story.subject import Subject
from convviz.ui.compute import shared_view
from convviz.ui.controls import Context


def told(ctx: Context, stage: Stage, subject: Subject | None = None) -> Description:
    """The stage described for this view (its layer, slice, selection and page settings)."""
    subject = subject or _subject(ctx, stage)
    fields = repr(sorted(ctx.state.items())), repr(sorted(subject.chain_fields.items()))
    key = ("told", stage.key, ctx.key, ctx.n, ctx.k, ctx.c, ctx.selection, *fields)
    return shared_view(key, lambda: describe(subject, stage))


def _subject(ctx: Context, stage: Stage) -> Subject:
    from convviz.ui.stage_view import subject_of  # the page's stage view: its subject

    subject = subject_of(ctx)
    if stage.page == CHAIN_PAGE:  # layer 2 as the page draws it (its fields, kept in the session)
        from convviz.ui.chain import LAST, OWN

        own = st.session_state.get(LAST) or st.session_state.get(OWN) or {}
        subject.chain_fields.update(own)
    return subject


def words_under(told: Description, chart: str, still: bool = False) -> None:
    """The long description under the figure drawn as `chart` (its key, `chart_…`); for a still
    stage, the words the announcer says when it is reached."""
    _words(told.long, chart, told.arrived if still else "")


def figure_in_words(
    chart: str, lead: str, panels: Sequence[Panel] = (), view: tuple | None = None
) -> None:
    """A figure that is no stage of the lecture in words under it (drawn as `chart`): what it
    shows (`lead`), then each of its grids' size and numbers (`describe.grid_words`); view: what
    the panels follow from, to make the words once for every session (`shared_view`)."""

    def words() -> str:
        return " ".join([lead.strip(), *(grid_words(p) for p in panels)])

    _words(words() if view is None else shared_view(("in words", chart, *view), words), chart)


def _words(long: str, chart: str, arrive: str = "") -> None:
    said = f' data-cv-arrive="{escape(arrive)}"' if arrive else ""
    st.html(
        f'<div class="cv-describe" data-cv-describes="{escape(chart)}"{said}>'
        f"<p><strong>In words.</strong> {escape(long)}</p></div>"
    )

"""One stage view: any stage of the lecture drawn on its page from the storyboard.

`stage_view(ctx, stage)` looks the stage's drawing up (`convviz.render.story.board`) and draws
it as the lecture's view says: a sliding window or a motion with the page's player (its PNG, SVG
and GIF downloads under it), or still grids (on a projector, the sum written under them). What
the drawings read is the page's `Subject`: its layer, slice and selected cell, with the app's
shared sweeps and formulas. A page keeps only what is its own (its header, the formula box, the
scatter route, close-ups, the gate's words).
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from convviz.model.lecture import LECTURE, Stage
from convviz.render.motion.frames import motion_figure
from convviz.render.motion.gif import motion_gif
from convviz.render.motion.model import gif_fits
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.story.board import StillDrawing, drawing
from convviz.render.story.subject import Subject, Sweeps
from convviz.ui.clicker import page_stages, stage_words
from convviz.ui.compute import (
    CACHE,
    formula_at,
    input_grad_formula_of,
    lean_sweep,
    shared_view,
    sweeps_for,
)
from convviz.ui.controls import Context
from convviz.ui.views import (
    FORMULA_LINES_PX,
    animated_chart,
    animation,
    chart,
    export_buttons,
    formula_lines,
    motion_captions,
    motion_start,
)


class _SharedSweeps(Mapping):
    """The sweeps of a layer a page leads to (layer 1 of two), shared by every session by the
    layer's key, each made lean when first asked for."""

    def __init__(self, s: Subject):
        self._s, self._lean = s, Sweeps(s, build=lean_sweep)

    def __getitem__(self, name: str):
        s = self._s
        return CACHE.get(("sweep", name, s.key, s.n, s.k, s.c), lambda: self._lean[name])

    def __iter__(self):
        return iter(self._lean)

    def __len__(self) -> int:
        return len(self._lean)


def subject_of(ctx: Context, **parts) -> Subject:
    """What the page's stages are drawn from: its layer, slice and selection, with the sweeps and
    formulas every session shares (`ui.compute`); parts: what the page made itself (the two
    layers' pass, the Learning page's experiment, layer 2's fields)."""

    def formula_of(kind: str, cell: tuple[int, int]):
        if kind == "grad_x_padded":
            return input_grad_formula_of(ctx.key, ctx.n, ctx.c, *cell, True)
        return formula_at(ctx.key, (kind, *cell), ctx.n, ctx.k, ctx.c)

    def sweeper(s: Subject) -> Mapping:  # the page's own layer's, else the one it leads to
        return sweeps_for(ctx.key, s.n, s.k, s.c) if s.key == ctx.key else _SharedSweeps(s)

    return Subject(ctx.layer, ctx.n, ctx.k, ctx.c, ctx.selection, state=ctx.state,
                   formula_of=formula_of, key=ctx.key, sweeper=sweeper, **parts)  # fmt: skip


WORDS_PX = 36  # a line of words under a still's grids on a projector (the selected cell's)


def _view_key(ctx: Context, stage: Stage, extra: tuple, *more) -> tuple:
    """What a stage's figure depends on: the layer, the slice, the selection, the screen, and
    what its page adds (layer 2's fields, the Learning page's settings)."""
    return (stage.key, ctx.key, ctx.n, ctx.k, ctx.c, ctx.selection, ctx.theme, extra, *more)


def _still_view(ctx: Context, stage: Stage, still: StillDrawing, extra: tuple, below: int) -> None:
    """Still grids; on a projector the sum under them, as a player writes it under a figure;
    the selected cell's numbers under them. below: px the page writes under them."""
    said = still.said or still.formula
    pres = not ctx.theme.show_secondary
    lines = still.words.count("\n") + 1 if still.words else 0
    room = below + (FORMULA_LINES_PX if pres and said else 0) + WORDS_PX * lines
    theme = ctx.theme.reserve(room) if room else ctx.theme
    panels = still.screen or still.panels
    build = lambda: panels_figure(panels, theme, highlight=still.highlight)  # noqa: E731
    fig = shared_view(("still", *_view_key(ctx, stage, extra, room)), build)
    with st.container(key="cv_screen_still"):  # on a projector, it ends the first screen
        chart(fig, f"stage_{stage.key}")
        if pres and said:
            formula_lines(said, ctx)
        if still.words:
            st.markdown(still.words)
    export_buttons(still.panels, ctx, stage.export, stage_words(stage, ctx)[0], still.formula,
                   highlight=still.highlight)  # fmt: skip


def _sweep_view(ctx: Context, stage: Stage, subject: Subject, extra: tuple) -> None:
    """A sliding window and its player, each frame's sum under it; its picture the still's."""
    drawn = drawing(subject, stage)
    sweep, still = drawn.sweep(subject), drawn.still(subject)
    start = sweep.start if sweep.start is not None else motion_start(ctx, sweep.sweep.steps)
    animation(ctx, sweep.sweep, list(sweep.panels), stage.export, stage_words(stage, ctx)[0],
              channel=sweep.channel, start=start, formula=still.formula,
              formula_of=sweep.formula_of, cell=sweep.cell, still=still.panels, stage=stage,
              words=sweep.words, view=extra)  # fmt: skip


def _follow(ctx: Context, stage: Stage) -> dict[str, int] | None:
    """For a motion through stages: each covered stage's button in the page's stage bar."""
    if not stage.covers:
        return None
    bar = [LECTURE.label(s) for s in page_stages(stage.page, ctx)]
    labels = [LECTURE.label(LECTURE.stage(key)) for key in stage.covers]
    return {label: bar.index(label) for label in labels}


def with_words(captions: list[list[str]] | None, words: str):
    """Each frame's lines under the player, and the selected cell's numbers after them."""
    if not words or captions is None:
        return captions
    return [[*lines, words] for lines in captions]


def _motion_view(ctx: Context, stage: Stage, subject: Subject, extra: tuple) -> None:
    """Cells that move, with the player; the stage's picture (or its GIF) to download."""
    drawn = drawing(subject, stage)
    motion, start = drawn.motion(subject), motion_start(ctx)

    def build():
        fig = motion_figure(motion.build(), ctx.theme, start=start)
        return motion.dressed(fig) if motion.dressed else fig

    fig = shared_view(("motion", *_view_key(ctx, stage, extra, start)), build)
    captions = motion_captions(fig, ctx, motion.cell_formula) if motion.cell_formula else None
    animated_chart(fig, f"stage_{stage.key}", ctx, with_words(captions, motion.words),
                   follow=_follow(ctx, stage), stage=stage)  # fmt: skip
    if drawn.still is not None:
        still = drawn.still(subject)
        export_buttons(still.panels, ctx, stage.export, stage_words(stage, ctx)[0],
                       still.formula, highlight=still.highlight)  # fmt: skip
    elif gif_fits(ctx.spec):
        st.download_button(
            "⬇ GIF of this stage",
            lambda: motion_gif(motion.build().coarser(3)),
            file_name=f"convviz-{ctx.state['preset']}-{stage.export}.gif",
            mime="image/gif",
            on_click="ignore",
            key=f"gif_{stage.key}",
        )


def _figure_view(ctx: Context, stage: Stage, subject: Subject, extra: tuple, options) -> None:
    """An animated figure of its stage's own renderer (the Learning page's step and run), played
    by the page's player."""
    drawn = drawing(subject, stage).figure(subject)
    start = motion_start(ctx)  # a projector's "auto": its first frame; else (None) its last
    key = ("figure", *_view_key(ctx, stage, extra, start, *options.items()))
    fig = shared_view(key, lambda: drawn.figure(ctx.theme, start=start, **options))
    animated_chart(fig, f"stage_{stage.key}", ctx, None, stage=stage)


def stage_view(
    ctx: Context,
    stage: Stage,
    subject: Subject | None = None,
    *,
    extra: tuple = (),
    below: int = 0,
    options: dict | None = None,
) -> Subject:
    """Draw one stage of the lecture on its page, as its view says; the subject it drew.

    extra : what the page's figures depend on beyond the layer, slice and selection (their
        shared cache's key); below : px the page writes under a still; options : the page's
        choices for a figure of its own renderer (the loss curve's log scale).
    """
    subject = subject or subject_of(ctx)
    drawn = drawing(subject, stage)
    if stage.view == "sweep":
        _sweep_view(ctx, stage, subject, extra)
    elif drawn.figure is not None and stage.view in ("motion", "run"):
        _figure_view(ctx, stage, subject, extra, options or {})
    elif stage.view == "motion" and drawn.motion is not None:
        _motion_view(ctx, stage, subject, extra)
    else:
        _still_view(ctx, stage, drawn.still(subject), extra, below)
    return subject

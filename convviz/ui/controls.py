"""What every page starts with: `controls()` gives the state, the layer and the view.

Values live in st.session_state["cv_state"] (kept across pages) and are mirrored in the URL; the
sidebar's widgets that change them are `convviz.ui.sidebar`'s. Here also each page's config, the
clicks on its charts (a cell, a slice), its share link and the guard on the app's own reruns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache, partial

import pandas  # noqa: F401  (see below)
import plotly.graph_objects as go
import streamlit as st

from convviz.engine.arrays import Layer
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.engine.text import echo
from convviz.model.fields import DEFAULTS, READER_FIELDS
from convviz.model.pages import PAGES
from convviz.model.state import (
    MAX_LINK,
    bounded,
    clip_slice,
    encoded,
    from_query,
    picked_slice,
    selection_of,
    slice_of,
    tie_axes,
    to_query,
)
from convviz.render.plotly.adapter import Figure, sent
from convviz.render.plotly.frames import stepwise
from convviz.render.plotly.grids import PLOTLY_CONFIG
from convviz.render.plotly.spoken import figure_alt
from convviz.render.theme import Theme, theme_for
from convviz.ui.a11y import a11y_css
from convviz.ui.assets import page_css
from convviz.ui.compute import compute_layer, value_key
from convviz.ui.viewport import viewport

# pandas is imported above, before any page builds a figure: plotly's validators take it from
# sys.modules, where a session that starts while another is still importing it would find it
# half-initialised ("partially initialized module 'pandas'") when a class opens the link at once.
STATE = "cv_state"
WIDGET = "ctl_"  # a control's widget key: this and its field's name (w is the kernel, not a widget)
LAST_VALID = "cv_last_valid"
PROBLEMS = "cv_url_problems"
SEEN = "cv_seen_clicks"
CHARTS = "cv_charts"  # the keys of the charts whose clicks select a cell (`views.chart`)


def widget_key(name: str) -> str:
    """The key of the widget that sets field `name` (its st-key-* class in the page)."""
    return f"{WIDGET}{name}"


@dataclass(frozen=True)
class Context:
    """What a page needs: the state, the (last valid) layer, the slice, selection and theme."""

    state: dict
    spec: ConvSpec
    layer: Layer
    key: tuple  # the cache key of the layer's values
    n: int
    k: int
    c: int
    selection: tuple[str, int, int] | None
    theme: Theme
    error: str | None  # why the controls' current combination is not shown


def _state() -> dict:
    """The session's state, taken from the URL on the session's first run."""
    if STATE not in st.session_state:
        state, problems = from_query(dict(st.query_params))
        st.session_state[STATE] = state
        st.session_state[PROBLEMS] = [*st.session_state.get(PROBLEMS, []), *problems]
    return st.session_state[STATE]


def clicked_cell(event) -> tuple[str, int, int] | None:
    """(panel key, row, col) of the first clicked point of a Streamlit plotly selection event
    (the figures put [panel key, row, col] in each clickable cell's customdata)."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError, IndexError, AttributeError):
        return None
    if not isinstance(points, Sequence):
        return None
    for point in points:
        try:
            data = point["customdata"]
        except (KeyError, TypeError, IndexError):
            continue
        if isinstance(data, Sequence) and not isinstance(data, str) and len(data) == 3:
            key, row, col = data
            try:
                return str(key), int(row), int(col)
            except (TypeError, ValueError):
                continue
    return None


def _take_chart_selection(state: dict) -> None:
    """A click on any chart (of CHARTS) selects that cell, once per click."""
    seen = st.session_state.setdefault(SEEN, {})
    # the charts drawn (`views.chart`): listing the session's keys presents every value
    for key in [k for k in st.session_state.get(CHARTS, ()) if k in st.session_state]:
        cell = clicked_cell(st.session_state[key])
        if cell is None:  # no click held (a new figure, a click that cleared it): the next
            seen.pop(key, None)  # click on any cell is new, the one clicked before too
        elif seen.get(key) != cell:
            seen[key] = cell
            state["sel"] = ":".join(map(str, cell))


def _pick_slice(key: str, fields: tuple[str | None, str | None]) -> None:
    """A click on a tile of chart `key` selects the slice the tile is (see `slice_chart`)."""
    cell = clicked_cell(st.session_state.get(key))
    if cell is None:  # a click that cleared the selection, or on nothing clickable
        return
    picks = picked_slice(st.session_state[STATE], fields, cell[1], cell[2])
    if picks:
        st.session_state[PROBLEMS] = []
        st.session_state[STATE].update(picks)


def converted(fig: Figure) -> go.Figure:
    """`fig` as st.plotly_chart takes it, converted once (`plotly_adapter.sent`): st.plotly_chart
    calls `to_dict()` on every rerun, which copies the figure and checks and encodes each array
    (~a quarter of a Forward rerun's server time, for a figure `shared_view` keeps built). A
    stepwise animation's frames go to its player, not to plotly (`animation_frames.stepwise`)."""
    return sent(fig, frames=not stepwise(fig))


def slice_chart(fig, name: str, fields: tuple[str | None, str | None], ctx: Context) -> None:
    """A grid of tiles (channels, filters) in which a click on a tile selects that slice.

    fields : the slice field ('n', 'k', 'c' or None) that its rows and its columns stand for; the
        figure's clickable points carry [name, row, col] (`channels.heatmap_grid(click=...)`).
    The click is taken in the callback, before the whole page reruns: the sidebar's n / k / c,
    the URL and every view show the new slice in that one rerun (a chart in a page body fragment
    would rerun only the body). The key holds the slice, so after a change the chart starts with
    no selection and a click on the tile clicked before selects it again.
    """
    key = f"tiles_{name}_{ctx.n}_{ctx.k}_{ctx.c}"
    st.plotly_chart(
        converted(fig),
        key=key,
        alt=figure_alt(fig),
        on_select=partial(_pick_slice, key, fields),
        selection_mode=("points",),
        config=PLOTLY_CONFIG,
        width="content",
        theme=None,
    )


# The tab's icon: an emoji is drawn by the browser; a :material/ icon as a favicon would be
# fetched from a font host (offline or filtered in many lecture halls).
FAVICON = "🧮"


# Runs the app starts itself (st.rerun), in a row: a widget whose every run asks for another
# would keep a core busy for as long as its tab is open (a grid comparing '2.0' with '2' did).
SELF_RERUNS, RERUN_ASKED = "cv_self_reruns", "cv_rerun_asked"
MAX_SELF_RERUNS = 3


def self_rerun() -> None:
    """Run the script again now (st.rerun), unless the app already did so MAX_SELF_RERUNS times
    in a row with no event of the reader's between: then say so and let this run finish (the
    page it draws is the last valid view). A reader's click, key or change starts the count
    again."""
    runs = st.session_state.get(SELF_RERUNS, 0)
    if runs >= MAX_SELF_RERUNS:
        st.session_state[SELF_RERUNS] = 0
        st.toast(
            "The page stopped redrawing itself: it had asked for a new run "
            f"{MAX_SELF_RERUNS} times in a row. Change a control to go on.",
            icon=":material/pause_circle:",
        )
        return
    st.session_state[SELF_RERUNS], st.session_state[RERUN_ASKED] = runs + 1, True
    st.rerun()


def _count_self_reruns() -> None:
    """At the start of a run: one the app did not ask for (an event of the reader's) ends the
    count of runs in a row that it did."""
    if not st.session_state.pop(RERUN_ASKED, False):
        st.session_state[SELF_RERUNS] = 0


SHOWN_PAGE = "cv_page"  # the page this run draws (the clicker's keys are the lecture's on it)


def page_config(page: str) -> None:
    """The page's title (from PAGES), icon and wide layout; presentation mode starts with the
    sidebar folded."""
    _count_self_reruns()
    title = next(label for path, label, _ in PAGES if path == page)
    st.session_state[SHOWN_PAGE] = page
    pres = _state()["pres"]
    st.set_page_config(
        page_title=f"convviz · {title}",
        page_icon=FAVICON,
        layout="wide",
        # a phone starts with the page, its sidebar folded (Streamlit's "auto": under 768 px)
        initial_sidebar_state="collapsed" if pres else "auto",
    )
    st.html(_page_style(pres, _state()["hc"]))


@dataclass(frozen=True)
class _Html:
    """HTML that st.html takes as it is (through `_repr_html_`): a str it dedents first, ~0.2 ms
    for the page's 8–12 kB of rules on every rerun."""

    html: str

    def _repr_html_(self) -> str:
        return self.html


@cache
def _page_style(presentation: bool, high_contrast: bool) -> _Html:
    """The rules that reach into Streamlit's page, then accessibility's (four variants)."""
    return _Html(f"<style>{page_css(presentation)}{a11y_css(high_contrast)}</style>")


def controls() -> Context:
    """The page's Context (the last valid layer if this one fails); `sidebar.sidebar` draws
    the controls.

    The sidebar is drawn last (by `views.page_end`): the browser gets the page's figures first and
    redraws the many sidebar widgets after them, so a change shows sooner.
    """
    state = _state()
    tie_axes(state)  # a link's or a slider's stride under 'same for both axes'
    clip_slice(state)  # bounded widgets need valid values
    for problem in st.session_state.get(PROBLEMS, []):  # until the reader changes something
        custom = "this is a custom layer" in problem  # information, not a fault of the link
        (st.info if custom else st.warning)(f"Link: {problem}.")  # what it quotes is `echo`ed
    _take_chart_selection(state)
    error = None
    try:
        key = value_key(state)
        lay = compute_layer(key)
        st.session_state[LAST_VALID] = dict(state)
    except ConvSpecError as exc:
        error = str(exc)
        last = st.session_state.get(LAST_VALID, DEFAULTS)
        key = value_key(last)
        lay = compute_layer(key)
        st.error(
            f"**Cannot compute this layer:** {error}. Showing the last valid settings.", icon="⚠️"
        )
    query = link_query(state, error)[0]
    st.query_params.from_dict(query)
    st.session_state[URL_SET] = query  # the page body's run need not send it again
    view = state if error is None else st.session_state.get(LAST_VALID, DEFAULTS)
    spec = lay.forward.spec
    n, k, c = slice_of(view, spec)
    theme = theme_for(state["pres"], viewport(state["pres"]), state["hc"])
    return Context(state, spec, lay, key, n, k, c, selection_of(view), theme, error)


def linked(state: dict, error: str | None) -> dict:
    """The state a link holds: the one drawn, so that an impossible layer being typed in (its
    banner shows the last valid one) is not what a shared or reloaded address opens; a first
    visit's own impossible address is kept as it came."""
    if error is None or LAST_VALID not in st.session_state:
        return state
    return st.session_state[LAST_VALID] | {k: state[k] for k in READER_FIELDS}


def link_query(
    state: dict, error: str | None, own: dict[str, str] | None = None
) -> tuple[dict[str, str], list[str]]:
    """The query every link of this view holds (the address bar's, the share link's): the
    layer's fields, then the page's own, within `MAX_LINK`; and the edits left out to fit."""
    return bounded(to_query(linked(state, error)) | (own or {}))


def share_link(ctx: Context, own: dict[str, str] | None = None) -> None:
    """The address that reproduces this view (a page body draws it: the selection is in it).

    own : the page's own query (the Quiz's seed and question), after the layer's.
    A plain link, not st.code: a code block would load a 1.5 MB syntax highlighter on every page.
    """
    base = str(st.context.url or "").split("?")[0]
    query, left_out = link_query(ctx.state, ctx.error, own)
    url = f"{base}?{encoded(query)}"
    # the address as literal text (`echo`), its whole length; no emoji font needed for the icon
    st.caption(f":material/link: Share this view: [{echo(url, len(url))}](<{url}>)")
    if left_out:
        names = ", ".join(f"`{n}`" for n in left_out)
        st.caption(
            f"The numbers typed or edited in {names} make a link longer than a link may be "
            f"({MAX_LINK // 1024} KiB): this one gives the layer with its seed's numbers there. "
            "This tab keeps yours; **More exports → .py** writes them out."
        )


def with_selection(ctx: Context) -> Context:
    """ctx with the selection as it is now: a click inside a page body reruns only the body, so
    the Context made by `controls` on the last full run may hold an older selection."""
    state = ctx.state
    _take_chart_selection(state)
    query = link_query(state, ctx.error)[0]
    if st.session_state.pop(URL_SET, None) != query:  # a body's own run, or a click just taken
        st.query_params.from_dict(query)
    view = state if ctx.error is None else st.session_state.get(LAST_VALID, DEFAULTS)
    return replace(ctx, selection=selection_of(view))


# The query `controls` put in the address bar in this run (a full run): the page body, run next,
# sends it only if it changed (each sending is a message and a page_info_changed in the browser).
URL_SET = "cv_url_set"

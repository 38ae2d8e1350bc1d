"""The shared sidebar: every page calls `controls()` and gets the state, the layer and the view.

Values live in st.session_state["cv_state"] (kept across pages) and are mirrored in the URL.
Each widget is seeded from that state before it is drawn and writes back in its on_change.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from urllib.parse import urlencode

import pandas  # noqa: F401  (see below)
import plotly.graph_objects as go
import streamlit as st

from convviz.fields import (
    DEFAULTS,
    FIELDS,
    KERNEL_CHOICES,
    LAYER_FIELDS,
    PAD_KINDS,
    READER_FIELDS,
    preset_state,
)
from convviz.presets import PRESETS_BY_KEY
from convviz.render.grids import PLOTLY_CONFIG
from convviz.render.plotly_adapter import Figure, sent
from convviz.render.theme import Theme, theme_for
from convviz.spec import ConvSpec, ConvSpecError
from convviz.stages import Layer
from convviz.state import (
    clip_slice,
    drop_misfit_edits,
    from_query,
    picked_slice,
    preset_of,
    selection_of,
    slice_of,
    spec_of,
    tie_axes,
    to_query,
)
from convviz.text import echo
from convviz.ui.a11y import a11y_css
from convviz.ui.assets import page_css
from convviz.ui.compute import compute_layer, value_key
from convviz.ui.viewport import viewport, watch_viewport
from convviz.values import GRAD_OUT_LABELS

# pandas is imported above, before any page builds a figure: plotly's validators take it from
# sys.modules, where a session that starts while another is still importing it would find it
# half-initialised ("partially initialized module 'pandas'") when a class opens the link at once.
STATE = "cv_state"
LAST_VALID = "cv_last_valid"
PROBLEMS = "cv_url_problems"
SEEN = "cv_seen_clicks"


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


def _store(name: str, label: str = "", lo: int | None = None, hi: int | None = None) -> None:
    state = st.session_state[STATE]
    value = st.session_state[f"w_{name}"]
    if value == TYPED_IN:  # the typed-in values kept
        return
    # a number field emptied or out of its range: the layer keeps its number (the field shows it)
    if value is None or (lo is not None and not lo <= value <= hi):
        asks = "needs a number" if value is None else f"takes {lo} to {hi}"
        st.toast(f"{label} {asks}: it stays {state[name]}.", icon=":material/info:")
        return
    # a source chosen for the kernel or ∂L/∂y replaces its typed-in values (even the source
    # they had replaced)
    typed = name in TYPED and state[TYPED[name]]
    if state[name] == value and not typed:  # re-sent unchanged (a page switch under load)
        return
    st.session_state[PROBLEMS] = []
    state[name] = value
    if typed:
        state[TYPED[name]] = ""
    if name in LAYER_FIELDS:  # the selection stays while its cell exists (pages check bounds)
        # values the new shapes no longer fit (a kernel size: w and ∂L/∂y, not x); an impossible
        # layer keeps them all, for the way back
        drop_misfit_edits(state)
        state["preset"] = preset_of(state)  # put back as a preset had it: that preset again


def _apply_preset() -> None:
    st.session_state[PROBLEMS] = []
    key = st.session_state["w_preset"]
    if key in PRESETS_BY_KEY:
        reader = {k: st.session_state[STATE][k] for k in READER_FIELDS}
        st.session_state[STATE] = preset_state(PRESETS_BY_KEY[key]) | reader


def _reroll() -> None:
    st.session_state[PROBLEMS] = []
    state = st.session_state[STATE]
    state.update(seed=secrets.randbelow(FIELDS["seed"].hi + 1), x="", w="", g="", preset="custom")


def _widget(fn, name: str, label: str, bounds: tuple[int, int] | None = None, **kwargs):
    """Draw a widget seeded from the state; it writes back through `_store` (which refuses a
    number outside `bounds`)."""
    key = f"w_{name}"
    st.session_state[key] = st.session_state[STATE][name]
    args = (name, label, *(bounds or ()))
    on_change, args = (_apply_preset, ()) if name == "preset" else (_store, args)
    return fn(label, key=key, on_change=on_change, args=args, **kwargs)


def _row(bottom: bool = False):
    """Controls side by side, sharing the sidebar's width (one block: cheaper than st.columns,
    whose every column is a block of its own, and the sidebar is drawn on every rerun)."""
    return st.container(
        horizontal=True, wrap=False, vertical_alignment="bottom" if bottom else "top"
    )


def _rows(make, *rows: list[tuple[str, str]]) -> None:
    """Rows of controls side by side: `make(name, label)` for each (name, label) of a row."""
    for controls_in_row in rows:
        with _row():
            for name, label in controls_in_row:
                make(name, label)


def _slider(name: str, label: str):
    f = FIELDS[name]
    return _widget(st.slider, name, label, min_value=f.lo, max_value=f.hi)


def _number(name: str, label: str, max_value: int | None = None):
    f = FIELDS[name]
    # no min_value / max_value: the widget would show a number out of range beside a layer
    # that keeps the last one, or make an emptied field its minimum; `_store` refuses both
    bounds = (f.lo, f.hi if max_value is None else max_value)
    return _widget(st.number_input, name, label, bounds, value=None, step=1)


PAGES = (
    ("app.py", "Overview", ":material/dashboard:"),
    ("pages/1_Forward.py", "Forward", ":material/play_arrow:"),
    ("pages/2_Input_gradient.py", "Input gradient", ":material/undo:"),
    ("pages/3_Weight_gradient.py", "Weight gradient", ":material/tune:"),
    ("pages/8_Learning.py", "How the layer learns", ":material/school:"),
    ("pages/9_Two_layers.py", "Two layers", ":material/stacks:"),
    ("pages/4_Channels.py", "Channels", ":material/layers:"),
    ("pages/5_Matrix.py", "Matrix view", ":material/grid_4x4:"),
    ("pages/6_Checks.py", "Checks", ":material/verified:"),
    ("pages/7_Quiz.py", "Quiz", ":material/quiz:"),
)


def _sidebar(state: dict) -> None:
    """Every control, top to bottom."""
    _page_links(state)
    _preset_controls()
    _shape_controls()
    _stride_dilation_controls(state)
    _padding_controls(state)
    _channel_controls(state)
    _value_controls(state)


def _page_links(state: dict) -> None:
    """The pages, each linked with this view's query: a link opened in a new tab (or a click the
    browser takes as a plain navigation, as happened mid-run under load) shows the same layer."""
    st.markdown("### convviz")
    query = to_query(state)
    for path, label, icon in PAGES:
        st.page_link(path, label=label, icon=icon, query_params=query)
    st.divider()


def _preset_controls() -> None:
    _widget(st.toggle, "pres", "Presentation mode", help="Bigger fonts, fewer words")
    _widget(st.toggle, "hc", "High contrast", help="Every text at 7:1, for a washed-out projector")
    _widget(
        st.toggle, "still", "Reduce motion", help="Cells jump to each step; nothing plays by itself"
    )
    _widget(
        st.selectbox,
        "preset",
        "Preset",
        options=[*PRESETS_BY_KEY, "custom"],
        format_func=lambda k: PRESETS_BY_KEY[k].title if k in PRESETS_BY_KEY else "Custom",
    )


def _shape_controls() -> None:
    st.markdown("**Shapes**")
    _rows(_number, [("H", "Input height"), ("W", "Input width")],
          [("kH", "Kernel height"), ("kW", "Kernel width")])  # fmt: skip


def _stride_dilation_controls(state: dict) -> None:
    """One stride and one dilation, or one of each per axis."""
    _widget(st.checkbox, "same_axes", "Same stride and dilation for both axes")
    if state["same_axes"]:
        _rows(_slider, [("sh", "Stride"), ("dh", "Dilation")])
    else:
        _rows(_slider, [("sh", "Stride (rows)"), ("sw", "Stride (cols)")],
              [("dh", "Dilation (rows)"), ("dw", "Dilation (cols)")])  # fmt: skip


def _padding_controls(state: dict) -> None:
    """The padding kind and mode; per-side amounts when explicit, else what the kind pads."""
    with _row():
        _widget(st.selectbox, "pad", "Padding", options=PAD_KINDS)
        _widget(st.selectbox, "mode", "Padding mode", options=FIELDS["mode"].choices)
    if state["pad"] == "explicit":
        _rows(_number, list(zip(("pt", "pb", "pl", "pr"), ("top", "bottom", "left", "right"))))
    else:
        _padding_caption(state)


CHANNELS_OPEN, _SEVERAL = "cv_channels_open", "cv_several_channels"


def _keep_channels_open() -> None:
    st.session_state[CHANNELS_OPEN] = st.session_state["w_channels"]


def _channel_controls(state: dict) -> None:
    """Channel, filter and batch counts, and the slice the pages draw. Open when any count is
    over 1 (it opens or folds as they cross 1, else stays as the reader left it); its controls
    are made only while it is open."""
    several = state["cin"] > 1 or state["cout"] > 1 or state["batch"] > 1
    if st.session_state.get(_SEVERAL) != several:
        st.session_state[_SEVERAL] = st.session_state[CHANNELS_OPEN] = several
    # kept in the session, not in the widget: each page's widgets are its own (cf. `_widget`)
    st.session_state["w_channels"] = st.session_state[CHANNELS_OPEN]
    box = st.expander("Channels and batch", key="w_channels", on_change=_keep_channels_open)
    if not box.open:
        return
    with box:
        with _row():
            _number("cin", "C in")
            _number("cout", "C out")
            _number("batch", "Batch")
        # which slice the pages draw: asked only where there is a choice
        pick = [
            (name, label, count - 1)
            for name, label, count in (
                ("n", "sample n", state["batch"]),
                ("k", "filter k", state["cout"]),
                ("c", "channel c", state["cin"]),
            )
            if count > 1
        ]
        if pick:
            with _row():
                for name, label, most in pick:
                    _number(name, label, max_value=most)


TYPED = {"kernel": "w", "gout": "g"}  # a value source and the typed-in values it stands for
TYPED_IN = "typed in"  # the choice a source shows while its values are typed in


def _source(state: dict, name: str, label: str, options, word=str) -> None:
    """A value source's menu: with typed-in values (a recitation's kernel) it reads "typed in",
    not the "random" they replaced, and every source stays a choice that replaces them."""
    typed = bool(state[TYPED[name]])
    key = f"w_{name}"
    st.session_state[key] = TYPED_IN if typed else state[name]
    st.selectbox(
        label,
        (TYPED_IN, *options) if typed else options,
        key=key,
        format_func=lambda v: v if v == TYPED_IN else word(v),
        on_change=_store,
        args=(name,),
    )


def _value_controls(state: dict) -> None:
    """The kernel, grad_out and the seed of the random values (a note if values were typed in)."""
    st.markdown("**Values**")
    _source(state, "kernel", "Kernel", KERNEL_CHOICES)
    edited = [name for key, name in (("x", "x"), ("w", "w"), ("g", "∂L/∂y")) if state[key]]
    if edited:
        st.caption(f"Typed-in values in use for {', '.join(edited)} (Re-roll or a preset resets).")
    _source(state, "gout", "grad_out (∂L/∂y)", FIELDS["gout"].choices, GRAD_OUT_LABELS.get)
    with _row(bottom=True):
        _number("seed", "Seed")
        st.button("Re-roll", on_click=_reroll, help="New random small integers")


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
    """A click on any chart (keys start with 'chart_') selects that cell, once per click."""
    seen = st.session_state.setdefault(SEEN, {})
    for key in [k for k in st.session_state if str(k).startswith("chart_")]:
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
    (~a quarter of a Forward rerun's server time, for a figure `shared_view` keeps built)."""
    return sent(fig)


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
        on_select=partial(_pick_slice, key, fields),
        selection_mode=("points",),
        config=PLOTLY_CONFIG,
        width="content",
        theme=None,
    )


def _padding_caption(state: dict) -> None:
    """What a padding word means for this layer, per side (ConvSpec works it out)."""
    try:
        (top, bottom), (left, right) = spec_of(state).padding
    except ConvSpecError:
        return
    st.caption(f"'{state['pad']}' pads top {top}, bottom {bottom}, left {left}, right {right}")


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
    # the rules that reach into Streamlit's page, then accessibility's
    st.html(f"<style>{page_css(pres)}{a11y_css(_state()['hc'])}</style>")


def controls() -> Context:
    """The page's Context (the last valid layer if this one fails); `sidebar` draws the controls.

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
    st.query_params.from_dict(to_query(linked(state, error)))
    view = state if error is None else st.session_state.get(LAST_VALID, DEFAULTS)
    spec = lay.forward.spec
    n, k, c = slice_of(view, spec)
    theme = theme_for(state["pres"], viewport(state["pres"]), state["hc"])
    return Context(state, spec, lay, key, n, k, c, selection_of(view), theme, error)


def sidebar(ctx: Context) -> None:
    """The controls and the screen-size watcher."""
    with st.sidebar:
        _sidebar(ctx.state)
        watch_viewport(ctx.state["pres"])


def linked(state: dict, error: str | None) -> dict:
    """The state a link holds: the one drawn, so that an impossible layer being typed in (its
    banner shows the last valid one) is not what a shared or reloaded address opens; a first
    visit's own impossible address is kept as it came."""
    if error is None or LAST_VALID not in st.session_state:
        return state
    return st.session_state[LAST_VALID] | {k: state[k] for k in READER_FIELDS}


def share_link(ctx: Context, own: dict[str, str] | None = None) -> None:
    """The address that reproduces this view (a page body draws it: the selection is in it).

    own : the page's own query (the Quiz's seed and question), after the layer's.
    A plain link, not st.code: a code block would load a 1.5 MB syntax highlighter on every page.
    """
    base = str(st.context.url or "").split("?")[0]
    url = f"{base}?{urlencode(to_query(linked(ctx.state, ctx.error)) | (own or {}))}"
    # the address as literal text (`echo`), its whole length; no emoji font needed for the icon
    st.caption(f":material/link: Share this view: [{echo(url, len(url))}](<{url}>)")


def with_selection(ctx: Context) -> Context:
    """ctx with the selection as it is now: a click inside a page body reruns only the body, so
    the Context made by `controls` on the last full run may hold an older selection."""
    state = ctx.state
    _take_chart_selection(state)
    st.query_params.from_dict(to_query(linked(state, ctx.error)))
    view = state if ctx.error is None else st.session_state.get(LAST_VALID, DEFAULTS)
    return replace(ctx, selection=selection_of(view))

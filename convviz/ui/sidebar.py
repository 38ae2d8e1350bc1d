"""The shared sidebar: every control of the layer, seeded from the state and writing back to it.

Each widget is seeded from st.session_state["cv_state"] (`controls.STATE`) before it is drawn and
writes back in its on_change (`_store`), which refuses a number outside its field's bounds. A page
draws it last (`views.page_end`), after its figures; the state, the link and the layer are
`convviz.ui.controls`'.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from convviz.engine.spec import ConvSpecError
from convviz.engine.values import GRAD_OUT_LABELS
from convviz.model.fields import (
    FIELDS,
    KERNEL_CHOICES,
    LAYER_FIELDS,
    PAD_KINDS,
    READER_FIELDS,
    preset_state,
)
from convviz.model.pages import PAGES, url_path
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import bounded, drop_misfit_edits, preset_of, spec_of, to_query
from convviz.ui.controls import PROBLEMS, STATE, Context, widget_key
from convviz.ui.viewport import watch_viewport

_HERE = Path(__file__).parent
_NAV = st.components.v2.component(
    "convviz_nav",
    html="<div></div>",
    css=(_HERE / "nav.css").read_text(),
    js=(_HERE / "nav.js").read_text(),
)


def sidebar(ctx: Context) -> None:
    """The controls and the screen-size watcher."""
    with st.sidebar:
        _sidebar(ctx.state)
        watch_viewport(ctx.state["pres"])


def _store(name: str, label: str = "", lo: int | None = None, hi: int | None = None) -> None:
    state = st.session_state[STATE]
    value = st.session_state[widget_key(name)]
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
    key = st.session_state["ctl_preset"]
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
    key = widget_key(name)
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
    browser takes as a plain navigation, as happened mid-run under load) shows the same layer.
    One element (nav.js), not a page link each: the sidebar is drawn on every rerun, and each
    element costs the server (the ten links were ~9 % of a class's server time)."""
    pages = [{"path": url_path(path), "label": label, "icon": icon.strip(":").split("/")[-1]}
             for path, label, icon in PAGES]  # fmt: skip
    query = urlencode(bounded(to_query(state))[0])
    _NAV(data={"title": "convviz", "pages": pages, "query": query})


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
    st.session_state[CHANNELS_OPEN] = st.session_state["ctl_channels"]


def _channel_controls(state: dict) -> None:
    """Channel, filter and batch counts, and the slice the pages draw. Open when any count is
    over 1 (it opens or folds as they cross 1, else stays as the reader left it); its controls
    are made only while it is open."""
    several = state["cin"] > 1 or state["cout"] > 1 or state["batch"] > 1
    if st.session_state.get(_SEVERAL) != several:
        st.session_state[_SEVERAL] = st.session_state[CHANNELS_OPEN] = several
    # kept in the session, not in the widget: each page's widgets are its own (cf. `_widget`)
    st.session_state["ctl_channels"] = st.session_state[CHANNELS_OPEN]
    box = st.expander("Channels and batch", key="ctl_channels", on_change=_keep_channels_open)
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
    key = widget_key(name)
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


def _padding_caption(state: dict) -> None:
    """What a padding word means for this layer, per side (ConvSpec works it out)."""
    try:
        (top, bottom), (left, right) = spec_of(state).padding
    except ConvSpecError:
        return
    st.caption(f"'{state['pad']}' pads top {top}, bottom {bottom}, left {left}, right {right}")

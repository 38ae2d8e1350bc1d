"""The shared sidebar: every control of the layer, drawn by the browser as one element.

The page links and the controls are one component (nav.js and sidebar.js, with their css; the
Overview's "Where next" is nav.js on its own): the server sends what to draw (`items`: each
control's field, label, bounds, options and value, from the state) and the browser draws
native, labelled HTML controls and keeps them between runs (a control keeps its focus across the
run it started). One element, not the ~30 Streamlit elements a sidebar of widgets was, each a
cost on every rerun (README, "Capacity").

A change comes back as an *edit* (field, value, the edit's number in this tab) in the
component's `edit` event; every edit the server has not yet applied is sent again with each new
one, and the server applies those past the last it applied (`ACKED`, sent back with the
items), in order: no change is lost when two arrive while one run is under way. Each edit is
checked against the control as drawn (`_apply`): a number outside its field's bounds, or none,
is refused with a toast and the layer keeps its number (the field shows it again). A page draws
the sidebar last (`views.page_end`), after its figures.
"""

from __future__ import annotations

import secrets
from pathlib import Path

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
from convviz.model.state import bounded, drop_misfit_edits, encoded, preset_of, spec_of, to_query
from convviz.ui import grids, viewport
from convviz.ui.assets import component_data
from convviz.ui.controls import PROBLEMS, STATE, Context

SIDEBAR = "cv_sidebar"  # the component's key (its st-key-cv_sidebar class)
EDIT = "edit"  # its event: the edits not yet applied
ACKED = "cv_edits_acked"  # the number of the last edit applied in this session
SESSION = "cv_session"  # this session's token: edits made in another session are not applied
REROLL = "reroll"  # the Re-roll button's "field"
_HERE = Path(__file__).parent


def _scoped(module: str) -> str:
    """An ES module's text as an expression: its default export, its own names kept to itself."""
    if module.count("export default function") != 1 or "\nimport " in module:
        raise RuntimeError("a script of the sidebar's component lost its one default export")
    main = module.replace("export default function", "function main", 1)
    return f"(() => {{\n{main}\nreturn main;\n}})()"


# One element, four scripts: the page links (nav.js: handed their part of the data, the last
# call's listener taken off), then the controls (sidebar.js), the screen-size reporter
# (viewport.js: called again when its part or the page changes, as a component of its own was)
# and the page's keyboard grids (grid.js: installed once a page). Each element costs the server
# on every rerun (README, "Capacity").
_SCRIPT = f"""
const pageLinks = {_scoped((_HERE / "nav.js").read_text())};
const controls = {_scoped((_HERE / "sidebar.js").read_text())};
const reporter = {_scoped(viewport.SCRIPT)};
const keyboardGrids = {_scoped(grids.SCRIPT)};
const WORDS = {grids.WORDS};

export default function (component) {{
  const data = JSON.parse(new TextDecoder().decode(component.data));
  const host = component.parentElement;
  keyboardGrids({{ ...component, data: WORDS }});
  host.cvLinksStop?.();
  host.cvLinksStop = pageLinks({{ ...component, data: data.nav }});
  controls({{ ...component, data }});
  const seen = JSON.stringify(data.viewport) + location.pathname;
  if (host.cvReporterSeen !== seen) {{
    host.cvReporterSeen = seen;
    host.cvReporterStop = reporter({{ ...component, data: data.viewport }});
  }}
  return () => {{
    host.cvLinksStop?.();
    host.cvReporterStop?.();
    host.cvReporterSeen = null;
  }};
}}
"""
_COMPONENT = st.components.v2.component(
    "convviz_sidebar",
    html="<div></div>",
    css=(_HERE / "nav.css").read_text() + (_HERE / "sidebar.css").read_text(),
    js=_SCRIPT,
)
_NAV = st.components.v2.component(
    "convviz_nav",
    html="<div></div>",
    css=(_HERE / "nav.css").read_text(),
    js=(_HERE / "nav.js").read_text(),
)


def sidebar(ctx: Context) -> None:
    """The page links and the controls, one component (which also runs the page's screen-size
    reporter and keyboard grids)."""
    with st.sidebar:
        data = {
            "nav": _links(ctx.state, PAGES, "convviz", heading=False),
            "session": _session(),
            "acked": st.session_state.get(ACKED, 0),
            "items": items(ctx.state),
            "viewport": viewport.data(ctx.state["pres"]),
        }
        _COMPONENT(
            key=SIDEBAR,
            data=component_data(data),
            default={"viewport": None},
            on_edit_change=_take_edits,
            on_viewport_change=_take_viewport,
        )


def _take_viewport() -> None:
    viewport.store(st.session_state.get(SIDEBAR))


def _session() -> str:
    return st.session_state.setdefault(SESSION, secrets.token_hex(8))


# --- what the browser draws: items, top to bottom ---------------------------------------------
# {"t": kind, ...}: "nav" (the page links), "title", "heading", "caption", "rule", "row" (items
# side by side), "group" (a box that folds), and the controls "toggle", "check", "select",
# "number", "slider", "button", each with its field "f", "label" and value "v".


def page_links(state: dict, pages=PAGES, title: str = "convviz", heading: bool = False) -> None:
    """`pages` (path, label, icon), each linked with this view's query: a link opened in a new
    tab (or a click the browser takes as a plain navigation, as happened mid-run under load)
    shows the same layer. One element (nav.js), not a page link each: the sidebar is drawn on
    every rerun, and each element costs the server (the ten links were ~9 % of a class's server
    time). heading: `title` is a section's heading (h2), not the sidebar's name."""
    _NAV(data=component_data(_links(state, pages, title, heading)), key=f"cv_nav_{title}")


def _links(state: dict, pages, title: str, heading: bool) -> dict:
    """What nav.js draws: the title, each page's path, label and icon, the view's query."""
    links = [{"path": url_path(path), "label": label, "icon": icon.strip(":").split("/")[-1]}
             for path, label, icon in pages]  # fmt: skip
    query = encoded(bounded(to_query(state))[0])
    return {"title": title, "heading": heading, "pages": links, "query": query}


def items(state: dict) -> list[dict]:
    """Every control, top to bottom, as the browser draws them for this state."""
    return [
        *_display_controls(state),
        {"t": "heading", "text": "Shapes"},
        _row(*(_number(state, f, label) for f, label in
               (("H", "Input height"), ("W", "Input width")))),
        _row(*(_number(state, f, label) for f, label in
               (("kH", "Kernel height"), ("kW", "Kernel width")))),
        *_stride_dilation(state),
        *_padding(state),
        _channels(state),
        *_values(state),
    ]  # fmt: skip


def _row(*controls: dict, bottom: bool = False) -> dict:
    return {"t": "row", "items": list(controls), "bottom": bottom}


def _control(kind: str, state: dict, f: str, label: str, **more) -> dict:
    return {"t": kind, "f": f, "label": label, "v": state[f], **more}


def _number(state: dict, f: str, label: str, hi: int | None = None) -> dict:
    field = FIELDS[f]
    return _control("number", state, f, label, min=field.lo, max=field.hi if hi is None else hi)


def _slider(state: dict, f: str, label: str) -> dict:
    field = FIELDS[f]
    return _control("slider", state, f, label, min=field.lo, max=field.hi)


def _select(state: dict, f: str, label: str, options, word=str, value=None) -> dict:
    item = _control("select", state, f, label, options=[[o, word(o)] for o in options])
    if value is not None:
        item["v"] = value
    return item


def _display_controls(state: dict) -> list[dict]:
    presets = [*PRESETS_BY_KEY, "custom"]
    return [
        _control("toggle", state, "pres", "Presentation mode", help="Bigger fonts, fewer words"),
        _control("toggle", state, "hc", "High contrast",
                 help="Every text at 7:1, for a washed-out projector"),
        _control("toggle", state, "still", "Reduce motion",
                 help="Cells jump to each step; nothing plays by itself"),
        _select(state, "preset", "Preset", presets,
                lambda k: PRESETS_BY_KEY[k].title if k in PRESETS_BY_KEY else "Custom"),
    ]  # fmt: skip


def _stride_dilation(state: dict) -> list[dict]:
    """One stride and one dilation, or one of each per axis."""
    same = _control("check", state, "same_axes", "Same stride and dilation for both axes")
    if state["same_axes"]:
        return [same, _row(_slider(state, "sh", "Stride"), _slider(state, "dh", "Dilation"))]
    return [
        same,
        _row(_slider(state, "sh", "Stride (rows)"), _slider(state, "sw", "Stride (cols)")),
        _row(_slider(state, "dh", "Dilation (rows)"), _slider(state, "dw", "Dilation (cols)")),
    ]


def _padding(state: dict) -> list[dict]:
    """The padding kind and mode; per-side amounts when explicit, else what the kind pads."""
    kinds = _row(
        _select(state, "pad", "Padding", PAD_KINDS),
        _select(state, "mode", "Padding mode", FIELDS["mode"].choices),
    )
    if state["pad"] == "explicit":
        sides = zip(("pt", "pb", "pl", "pr"), ("top", "bottom", "left", "right"))
        return [kinds, _row(*(_number(state, f, label) for f, label in sides))]
    try:
        (top, bottom), (left, right) = spec_of(state).padding
    except ConvSpecError:
        return [kinds]
    said = f"'{state['pad']}' pads top {top}, bottom {bottom}, left {left}, right {right}"
    return [kinds, {"t": "caption", "text": said}]


def _channels(state: dict) -> dict:
    """Channel, filter and batch counts, and the slice the pages draw (asked only where there is
    a choice), in a box open when any count is over 1 (the browser keeps it as the reader left
    it until a count crosses 1)."""
    several = state["cin"] > 1 or state["cout"] > 1 or state["batch"] > 1
    counts = _row(_number(state, "cin", "C in"), _number(state, "cout", "C out"),
                  _number(state, "batch", "Batch"))  # fmt: skip
    pick = [
        _number(state, f, label, hi=count - 1)
        for f, label, count in (("n", "sample n", state["batch"]),
                                ("k", "filter k", state["cout"]), ("c", "channel c", state["cin"]))
        if count > 1
    ]  # fmt: skip
    inside = [counts, _row(*pick)] if pick else [counts]
    return {"t": "group", "label": "Channels and batch", "open": several, "items": inside}


TYPED = {"kernel": "w", "gout": "g"}  # a value source and the typed-in values it stands for
TYPED_IN = "typed in"  # the choice a source shows while its values are typed in


def _source(state: dict, f: str, label: str, options, word=str) -> dict:
    """A value source's menu: with typed-in values (a recitation's kernel) it reads "typed in",
    not the "random" they replaced, and every source stays a choice that replaces them."""
    if state[TYPED[f]]:
        return _select(state, f, label, (TYPED_IN, *options),
                       lambda v: v if v == TYPED_IN else word(v), value=TYPED_IN)  # fmt: skip
    return _select(state, f, label, options, word)


def _values(state: dict) -> list[dict]:
    """The kernel, grad_out and the seed of the random values (a note if values were typed in)."""
    edited = [name for key, name in (("x", "x"), ("w", "w"), ("g", "∂L/∂y")) if state[key]]
    note = f"Typed-in values in use for {', '.join(edited)} (Re-roll or a preset resets)."
    return [
        {"t": "heading", "text": "Values"},
        _source(state, "kernel", "Kernel", KERNEL_CHOICES),
        *([{"t": "caption", "text": note}] if edited else []),
        _source(state, "gout", "grad_out (∂L/∂y)", FIELDS["gout"].choices, GRAD_OUT_LABELS.get),
        _row(_number(state, "seed", "Seed"),
             {"t": "button", "f": REROLL, "label": "Re-roll", "help": "New random small integers"},
             bottom=True),
    ]  # fmt: skip


def controls_of(state: dict) -> dict[str, dict]:
    """The controls drawn for this state, by field (rows and the group opened)."""
    found, todo = {}, items(state)
    while todo:
        item = todo.pop(0)
        todo[:0] = item.get("items", [])
        if "f" in item:
            found[item["f"]] = item
    return found


# --- what comes back: edits ----------------------------------------------------------------------


def _take_edits() -> None:
    """Apply the edits this session has not applied yet, in the order they were made."""
    sent = (st.session_state.get(SIDEBAR) or {}).get(EDIT)
    if not isinstance(sent, dict) or sent.get("session") != _session():
        return  # an edit made against another session (a reconnect): its URL holds the view
    acked = st.session_state.get(ACKED, 0)
    edits = [e for e in sent.get("edits") or [] if _is_edit(e) and e["n"] > acked]
    for edit in sorted(edits, key=lambda e: e["n"]):
        apply_edit(edit["f"], edit.get("v"))
        st.session_state[ACKED] = edit["n"]


def _is_edit(edit) -> bool:
    return (
        isinstance(edit, dict)
        and isinstance(edit.get("f"), str)
        and isinstance(edit.get("n"), int)
        and not isinstance(edit.get("n"), bool)
    )


def apply_edit(name: str, value) -> None:
    """A control's new value, checked against the control as drawn for the state now."""
    state = st.session_state[STATE]
    control = controls_of(state).get(name)
    if control is None:  # not drawn (a crafted message, or a control folded away since)
        return
    kind = control["t"]
    if kind == "button":
        return _reroll()
    if kind in ("toggle", "check"):
        if isinstance(value, bool):
            _store(name, value)
        return
    if kind == "select":
        if value in [key for key, _ in control["options"]]:
            _apply_preset(value) if name == "preset" else _store(name, value)
        return
    number = _whole(value)
    if number is None or not control["min"] <= number <= control["max"]:
        asks = "needs a number" if number is None else f"takes {control['min']} to {control['max']}"
        st.toast(f"{control['label']} {asks}: it stays {state[name]}.", icon=":material/info:")
        return
    _store(name, number)


def _whole(value) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if float(value).is_integer() and abs(value) < 1e9 else None


def _store(name: str, value) -> None:
    state = st.session_state[STATE]
    if value == TYPED_IN:  # the typed-in values kept
        return
    # a source chosen for the kernel or ∂L/∂y replaces its typed-in values (even the source
    # they had replaced)
    typed = name in TYPED and state[TYPED[name]]
    if state[name] == value and not typed:  # re-sent unchanged
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


def _apply_preset(key: str) -> None:
    st.session_state[PROBLEMS] = []
    if key in PRESETS_BY_KEY:
        reader = {k: st.session_state[STATE][k] for k in READER_FIELDS}
        st.session_state[STATE] = preset_state(PRESETS_BY_KEY[key]) | reader


def _reroll() -> None:
    st.session_state[PROBLEMS] = []
    state = st.session_state[STATE]
    state.update(seed=secrets.randbelow(FIELDS["seed"].hi + 1), x="", w="", g="", preset="custom")

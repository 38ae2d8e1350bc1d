"""The two-layer page's own state (layer 2, the ReLU, layer 1's bias: `fields.CHAIN_FIELDS`), its
controls and its pass, computed once per layer and shared by the sessions.

The page's fields are read from the link on a session's first visit by the state's one reader
(`parse_field`); a value it cannot use is said with the link's other problems and not taken. A
layer 2 that cannot work (or both layers over the work limit) is refused with its reason, and the
last valid one is drawn.
"""

from __future__ import annotations

import streamlit as st

from convviz.engine.spec import ConvSpecError
from convviz.engine.text import number
from convviz.learning.chain import TwoLayerPass, two_layer_pass
from convviz.model.fields import CHAIN_DEFAULTS, CHAIN_FIELDS, VALUE_FIELDS, parse_field
from convviz.model.state import chain_values
from convviz.ui.compute import CACHE, layer_inputs
from convviz.ui.controls import PROBLEMS, Context, widget_key

OWN, LAST = "cv_chain", "cv_chain_last_valid"  # session keys: the page's fields as asked, drawn
LABELS = {
    "kH2": "layer 2 kernel rows kH₂",
    "kW2": "layer 2 kernel cols kW₂",
    "sh2": "layer 2 stride rows",
    "sw2": "layer 2 stride cols",
    "pad2": "layer 2 zero padding",
    "b1": "layer 1 bias b₁",
}


def from_url() -> None:
    """The page's fields from the link, on the session's first visit (before `controls`, which
    says the link's problems)."""
    if OWN in st.session_state:
        return
    own = dict(CHAIN_DEFAULTS)
    for name in CHAIN_FIELDS:
        raw = st.query_params.get(name)
        if raw is None:
            continue
        value, problem = parse_field(name, raw)
        if problem:
            kept = {True: "on", False: "off"}.get(own[name], own[name])
            st.session_state.setdefault(PROBLEMS, []).append(f"{problem}; kept {kept}")
        else:
            own[name] = value
    st.session_state[OWN] = own


def own_fields() -> dict:
    """The page's fields drawn (layer 2's, the ReLU, layer 1's bias)."""
    return dict(st.session_state.get(LAST) or st.session_state[OWN])


def own_query() -> dict[str, str]:
    """The page's fields as its link holds them: those drawn (bools as 0/1)."""
    return {n: str(int(v)) if isinstance(v, bool) else str(v) for n, v in own_fields().items()}


def chain_pass_of(key: tuple, own: tuple) -> TwoLayerPass:
    """The two layers' pass on the sidebar layer's values `key`; ConvSpecError if impossible."""

    def make() -> TwoLayerPass:
        spec, x, w1, _ = layer_inputs(key)
        state = dict(zip(VALUE_FIELDS, key))
        stack, (b1, w2, t) = chain_values(spec, dict(own), state["seed"], state["draw"])
        return two_layer_pass(stack, x, w1, b1, w2, None, t)

    return CACHE.get(("chain", key, own), make)


def chain_pass(ctx: Context) -> TwoLayerPass | None:
    """The pass the page draws: the fields asked for, else (with the reason) the last valid
    ones; None when no layer 2 works with this layer 1 (the reason said)."""
    asked = st.session_state[OWN]
    try:
        p = chain_pass_of(ctx.key, tuple(asked.items()))
        st.session_state[LAST] = dict(asked)
        return p
    except ConvSpecError as exc:
        last = st.session_state.get(LAST, CHAIN_DEFAULTS)  # a link's first view: the defaults
        if last == asked:
            st.error(f"**Cannot compute the two layers:** {exc}.", icon="⚠️")
            return None
        st.error(f"**Cannot compute the two layers:** {exc}. Showing the last valid ones.",
                 icon="⚠️")  # fmt: skip
        try:
            return chain_pass_of(ctx.key, tuple(last.items()))
        except ConvSpecError:  # layer 1 changed under it, or its defaults do not fit
            return None


def _store(name: str) -> None:
    value = st.session_state[widget_key(f"chain_{name}")]
    f = CHAIN_FIELDS[name]
    if value is None or (f.kind == "int" and not f.lo <= value <= f.hi):
        st.toast(f"{LABELS[name]} takes {f.lo} to {f.hi}: it stays {st.session_state[OWN][name]}.")
        return
    st.session_state[OWN][name] = value


def layer_two_controls() -> None:
    """Layer 2's kernel, stride and padding, the ReLU and layer 1's bias, folded under a line
    that says them (the stage's figure stays on a laptop's first screen)."""
    own = st.session_state[OWN]
    relu = "ReLU on" if own["relu"] else "no ReLU"
    said = (
        f"Layer 2: kernel {own['kH2']}×{own['kW2']}, stride {own['sh2']}×{own['sw2']}, "
        f"padding {own['pad2']} · {relu} · layer 1's bias b₁ = {number(own['b1'])} · "
        "(the sidebar's ∂L/∂y choice is not used here: layer 2 computes it)"
    )
    box = st.expander(said, key="cv_chain_fields")
    with box, st.container(horizontal=True, key="cv_chain_controls"):
        for name, label in LABELS.items():
            f = CHAIN_FIELDS[name]
            key = widget_key(f"chain_{name}")
            st.session_state[key] = own[name]
            st.number_input(label, f.lo, f.hi, step=1, key=key, on_change=_store, args=(name,),
                            width=150)  # fmt: skip
        st.session_state["ctl_chain_relu"] = own["relu"]
        st.toggle("ReLU between", key="ctl_chain_relu", on_change=_store, args=("relu",))

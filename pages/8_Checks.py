"""Checks: every independent witness of this layer's numbers, each with the number it rests on."""

from dataclasses import replace

import pyarrow as pa
import streamlit as st

import convviz.ui.boot  # noqa: F401  (first: see its docstring)
from convviz.engine import checks
from convviz.engine.spec import ConvSpecError
from convviz.learning import checks as learn_checks
from convviz.model.fields import CHAIN_DEFAULTS
from convviz.ui.chain import LAST, chain_pass_of
from convviz.ui.compute import compute_layer
from convviz.ui.controls import controls, page_config
from convviz.ui.views import page_end, page_header

PAGE = "pages/8_Checks.py"
WHY = {
    "Plain-loop reference": "A slow twin of the engine that shares none of its code: nested loops "
    "over the chain-rule sums, one product at a time.",
    "Finite differences": "Nudge one number by ±h and watch L move: the slope is the gradient, "
    "without any backprop at all.",
    "Adjoint identity": "∂L/∂x and ∂L/∂w are the transposes (adjoints) of the convolution, so "
    "these inner products must be one number, whatever x, w and g are.",
    "PyTorch autograd": "The library most students use, on the same layer in float64.",
    "Finite differences of the loss": "Nudge one tap or bias by ±h and watch L = ½‖y − t‖² "
    "move: the slope is ∂L/∂w, with no backprop, so the gradient a step follows is the loss's.",
    "Finite differences through both layers": "Stack a layer 2 (and a ReLU) on this layer, "
    "nudge one number of either layer by ±h and watch the two-layer loss move: the chain rule's "
    "∂L/∂w₁ (through ∂L/∂h and the gate) and ∂L/∂w₂ must be those slopes.",
    "PyTorch SGD": "The same training run by torch.optim.SGD with autograd: every step's loss and "
    "the final weights must be the engine's.",
}


@st.cache_data(max_entries=32, show_spinner="Checking…")
def checks_for(key: tuple) -> list[checks.Check]:
    return checks.all_checks(compute_layer(key))


@st.cache_data(max_entries=32, show_spinner="Checking both layers…")
def two_layer_check_for(key: tuple, own: tuple) -> checks.Check:
    """The two-layer check with layer 2 as the Two layers page last drew it (else its
    defaults); skipped, with the reason, when no such layer 2 fits this layer."""
    o = dict(own)
    layer_2 = (
        f"layer 2 as the Two layers page draws it: kernel {o['kH2']}×{o['kW2']}, stride "
        f"{o['sh2']}×{o['sw2']}, padding {o['pad2']}, {'a ReLU' if o['relu'] else 'no ReLU'} "
        "between"
    )
    try:
        check = learn_checks.two_layer_check(chain_pass_of(key, own))
        return replace(check, note=f"{layer_2}; {check.note}")
    except ConvSpecError as exc:
        name, claim = "Finite differences through both layers", "the two-layer loss's slopes"
        return checks.Check(name, claim, note=f"skipped: {exc}")


def num(v: float) -> str:
    return f"{v:.10g}"


def show(check: checks.Check) -> None:
    if check.skipped:
        icon, verdict = ":material/remove_circle_outline:", "skipped"
    elif check.passed:
        icon, verdict = (
            ":green[:material/check_circle:]",
            f"agrees (largest difference {check.worst:.1e})",
        )
    else:
        icon, verdict = (
            ":red[:material/cancel:]",
            f"DISAGREES (largest difference {check.worst:.1e})",
        )
    st.markdown(f"## {icon} {check.name}: {verdict}")
    st.markdown(f"Compared: {check.claim}.")
    if ctx.theme.show_secondary:
        st.caption(WHY[check.name])
    if check.rows:
        rows = check.rows
        columns = {
            "what": [r.label for r in rows],
            "engine": [num(r.engine) for r in rows],
            "independent": [num(r.independent) for r in rows],
            "difference": [f"{r.difference:.1e}" for r in rows],
        }
        st.table(pa.table(columns), hide_index=True)  # arrow as it is sent: no pandas on the way
    note = f"{check.note[0].upper()}{check.note[1:]}" if check.note else ""
    tolerance = "" if check.skipped else f" Rounding allows up to {check.tolerance:.1e}."
    st.caption(f"{note}.{tolerance}" if note else tolerance)


page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "Why trust the numbers",
    "Every number on these pages comes from one vectorized engine. Here it is compared, live "
    "for this layer, with computations that share none of its code.",
)
own = st.session_state.get(LAST) or CHAIN_DEFAULTS
found = [*checks_for(ctx.key), two_layer_check_for(ctx.key, tuple(own.items()))]
done = [c for c in found if not c.skipped]
if all(c.passed for c in done):
    st.success(
        f"All {len(done)} checks agree for this layer"
        + (f" ({len(found) - len(done)} skipped)." if len(done) < len(found) else "."),
        icon=":material/verified:",
    )
else:
    st.error("A check disagrees: the engine has a bug for this layer. Please report the link.")
for check in found:
    show(check)
page_end(ctx, PAGE)

"""Weight gradient: the padded input correlated with ∂L/∂y, which the stride spreads out."""

import streamlit as st

import convviz.ui.boot  # noqa: F401  (first: see its docstring)
from convviz.engine.text import bias_gradient, number
from convviz.model.lecture import WEIGHT_PAGE
from convviz.ui.clicker import stage_bar, stage_heading
from convviz.ui.controls import controls, page_config
from convviz.ui.stage_view import stage_view
from convviz.ui.views import cell_picker, formula_box, page_body, page_end, page_header

PAGE = WEIGHT_PAGE
STAGE_PX, STAGE_PRES_PX = 140, 48  # the stage bar and the stage's heading above the figure
page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "Weight gradient ∂L/∂w",
    "Each weight met many input cells in the forward pass; its gradient adds them up, each "
    "times the gradient of the output it fed. That is the padded input correlated with ∂L/∂y, "
    "whose cells sit 'stride' apart; the window steps by the dilation.",
)


@page_body
def weight_gradient(ctx):
    """The stage bar and its stage (the weight window's sweep, or ∂L/∂y spreading into the
    window), the selected tap's sum and the bias gradient."""
    spec = ctx.spec
    stage = stage_bar(PAGE, ctx)
    ctx = stage_heading(stage, ctx, STAGE_PX, STAGE_PRES_PX)
    subject = stage_view(ctx, stage)
    if spec.batch > 1 and ctx.theme.show_secondary:
        st.caption(
            f"Sample n = {ctx.n} is drawn; each sum adds all {spec.batch} samples' products."
        )
    cell = subject.weight_grad_cell
    st.header(f"Weight cell [{cell[0]}, {cell[1]}] of filter k={ctx.k}, channel c={ctx.c}")
    formula_box(subject.weight_grad_formula, ctx,
                "Click any ∂L/∂w cell (or use the keyboard picker) to see its sum.")  # fmt: skip
    cell_picker(ctx, {"grad_w": spec.kernel_size}, "grad_w")
    st.metric(f"bias gradient {bias_gradient(ctx.k)}", number(ctx.layer.weight_grad.grad_b[ctx.k]))


weight_gradient(ctx)
page_end(ctx, PAGE, keys=False)

"""Weight gradient: the padded input correlated with ∂L/∂y, which the stride spreads out."""

import streamlit as st

from convviz.formulas import weight_grad_formula
from convviz.render.animate import sweep_figure
from convviz.render.grids import panels_figure
from convviz.render.stories import dilated_grad_panel, step_of, weight_grad_panels
from convviz.ui.compute import sweeps_for
from convviz.ui.controls import controls
from convviz.ui.views import (
    cell_picker,
    chart,
    export_buttons,
    formula_box,
    page_header,
    selected_in,
    share_link,
)

st.set_page_config(page_title="convviz · Weight gradient", page_icon="🎛️", layout="wide")
ctx = controls()
page_header(
    ctx,
    "Weight gradient ∂L/∂w",
    "Each weight met many input cells in the forward pass; its gradient adds them up, "
    "each times the gradient of the output it fed. That is the padded input correlated "
    "with ∂L/∂y, whose cells sit 'stride' apart; the window steps by the dilation.",
)
wg, spec = ctx.layer.weight_grad, ctx.spec
sweep = sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)["weight_grad"]
w_cell = selected_in(ctx, ("grad_w",), spec.kernel_size)
panels = weight_grad_panels(wg, sweep, ctx.n, ctx.k, ctx.c, selected=w_cell)
start = step_of(sweep, w_cell) if w_cell else 0
chart(
    sweep_figure(
        sweep, *panels, ctx.theme, channel=ctx.n, start=start, title="∂L/∂w = x̃ ⋆ dilate(∂L/∂y)"
    ),
    "weight_grad",
)
if spec.batch > 1 and ctx.theme.show_secondary:
    st.caption(f"Sample n = {ctx.n} is drawn; each sum adds all {spec.batch} samples' products.")

left, right = st.columns([2, 1])
with left:
    chart(panels_figure([dilated_grad_panel(wg, ctx.n, ctx.k)], ctx.theme), "dilated_grad")
with right:
    st.metric(f"bias gradient ∂L/∂b[{ctx.k}] = Σ ∂L/∂y[:, {ctx.k}]", f"{wg.grad_b[ctx.k]:g}")

cell = w_cell or (0, 0)
st.subheader(f"Weight cell w[{ctx.k}, {ctx.c}, {cell[0]}, {cell[1]}]")
formula = weight_grad_formula(wg, ctx.k, ctx.c, *cell)
formula_box(formula, ctx)
cell_picker(ctx, {"grad_w": spec.kernel_size}, "grad_w")
export_buttons(panels, ctx, "convviz-weight-grad", "Weight gradient", formula, sweep, ctx.n)
share_link(ctx)

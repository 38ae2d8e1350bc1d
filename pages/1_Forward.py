"""Forward: the window slides over the padded input; each output cell is a sum of products."""

import streamlit as st

from convviz.formulas import forward_formula
from convviz.render.animate import sweep_figure
from convviz.render.stories import forward_panels, step_of, users_of
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

st.set_page_config(page_title="convviz · Forward", page_icon="▶️", layout="wide")
ctx = controls()
page_header(
    ctx,
    "Forward pass",
    "A cross-correlation: the kernel (each tap in its own colour) slides over the padded "
    "input with the stride; every output cell is the sum of the products under it. "
    "Press ▶ to play, drag the slider to scrub, click a cell to select it.",
)
fw, spec = ctx.layer.forward, ctx.spec
sweep = sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)["forward"]
y_cell = selected_in(ctx, ("y",), spec.out_size)
x_cell = selected_in(ctx, ("x",), spec.padded_size)
panels = forward_panels(fw, sweep, ctx.n, ctx.k, ctx.c, selected=y_cell)
if x_cell is not None:  # which outputs read this input cell
    panels[2] = users_of(panels[2], sweep, x_cell)
start = step_of(sweep, y_cell) if y_cell else 0
chart(
    sweep_figure(
        sweep, *panels, ctx.theme, channel=ctx.c, start=start, title="y = x ⋆ w (cross-correlation)"
    ),
    "forward",
)

cell = y_cell or (0, 0)
st.subheader(f"Output cell y[{cell[0]}, {cell[1]}]")
formula = forward_formula(fw, ctx.n, ctx.k, *cell)
formula_box(formula, ctx, "Click any output cell (or use the keyboard picker) to see its sum.")
cell_picker(ctx, {"y": spec.out_size, "x": spec.padded_size}, "y")
export_buttons(panels, ctx, "convviz-forward", "Forward pass", formula, sweep, ctx.c)
share_link(ctx)

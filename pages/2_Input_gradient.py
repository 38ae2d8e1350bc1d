"""Input gradient: the textbook route step by step, and the scatter route beside it."""

import streamlit as st

from convviz.formulas import input_grad_formula
from convviz.render.animate import scatter_figure, sweep_figure
from convviz.render.grids import panels_figure
from convviz.render.stories import (
    feeding_cells,
    input_grad_animation,
    input_grad_story,
    scatter_panels,
    step_of,
)
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
    step_picker,
)

st.set_page_config(page_title="convviz · Input gradient", page_icon="↩️", layout="wide")
ctx = controls()
page_header(
    ctx,
    "Input gradient ∂L/∂x",
    "The textbook route: dilate ∂L/∂y by the stride, pad it, rotate the kernel 180°, "
    "slide it over at stride 1 (a 'full' correlation), then mask the padded ring. The "
    "scatter route below reaches the same numbers.",
)
ig, spec = ctx.layer.input_grad, ctx.spec
sweeps = sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)
pad_cell = selected_in(ctx, ("grad_x_padded",), spec.padded_size)
x_cell = selected_in(ctx, ("grad_x",), spec.in_size)
cell = pad_cell or x_cell or (spec.in_size[0] // 2, spec.in_size[1] // 2)
formula = input_grad_formula(ig, ctx.n, ctx.c, *cell, padded=pad_cell is not None)
key = "grad_x_padded" if pad_cell else "grad_x"
feeding = feeding_cells(formula, ctx.k, spec.out_size)
steps = input_grad_story(ig, ctx.n, ctx.k, ctx.c, feeding, (key, *cell))
current = step_picker(ctx, [s.title for s in steps])
step = steps[current]
st.markdown(f"### {current + 1}. {step.heading}")
st.markdown(step.caption)
if ctx.theme.show_secondary and current < 4:
    st.caption(
        f"Outlined: the ∂L/∂y cells that reach the selected cell {key}[{cell[0]}, "
        f"{cell[1]}] (formula below)."
    )
if step.panels:
    chart(panels_figure(step.panels, ctx.theme), f"story_{current}")
    export_buttons(step.panels, ctx, f"convviz-input-grad-step{current + 1}", step.title)
else:  # the full correlation, animated
    panels = input_grad_animation(ig, sweeps["input_grad"], ctx.n, ctx.k, ctx.c, pad_cell)
    start = step_of(sweeps["input_grad"], pad_cell) if pad_cell else 0
    chart(
        sweep_figure(
            sweeps["input_grad"],
            *panels,
            ctx.theme,
            channel=ctx.k,
            start=start,
            title="full correlation: rot180(w) over the padded, dilated ∂L/∂y",
        ),
        "full_corr",
    )
    export_buttons(
        panels,
        ctx,
        "convviz-full-correlation",
        "Full correlation",
        None,
        sweeps["input_grad"],
        ctx.k,
    )

st.divider()
st.subheader("Scatter route: each ∂L/∂y cell stamps ∂L/∂y · w onto its window")
if sweeps["scatter"] is None:
    st.info(
        "The scatter animation keeps one grid per step; it is offered up to 1,024 output "
        "cells. The textbook route above computes the same numbers at every size."
    )
else:
    chart(
        scatter_figure(
            sweeps["scatter"],
            *scatter_panels(ctx.layer, ctx.n, ctx.k, ctx.c),
            ctx.theme,
            title="stamps add up to the same ∂L/∂x̃",
        ),
        "scatter",
    )

where = "padded input x̃" if pad_cell else "input x"
st.subheader(f"Gradient of {where} cell [{cell[0]}, {cell[1]}]")
note = (
    "This cell is on the zero-padded ring: the mask drops its gradient." if formula.dropped else ""
)
if any(t.folded for t in formula.terms):
    note += " Terms from the padded copies of this cell are folded back onto it."
formula_box(formula, ctx, note)
cell_picker(ctx, {"grad_x": spec.in_size, "grad_x_padded": spec.padded_size}, "grad_x")
share_link(ctx)

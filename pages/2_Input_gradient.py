"""Input gradient: the textbook route step by step, and the scatter route beside it."""

from dataclasses import replace

import streamlit as st

import convviz.ui.boot  # noqa: F401  (first: see its docstring)
from convviz.model.lecture import INPUT_PAGE
from convviz.render.plotly.sweeps import scatter_figure
from convviz.render.story.board import focus
from convviz.render.story.input_grad import (
    formula_notes,
    mask_panels,
    scatter_panels,
    unread_text,
)
from convviz.ui.clicker import stage_bar, stage_heading
from convviz.ui.compute import MAX_SCATTER_BYTES, MAX_SCATTER_STEPS, shared_view, sweeps_for
from convviz.ui.controls import controls, page_config
from convviz.ui.stage_view import stage_view
from convviz.ui.views import (
    animated_chart,
    cell_picker,
    close_up,
    formula_box,
    page_body,
    page_end,
    page_header,
)

# Above the figure: the stage bar, the stage's heading and caption (presentation mode: the bar
# alone, one row at 1280 px on every stage: its Back and Next as short at every stage).
STAGE_PX, STAGE_PRES_PX = 140, 48
STAGE_ROW_PX = 1220  # the main column the presentation bar needs on one row (at a 16 px rem)
PAGE = INPUT_PAGE
page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "Input gradient ∂L/∂x",
    "The textbook route: dilate ∂L/∂y by the stride, pad it, rotate the kernel 180°, slide it "
    "over at stride 1 (a 'full' correlation), then mask the padded ring. The scatter route "
    "below reaches the same numbers.",
)


def scatter_route(ctx, scatter) -> None:
    """Each ∂L/∂y cell stamps ∂L/∂y · w onto its window; the stamps add up to ∂L/∂x̃."""
    st.header("Scatter route: each ∂L/∂y cell stamps ∂L/∂y · w onto its window")
    if scatter is None:
        st.info(
            "The scatter animation keeps one grid per stamp; it is offered up to "
            f"{MAX_SCATTER_STEPS:,} stamps (output cells × filters) and "
            f"{MAX_SCATTER_BYTES >> 20} MB of grids. The textbook route above computes the same "
            "numbers at every size."
        )
        return

    def build():
        panels = scatter_panels(ctx.layer, ctx.n, ctx.k, ctx.c)
        return scatter_figure(scatter, *panels, ctx.theme, title="stamps add up to the same ∂L/∂x̃")

    fig = shared_view(("scatter", ctx.key, ctx.n, ctx.k, ctx.c, ctx.theme), build)
    animated_chart(fig, "scatter", ctx, None, primary=False)


@page_body
def input_gradient(ctx):
    """The stage bar and its stage, the selected cell's sum, and the scatter route."""
    spec = ctx.spec
    stage = stage_bar(PAGE, ctx)
    rows = 1 if ctx.theme.figure_w >= STAGE_ROW_PX * ctx.theme.scale else 2
    ctx = stage_heading(stage, ctx, STAGE_PX, rows * STAGE_PRES_PX)
    subject = stage_view(ctx, stage)
    key, *at = subject.input_grad_cell
    cell, pad_cell = tuple(at), key == "grad_x_padded"
    if stage.key != "correlate":  # the full correlation's sweep has its own close-up
        masked = mask_panels(ctx.layer.input_grad, focus(subject))  # ∂L/∂x̃, ∂L/∂x: unread marked
        close_up(ctx, [replace(masked[0 if pad_cell else 1], selected=cell)], "input-grad")
    label = spec.padded_label(cell) if pad_cell else cell  # x̃'s ring has negative indices
    st.header(
        f"Gradient of {'padded input x̃' if pad_cell else 'input x'} cell [{label[0]}, {label[1]}]"
    )
    formula = subject.input_grad_formula
    formula_box(formula, ctx, formula_notes(formula), unread_text(spec, cell, pad_cell))
    cell_picker(ctx, {"grad_x": spec.in_size, "grad_x_padded": spec.padded_size}, "grad_x")
    st.divider()
    scatter_route(ctx, sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)["scatter"])


input_gradient(ctx)
page_end(ctx, PAGE, keys=False)

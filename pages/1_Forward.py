"""Forward: the window slides over the padded input; each output cell is a sum of products."""

import streamlit as st

from convviz.engine.formulas import forward_formula
from convviz.model.lecture import FORWARD_PAGE, LECTURE
from convviz.render.selection import first_reader, opening
from convviz.render.story.input_grad import feeds_text
from convviz.render.story.panels import forward_panels, written_out
from convviz.ui.clicker import stage_words
from convviz.ui.compute import forward_formula_of, sweeps_for
from convviz.ui.controls import controls, page_config
from convviz.ui.views import (
    animation,
    cell_picker,
    formula_box,
    motion_start,
    page_body,
    page_end,
    page_header,
    selected_in,
)

PAGE = FORWARD_PAGE
STAGE = LECTURE.stage("forward")
page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "Forward pass",
    "A cross-correlation: the kernel (each tap in its own colour) slides over the padded input "
    "with the stride; every output cell is the sum of the products under it. Press ▶ to play, "
    "drag the slider to scrub, click a cell to select it.",
)


@page_body
def forward(ctx):
    """The sweep, the selected cell's sum and the picker: what a click changes."""
    fw, spec = ctx.layer.forward, ctx.spec
    sweep = sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)["forward"]
    y_cell = selected_in(ctx, ("y",), spec.out_size)
    x_cell = selected_in(ctx, ("x",), spec.padded_size)
    panels = forward_panels(fw, sweep, ctx.n, ctx.k, ctx.c, selected=y_cell, reading=x_cell)
    # an input cell selected: the sum of the first output that reads it (its window holds it)
    start, cell = opening(sweep, y_cell or first_reader(sweep, x_cell))
    if not (y_cell or x_cell):  # nothing to open on: where the lecturer's playback starts
        start = motion_start(ctx, sweep.steps)
    formula = forward_formula_of(ctx.key, ctx.n, ctx.k, *cell)  # built once per cell
    animation(
        ctx,
        sweep,
        panels,
        STAGE.export,
        stage_words(STAGE, ctx)[0],
        channel=ctx.c,
        start=start,
        stage=STAGE,
        formula=formula,
        formula_of=lambda r, c: forward_formula(fw, ctx.n, ctx.k, r, c),
        cell=cell,
        # nothing selected: a slide of the sum written below lights that cell and its window
        still=None
        if y_cell
        else written_out(
            forward_panels(fw, sweep, ctx.n, ctx.k, ctx.c, selected=cell, reading=x_cell)
        ),
    )

    if x_cell is not None:
        st.info(feeds_text(sweep, x_cell, spec), icon=":material/call_split:")
    st.header(f"Output cell y[{cell[0]}, {cell[1]}]")
    formula_box(formula, ctx, "Click any output cell (or use the keyboard picker) to see its sum.")
    cell_picker(ctx, {"y": spec.out_size, "x": spec.padded_size}, "y")


forward(ctx)
page_end(ctx, PAGE)

"""Forward: the window slides over the padded input; each output cell is a sum of products."""

import streamlit as st

import convviz.ui.boot  # noqa: F401  (first: see its docstring)
from convviz.model.lecture import FORWARD_PAGE, LECTURE
from convviz.render.story.input_grad import feeds_text
from convviz.ui.controls import controls, page_config
from convviz.ui.stage_view import stage_view
from convviz.ui.views import cell_picker, formula_box, page_body, page_end, page_header

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
    spec = ctx.spec
    subject = stage_view(ctx, STAGE)
    x_cell = subject.selected(("x",), spec.padded_size)
    if x_cell is not None:
        st.info(feeds_text(subject.sweeps["forward"], x_cell, spec), icon=":material/call_split:")
    cell = subject.forward_cell
    st.header(f"Output cell y[{cell[0]}, {cell[1]}]")
    formula_box(subject.forward_formula, ctx,
                "Click any output cell (or use the keyboard picker) to see its sum.")  # fmt: skip
    cell_picker(ctx, {"y": spec.out_size, "x": spec.padded_size}, "y")


forward(ctx)
page_end(ctx, PAGE)

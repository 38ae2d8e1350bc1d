"""Two layers: layer 2's ∂L/∂h is handed to layer 1 as its ∂L/∂y, through the ReLU's gate."""

import streamlit as st

import convviz.ui.boot  # noqa: F401  (first: see its docstring)
from convviz.engine.text import shape_text
from convviz.model.lecture import CHAIN_PAGE
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.story.chain import (
    HANDOVER,
    SHUT_WORDS,
    ChainSlice,
    gate_panels,
)
from convviz.ui.chain import chain_pass, from_url, layer_two_controls, own_fields, own_query
from convviz.ui.clicker import stage_bar, stage_heading
from convviz.ui.controls import controls, page_config
from convviz.ui.stage_view import stage_view, subject_of
from convviz.ui.views import (
    chart,
    page_body,
    page_end,
    page_header,
)

PAGE = CHAIN_PAGE
# Above the figure: the stage bar and the stage's heading; on a projector the bar's two rows (its
# nine stages do not fit beside Back and Next at 1280 px)
STAGE_PX, STAGE_PRES_PX = 140, 2 * 48
page_config(PAGE)
from_url()
ctx = controls()
page_header(
    ctx,
    "Two layers: ∂L/∂x becomes the ∂L/∂y of the layer before",
    "The sidebar's layer is layer 1, the layer the other pages explain: here its ∂L/∂y does not "
    "arrive from nowhere, a layer 2 (kernel, stride and padding below) computes it. Layer 2's "
    "input gradient ∂L/∂h is handed back to layer 1, through a ReLU's gate, and layer 1 runs "
    "its own dilate, pad, rotate, correlate and mask on it.",
)


@page_body(own=own_query)
def two_layers(ctx):
    """Layer 2's fields, the stage bar and its stage."""
    if ctx.theme.show_secondary:
        layer_two_controls()
    p = chain_pass(ctx)
    if p is None:
        return
    own = own_fields()
    stage = stage_bar(PAGE, ctx)
    ctx = stage_heading(stage, ctx, STAGE_PX, STAGE_PRES_PX)
    subject = subject_of(ctx, chain=p, chain_fields=own)
    stage_view(ctx, stage, subject, extra=tuple(own.items()))
    s = ChainSlice(ctx.n, ctx.k, ctx.c)
    if stage.key == HANDOVER and ctx.theme.show_secondary:
        st.markdown("**The gate, cell by cell**")
        chart(panels_figure(gate_panels(p, s), ctx.theme, highlight=SHUT_WORDS), "gate")
    one, two = p.spec.first, p.spec.second
    st.caption(
        f"L = {p.loss.value:g} · layer 1: kernel {shape_text(one.kernel_size)}, stride "
        f"{shape_text(one.stride)} → h {shape_text(one.out_size)} · layer 2: kernel "
        f"{shape_text(two.kernel_size)}, stride {shape_text(two.stride)} → y "
        f"{shape_text(two.out_size)} · {p.spec.macs:,} multiply-adds per pass (both layers)"
    )


two_layers(ctx)
page_end(ctx, PAGE, keys=False, own=own_query())

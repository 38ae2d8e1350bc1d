"""Weight gradient: the padded input correlated with ∂L/∂y, which the stride spreads out."""

import streamlit as st

from convviz.engine.formulas import weight_grad_formula
from convviz.engine.text import bias_gradient, number
from convviz.model.lecture import WEIGHT_PAGE, Stage
from convviz.render.motion.frames import motion_figure
from convviz.render.motion.model import MAX_WINDOW_STOPS
from convviz.render.plotly.frames import writes_captions
from convviz.render.selection import opening
from convviz.render.story.panels import weight_grad_panels, window_motion, written_out
from convviz.ui.clicker import stage_bar, stage_heading, stage_words
from convviz.ui.compute import shared_view, sweeps_for, weight_grad_formula_of
from convviz.ui.controls import controls, page_config
from convviz.ui.views import (
    animated_chart,
    animation,
    cell_picker,
    formula_box,
    motion_captions,
    motion_start,
    page_body,
    page_end,
    page_header,
    selected_in,
)

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


def sweep_view(ctx, stage: Stage, sweep, w_cell, cell, formula) -> None:
    """The weight window's sweep over x̃, filling ∂L/∂w tap by tap."""
    wg = ctx.layer.weight_grad
    panels = weight_grad_panels(wg, sweep, ctx.n, ctx.k, ctx.c, selected=w_cell)
    animation(
        ctx,
        sweep,
        panels,
        stage.export,
        stage_words(stage, ctx)[0],
        channel=ctx.n,
        start=opening(sweep, w_cell)[0] if w_cell else motion_start(ctx, sweep.steps),
        formula=formula,
        formula_of=lambda r, c: weight_grad_formula(wg, ctx.k, ctx.c, r, c),
        cell=cell,
        # nothing selected: a slide of the sum written below lights that tap and its window
        still=None
        if w_cell
        else written_out(weight_grad_panels(wg, sweep, ctx.n, ctx.k, ctx.c, selected=cell)),
        stage=stage,
    )


def window_view(ctx, stage: Stage, sweep) -> None:
    """∂L/∂y spreading by the stride into the window, which then steps over x̃."""
    wg, k, c = ctx.layer.weight_grad, ctx.k, ctx.c
    start = motion_start(ctx)

    def build():
        """The motion and, for windows of a size to write out, each window's sum (built once)."""
        fig = motion_figure(window_motion(wg, sweep, ctx.n, k, c), ctx.theme, start=start)
        if not writes_captions(sweep, MAX_WINDOW_STOPS):  # a huge ∂L/∂y: the words alone
            return fig, None
        sums = motion_captions(fig, ctx, lambda cell: weight_grad_formula(wg, k, c, *cell[1:]))
        return fig, sums

    key = ("weight-window", ctx.key, ctx.n, k, c, ctx.theme, start)
    fig, sums = shared_view(key, build)
    animated_chart(fig, "dilated_grad", ctx, sums, stage=stage)


@page_body
def weight_gradient(ctx):
    """The stage bar and its stage (the weight window's sweep, or ∂L/∂y spreading into the
    window), the selected tap's sum and the bias gradient."""
    spec = ctx.spec
    sweep = sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)["weight_grad"]
    w_cell = selected_in(ctx, ("grad_w",), spec.kernel_size)
    cell = opening(sweep, w_cell)[1]
    formula = weight_grad_formula_of(ctx.key, ctx.k, ctx.c, *cell)  # built once per cell
    stage = stage_bar(PAGE, ctx)
    ctx = stage_heading(stage, ctx, STAGE_PX, STAGE_PRES_PX)
    if stage.view == "sweep":
        sweep_view(ctx, stage, sweep, w_cell, cell, formula)
    else:
        window_view(ctx, stage, sweep)
    if spec.batch > 1 and ctx.theme.show_secondary:
        st.caption(
            f"Sample n = {ctx.n} is drawn; each sum adds all {spec.batch} samples' products."
        )

    st.header(f"Weight cell [{cell[0]}, {cell[1]}] of filter k={ctx.k}, channel c={ctx.c}")
    formula_box(formula, ctx, "Click any ∂L/∂w cell (or use the keyboard picker) to see its sum.")
    cell_picker(ctx, {"grad_w": spec.kernel_size}, "grad_w")
    st.metric(f"bias gradient {bias_gradient(ctx.k)}", number(ctx.layer.weight_grad.grad_b[ctx.k]))


weight_gradient(ctx)
page_end(ctx, PAGE, keys=False)

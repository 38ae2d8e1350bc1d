"""Weight gradient: the padded input correlated with ∂L/∂y, which the stride spreads out."""

import streamlit as st

from convviz.formulas import weight_grad_formula
from convviz.render.animation_frames import writes_captions
from convviz.render.motion import MAX_WINDOW_STOPS
from convviz.render.motion_plotly import motion_figure
from convviz.render.selection import opening
from convviz.render.stories import weight_grad_panels, window_motion, written_out
from convviz.text import bias_gradient, number
from convviz.ui.compute import shared_view, sweeps_for, weight_grad_formula_of
from convviz.ui.controls import controls, page_config
from convviz.ui.views import (
    animated_chart,
    animation,
    cell_picker,
    formula_box,
    motion_captions,
    page_body,
    page_end,
    page_header,
    selected_in,
)

PAGE = "pages/3_Weight_gradient.py"
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
    """The weight window's sweep, the selected tap's sum, and ∂L/∂y spreading into the window."""
    wg, spec = ctx.layer.weight_grad, ctx.spec
    sweep = sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)["weight_grad"]
    w_cell = selected_in(ctx, ("grad_w",), spec.kernel_size)
    start, cell = opening(sweep, w_cell)
    formula = weight_grad_formula_of(ctx.key, ctx.k, ctx.c, *cell)  # built once per cell
    panels = weight_grad_panels(wg, sweep, ctx.n, ctx.k, ctx.c, selected=w_cell)
    animation(
        ctx,
        sweep,
        panels,
        "weight-grad",
        "∂L/∂w = x̃ ⋆ dilate(∂L/∂y)",
        channel=ctx.n,
        start=start,
        formula=formula,
        formula_of=lambda r, c: weight_grad_formula(wg, ctx.k, ctx.c, r, c),
        cell=cell,
        # nothing selected: a slide of the sum written below lights that tap and its window
        still=None
        if w_cell
        else written_out(weight_grad_panels(wg, sweep, ctx.n, ctx.k, ctx.c, selected=cell)),
    )
    if spec.batch > 1 and ctx.theme.show_secondary:
        st.caption(
            f"Sample n = {ctx.n} is drawn; each sum adds all {spec.batch} samples' products."
        )

    st.header(f"Weight cell [{cell[0]}, {cell[1]}] of filter k={ctx.k}, channel c={ctx.c}")
    formula_box(formula, ctx, "Click any ∂L/∂w cell (or use the keyboard picker) to see its sum.")
    cell_picker(ctx, {"grad_w": spec.kernel_size}, "grad_w")

    st.header("The stride becomes the window's dilation")

    k, c = ctx.k, ctx.c

    def window_view():
        """The motion and, for windows of a size to write out, each window's sum (built once)."""
        fig = motion_figure(window_motion(wg, sweep, ctx.n, ctx.k, ctx.c), ctx.theme, start=0)
        if not writes_captions(sweep, MAX_WINDOW_STOPS):  # a huge ∂L/∂y: the words alone
            return fig, None
        sums = motion_captions(fig, ctx, lambda cell: weight_grad_formula(wg, k, c, *cell[1:]))
        return fig, sums

    key = ("weight-window", ctx.key, ctx.n, ctx.k, ctx.c, ctx.theme)
    fig, sums = shared_view(key, window_view)
    animated_chart(fig, "dilated_grad", ctx, sums, primary=False)
    st.metric(f"bias gradient {bias_gradient(ctx.k)}", number(wg.grad_b[ctx.k]))


weight_gradient(ctx)
page_end(ctx, PAGE)

"""Input gradient: the textbook route step by step, and the scatter route beside it."""

from dataclasses import replace

import streamlit as st

from convviz.formulas import Formula, input_grad_formula
from convviz.render.animation_frames import player_meta
from convviz.render.grids import panels_figure
from convviz.render.input_story import (
    WHOLE_PASS,
    formula_notes,
    input_grad_animation,
    input_grad_story,
    scatter_panels,
    stage_motion,
    whole_pass,
)
from convviz.render.motion import gif_fits
from convviz.render.motion_gif import motion_gif
from convviz.render.motion_plotly import motion_figure
from convviz.render.selection import centre, feeding_cells, opening
from convviz.render.stories import followed_only, unread_text, written_out
from convviz.render.sweep_animations import scatter_figure
from convviz.ui.compute import (
    MAX_SCATTER_BYTES,
    MAX_SCATTER_STEPS,
    input_grad_formula_of,
    shared_view,
    sweeps_for,
)
from convviz.ui.controls import STATE, controls, page_config
from convviz.ui.views import (
    FORMULA_LINES_PX,
    animated_chart,
    animation,
    cell_picker,
    chart,
    close_up,
    entered_at_end,
    export_buttons,
    formula_box,
    formula_lines,
    motion_captions,
    page_body,
    page_end,
    page_header,
    selected_in,
    step_picker,
)

# Above the figure: the stage bar (with the whole-pass toggle), the stage's heading and caption
# (presentation mode: the bar alone, one row at 1280 px on every stage: its last "Next ▶" is as
# short as the others).
STAGE_PX, STAGE_PRES_PX = 140, 48
STAGE_ROW_PX = 1220  # the main column the presentation bar needs on one row (at a 16 px rem)
PAGE = "pages/2_Input_gradient.py"
CORRELATE = 4  # the storyboard's full correlation (0-based): a sweep
page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "Input gradient ∂L/∂x",
    "The textbook route: dilate ∂L/∂y by the stride, pad it, rotate the kernel 180°, slide it "
    "over at stride 1 (a 'full' correlation), then mask the padded ring. The scatter route "
    "below reaches the same numbers.",
)


def _store_whole() -> None:
    st.session_state[STATE]["whole"] = st.session_state["whole_pass"]


def grad_x_sums(ctx, followed: Formula):
    """The formula of a motion frame's cell: the ∂L/∂x cell the reader follows (the selected one,
    else the centre), or a cell of the full correlation (padded indices)."""
    ig = ctx.layer.input_grad
    return lambda cell: (
        followed
        if cell == ("grad_x",)
        else input_grad_formula(ig, ctx.n, ctx.c, *cell[1:], padded=True)
    )


def stage_bar(ctx, titles: list[str]) -> tuple[int, bool]:
    """The stage bar with the whole-pass toggle beside it: (the stage, whether the whole pass)."""
    current, row = step_picker(PAGE, ctx, titles, leave="whole")  # a stage picked: that stage
    with row:  # beside the stage bar: no room taken from the figure
        st.session_state["whole_pass"] = ctx.state["whole"]
        whole = st.toggle(
            "whole pass",
            key="whole_pass",
            on_change=_store_whole,
            help=WHOLE_PASS if ctx.theme.show_secondary else None,  # a projector: less width
        )
    return current, whole


def whole_pass_view(
    ctx, sweep, titles: list[str], formula: Formula, selected, at_end: bool = False
) -> None:
    """The whole backward pass as one motion; the stage bar above lights up where it is.

    at_end : open it on its last frame (the page was entered by a step back), else its first.
    """
    ig, view = ctx.layer.input_grad, (ctx.key, ctx.n, ctx.k, ctx.c, ctx.theme)
    if ctx.theme.show_secondary:
        st.markdown(f"## {WHOLE_PASS}")

    def whole_motion():
        return whole_pass(ig, sweep, ctx.n, ctx.k, ctx.c, selected)

    start = None if at_end else 0  # None: the last frame
    key = ("whole", *selected, *view, start)  # the followed cell is outlined
    fig = shared_view(key, lambda: motion_figure(whole_motion(), ctx.theme, start=start))
    # each stage's button in the bar (6 · ∂L/∂x is the mask's result: its button)
    stages = player_meta(fig)["stages"]
    follow = {s: titles.index(s) if s in titles else len(titles) - 1 for s in stages}
    captions = motion_captions(fig, ctx, grad_x_sums(ctx, formula))
    animated_chart(fig, "whole_pass", ctx, captions, follow=follow)
    if gif_fits(ctx.spec):
        st.download_button(
            "⬇ GIF of the whole pass",
            lambda: motion_gif(whole_motion().coarser(3)),
            file_name=f"convviz-{ctx.state['preset']}-backward-pass.gif",
            mime="image/gif",
            on_click="ignore",
            key="gif_whole_pass",
        )


def stage_view(ctx, step, current: int, sweep, formula: Formula, selected) -> None:
    """One stage of the storyboard: a motion, a still, or the full correlation's sweep.

    selected : (panel key, row, col) of the cell whose sum is shown (the mask outlines it).
    """
    ig, view = ctx.layer.input_grad, (ctx.key, ctx.n, ctx.k, ctx.c, ctx.theme)
    if ctx.theme.show_secondary:  # on a projector the stage bar says where we are
        st.markdown(f"## {current + 1}. {step.heading}")
        st.markdown(step.caption)
    motion = stage_motion(ig, current, ctx.n, ctx.k, ctx.c, selected)
    name = f"input-grad-step{current + 1}"
    chosen = selected_in(ctx, ("grad_x", "grad_x_padded"), ctx.spec.padded_size)
    slide = step.panels if chosen else followed_only(step.panels)  # the PNG / SVG
    if motion is not None:  # dilate, pad, rotate, mask: cells that move (opened on the result)
        shown = (current, *selected) if current == 5 else (current,)  # the mask outlines cell
        fig = shared_view(("stage", *shown, *view), lambda: motion_figure(motion, ctx.theme))
        captions = motion_captions(fig, ctx, grad_x_sums(ctx, formula))
        animated_chart(fig, f"story_{current}", ctx, captions)
        export_buttons(slide, ctx, name, step.heading, formula)
    elif step.panels:
        pres = not ctx.theme.show_secondary  # a projector: the sum under it, as under a player
        theme = ctx.theme.reserve(FORMULA_LINES_PX) if pres else ctx.theme
        fig = shared_view(
            ("still", current, *selected, *view), lambda: panels_figure(step.panels, theme)
        )
        with st.container(key="cv_screen_still"):  # on a projector, it ends the first screen
            chart(fig, f"story_{current}")
            if pres:
                formula_lines(formula, ctx)
        export_buttons(slide, ctx, name, step.heading, formula)
    else:  # the full correlation, animated
        pad_cell = tuple(selected[1:]) if selected[0] == "grad_x_padded" else None
        shown = pad_cell or ctx.spec.padded_index(selected[1:])  # the formula's cell, in x̃
        animation(
            ctx,
            sweep,
            input_grad_animation(ig, sweep, ctx.n, ctx.k, ctx.c, pad_cell),
            "input-grad-step5",
            "full correlation: rot180(w) over the padded, dilated ∂L/∂y",
            channel=ctx.k,
            start=opening(sweep, pad_cell)[0],
            formula=input_grad_formula_of(ctx.key, ctx.n, ctx.c, *shown, True),
            formula_of=lambda r, c: input_grad_formula(ig, ctx.n, ctx.c, r, c, padded=True),
            cell=shown,
            # a slide writes that cell's sum of ∂L/∂x̃ beside the grids, the cell and window lit
            still=None
            if pad_cell
            else written_out(input_grad_animation(ig, sweep, ctx.n, ctx.k, ctx.c, shown)),
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
    """The storyboard (or the whole pass), the selected cell's sum, and the scatter route."""
    ig, spec = ctx.layer.input_grad, ctx.spec
    sweeps = sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)
    pad_cell = selected_in(ctx, ("grad_x_padded",), spec.padded_size)
    cell = pad_cell or selected_in(ctx, ("grad_x",), spec.in_size) or centre(spec.in_size)
    key = "grad_x_padded" if pad_cell else "grad_x"
    formula = input_grad_formula_of(ctx.key, ctx.n, ctx.c, *cell, pad_cell is not None)
    steps = input_grad_story(
        ig, ctx.n, ctx.k, ctx.c, feeding_cells(formula, ctx.k, spec.out_size), (key, *cell)
    )
    titles = [s.title for s in steps]
    current, whole = stage_bar(ctx, titles)
    rows = 1 if ctx.theme.figure_w >= STAGE_ROW_PX * ctx.theme.scale else 2
    above = STAGE_PX if ctx.theme.show_secondary else rows * STAGE_PRES_PX
    ctx = replace(ctx, theme=ctx.theme.reserve(above))
    at_end = entered_at_end(PAGE)  # spent on this run, whichever view it draws
    if whole:
        whole_pass_view(ctx, sweeps["input_grad"], titles, formula, (key, *cell), at_end)
    else:
        stage_view(ctx, steps[current], current, sweeps["input_grad"], formula, (key, *cell))

    if whole or current != CORRELATE:  # the full correlation's sweep has its own close-up
        mask_step = steps[5].panels  # ∂L/∂x̃ and ∂L/∂x, their unread cells marked
        close_up(ctx, [replace(mask_step[0 if pad_cell else 1], selected=cell)], "input-grad")
    label = spec.padded_label(cell) if pad_cell else cell  # x̃'s ring has negative indices
    st.header(
        f"Gradient of {'padded input x̃' if pad_cell else 'input x'} cell [{label[0]}, {label[1]}]"
    )
    formula_box(formula, ctx, formula_notes(formula), unread_text(spec, cell, bool(pad_cell)))
    cell_picker(ctx, {"grad_x": spec.in_size, "grad_x_padded": spec.padded_size}, "grad_x")
    st.divider()
    scatter_route(ctx, sweeps["scatter"])


input_gradient(ctx)
page_end(ctx, PAGE, keys=False)

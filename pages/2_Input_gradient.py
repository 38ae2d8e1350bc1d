"""Input gradient: the textbook route step by step, and the scatter route beside it."""

from dataclasses import replace

import streamlit as st

from convviz.formulas import input_grad_formula
from convviz.render.animate import scatter_figure
from convviz.render.grids import panels_figure
from convviz.render.motion import MAX_GIF_SIDE, motion_figure, motion_gif
from convviz.render.stories import (
    WHOLE_PASS,
    centre,
    feeding_cells,
    formula_notes,
    input_grad_animation,
    input_grad_story,
    scatter_panels,
    stage_motion,
    step_of,
    whole_pass,
)
from convviz.ui.compute import shared_view, sweeps_for
from convviz.ui.controls import controls, page_config
from convviz.ui.views import (
    animated_chart,
    animation,
    cell_picker,
    chart,
    export_buttons,
    formula_box,
    page_body,
    page_end,
    page_header,
    selected_in,
    step_picker,
)

# Above the figure: the stage bar (with the whole-pass toggle), the stage's heading and caption
# (presentation mode: the bar alone).
STAGE_PX, STAGE_PRES_PX = 140, 70
PAGE = "pages/2_Input_gradient.py"
page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "Input gradient ∂L/∂x",
    "The textbook route: dilate ∂L/∂y by the stride, pad it, rotate the kernel 180°, slide it "
    "over at stride 1 (a 'full' correlation), then mask the padded ring. The scatter route "
    "below reaches the same numbers.",
)


@page_body
def input_gradient(ctx):
    """The storyboard (or the whole pass), the selected cell's sum, and the scatter route."""
    ig, spec = ctx.layer.input_grad, ctx.spec
    sweeps = sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)
    pad_cell = selected_in(ctx, ("grad_x_padded",), spec.padded_size)
    cell = pad_cell or selected_in(ctx, ("grad_x",), spec.in_size) or centre(spec.in_size)
    key = "grad_x_padded" if pad_cell else "grad_x"
    formula = input_grad_formula(ig, ctx.n, ctx.c, *cell, padded=pad_cell is not None)
    steps = input_grad_story(
        ig, ctx.n, ctx.k, ctx.c, feeding_cells(formula, ctx.k, spec.out_size), (key, *cell)
    )
    current, row = step_picker(PAGE, ctx, [s.title for s in steps])
    if st.session_state.get("whole_pass_step") != current:  # a stage was picked: show that stage
        st.session_state["whole_pass"] = False
    with row:  # beside the stage bar: no room taken from the figure
        whole = st.toggle(
            "whole pass",
            key="whole_pass",
            on_change=st.session_state.__setitem__,
            args=("whole_pass_step", current),
            help="The whole backward pass in one animation: ∂L/∂y → dilate → pad → rotate → "
            "correlate → mask → ∂L/∂x",
        )
    above = STAGE_PX if ctx.theme.show_secondary else STAGE_PRES_PX
    ctx = replace(ctx, theme=ctx.theme.reserve(above))
    step = steps[current]
    view = (ctx.key, ctx.n, ctx.k, ctx.c, ctx.theme)
    if whole:
        if ctx.theme.show_secondary:
            st.markdown(f"### {WHOLE_PASS}")

        def whole_motion():
            return whole_pass(ig, sweeps["input_grad"], ctx.n, ctx.k, ctx.c)

        fig = shared_view(
            ("whole", *view), lambda: motion_figure(whole_motion(), ctx.theme, start=0)
        )
        animated_chart(fig, "whole_pass", ctx, None)
        if max(spec.padded_size) <= MAX_GIF_SIDE:
            st.download_button(
                "⬇ GIF of the whole pass",
                lambda: motion_gif(whole_motion().coarser(3)),
                file_name=f"convviz-{ctx.state['preset']}-backward-pass.gif",
                mime="image/gif",
                on_click="ignore",
                key="gif_whole_pass",
            )
    else:
        if ctx.theme.show_secondary:  # on a projector the stage bar says where we are
            st.markdown(f"### {current + 1}. {step.heading}")
            st.markdown(step.caption)
        motion = stage_motion(ig, current, ctx.n, ctx.k, ctx.c, (key, *cell))
        if motion is not None:  # dilate, pad, rotate, mask: cells that move (opened on the result)
            shown = (current, key, *cell) if current == 5 else (current,)  # the mask outlines cell
            fig = shared_view(("stage", *shown, *view), lambda: motion_figure(motion, ctx.theme))
            animated_chart(fig, f"story_{current}", ctx, None)
            export_buttons(step.panels, ctx, f"input-grad-step{current + 1}", step.heading)
        elif step.panels:
            chart(panels_figure(step.panels, ctx.theme), f"story_{current}")
            export_buttons(step.panels, ctx, f"input-grad-step{current + 1}", step.heading)
        else:  # the full correlation, animated
            sweep = sweeps["input_grad"]
            panels = input_grad_animation(ig, sweep, ctx.n, ctx.k, ctx.c, pad_cell)
            animation(
                ctx,
                sweep,
                panels,
                "full-correlation",
                "full correlation: rot180(w) over the padded, dilated ∂L/∂y",
                channel=ctx.k,
                start=step_of(sweep, pad_cell) if pad_cell else sweep.steps - 1,
                formula_of=lambda r, c: input_grad_formula(ig, ctx.n, ctx.c, r, c, padded=True),
            )

    label = spec.padded_label(cell) if pad_cell else cell  # x̃'s ring has negative indices
    st.subheader(
        f"Gradient of {'padded input x̃' if pad_cell else 'input x'} cell [{label[0]}, {label[1]}]"
    )
    formula_box(formula, ctx, formula_notes(formula))
    cell_picker(ctx, {"grad_x": spec.in_size, "grad_x_padded": spec.padded_size}, "grad_x")

    st.divider()
    st.subheader("Scatter route: each ∂L/∂y cell stamps ∂L/∂y · w onto its window")
    if sweeps["scatter"] is None:
        st.info(
            "The scatter animation keeps one grid per stamp; it is offered up to 1,024 stamps "
            "(output cells × filters). The textbook route above computes the same numbers at "
            "every size."
        )
    else:
        fig = scatter_figure(
            sweeps["scatter"],
            *scatter_panels(ctx.layer, ctx.n, ctx.k, ctx.c),
            ctx.theme,
            title="stamps add up to the same ∂L/∂x̃",
        )
        animated_chart(fig, "scatter", ctx, None, primary=False)


input_gradient(ctx)
page_end(ctx, PAGE, keys=False)

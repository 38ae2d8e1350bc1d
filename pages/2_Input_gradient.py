"""Input gradient: the textbook route step by step, and the scatter route beside it."""

from dataclasses import replace

import streamlit as st

from convviz.engine.formulas import Formula, input_grad_formula
from convviz.model.lecture import INPUT_PAGE, LECTURE, Stage
from convviz.render.motion.frames import motion_figure
from convviz.render.motion.gif import motion_gif
from convviz.render.motion.model import gif_fits
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.plotly.sweeps import scatter_figure
from convviz.render.selection import centre, feeding_cells, opening
from convviz.render.story.input_grad import (
    PANELS,
    Focus,
    formula_notes,
    input_grad_animation,
    mask_panels,
    scatter_panels,
    stage_motion,
    unread_text,
)
from convviz.render.story.panels import followed_only, written_out
from convviz.ui.clicker import page_stages, stage_bar, stage_heading, stage_words
from convviz.ui.compute import (
    MAX_SCATTER_BYTES,
    MAX_SCATTER_STEPS,
    input_grad_formula_of,
    shared_view,
    sweeps_for,
)
from convviz.ui.controls import controls, page_config
from convviz.ui.views import (
    FORMULA_LINES_PX,
    animated_chart,
    animation,
    cell_picker,
    chart,
    close_up,
    export_buttons,
    formula_box,
    formula_lines,
    motion_captions,
    motion_start,
    page_body,
    page_end,
    page_header,
    selected_in,
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


def grad_x_sums(ctx, followed: Formula):
    """The formula of a motion frame's cell: the ∂L/∂x cell the reader follows (the selected one,
    else the centre), or a cell of the full correlation (padded indices)."""
    ig = ctx.layer.input_grad
    return lambda cell: (
        followed
        if cell == ("grad_x",)
        else input_grad_formula(ig, ctx.n, ctx.c, *cell[1:], padded=True)
    )


def motion_view(ctx, stage: Stage, sweep, formula: Formula, focus: Focus) -> None:
    """A stage whose cells move (dilate, pad, rotate, mask, the whole pass), with its player;
    the whole pass lights up the stage bar's stage of each frame."""
    ig, view = ctx.layer.input_grad, (ctx.key, ctx.n, ctx.k, ctx.c, ctx.theme)
    start = motion_start(ctx)
    follows = (*focus.selected,) if stage.formula else ()  # it outlines the followed cell

    def motion():
        return stage_motion(stage.key, ig, sweep, focus)

    key = ("motion", stage.key, *follows, *view, start)
    fig = shared_view(key, lambda: motion_figure(motion(), ctx.theme, start=start))
    follow = None
    if stage.covers:  # each covered stage's button in the bar
        bar = [LECTURE.label(s) for s in page_stages(PAGE, ctx)]
        follow = {LECTURE.label(LECTURE.stage(k)): bar.index(LECTURE.label(LECTURE.stage(k)))
                  for k in stage.covers}  # fmt: skip
    captions = motion_captions(fig, ctx, grad_x_sums(ctx, formula))
    animated_chart(fig, f"stage_{stage.key}", ctx, captions, follow=follow, stage=stage)
    heading, _ = stage_words(stage, ctx)
    if stage.still:
        slide = PANELS[stage.key](ig, focus)
        chosen = selected_in(ctx, ("grad_x", "grad_x_padded"), ctx.spec.padded_size)
        export_buttons(slide if chosen else followed_only(slide), ctx, stage.export, heading,
                       formula)  # fmt: skip
    elif gif_fits(ctx.spec):
        st.download_button(
            "⬇ GIF of the whole pass",
            lambda: motion_gif(motion().coarser(3)),
            file_name=f"convviz-{ctx.state['preset']}-{stage.export}.gif",
            mime="image/gif",
            on_click="ignore",
            key=f"gif_{stage.key}",
        )


def still_view(ctx, stage: Stage, formula: Formula, focus: Focus) -> None:
    """A stage drawn as still grids (∂L/∂y as it arrives); on a projector its sum under it."""
    ig, view = ctx.layer.input_grad, (ctx.key, ctx.n, ctx.k, ctx.c, ctx.theme)
    panels = PANELS[stage.key](ig, focus)
    pres = not ctx.theme.show_secondary  # a projector: the sum under it, as under a player
    theme = ctx.theme.reserve(FORMULA_LINES_PX) if pres else ctx.theme
    key = ("still", stage.key, *focus.selected, *view)
    fig = shared_view(key, lambda: panels_figure(panels, theme))
    with st.container(key="cv_screen_still"):  # on a projector, it ends the first screen
        chart(fig, f"stage_{stage.key}")
        if pres:
            formula_lines(formula, ctx)
    chosen = selected_in(ctx, ("grad_x", "grad_x_padded"), ctx.spec.padded_size)
    heading, _ = stage_words(stage, ctx)
    export_buttons(panels if chosen else followed_only(panels), ctx, stage.export, heading,
                   formula)  # fmt: skip


def sweep_view(ctx, stage: Stage, sweep, selected) -> None:
    """The full correlation's sliding window, its player writing each cell's sum."""
    ig = ctx.layer.input_grad
    pad_cell = tuple(selected[1:]) if selected[0] == "grad_x_padded" else None
    shown = pad_cell or ctx.spec.padded_index(selected[1:])  # the formula's cell, in x̃
    heading, _ = stage_words(stage, ctx)
    animation(
        ctx,
        sweep,
        input_grad_animation(ig, sweep, ctx.n, ctx.k, ctx.c, pad_cell),
        stage.export,
        heading,
        channel=ctx.k,
        start=opening(sweep, pad_cell)[0] if pad_cell else motion_start(ctx, sweep.steps),
        formula=input_grad_formula_of(ctx.key, ctx.n, ctx.c, *shown, True),
        formula_of=lambda r, c: input_grad_formula(ig, ctx.n, ctx.c, r, c, padded=True),
        cell=shown,
        # a slide writes that cell's sum of ∂L/∂x̃ beside the grids, the cell and window lit
        still=None
        if pad_cell
        else written_out(input_grad_animation(ig, sweep, ctx.n, ctx.k, ctx.c, shown)),
        stage=stage,
    )


def stage_view(ctx, stage: Stage, sweep, formula: Formula, focus: Focus) -> None:
    """One stage of the page, drawn as the lecture says (a motion, a still or a sweep)."""
    if stage.view == "motion":
        motion_view(ctx, stage, sweep, formula, focus)
    elif stage.view == "still":
        still_view(ctx, stage, formula, focus)
    else:
        sweep_view(ctx, stage, sweep, focus.selected)


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
    sweeps = sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)
    pad_cell = selected_in(ctx, ("grad_x_padded",), spec.padded_size)
    cell = pad_cell or selected_in(ctx, ("grad_x",), spec.in_size) or centre(spec.in_size)
    key = "grad_x_padded" if pad_cell else "grad_x"
    formula = input_grad_formula_of(ctx.key, ctx.n, ctx.c, *cell, pad_cell is not None)
    feeding = feeding_cells(formula, ctx.k, spec.out_size)
    focus = Focus(ctx.n, ctx.k, ctx.c, (key, *cell), feeding)
    stage = stage_bar(PAGE, ctx)
    rows = 1 if ctx.theme.figure_w >= STAGE_ROW_PX * ctx.theme.scale else 2
    ctx = stage_heading(stage, ctx, STAGE_PX, rows * STAGE_PRES_PX)
    stage_view(ctx, stage, sweeps["input_grad"], formula, focus)

    if stage.key != "correlate":  # the full correlation's sweep has its own close-up
        masked = mask_panels(ctx.layer.input_grad, focus)  # ∂L/∂x̃, ∂L/∂x: unread cells marked
        close_up(ctx, [replace(masked[0 if pad_cell else 1], selected=cell)], "input-grad")
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

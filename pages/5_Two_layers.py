"""Two layers: layer 2's ∂L/∂h is handed to layer 1 as its ∂L/∂y, through the ReLU's gate."""

import streamlit as st

from convviz.engine.formulas import input_grad_formula
from convviz.engine.sweeps import input_grad_sweep
from convviz.engine.text import shape_text
from convviz.model.lecture import CHAIN_PAGE, Stage
from convviz.render.motion.frames import motion_figure
from convviz.render.motion.gif import motion_gif
from convviz.render.motion.model import gif_fits
from convviz.render.plotly.frames import player_meta, writes_captions
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.plotly.sweeps import sweep_figure
from convviz.render.selection import centre, opening
from convviz.render.story.chain import (
    HANDOVER,
    PANELS,
    SHUT_WORDS,
    ChainSlice,
    cell_words,
    gate_panels,
    handed_over,
    handover_motion,
    layer_one_motion,
    outlined,
    selected_cell,
)
from convviz.render.story.input_grad import Focus, input_grad_animation
from convviz.ui.chain import chain_pass, from_url, layer_two_controls, own_query
from convviz.ui.clicker import stage_bar, stage_heading, stage_words
from convviz.ui.compute import CACHE, lean_sweep, shared_view
from convviz.ui.controls import controls, page_config
from convviz.ui.described import stage_in_words
from convviz.ui.views import (
    animated_chart,
    chart,
    export_buttons,
    frame_caption,
    motion_captions,
    motion_start,
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


WORDS_PX = 40  # the selected cell's line under a still's grids on a projector


def still_view(ctx, p, stage: Stage, s: ChainSlice, own: tuple, cell) -> None:
    """A stage drawn as still grids (the forward chain, layer 2's ∂L/∂h, both ∂L/∂w), the
    selected cell outlined in each grid of its shape and its numbers under them."""
    panels = outlined(PANELS[stage.key](p, s), cell)
    words = cell_words(p, s, cell)
    theme = ctx.theme.reserve(WORDS_PX) if words else ctx.theme
    key = ("chain-still", stage.key, ctx.key, own, s, cell, theme)
    fig = shared_view(key, lambda: panels_figure(panels, theme, highlight=SHUT_WORDS))
    with st.container(key="cv_screen_still"):  # on a projector, it ends the first screen
        chart(fig, f"stage_{stage.key}")
        if words:
            st.markdown(words)
    export_buttons(panels, ctx, stage.export, stage_words(stage, ctx)[0])


def followed(cell) -> tuple[str, int, int] | None:
    """The selected cell as layer 1's input-gradient stages follow it: a cell of ∂L/∂x or ∂L/∂x̃."""
    return cell if cell and cell[0] in ("grad_x", "grad_x_padded") else None


def motion_view(ctx, p, stage: Stage, s: ChainSlice, own: tuple, cell) -> None:
    """The handover, or one of layer 1's input-gradient stages on ∂L/∂y₁ = ∂L/∂h after the gate;
    under the player the sum of the cell a frame computes, and the selected cell's numbers."""
    ig = p.first.input_grad
    start = motion_start(ctx)
    focus = Focus(s.n, s.k, s.c, followed(cell))

    def motion():
        if stage.key == HANDOVER:
            return handover_motion(p, s)
        return layer_one_motion(p, stage.key, s, focus)

    def build():
        fig = motion_figure(motion(), ctx.theme, start=start)
        return handed_over(fig, p) if stage.key == HANDOVER else fig

    view = ("chain-motion", stage.key, ctx.key, own, s, focus.selected, ctx.theme, start)
    fig = shared_view(view, build)
    grad_x = cell[1:] if cell and cell[0] == "grad_x" else centre(ctx.spec.in_size)

    def sums(at):
        if at == ("grad_x",):
            return input_grad_formula(ig, s.n, s.c, *grad_x)
        return input_grad_formula(ig, s.n, s.c, *at[1:], padded=True)

    captions = with_words(motion_captions(fig, ctx, sums), cell_words(p, s, cell))
    animated_chart(fig, f"stage_{stage.key}", ctx, captions, stage=stage)
    if gif_fits(ctx.spec):  # layer 1's padded grid is the widest a motion of the page draws
        st.download_button(
            "⬇ GIF of this stage",
            lambda: motion_gif(motion().coarser(3)),
            file_name=f"convviz-{ctx.state['preset']}-{stage.export}.gif",
            mime="image/gif",
            on_click="ignore",
            key=f"gif_{stage.key}",
        )


def sweep_view(ctx, p, stage: Stage, s: ChainSlice, own: tuple, cell) -> None:
    """Layer 1's full correlation: rot180 w₁ slides over its dilated, padded ∂L/∂y, writing
    ∂L/∂x̃ cell by cell (each frame's sum under the player); a selected ∂L/∂x̃ cell opens it
    on the frame that computes it."""
    ig = p.first.input_grad
    sweep = CACHE.get(("chain-sweep", ctx.key, own, s.n, s.c),
                      lambda: input_grad_sweep(ig, s.n, s.c, build=lean_sweep))  # fmt: skip
    start = motion_start(ctx, sweep.steps)
    if cell and cell[0] == "grad_x_padded":
        start = opening(sweep, cell[1:])[0]

    def build():
        panels = input_grad_animation(ig, sweep, s.n, s.k, s.c)
        fig = sweep_figure(sweep, *panels, ctx.theme, channel=s.k, start=start,
                           title=stage_words(stage, ctx)[0])  # fmt: skip
        steps = player_meta(fig)["steps"]
        if not writes_captions(sweep, len(steps)):
            return fig, None
        sums = [input_grad_formula(ig, s.n, s.c, int(r), int(q), padded=True)
                for r, q in sweep.targets[steps]]  # fmt: skip
        return fig, [frame_caption(f, ctx.theme) for f in sums]

    fig, captions = shared_view(("chain-sweep", ctx.key, own, s, ctx.theme, start), build)
    captions = with_words(captions, cell_words(p, s, cell))
    animated_chart(fig, f"stage_{stage.key}", ctx, captions, stage=stage)


def with_words(captions, words: str):
    """Each frame's lines under the player, and the selected cell's numbers after them."""
    if not words or captions is None:
        return captions
    return [[*lines, words] for lines in captions]


@page_body(own=own_query)
def two_layers(ctx):
    """Layer 2's fields, the stage bar and its stage."""
    if ctx.theme.show_secondary:
        layer_two_controls()
    p = chain_pass(ctx)
    if p is None:
        return
    own = tuple(own_query().items())
    s = ChainSlice(ctx.n, ctx.k, ctx.c)
    stage = stage_bar(PAGE, ctx)
    ctx = stage_heading(stage, ctx, STAGE_PX, STAGE_PRES_PX)
    cell = selected_cell(p, s, ctx.selection)
    if stage.view == "motion":
        motion_view(ctx, p, stage, s, own, cell)
    elif stage.view == "sweep":
        sweep_view(ctx, p, stage, s, own, cell)
    else:
        still_view(ctx, p, stage, s, own, cell)
    stage_in_words(ctx, stage, f"chart_stage_{stage.key}", still=stage.view == "still")
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

"""Two layers: layer 2's ∂L/∂h is handed to layer 1 as its ∂L/∂y, through the ReLU's gate."""

import streamlit as st

from convviz.formulas import input_grad_formula
from convviz.lecture import CHAIN_PAGE, Stage
from convviz.render.animation_frames import player_meta, writes_captions
from convviz.render.chain_story import (
    HANDOVER,
    PANELS,
    SHUT_WORDS,
    ChainSlice,
    gate_panels,
    handover_motion,
    layer_one_motion,
)
from convviz.render.grid_figure import panels_figure
from convviz.render.input_story import input_grad_animation
from convviz.render.motion import gif_fits
from convviz.render.motion_gif import motion_gif
from convviz.render.motion_plotly import motion_figure
from convviz.render.selection import centre
from convviz.render.sweep_animations import sweep_figure
from convviz.sweeps import input_grad_sweep
from convviz.text import shape_text
from convviz.ui.chain import chain_pass, from_url, layer_two_controls, own_query
from convviz.ui.clicker import stage_bar, stage_heading, stage_words
from convviz.ui.compute import CACHE, lean_sweep, shared_view
from convviz.ui.controls import controls, page_config
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


def still_view(ctx, p, stage: Stage, s: ChainSlice, own: tuple) -> None:
    """A stage drawn as still grids (the forward chain, layer 2's ∂L/∂h, both ∂L/∂w)."""
    panels = PANELS[stage.key](p, s)
    key = ("chain-still", stage.key, ctx.key, own, s, ctx.theme)
    fig = shared_view(key, lambda: panels_figure(panels, ctx.theme, highlight=SHUT_WORDS))
    with st.container(key="cv_screen_still"):  # on a projector, it ends the first screen
        chart(fig, f"stage_{stage.key}")
    export_buttons(panels, ctx, stage.export, stage_words(stage, ctx)[0])


def motion_view(ctx, p, stage: Stage, s: ChainSlice, own: tuple) -> None:
    """The handover, or one of layer 1's input-gradient stages on ∂L/∂y₁ = ∂L/∂h after the gate."""
    ig = p.first.input_grad
    start = motion_start(ctx)

    def motion():
        if stage.key == HANDOVER:
            return handover_motion(p, s)
        return layer_one_motion(p, stage.key, s)

    def build():
        return motion_figure(motion(), ctx.theme, start=start)

    fig = shared_view(("chain-motion", stage.key, ctx.key, own, s, ctx.theme, start), build)
    cell = centre(ctx.spec.in_size)

    def sums(at):
        if at == ("grad_x",):
            return input_grad_formula(ig, s.n, s.c, *cell)
        return input_grad_formula(ig, s.n, s.c, *at[1:], padded=True)

    animated_chart(fig, f"stage_{stage.key}", ctx, motion_captions(fig, ctx, sums), stage=stage)
    if gif_fits(ctx.spec):  # layer 1's padded grid is the widest a motion of the page draws
        st.download_button(
            "⬇ GIF of this stage",
            lambda: motion_gif(motion().coarser(3)),
            file_name=f"convviz-{ctx.state['preset']}-{stage.export}.gif",
            mime="image/gif",
            on_click="ignore",
            key=f"gif_{stage.key}",
        )


def sweep_view(ctx, p, stage: Stage, s: ChainSlice, own: tuple) -> None:
    """Layer 1's full correlation: rot180 w₁ slides over its dilated, padded ∂L/∂y, writing
    ∂L/∂x̃ cell by cell (each frame's sum under the player)."""
    ig = p.first.input_grad
    sweep = CACHE.get(("chain-sweep", ctx.key, own, s.n, s.c),
                      lambda: input_grad_sweep(ig, s.n, s.c, build=lean_sweep))  # fmt: skip
    start = motion_start(ctx, sweep.steps)

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
    animated_chart(fig, f"stage_{stage.key}", ctx, captions, stage=stage)


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
    if stage.view == "motion":
        motion_view(ctx, p, stage, s, own)
    elif stage.view == "sweep":
        sweep_view(ctx, p, stage, s, own)
    else:
        still_view(ctx, p, stage, s, own)
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

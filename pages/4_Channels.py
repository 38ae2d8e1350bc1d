"""Channels: C_in channels, C_out filters, a batch; grad_w per (filter, channel) pair."""

import streamlit as st

from convviz.render.channels import heatmap_grid
from convviz.render.grids import panels_figure
from convviz.render.stories import channel_grids, layer_summary, weight_grad_panels
from convviz.ui.compute import contributions_for
from convviz.ui.controls import Context, controls, page_config, slice_chart
from convviz.ui.views import page_end, page_header

PAGE = "pages/4_Channels.py"
# What a click on a tile of each grid selects: the slice fields its rows and its columns are
# (`channel_grids` lays them out; the ∂L/∂x[n, c] sum's last column is the sum, no filter).
PICKS = {"x": (None, "c"), "grad_w": ("k", "c"), "sum_k": (None, "k"), "grad_x": (None, "c")}
page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "Channels, filters and the batch",
    "When depths differ nothing is padded to match: ∂L/∂w[k, c] = Σₙ x̃[n, c] ⋆ "
    "dilate(∂L/∂y[n, k]) for every filter k and channel c, and ∂L/∂x[n, c] = "
    "Σₖ full(dilate(∂L/∂y[n, k]), rot180 w[k, c]). Click a tile to show that filter or channel.",
)


def channels(ctx: Context) -> None:
    """Every channel, filter and sample of the layer; a click on a tile selects its k or c.

    Not a page-body fragment: a click changes the slice, which the sidebar shows too.
    """
    spec = ctx.spec
    contributions = contributions_for(ctx.key, ctx.n, ctx.c)
    grids = channel_grids(ctx.layer, ctx.n, ctx.c, contributions, ctx.k)
    st.markdown(layer_summary(spec, ctx.n))
    for grid in grids:
        fig = heatmap_grid(
            grid.arrays,
            grid.row_labels,
            grid.col_labels,
            ctx.theme,
            title=grid.title,
            selected=grid.selected,
            click=grid.key,
            click_cols=spec.out_channels if grid.key == "sum_k" else None,
        )
        slice_chart(fig, grid.key, PICKS[grid.key], ctx)
        if ctx.theme.show_secondary and grid.caption:
            st.caption(grid.caption)
        if grid.key == "grad_w":  # the outlined tile with what makes it (filter k, channel c)
            tile = weight_grad_panels(ctx.layer.weight_grad, None, ctx.n, ctx.k, ctx.c)
            st.plotly_chart(panels_figure(tile, ctx.theme), key="tile", width="content", theme=None)


channels(ctx)
page_end(ctx, PAGE)

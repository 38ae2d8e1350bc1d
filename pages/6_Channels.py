"""Channels: C_in channels, C_out filters, a batch; grad_w per (filter, channel) pair."""

from functools import partial

import streamlit as st

import convviz.ui.boot  # noqa: F401  (first: see its docstring)
from convviz.model.lecture import CHANNELS_PAGE, LECTURE, Seen
from convviz.render.plotly.channels import heatmap_grid, oriented
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.selection import zoom_panels
from convviz.render.story.panels import (
    channel_grids,
    filter_sum_grid,
    grad_x_panel,
    layer_summary,
    weight_grad_panels,
)
from convviz.ui.compute import contributions_for, shared_view, sweeps_for
from convviz.ui.controls import Context, controls, page_config, slice_chart
from convviz.ui.described import figure_in_words
from convviz.ui.views import (
    cell_picker,
    chart,
    close_up,
    page_end,
    page_header,
    selected_formula,
    selected_in,
)

PAGE = CHANNELS_PAGE
page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    LECTURE.stage("channels").heading_for(Seen(ctx.spec)),
    "When depths differ nothing is padded to match: ∂L/∂w[k, c] = Σₙ x̃[n, c] ⋆ "
    "dilate(∂L/∂y[n, k]) for every filter k and channel c, and ∂L/∂x[n, c] = "
    "Σₖ full(dilate(∂L/∂y[n, k]), rot180 w[k, c]). Click a tile to show that filter or channel.",
)


# On a projector one view at a time, as big as the screen allows: a lecturer picks it here.
VIEWS = {
    "x": "input x",
    "grad_w": "∂L/∂w",
    "tile": "∂L/∂w[k, c] and its operands",
    "sum_k": "∂L/∂x by filter",
    "grad_x": "∂L/∂x",
}


def tiles(grid, theme):
    """A grid's figure of tiles; on a projector untitled (the view's name stands for it)."""
    return heatmap_grid(
        grid.arrays,
        grid.row_labels,
        grid.col_labels,
        theme,
        title=grid.title if theme.show_secondary else "",
        selected=grid.selected,
        click=grid.key,
        click_cols=grid.click_cols,
        unread=grid.unread,
    )


def tile(ctx: Context, w_cell):
    """The (k, c) tile of ∂L/∂w with its operands, a selected cell's window lit; operands too
    big to number come with a close-up of that window (of the centre tap's, if none is
    selected), as the Weight gradient page's."""
    big = max(ctx.spec.padded_size) > ctx.theme.max_text_cells
    sweep = sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)["weight_grad"] if w_cell or big else None
    panels = weight_grad_panels(ctx.layer.weight_grad, sweep, ctx.n, ctx.k, ctx.c, w_cell)
    zoom = zoom_panels(sweep, *panels, cell=w_cell)[:2] if big else None  # ∂L/∂w is numbered
    return panels_figure(panels, ctx.theme), zoom and panels_figure(zoom, ctx.theme)


def grad_x_close_up(ctx: Context) -> None:
    """∂L/∂x[n, c] around its selected cell (else its centre) when too big to number, with the
    selected cell's formula; a cell picked with the keyboard moves it."""
    ig, spec = ctx.layer.input_grad, ctx.spec
    if max(spec.in_size) <= ctx.theme.max_text_cells:
        return
    cell = selected_in(ctx, ("grad_x",), spec.in_size)
    close_up(ctx, [grad_x_panel(ig, ctx.n, ctx.c, cell)], "channels-grad-x")
    cell_picker(ctx, {"grad_x": spec.in_size, "grad_w": spec.kernel_size}, "grad_x")


def by_filter(ctx: Context, shows: tuple) -> None:
    """∂L/∂x[n, c] as a sum over the filters, in an expander: built only while it is open."""
    K = ctx.spec.out_channels
    title = f"∂L/∂x[n={ctx.n}, c={ctx.c}] by filter: {K} full correlations and their sum"
    box = st.expander(title, key="channels_by_filter", on_change="rerun")
    if not box.open:
        return
    with box:
        shares = contributions_for(ctx.key, ctx.n, ctx.c)
        grid = filter_sum_grid(ctx.layer, ctx.n, ctx.c, shares, ctx.k)
        fig = shared_view(("channels", grid.key, *shows), lambda: tiles(grid, ctx.theme))
        slice_chart(fig, grid.key, grid.fields, ctx)
        st.caption(grid.caption)


def channels(ctx: Context) -> None:
    """Every channel, filter and sample of the layer; a click on a tile selects its k or c.

    Not a page-body fragment: a click changes the slice, which the sidebar shows too.
    """
    spec, shows = ctx.spec, (ctx.key, ctx.n, ctx.k, ctx.c, ctx.theme)  # what the figures show
    shown, projector = set(VIEWS), not ctx.theme.show_secondary
    # a layer too big to number on a laptop: ∂L/∂x by filter (a big tile per filter) is drawn
    # when asked for, in its expander
    folded = not projector and max(spec.in_size) > ctx.theme.max_text_cells
    contributions = None if folded else contributions_for(ctx.key, ctx.n, ctx.c)
    grids = channel_grids(ctx.layer, ctx.n, ctx.c, contributions, ctx.k)
    st.markdown(layer_summary(spec, ctx.n))
    if projector:  # one view, as big as the screen allows, its longer side across
        view = st.segmented_control(
            "Show",
            list(VIEWS),
            format_func=VIEWS.get,
            default="x",
            key="channels_view",
            label_visibility="collapsed",
        )
        shown = {view or "x"}
    for grid in grids:
        if grid.key in shown:
            grid = oriented(grid, ctx.theme)
            fig = shared_view(("channels", grid.key, *shows), lambda g=grid: tiles(g, ctx.theme))
            slice_chart(fig, grid.key, grid.fields, ctx)
            figure_in_words(f"tiles_{grid.key}_{ctx.n}_{ctx.k}_{ctx.c}",
                            f"{grid.title.rstrip('.')}. {grid.caption}")  # fmt: skip
            if not projector and grid.caption:
                st.caption(grid.caption)
            elif projector and grid.outlined:  # the title and caption that said so are hidden
                st.caption(f"{grid.title}. Outlined: {grid.outlined}, the slice the other pages "
                           "draw. Click a tile to draw another.")  # fmt: skip
        if grid.key == "grad_w" and "tile" in shown:  # the outlined tile with what makes it
            w_cell = selected_in(ctx, ("grad_w",), spec.kernel_size)  # its window is lit
            fig, zoom = shared_view(("channels-tile", w_cell, *shows), partial(tile, ctx, w_cell))
            chart(fig, "tile")
            if zoom is not None:
                st.caption("Close up, numbers: the window of the selected ∂L/∂w cell.")
                chart(zoom, "tile_zoom")
            big = max(spec.in_size) > ctx.theme.max_text_cells  # ∂L/∂x's close-up is clickable
            selected_formula(ctx, ("grad_w", "grad_x") if big else ("grad_w",))
        if grid.key == "grad_w" and folded:
            by_filter(ctx, shows)
        if grid.key == "grad_x" and "grad_x" in shown:
            grad_x_close_up(ctx)


channels(ctx)
page_end(ctx, PAGE)

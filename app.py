"""Overview: the whole layer at a glance, the output-size arithmetic, values and an oracle check."""

from functools import partial

import pyarrow as pa
import streamlit as st

import convviz.ui.boot  # noqa: F401  (first: see its docstring)
from convviz.model.pages import PAGES
from convviz.model.presets import PRESETS_BY_KEY
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.story.panels import overview_panels, shape_rows
from convviz.ui.compute import reference_check, shared_view
from convviz.ui.controls import controls, page_config
from convviz.ui.described import figure_in_words
from convviz.ui.editors import value_editors
from convviz.ui.sidebar import page_links
from convviz.ui.views import (
    cell_picker,
    chart,
    close_up,
    export_buttons,
    layer_sums,
    page_body,
    page_end,
    page_header,
    selected_formula,
)

PAGE = "app.py"
SUMS = ("y", "grad_x", "grad_w")  # the grids whose cells have a formula
OVERVIEW_WORDS = {
    "forward": "The layer's forward pass at a glance: the padded input, the kernel, and the "
    "output y the kernel makes as it slides over the input.",
    "backward": "The backward pass at a glance: the gradient ∂L/∂y that arrives from the next "
    "layer, and the two gradients the layer makes from it, ∂L/∂x for its input and ∂L/∂w for "
    "its kernel.",
}
page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "convviz: how a convolution layer learns",
    "Real numbers for the forward pass and for backpropagation. Pick a preset or set the "
    "shapes in the sidebar, then follow the pages; click any cell to see its formula.",
)


@page_body
def overview(ctx):
    """The layer at a glance, its arithmetic, a live check and its values."""
    preset = PRESETS_BY_KEY.get(ctx.state["preset"])
    if preset and ctx.theme.show_secondary:
        st.info(f"**{preset.title}.** {preset.note}")

    forward, backward = overview_panels(ctx.layer, ctx.n, ctx.k, ctx.c, ctx.selection)
    shows = (ctx.key, ctx.n, ctx.k, ctx.c, ctx.selection, ctx.theme)
    for panels, part, title in ((forward, "forward", "Forward: y = x ⋆ w"),
                                (backward, "backward", "Backward: the gradients")):  # fmt: skip
        fig = shared_view(
            ("overview", part, *shows), partial(panels_figure, panels, ctx.theme, title=title)
        )
        with st.container(key=f"cv_screen_{part}"):  # on a projector, a screen each
            chart(fig, f"overview_{part}", sums=layer_sums(ctx))
        figure_in_words(f"chart_overview_{part}", OVERVIEW_WORDS[part], panels, view=shows)
    sums = [p for p in forward + backward if p.key in SUMS]
    close_up(ctx, sums, "overview")  # a layer too big to number: the cells around the selected
    selected_formula(ctx)
    if any(max(p.shape) > ctx.theme.max_text_cells for p in sums):  # no cell to click: pick it
        cell_picker(ctx, {p.key: p.shape for p in sums}, "grad_x")
    export_buttons(forward + backward, ctx, "overview", "convviz: the layer at a glance")

    st.header("Output size")  # the whole width: its formula wrapped mid-expression in a column
    st.code(ctx.spec.describe(), language=None, wrap_lines=True)
    middle, right = st.columns([3, 1])
    with middle:
        check = reference_check(ctx.key)
        if check is not None:
            st.header("Checked")
            st.success(check, icon=":material/verified:")
    with right:
        page_links(ctx.state, PAGES[1:], "Where next", heading=True)

    st.header("Every array and its shape")
    # an Arrow table, made once per layer shape: st.table converts a list of rows on every rerun
    rows = shared_view(("shapes", ctx.spec), lambda: pa.Table.from_pylist(shape_rows(ctx.layer)))
    st.table(rows, hide_index=True)


overview(ctx)
value_editors(ctx)  # outside the body: an edit changes the layer, so everything reruns
page_end(ctx, PAGE)

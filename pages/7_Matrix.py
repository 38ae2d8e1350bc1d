"""Matrix view: y = M·vec(x), ∂L/∂x = Mᵀ·vec(∂L/∂y), im2col, and the transposed convolution."""

from dataclasses import replace

import streamlit as st

import convviz.ui.boot  # noqa: F401  (first: see its docstring)
from convviz.engine.matrix import (
    MAX_MATRIX_CELLS,
    matrix_slice,
    too_large,
    transpose_difference,
    transpose_plan,
)
from convviz.engine.text import slice_name
from convviz.model.state import bounded, to_query
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.plotly.grids import PLOTLY_CONFIG
from convviz.render.plotly.spoken import figure_alt
from convviz.render.selection import centre
from convviz.render.story.matrix import (
    SECTIONS,
    app_selection,
    grid_panels,
    im2col_grad_panel,
    im2col_panel,
    link_of,
    matrix_panel,
    page_cell,
    read_cell,
    spread_panel,
    transpose_panel,
)
from convviz.ui.compute import shared_view
from convviz.ui.controls import clicked_cell, controls, converted, page_config
from convviz.ui.described import figure_in_words
from convviz.ui.views import page_end, page_header

PAGE = "pages/7_Matrix.py"
# this page's own selection, an entry of any of its charts: (layer key, the app's selection it
# was mirrored to, panel, r, c); a selection made since on another page (or a link's) wins
SELECTED, SEEN = "mx_selected", "mx_seen"
SECTION = "mx_section"  # the open tab of SECTIONS: only its charts are made and sent

page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "Why it works: the convolution is a matrix",
    "Flatten x and y row by row and the layer is one sparse matrix M: y = M·vec(x). Its "
    "transpose carries the gradient back: ∂L/∂x = Mᵀ·vec(∂L/∂y). Click any entry to light the "
    "cells it links.",
)
spec, lay = ctx.spec, ctx.layer


CHARTS = ("M", "grids", "Mt", "spread", "P", "Pt")  # `matrix_chart`'s names


def take_clicks(ms) -> None:
    """A click on any of this page's charts selects that entry, once per click; the app's
    selection (the link's `sel`) follows: the output, input or tap cell the entry links."""
    seen = st.session_state.setdefault(SEEN, {})
    # this page's charts (listing the session's keys would present every value)
    for key in [f"mx_chart_{name}" for name in CHARTS if f"mx_chart_{name}" in st.session_state]:
        cell = clicked_cell(st.session_state[key])
        if cell is not None and seen.get(key) != cell:
            seen[key] = cell
            app_cell = app_selection(ms, link_of(ms, *cell))
            if app_cell is not None:
                ctx.state["sel"] = ":".join(map(str, app_cell))
                st.query_params.from_dict(bounded(to_query(ctx.state))[0])
            st.session_state[SELECTED] = (ctx.key, ctx.state["sel"], *cell)


def picked_link(ms):
    """This page's own pick while the app's selection is still the one it set; else the app's
    selection (from another page or a link), else the middle output."""
    chosen = st.session_state.get(SELECTED)
    if chosen and chosen[:2] == (ctx.key, ctx.state["sel"]):
        return chosen[2:], link_of(ms, *chosen[2:])
    cell = page_cell(ms, ctx.selection) if ctx.selection else None
    if cell is not None:
        return None, link_of(ms, *cell)
    return None, link_of(ms, "y", *centre(spec.out_size))


# numbers wherever the cells are big enough for them (a 4×25 matrix has legible cells)
THEME = replace(ctx.theme, max_text_cells=MAX_MATRIX_CELLS + 2)


# a tall matrix may make the page scroll rather than shrink its cells below this (a projector's
# back row needs bigger numbers than a laptop's reader)
SCROLL_CELL_PX = round((48 if ctx.state["pres"] else 30) * ctx.theme.scale)


def matrix_figure(panels):
    """Panels whose clicks select on this page; tall matrices may scroll (see SCROLL_CELL_PX)."""
    rows = max(p.shape[0] for p in panels)
    tall = SCROLL_CELL_PX * rows + 160
    return panels_figure(panels, replace(THEME, figure_h=max(THEME.figure_h, tall)))


def matrix_chart(panels_of, name: str, first: bool = False, words: str = "") -> None:
    """The figure of `panels_of()`, built once per view and shared by every session. The first
    of a section ends the screen on a projector: the next starts below its edge, not cut by it.
    words : what it shows, in words under it."""
    if name not in CHARTS:  # else its clicks would go unread (take_clicks)
        raise ValueError(f"a matrix chart not in CHARTS: {name!r}")
    shows = (name, ctx.key, ctx.n, ctx.k, ctx.c, picked, link, THEME)
    box = st.container(key=f"cv_screen_{name}") if first else st
    fig = shared_view(shows, lambda: matrix_figure(panels_of()))
    box.plotly_chart(
        converted(fig),
        key=f"mx_chart_{name}",
        alt=figure_alt(fig),
        on_select="rerun",
        selection_mode=("points",),
        config=PLOTLY_CONFIG,
        width="content",
        theme=None,
    )
    if words:
        figure_in_words(f"mx_chart_{name}", words)


MATRIX_WORDS = {
    "M": "The convolution as one matrix M. Each row is one output cell; each column is one cell "
    "of the input. A row holds the kernel's numbers where that output's window lies, and 0 "
    "elsewhere. Multiplying M by the input, laid out as a column, gives the output.",
    "Mt": "The same matrix turned on its side, Mᵀ. Each row is one input cell; it lists the "
    "output cells whose windows covered it and the kernel number each used. Multiplying Mᵀ by "
    "∂L/∂y gives ∂L/∂x.",
    "P": "im2col: every window of the input copied into one row of a patches matrix. Patches "
    "times the kernel, laid out as a column, gives the output.",
}


def say(text: str) -> None:
    if ctx.theme.show_secondary:
        st.caption(text)


def forward_section() -> None:
    st.header("1. The forward pass: y = M · vec(x)")
    say(
        "Row i of M is output cell i's window laid on the flattened input: each nonzero is one "
        "kernel tap, in that tap's colour; blank entries are zeros no window puts there. "
        + (
            "The input has several channels: y sums one such product per channel."
            if spec.in_channels > 1
            else ""
        )
    )
    matrix_chart(lambda: [matrix_panel(ms, link)], "M", first=True, words=MATRIX_WORDS["M"])
    st.markdown(f"**Selected:** {link.words(ms)}. The same cells on the grids:")
    matrix_chart(lambda: grid_panels(ms, link), "grids")


def backward_section() -> None:
    st.header("2. The backward pass: ∂L/∂x = Mᵀ · vec(∂L/∂y)")
    say(
        "The same entries, read down the columns. Row r of Mᵀ lists the output cells whose "
        "windows covered input cell r and the tap each one used. That is why the textbook route "
        "works as it does: those outputs sit a stride apart (so ∂L/∂y is dilated), windows hang "
        "over the border (so it is padded by d·(k−1)), and the window to the right of a cell "
        "used a tap further left (so the kernel is rotated 180°)."
    )
    matrix_chart(lambda: [transpose_panel(ms, link)], "Mt", first=True, words=MATRIX_WORDS["Mt"])
    W, why = spec.in_size[1], ""
    if link.inp is not None:
        x_cell = divmod(link.inp, W)
    elif link.out is not None:  # a cell the selected output reads: its column of Mᵀ is in the row
        x_cell = read_cell(ms, link.out)
        i, j = divmod(link.out, spec.out_size[1])
        why = f" (a cell y[{i}, {j}] reads)"
    else:
        x_cell = centre(spec.in_size)
    st.markdown(f"**Row of Mᵀ for x[{x_cell[0]}, {x_cell[1]}]{why}, drawn the textbook way:**")
    say(
        "The rotated kernel's window on the dilated, padded ∂L/∂y. Taps on real ∂L/∂y cells are "
        "this row's nonzeros; taps on inserted zeros (stride) or on the padding ring are its "
        "blank entries."
        + (
            " With this padding mode the cell's copies in the ring add more."
            if spec.padding_mode != "zeros"
            else ""
        )
    )
    matrix_chart(lambda: [spread_panel(lay.input_grad, ctx.n, ctx.k, ctx.c, x_cell)], "spread")


def im2col_section() -> None:
    st.header("3. im2col: patches as rows")
    say(
        "Copy every window into one row of a 'patches' matrix (padded entries in grey). Then "
        "y = patches · vec(w), one GEMM, which is how libraries compute a convolution, and the "
        "weight gradient is the other product: ∂L/∂w = patchesᵀ · vec(∂L/∂y)."
    )
    matrix_chart(lambda: [im2col_panel(ms, link)], "P", first=True, words=MATRIX_WORDS["P"])
    matrix_chart(lambda: [im2col_grad_panel(ms, link)], "Pt")


reason = too_large(spec)
if reason:
    st.info(f"{reason[0].upper()}{reason[1:]}. The transposed convolution below works at any size.")
else:
    ms = shared_view(  # M for this slice, built once per setting for every session
        ("matrix-slice", ctx.key, ctx.n, ctx.k, ctx.c),
        lambda: matrix_slice(
            spec, lay.forward.x, lay.forward.w, lay.input_grad.grad_out, ctx.n, ctx.k, ctx.c
        ),
    )
    take_clicks(ms)
    picked, link = picked_link(ms)
    forward_tab, backward_tab, im2col_tab = st.tabs(SECTIONS, key=SECTION, on_change="rerun")
    if forward_tab.open:
        with forward_tab:
            forward_section()
    if backward_tab.open:
        with backward_tab:
            backward_section()
    if im2col_tab.open:
        with im2col_tab:
            im2col_section()

st.header("The name in code: a transposed convolution")  # under every tab
plan = transpose_plan(spec)
say(
    "Multiplying by Mᵀ is what deep-learning libraries call a transposed convolution: the same "
    "weights, stride, padding and dilation, and output_padding for the remainder rows/columns "
    "that no window reached (here "
    f"{plan.output_padding[0]} and {plan.output_padding[1]})."
)
st.code(plan.code(spec), language="python", wrap_lines=True)
if plan.reason:
    st.caption(f"{plan.reason[0].upper()}{plan.reason[1:]}.")
worst, cells, part = transpose_difference(
    spec, lay.forward.w, lay.input_grad.grad_out, lay.input_grad.grad_x, ctx.n, ctx.c
)
where = (
    f"the {cells} cells of {slice_name('∂L/∂x', n=ctx.n, c=ctx.c)} (one slice: at this size"
    " the whole check would take too long)"
    if part
    else f"all {cells} cells"
)
ok = worst < 1e-9
(st.success if ok else st.error)(
    f"The same call computed in NumPy (convviz.engine.matrix.conv_transpose2d) "
    f"{'equals' if ok else 'DIFFERS from'} the engine's ∂L/∂x: largest difference "
    f"{worst:.1e} over {where}.",
    icon=":material/verified:" if ok else "⚠️",
)
page_end(ctx, PAGE)

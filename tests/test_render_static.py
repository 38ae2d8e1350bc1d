"""The matplotlib exports' cells: numbers written as the app writes them, the roles' colours,
hatches and outlines, numbers that read on their cell, indices (offset by the origin, on the
ladder both renderers share, only on a grid's indexed part), scale ticks, the mask's rectangles.
Inspect the artists on the Axes. The figures and their bytes: test_render_static_figures.py; the
GIFs: test_render_static_gif.py."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import static_cases
from matplotlib.collections import LineCollection, QuadMesh
from matplotlib.colors import to_hex, to_rgba
from matplotlib.figure import Figure
from static_cases import cell_of

from convviz.render import geometry, mask_geometry
from convviz.render.mpl import panel as static_panel
from convviz.render.mpl import static
from convviz.render.mpl.legend import LEGEND_WORDS, legend_marks
from convviz.render.panel import Panel
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.plotly.grids import format_value
from convviz.render.theme import (
    DILATION_COLOR,
    DROPPED_COLOR,
    HALO_COLOR,
    HIGHLIGHT_COLOR,
    PAD_COLOR,
    REMAINDER_COLOR,
    SELECTED_COLOR,
    THEME,
    contrast,
    tap_colors,
    text_color,
)

# the module-scoped layer and panels of tests/static_cases.py, as this module's fixtures
classroom = static_cases.classroom
panels = static_cases.panels


def drawn(panel: Panel):
    """The panel drawn alone on a fresh figure, rendered once so the mesh has its colours."""
    fig = static.panels_figure([panel])
    fig.canvas.draw()
    return fig.axes[0]


def mesh_colors(ax) -> np.ndarray:
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    h, w = (round(abs(d)) for d in (ax.get_ylim()[0] - ax.get_ylim()[1], np.ptp(ax.get_xlim())))
    return np.asarray(mesh.get_facecolor()).reshape(h, w, 4)


def labelled(ax, label: str, kind=None) -> list:
    artists = [*ax.patches, *ax.collections]
    return [a for a in artists if a.get_label() == label and (kind is None or isinstance(a, kind))]


# --- cells and roles --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [(3.0, "3"), (-2.0, "−2"), (0.5, "0.5"), (-1.256, "−1.26"), (-0.0, "0"), (-1e-12, "0"),
     (120.0, "120"), (float("nan"), "")],
    ids=["int", "negative", "half", "rounded", "minus-zero", "tiny", "hundreds", "nan"],
)  # fmt: skip
def test_exports_write_numbers_as_the_app_does(value, text):
    assert (
        static_panel.number(value) == text == format_value(value)
    )  # one rule: convviz.engine.text


def test_padded_cells_are_pad_color_hatched_with_pad_text(panels):
    x = panels[0]
    ax = drawn(x)
    colors = mesh_colors(ax)
    pad = x.pad_mask
    assert np.allclose(colors[pad], to_rgba(PAD_COLOR))
    assert not np.isclose(colors[~pad], to_rgba(PAD_COLOR)).all(axis=-1).any()
    bands = labelled(ax, "pad")
    assert bands and all(b.get_hatch() == "//" for b in bands)
    assert all(np.allclose(b.get_facecolor(), to_rgba(PAD_COLOR)) for b in bands)
    covered = np.zeros(pad.shape, int)
    for b in bands:
        (c0, r0), nc, nr = np.add(b.get_xy(), 0.5).astype(int), b.get_width(), b.get_height()
        covered[r0 : r0 + nr, c0 : c0 + nc] += 1
    assert (covered == pad).all()  # the bands tile the padding exactly once
    by_cell = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    assert to_rgba(by_cell[0, 0].get_color()) == to_rgba(text_color(PAD_COLOR))  # the one rule


def test_dilation_zeros_get_their_colour():
    mask = np.zeros((3, 5), bool)
    mask[:, 1::2] = True
    ax = drawn(Panel(np.where(mask, 0.0, 2.0), "dilated", "d", dilation_mask=mask))
    assert np.allclose(mesh_colors(ax)[mask], to_rgba(DILATION_COLOR))


def test_taps_are_bordered_in_their_tap_colour(panels):
    x = panels[0]
    ax = drawn(x)
    boxes = labelled(ax, "tap")
    assert len(boxes) == (x.taps >= 0).sum() == 9
    colors = tap_colors(3, 3)
    for box in boxes:
        i, j = cell_of(box)
        assert np.allclose(box.get_edgecolor(), to_rgba(colors[x.taps[i, j]]))
        assert box.get_linewidth() > 2  # thick, in points
        assert box.get_facecolor()[3] == 0  # the value colour shows through
        # with a white edge inside it (an orange tap on an orange cell vanished)
        (edge,) = box.get_path_effects()
        assert edge._gc["foreground"] == HALO_COLOR


def test_highlight_selected_remainder_and_dropped_overlays():
    values = np.arange(30, dtype=float).reshape(5, 6) - 12
    remainder = np.zeros((5, 6), bool)
    remainder[4, :], remainder[:, 5] = True, True
    highlight = np.zeros((5, 6), bool)
    highlight[1:3, 1:3] = True
    ring = np.pad(np.zeros((3, 4), bool), 1, constant_values=True)
    panel = Panel(values, "roles", "r", remainder_mask=remainder, dropped_mask=ring,
                  highlight=highlight, selected=(2, 3))  # fmt: skip
    ax = drawn(panel)
    (rem,) = labelled(ax, "remainder", LineCollection)
    assert np.allclose(rem.get_color(), to_rgba(REMAINDER_COLOR))
    assert rem.get_linestyle()[0][1] is not None  # dashed
    ends = np.concatenate(rem.get_segments())
    assert ends[:, 0].min() == -0.5 and ends[:, 1].max() == 4.5  # around the L-shaped band
    (hl,) = labelled(ax, "highlight", LineCollection)
    assert np.allclose(hl.get_color(), to_rgba(HIGHLIGHT_COLOR))
    assert hl.get_linestyle()[0][1] is not None  # dotted, as on screen
    assert np.ptp(np.concatenate(hl.get_segments()), axis=0).tolist() == [2, 2]  # 2×2 box
    (dropped,) = labelled(ax, "dropped", LineCollection)
    assert np.allclose(dropped.get_color()[:, :3], to_rgba(DROPPED_COLOR)[:3])
    assert len(dropped.get_segments()) == 4 * ring.sum()  # a cross per dropped cell, 4 arms
    (sel,) = labelled(ax, "selected")
    assert cell_of(sel) == (2, 3) and np.allclose(sel.get_edgecolor(), to_rgba(SELECTED_COLOR))
    (halo,) = sel.get_path_effects()  # a white stroke under the red, as on screen
    assert halo._gc["foreground"] == HALO_COLOR


def test_a_cell_written_out_is_outlined_black_and_the_legend_says_so():
    """A slide with nothing selected outlines the cell whose sum it writes solid black (as an
    animation outlines the cell it computes) and its window dotted; the legend says what they
    are, not "selected cell" and "linked to the selection"."""
    window = np.zeros((3, 3), bool)
    window[:2, :2] = True
    ax = drawn(Panel(np.ones((3, 3)), "out", "y", highlight=window, written=(1, 1)))
    (box,) = labelled(ax, "written")
    assert cell_of(box) == (1, 1) and np.allclose(box.get_edgecolor(), to_rgba(HIGHLIGHT_COLOR))
    assert not labelled(ax, "selected")
    written = Panel(np.ones((3, 3)), "out", "y", highlight=window, written=(1, 1))
    assert legend_marks([written]) == ["read", "written"]
    assert LEGEND_WORDS["written"] == "the cell written out below"
    selected = replace(written, written=None, selected=(1, 1))
    assert legend_marks([selected]) == ["highlight", "selected"]
    assert legend_marks([replace(written, selected=(0, 0))]) == ["highlight", "selected", "written"]
    # lit cells without a cell written out (a stage-1 slide of a selection made elsewhere): they
    # are linked to the selection, there is no sum for them to be read by
    assert legend_marks([replace(written, written=None)]) == ["highlight"]


def test_numbers_contrast_with_their_cell():
    values = np.array([[-9.0, 0.0, 1.0, 9.0]])
    ax = drawn(Panel(values, "contrast", "c"))
    by_col = {round(t.get_position()[0]): to_hex(t.get_color()) for t in ax.texts}
    fills = {round(c): to_hex(f) for c, f in enumerate(mesh_colors(ax)[0])}
    for col, ink in by_col.items():  # the one rule, and it reads: 7:1 on every value colour
        assert ink == text_color(fills[col]) and contrast(ink, fills[col]) >= 7


def test_indices_are_offset_by_origin_and_cells_square(panels):
    ax = drawn(panels[0])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["−1", *map(str, range(8))]
    assert [t.get_text() for t in ax.get_yticklabels()][:2] == ["−1", "0"]
    box = ax.get_window_extent()
    assert box.width == pytest.approx(box.height, rel=1e-3)
    assert ax.get_title() == "input x, padded" and ax.get_xlabel() == "7×7 → 9×9"


def ladder_oracle(n: int, origin: int, room_cells: float) -> list[int]:
    """Indices origin … origin + n − 1 labelled when a label needs room_cells cells, by a loop."""
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**9) if s >= room_cells)
    return [v for v in range(origin, origin + n) if v % step == 0]


@pytest.mark.parametrize(("n", "origin"), [(9, -1), (40, 0), (130, -3)], ids=str)
def test_both_renderers_space_index_ticks_on_one_ladder(n, origin):
    """Plotly (a label needs 24 px) and matplotlib (2.2 × the tick font) label every step-th
    index, 0 included, step the first of 1, 2, 5, 10, … that gives a label its room."""
    size = static_panel.tick_size(THEME)
    for cell in (0.5, 1, 2, 3, 5, 11, 24, 40):
        static_ticks = [origin + i for i in static_panel._tick_cells(n, origin, cell, size)]
        assert static_ticks == ladder_oracle(n, origin, 2.2 * size / cell), f"static, {cell} pt"
        plotly_ticks = geometry.tick_values(n, origin, cell)
        assert plotly_ticks == ladder_oracle(n, origin, 24 / max(cell, 1)), f"plotly, {cell} px"


def test_only_the_indexed_part_of_a_grid_is_numbered():
    """A matrix drawn with its vectors (two rows above, two columns beside: `Panel.indexed`) is
    numbered 0… on its own rows and columns only, on screen and in an export."""
    values = np.arange(12 * 9, dtype=float).reshape(12, 9)
    panel = Panel(values, "M", "M", origin=(-2, 0), indexed=(10, 7))
    fig = static.panels_figure([panel], THEME)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [str(i) for i in range(10)]
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(i) for i in range(7)]
    layout = panels_figure([panel], THEME).layout
    assert list(layout.yaxis.tickvals) == list(range(10))
    assert list(layout.xaxis.tickvals) == list(range(7))


@pytest.mark.parametrize(
    ("lo", "hi", "ticks"),
    [
        (-3.0, 5.0, [-3.0, 0.0, 5.0]),
        (1.0, 4.0, [1.0, 4.0]),
        (-2.0, 0.0, [-2.0, 0.0]),
        (2.0, 2.0, [2.0]),
    ],
    ids=["spans-0", "positive", "ends-at-0", "constant"],
)
def test_colour_scale_ticks_are_min_max_and_0_between(lo, hi, ticks):
    assert geometry.scale_ticks(lo, hi) == ticks


@pytest.mark.parametrize(("side", "texts"), [(24, 24 * 24), (25, 0)], ids=["at-limit", "over"])
def test_no_cell_text_past_max_text_cells(side, texts):
    assert THEME.max_text_cells == 24
    values = np.arange(side * side).reshape(side, side) % 10
    ax = drawn(Panel(values.astype(float), "big", "b"))
    assert len(ax.texts) == texts


def test_draw_panel_returns_the_axes_it_drew_on(panels):
    fig = Figure(figsize=(4, 4))
    ax = fig.add_subplot()
    assert static_panel.draw_panel(ax, panels[1]) is ax
    assert len(ax.texts) == 9


def test_mask_rects_tile_any_mask():
    rng = np.random.default_rng(3)
    for mask in [np.pad(np.zeros((5, 5), bool), 2, constant_values=True), rng.random((7, 9)) < 0.4]:
        covered = np.zeros(mask.shape, int)
        for r, c, nr, nc in mask_geometry.mask_rects(mask):
            covered[r : r + nr, c : c + nc] += 1
        assert (covered == mask).all()
    assert (
        len(mask_geometry.mask_rects(np.pad(np.zeros((5, 5), bool), 1, constant_values=True))) == 4
    )

"""The plotly renderers' still figures: numbers as the grids write them, panels_figure (one heatmap
per panel, square cells, the roles' colours and outlines, click overlays, big grids), the clicked
cell read from a Streamlit selection event, the presentation theme, the Channels page's tiles.
Inspect figure objects (traces, shapes), not pixels. The animated figures:
test_render_plotly_sweeps.py."""

from __future__ import annotations

import re

import numpy as np
import plotly_cases
import pytest
from plotly_cases import forward_case, hex_at, input_grad_case, trace

from convviz.render import geometry
from convviz.render.panel import Panel
from convviz.render.plotly import grids, sweeps
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.plotly.grids import format_value
from convviz.render.theme import (
    DILATION_COLOR,
    EXPORT_SCALE,
    HALO_COLOR,
    HIGHLIGHT_COLOR,
    PAD_COLOR,
    REMAINDER_COLOR,
    SELECTED_COLOR,
    THEME,
    tap_colors,
    text_color,
)
from convviz.ui.controls import clicked_cell

# the module-scoped layers of tests/plotly_cases.py, as this module's fixtures
classroom = plotly_cases.classroom
remainder_layer = plotly_cases.remainder_layer

MINUS = "\u2212"


# --- outlines and washes, read back --------------------------------------------------------------


def shapes(fig, name):
    return [s for s in fig.layout.shapes if s.name == name]


def path_rects(path: str) -> list[tuple[float, float, float, float]]:
    """Rectangles 'M x0,y0 H x1 V y1 H x0 Z' of a fill path."""
    num = r"(-?[\d.]+)"
    pat = rf"M{num},{num}H{num}V{num}H{num}Z"
    return [tuple(float(v) for v in m[:4]) for m in re.findall(pat, path)]


def rect_mask(path: str, shape, origin) -> np.ndarray:
    mask = np.zeros(shape, dtype=int)
    oy, ox = origin
    for x0, y0, x1, y1 in path_rects(path):
        mask[int(y0 + 0.5 - oy) : int(y1 + 0.5 - oy), int(x0 + 0.5 - ox) : int(x1 + 0.5 - ox)] += 1
    return mask


def path_segments(path: str) -> set:
    """Unit segments of an outline path made of 'M x,y H x2' and 'M x,y V y2' pieces.

    A piece spanning several cells counts as its unit segments, so any split of the boundary
    into pieces compares equal; a segment drawn twice is an error.
    """
    segs = set()
    for x, y, cmd, end in re.findall(r"M(-?[\d.]+),(-?[\d.]+)([HV])(-?[\d.]+)", path):
        x, y, end = float(x), float(y), float(end)
        a, b = sorted((x, end) if cmd == "H" else (y, end))
        assert b - a >= 1 and (b - a).is_integer(), f"piece {x},{y}{cmd}{end} is not whole cells"
        for u in np.arange(a, b).tolist():
            seg = ((u, y), (u + 1, y)) if cmd == "H" else ((x, u), (x, u + 1))
            assert seg not in segs, f"segment {seg} drawn twice"
            segs.add(seg)
    return segs


def boundary_oracle(mask, origin) -> set:
    """Cell sides between a True cell and a False (or outside) neighbour, by a plain loop."""
    h, w = mask.shape
    oy, ox = origin
    segs = set()
    for r in range(h):
        for c in range(w):
            if not mask[r, c]:
                continue
            x0, x1, y0, y1 = c + ox - 0.5, c + ox + 0.5, r + oy - 0.5, r + oy + 0.5
            if r == 0 or not mask[r - 1, c]:
                segs.add(((x0, y0), (x1, y0)))
            if r == h - 1 or not mask[r + 1, c]:
                segs.add(((x0, y1), (x1, y1)))
            if c == 0 or not mask[r, c - 1]:
                segs.add(((x0, y0), (x0, y1)))
            if c == w - 1 or not mask[r, c + 1]:
                segs.add(((x1, y0), (x1, y1)))
    return segs


# --- numbers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.0, "3"),
        (-2.0, f"{MINUS}2"),
        (-0.0, "0"),
        (0.5, "0.5"),
        (1.256, "1.26"),
        (-0.125, f"{MINUS}0.12"),
        (float("nan"), ""),
        (12345.0, "12345"),
    ],
    ids=[
        "int",
        "negative",
        "minus-zero",
        "half",
        "two-decimals",
        "negative-decimals",
        "nan",
        "big",
    ],
)
def test_format_value(value, text):
    assert format_value(value) == text


def test_format_values_matches_format_value_elementwise():
    a = np.array([[1.0, -2.0, np.nan], [0.25, -0.0, 7.5]])
    assert grids.format_values(a).tolist() == [[format_value(v) for v in row] for row in a]
    ints = np.array([[1.0, -2.0, np.nan]])
    assert grids.format_values(ints).tolist() == [["1", f"{MINUS}2", ""]]


# --- panels_figure -------------------------------------------------------------------------------


def test_one_value_heatmap_per_panel_with_the_panel_values(classroom):
    _, operand, kernel, output = forward_case(classroom)
    fig = panels_figure([operand, kernel, output], title="t")
    values = [t for t in fig.data if t.type == "heatmap" and t.name.endswith(":values")]
    assert [t.name for t in values] == ["x:values", "w:values", "y:values"]
    for t, p in zip(values, (operand, kernel, output)):
        np.testing.assert_array_equal(t.z, p.values)
        assert t.zmid == 0 and t.showscale is False
        assert t.xgap > 0 and t.ygap > 0
    assert fig.layout.title.text == "<b>t</b>"


def test_axes_are_square_reversed_and_labelled_from_the_origin(classroom):
    _, operand, kernel, output = forward_case(classroom)
    fig = panels_figure([operand, kernel, output])
    L = fig.layout
    plot_w = L.width - L.margin.l - L.margin.r
    plot_h = L.height - L.margin.t - L.margin.b
    px = []
    for i, p in enumerate((operand, kernel, output)):
        sfx = "" if i == 0 else str(i + 1)
        xa, ya = L[f"xaxis{sfx}"], L[f"yaxis{sfx}"]
        h, w = p.shape
        px.append((xa.domain[1] - xa.domain[0]) * plot_w / w)
        px.append((ya.domain[1] - ya.domain[0]) * plot_h / h)
        assert ya.range[0] > ya.range[1]  # row 0 at the top
        assert ya.range[1] == p.origin[0] - 0.5 and xa.range[0] == p.origin[1] - 0.5
        assert p.origin[0] in ya.tickvals and p.origin[1] in xa.tickvals
        assert ya.scaleanchor == ("x" if i == 0 else f"x{i + 1}")
    assert np.allclose(px, px[0])  # square cells, the same size in every panel
    assert operand.origin == (-1, -1)


def test_padded_cells_are_pad_coloured_with_their_numbers(classroom):
    _, operand, _, _ = forward_case(classroom)
    fig = panels_figure([operand])
    _, pad = trace(fig, "x:pad")
    assert {c for _, c in pad.colorscale} == {PAD_COLOR}
    np.testing.assert_array_equal(np.isfinite(np.asarray(pad.z, float)), operand.pad_mask)
    assert pad.textfont.color == text_color(PAD_COLOR)  # the one rule
    text = np.asarray(pad.text)
    assert (text[operand.pad_mask] == "0").all() and (text[~operand.pad_mask] == "").all()
    _, base = trace(fig, "x:values")
    assert (np.asarray(base.text)[operand.pad_mask] == "").all()  # no number drawn twice


def test_dilation_zeros_are_dilation_coloured(classroom):
    _, operand, _, _ = input_grad_case(classroom)
    fig = panels_figure([operand])
    _, dil = trace(fig, "padded:dilation")
    assert {c for _, c in dil.colorscale} == {DILATION_COLOR}
    assert dil.textfont.color == text_color(DILATION_COLOR)
    expect = operand.dilation_mask & ~operand.pad_mask
    assert expect.any()
    np.testing.assert_array_equal(np.isfinite(np.asarray(dil.z, float)), expect)


def test_remainder_is_washed_outlined_dashed_and_named_in_the_legend(remainder_layer):
    _, operand, _, _ = forward_case(remainder_layer)
    fig = panels_figure([operand])
    wash, outline = shapes(fig, "remainder")
    np.testing.assert_array_equal(
        rect_mask(wash.path, operand.shape, operand.origin), operand.remainder_mask.astype(int)
    )
    assert outline.line.color == REMAINDER_COLOR and outline.line.dash == "dash"
    assert path_segments(outline.path) == boundary_oracle(operand.remainder_mask, operand.origin)
    assert any("remainder" in a.text for a in fig.layout.annotations)


def test_no_remainder_no_remainder_marks(classroom):
    _, operand, _, _ = forward_case(classroom)
    assert not operand.remainder_mask.any()
    fig = panels_figure([operand])
    assert shapes(fig, "remainder") == []
    assert not any("remainder" in a.text for a in fig.layout.annotations)


def test_kernel_taps_get_their_tap_colours_also_after_rotation(classroom):
    _, _, kernel, _ = input_grad_case(classroom)  # rotated: cell (0, 0) holds tap 8
    fig = panels_figure([kernel])
    _, taps = trace(fig, "w_rot:taps")
    colors = tap_colors(3, 3)
    z = np.asarray(taps.z)
    np.testing.assert_array_equal(z, kernel.taps)
    for r in range(3):
        for c in range(3):
            got = hex_at(taps.colorscale, taps.zmin, taps.zmax, z[r, c])
            assert got == colors[kernel.taps[r, c]]
    assert hex_at(taps.colorscale, taps.zmin, taps.zmax, z[0, 0]) == colors[8]
    np.testing.assert_array_equal(grids.plain(taps.text), grids.format_values(kernel.values))


def test_highlight_and_selected_outlines(classroom):
    _, operand, _, _ = forward_case(classroom)
    high = np.zeros(operand.shape, bool)
    high[1:4, 2:5] = True
    high[6, 6] = True
    p = Panel(operand.values, "x", "x", highlight=high, selected=(2, 3), origin=(-1, -1))
    fig = panels_figure([p])
    (h,) = shapes(fig, "highlight")
    assert h.line.color == HIGHLIGHT_COLOR and h.line.width >= 2
    assert h.line.dash == "dot"  # an animation's current cell is the solid outline
    assert path_segments(h.path) == boundary_oracle(high, p.origin)
    (s,) = shapes(fig, "selected")
    assert s.line.color == SELECTED_COLOR and s.line.width > h.line.width
    # cell (2, 3) in axis-domain fractions (from the left and the bottom): plotly clips a shape
    # in axis coordinates to the grid, which cut off the outer half of an edge cell's box
    h, w = p.shape
    assert (s.xref, s.yref) == ("x domain", "y domain")
    # the red on the cell's edges (its halo reaches 1.4 lw beyond: clear of the index labels
    # beside the grid)
    x0, y0, x1, y1 = path_rects(s.path)[0]
    inset = (x0 - 3 / w) * w
    assert inset == pytest.approx(0, abs=1e-4)  # the path rounds to 6 digits
    assert (x0, y0, x1, y1) == pytest.approx(
        ((3 + inset) / w, 1 - (2 + inset) / h, (4 - inset) / w, 1 - (3 - inset) / h), abs=1e-5
    )
    # on a wider white halo drawn just before it: the red shows on a red kernel tap too
    names = [shape.name for shape in fig.layout.shapes]
    (halo,) = shapes(fig, "selected halo")
    assert names.index("selected halo") == names.index("selected") - 1
    assert halo.path == s.path and halo.line.color == HALO_COLOR != SELECTED_COLOR
    assert halo.line.width > s.line.width
    # 80% of the cell stays clear for its number ('195' ran into the red frame)
    lay = fig.layout
    cell = np.diff(lay.xaxis.domain)[0] * (lay.width - lay.margin.l - lay.margin.r) / w
    assert 1 - 2 * (inset + halo.line.width / 2 / cell) >= 0.8


def test_boxes_on_the_grid_edge_are_drawn_whole(classroom):
    """The window, the computed cell and the hover boxes are not clipped to their grid (nor is
    the selected box, in domain fractions above): on an edge cell their outer half was cut off."""
    sw, operand, kernel, output = forward_case(classroom)
    fig = sweeps.sweep_figure(sw, operand, kernel, output)
    boxes = [t for t in fig.data if t.name in ("window outline", "target", "hover")]
    assert len(boxes) == 5 and all(t.mode == "lines" and t.cliponaxis is False for t in boxes)


def test_dropped_cells_are_crossed_out(classroom):
    _, _, _, output = input_grad_case(classroom)
    p = Panel(
        output.values,
        "g",
        "g",
        pad_mask=output.pad_mask,
        dropped_mask=output.pad_mask,
        origin=output.origin,
    )
    fig = panels_figure([p])
    (d,) = shapes(fig, "dropped")
    assert d.path.count("M") == 4 * int(output.pad_mask.sum())  # four strokes per cell
    assert any("dropped" in a.text for a in fig.layout.annotations)


def test_click_overlay_customdata_is_key_row_col_of_every_cell(classroom):
    _, operand, kernel, _ = forward_case(classroom)
    fig = panels_figure([operand, kernel])
    _, click = trace(fig, "x:click")
    h, w = operand.shape
    assert [list(c) for c in click.customdata] == [["x", r, c] for r in range(h) for c in range(w)]
    np.testing.assert_array_equal(click.x, np.tile(np.arange(w), h) - 1)
    np.testing.assert_array_equal(click.y, np.repeat(np.arange(h), w) - 1)
    assert click.mode == "markers" and click.marker.symbol == "square"
    assert click.hovertext[0] == "x[-1, -1] = 0"
    i, _ = trace(fig, "w:click")
    assert i == len(fig.data) - 1  # click overlays last: on top of everything for hover


def test_big_grid_has_no_cell_text_no_cell_shapes_and_says_so():
    values = np.arange(30 * 30, dtype=float).reshape(30, 30)
    pad = np.zeros_like(values, bool)
    pad[0], pad[-1] = True, True
    p = Panel(values, "big", "big", pad_mask=pad, dropped_mask=pad, subtitle="30×30")
    fig = panels_figure([p])
    assert all(t.text is None for t in fig.data if t.type == "heatmap")
    assert shapes(fig, "dropped") == []
    assert geometry.HIDDEN_NOTE in fig.layout.annotations[0].text
    trace(fig, "big:click")  # still clickable at 30×30
    huge = Panel(np.zeros((70, 70)), "huge", "huge")
    fig = panels_figure([huge])
    assert not any(t.name == "huge:click" for t in fig.data)
    assert "huge[" in fig.data[0].hovertemplate  # the heatmap answers hovers instead


def test_plotly_config_exports_png_at_slide_scale():
    cfg = grids.PLOTLY_CONFIG
    assert cfg["toImageButtonOptions"] == {
        "format": "png",
        "scale": EXPORT_SCALE,
        "filename": "convviz",
    }
    assert cfg["displaylogo"] is False
    assert {"lasso2d", "select2d"} <= set(cfg["modeBarButtonsToRemove"])


def test_theme_presentation_makes_bigger_cells(classroom):
    from convviz.render.theme import PRESENTATION

    _, _, kernel, output = forward_case(classroom)  # small grids: neither hits the width cap
    small = panels_figure([kernel, output], THEME)
    big = panels_figure([kernel, output], PRESENTATION)
    assert big.layout.width > small.layout.width
    assert big.data[0].textfont.size > small.data[0].textfont.size


# --- clicked_cell --------------------------------------------------------------------------------


def test_clicked_cell_reads_a_streamlit_selection_event():
    event = {
        "selection": {
            "points": [
                {"curve_number": 3, "point_number": 7, "point_index": 7, "x": 6, "y": 0},
                {
                    "curve_number": 9,
                    "point_number": 12,
                    "point_index": 12,
                    "x": 2,
                    "y": 0,
                    "customdata": ["y", 1, 2],
                },
            ],
            "point_indices": [7, 12],
            "box": [],
            "lasso": [],
        }
    }
    assert clicked_cell(event) == ("y", 1, 2)


@pytest.mark.parametrize(
    "event",
    [
        None,
        {},
        [],
        "selection",
        {"selection": None},
        {"selection": {}},
        {"selection": {"points": None}},
        {"selection": {"points": []}},
        {"selection": {"points": [{"x": 1, "y": 2}]}},
        {"selection": {"points": [{"customdata": ["y", 1]}]}},
        {"selection": {"points": [{"customdata": "abc"}]}},
        {"selection": {"points": [{"customdata": ["y", "one", 2]}]}},
        {"selection": {"points": [None, 3]}},
    ],
)
def test_clicked_cell_returns_none_on_junk(event):
    assert clicked_cell(event) is None


# --- the Channels page's tiles -------------------------------------------------------------------


@pytest.mark.parametrize(("lo", "hi"), [(0, 9), (-101, 232), (-7, -2), (-3, 3), (2, 2)])
def test_channel_tiles_keep_the_symmetric_colours_and_draw_no_colour_they_lack(lo, hi):
    """The Channels grids' colours: a value has its colour on the symmetric scale (±max |v|,
    0 white) whatever the range, and the scale (its colour bar) holds only colours drawn:
    qa-channels' input (0…9) had a colour bar with a blue half and no negative value."""
    from plotly.colors import sample_colorscale, unlabel_rgb

    from convviz.render.plotly.channels import heatmap_grid, value_colours
    from convviz.render.theme import VALUE_SCALE

    colours = value_colours(lo, hi)
    lim = max(abs(lo), abs(hi))
    for v in np.linspace(lo, hi, 7):
        if lo == hi:
            break
        drawn = sample_colorscale(colours["colorscale"], [(v - lo) / (hi - lo)])[0]
        symmetric = sample_colorscale(VALUE_SCALE, [(v + lim) / (2 * lim)])[0]
        assert np.allclose(unlabel_rgb(drawn), unlabel_rgb(symmetric), atol=1), v
    if lo >= 0:  # no blue (negative) colour in an all-positive scale
        rgb = [unlabel_rgb(c) for _, c in colours["colorscale"] if "rgb" in c]
        assert all(b <= r for r, _, b in rgb)
    arrays = np.linspace(lo, hi, 2 * 40 * 40).reshape(1, 2, 40, 40)  # too small for numbers
    fig = heatmap_grid(arrays, [""], ["c=0", "c=1"])
    bar = fig.data[0].colorbar
    assert fig.data[0].showscale and list(bar.tickvals) == sorted(
        {lo, hi} | ({0} if lo < 0 < hi else set())
    )
    assert (fig.data[0].zmin, fig.data[0].zmax) == (
        (lo, hi) if lo < hi else (-(lim or 1), lim or 1)
    )

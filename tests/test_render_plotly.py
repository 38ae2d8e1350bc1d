"""The plotly renderers: inspect figure objects (traces, shapes, frames, controls), not pixels."""

from __future__ import annotations

import itertools
import re

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from matplotlib.path import Path

from convviz.render import animation_frames, geometry, grids, selection, sweep_animations
from convviz.render.grid_figure import panels_figure
from convviz.render.grids import format_value
from convviz.render.panel import Panel
from convviz.render.theme import (
    DILATION_COLOR,
    EXPORT_SCALE,
    HALO_COLOR,
    HIGHLIGHT_COLOR,
    PAD_COLOR,
    REMAINDER_COLOR,
    SELECTED_COLOR,
    TAP_CYCLE,
    THEME,
    tap_colors,
    text_color,
)
from convviz.spec import ConvSpec
from convviz.stages import layer
from convviz.sweeps import forward_sweep, input_grad_sweep, scatter
from convviz.ui.controls import clicked_cell

MINUS = "\u2212"

# --- examples from the engine --------------------------------------------------------------------


def make_layer(H=7, stride=2, padding=1, dilation=1, C=1, bias=False, seed=7):
    spec = ConvSpec.create(
        (1, C, H, H), (1, C, 3, 3), stride=stride, padding=padding, dilation=dilation
    )
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 10, spec.input_shape).astype(float)
    w = rng.integers(-2, 3, spec.weight_shape).astype(float)
    grad_out = rng.integers(-2, 3, spec.output_shape).astype(float)
    b = np.array([1.5]) if bias else None
    return layer(spec, x, w, grad_out, bias=b)


def tap_grid(rotated=False):
    taps = np.arange(9).reshape(3, 3)
    return taps[::-1, ::-1] if rotated else taps


def forward_case(lay, channel=0):
    """The forward sweep and its three Panels (operand, kernel, output)."""
    fw, sw = lay.forward, forward_sweep(lay.forward)
    (pt, _), (pl, _) = fw.spec.padding
    operand = Panel(
        fw.x_padded[0, channel],
        "x padded",
        "x",
        pad_mask=fw.pad_mask,
        remainder_mask=fw.remainder_mask,
        origin=(-pt, -pl),
    )
    kernel = Panel(fw.w[0, channel], "w", "w", taps=tap_grid())
    output = Panel(fw.y[0, 0], "y", "y")
    return sw, operand, kernel, output


def input_grad_case(lay):
    """The full correlation (rotated kernel) and its Panels."""
    ig = lay.input_grad
    sw = input_grad_sweep(ig, 0, 0)
    (gt, _), (gl, _) = ig.spec.full_padding
    (pt, _), (pl, _) = ig.spec.padding
    operand = Panel(
        ig.padded[0, 0],
        "padded",
        "padded",
        pad_mask=ig.padded_ring,
        dilation_mask=ig.padded_dilation_mask,
        origin=(-gt, -gl),
    )
    kernel = Panel(ig.w_rot[0, 0], "rot180 w", "w_rot", taps=tap_grid(rotated=True))
    output = Panel(
        ig.grad_x_padded[0, 0], "grad x padded", "gxp", pad_mask=ig.pad_mask, origin=(-pt, -pl)
    )
    return sw, operand, kernel, output


def scatter_case(lay):
    fw, ig = lay.forward, lay.input_grad
    sc = scatter(fw, ig.grad_out, 0, 0)
    (pt, _), (pl, _) = fw.spec.padding
    kernel = Panel(fw.w[0, 0], "w", "w", taps=tap_grid())
    g = Panel(ig.grad_out[0, 0], "grad_out", "grad_out")
    result = Panel(
        ig.grad_x_padded[0, 0],
        "gxp",
        "gxp",
        pad_mask=fw.pad_mask,
        remainder_mask=fw.remainder_mask,
        origin=(-pt, -pl),
    )
    return sc, kernel, g, result


@pytest.fixture(scope="module")
def classroom():
    """7×7 ⋆ 3×3, stride 2, padding 1 (16 steps)."""
    return make_layer()


@pytest.fixture(scope="module")
def remainder_layer():
    """8×8, stride 2, padding 1: one remainder row and column."""
    lay = make_layer(H=8)
    assert lay.forward.remainder_mask.any()
    return lay


# --- figure helpers ------------------------------------------------------------------------------


def trace(fig, name):
    """(index, trace) of the trace with this name."""
    found = [(i, t) for i, t in enumerate(fig.data) if t.name == name]
    assert len(found) == 1, f"{len(found)} traces named {name!r}"
    return found[0]


def shapes(fig, name):
    return [s for s in fig.layout.shapes if s.name == name]


def frames_json(fig):
    """The frames as the plain dicts they were built from (to_dict would base64 the arrays)."""
    return [f.to_plotly_json() for f in fig.frames]


def hex_at(scale, zmin, zmax, z):
    """Colour of value z on a stepwise colour scale (the colour of the step containing z)."""
    f = (z - zmin) / (zmax - zmin)
    for (a, ca), (b, _) in itertools.pairwise(scale):
        if a <= f <= b and a < b:
            return ca
    raise AssertionError(f"{z} is outside the scale")


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


def covered_by(poly_x, poly_y, shape, origin) -> np.ndarray:
    """Which cell centres a closed polygon contains."""
    h, w = shape
    if len(poly_x) == 0:
        return np.zeros(shape, dtype=bool)
    oy, ox = origin
    rr, cc = np.mgrid[0:h, 0:w]
    centres = np.stack([cc.ravel() + ox, rr.ravel() + oy], axis=1)
    return Path(np.stack([poly_x, poly_y], axis=1)).contains_points(centres).reshape(shape)


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
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output)
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


# --- sweep_figure --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fwd(classroom):
    sw, operand, kernel, output = forward_case(classroom)
    return (
        sw,
        operand,
        kernel,
        output,
        sweep_animations.sweep_figure(sw, operand, kernel, output, start=5),
    )


def test_one_frame_per_step_named_by_step(fwd):
    sw, *_, fig = fwd
    assert len(fig.frames) == sw.steps == 16
    assert [f.name for f in fig.frames] == [str(t) for t in range(sw.steps)]


def test_frames_carry_only_the_overlay_traces(fwd):
    *_, fig = fwd
    traces = fig.frames[0].traces
    assert all(f.traces == traces for f in fig.frames)
    names = [fig.data[i].name for i in traces]
    assert names == ["window", "window outline", "pending", "target"]
    assert len(fig.data) > len(traces) + 5  # the grids and overlays stay static
    assert all(len(f["data"]) == len(traces) for f in frames_json(fig))


def test_the_window_says_what_colours_it():
    """Forward: the kernel's taps; ∂L/∂w: ∂L/∂y slides over the input, its cells colour it."""
    from convviz.render.stories import forward_panels, weight_grad_panels
    from convviz.sweeps import weight_grad_sweep

    lay = make_layer()
    fw_sweep, wg_sweep = forward_sweep(lay.forward), weight_grad_sweep(lay.weight_grad)
    for sw, panels, says in (
        (fw_sweep, forward_panels(lay.forward, fw_sweep, 0, 0, 0), "coloured by kernel tap"),
        (wg_sweep, weight_grad_panels(lay.weight_grad, wg_sweep, 0, 0, 0), "by ∂L/∂y cell"),
    ):
        fig = sweep_animations.sweep_figure(sw, *panels)
        notes = " ".join(
            re.sub(r"<[^>]+>", " ", " ".join(a.text for a in fig.layout.annotations)).split()
        )
        assert says in notes and "kernel tap" not in notes.replace(says, ""), notes


def test_each_frame_colours_the_window_on_the_operands_own_cells(classroom):
    """Each frame's window covers its taps with the operand's numbers; the padding under it keeps
    its own look (in tap colours a padded zero looked like one of x's cells)."""
    lay = make_layer(H=9, stride=1, padding=2, dilation=2)  # gaps between the taps
    sw, operand, kernel, output = forward_case(lay)
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output)
    i_win, _ = trace(fig, "window")
    assert fig.frames[0].traces[0] == i_win
    oy, ox = operand.origin
    pad = operand.mask("pad_mask")
    padded_under = 0
    for t, f in enumerate(frames_json(fig)):
        win = f["data"][0]
        z = np.array(win.get("z", fig.data[i_win].z), dtype=float)
        cells = {
            (int(y), int(x))
            for (a, y) in enumerate(win["y"])
            for (b, x) in enumerate(win["x"])
            if np.isfinite(z[a, b])
        }
        own = ~pad[np.ix_(sw.rows[t], sw.cols[t])]
        expect = {(r + oy, c + ox) for r in sw.rows[t] for c in sw.cols[t] if not pad[r, c]}
        assert cells == expect
        padded_under += int((~own).sum())
        text = grids.plain(win["text"])
        covered = sw.operand[0][np.ix_(sw.rows[t], sw.cols[t])]
        np.testing.assert_array_equal(text[np.isfinite(z)], grids.format_values(covered[own]))
        assert set(text[~np.isfinite(z)]) <= {""}
    assert padded_under > 0  # the case slides the window over the padding


def test_window_cells_take_their_tap_colour_through_the_rotation(classroom):
    sw, operand, kernel, output = input_grad_case(classroom)
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output)
    win = fig.data[fig.frames[0].traces[0]]
    z = np.asarray(win.z, float)
    dh, dw = sw.dilation
    under = z[::dh, ::dw]  # the cell under tap (a, b); NaN over the padding (its own look)
    own = np.isfinite(under)
    assert own.any() and not own.all()  # the first window lies on the padded ring's corner
    np.testing.assert_array_equal(under[own], kernel.taps[own])
    a, b = np.argwhere(own)[0]
    colors = tap_colors(3, 3)
    assert hex_at(win.colorscale, win.zmin, win.zmax, under[a, b]) == colors[kernel.taps[a, b]]


def test_tap_colours_repeat_past_the_largest_kernel_and_their_scale_stays_small():
    # ∂L/∂y is the window of the weight gradient: up to 150×150 "taps". One colour step each made a
    # 45,000-entry colour scale that plotly validated for seconds on every rerun.
    colors = tap_colors(12, 12)
    assert colors[:TAP_CYCLE] == tap_colors(11, 11)  # every tap of a real kernel has its own
    assert colors[TAP_CYCLE:] == colors[: 144 - TAP_CYCLE]
    colour = grids.tap_heatmap(np.arange(144).reshape(12, 12), 144)
    assert len(colour["colorscale"]) == 2 * TAP_CYCLE
    z = np.asarray(colour["z"]).ravel()
    for t in (0, 5, 120, 121, 143):
        assert hex_at(colour["colorscale"], colour["zmin"], colour["zmax"], z[t]) == colors[t]
    assert np.isnan(grids.tap_heatmap(np.array([[-1, 0]]), 1)["z"][0, 0])  # no tap: transparent


def test_output_shows_the_sums_written_so_far(fwd):
    sw, _, _, output, fig = fwd
    _, values = trace(fig, "y:values")
    np.testing.assert_array_equal(values.z, sw.sums.reshape(sw.out_size))
    for t, f in enumerate(frames_json(fig)):
        pending = f["data"][2]
        hidden = covered_by(pending["x"], pending["y"], output.shape, output.origin)
        expect = np.arange(sw.steps).reshape(sw.out_size) > t
        np.testing.assert_array_equal(hidden, expect)
        target = f["data"][3]
        r, c = sw.targets[t]
        assert (min(target["x"]), min(target["y"])) == (c - 0.5, r - 0.5)


def test_player_meta_has_one_label_per_frame_and_opens_at_start(fwd):
    sw, *_, fig = fwd
    meta = animation_frames.player_meta(fig)
    assert meta["names"] == [f.name for f in fig.frames]
    assert meta["steps"] == [int(f.name) for f in fig.frames]
    assert meta["active"] == 5
    assert meta["labels"] == [f"{r}, {c}" for r, c in sw.targets[meta["steps"]]]
    assert meta["prefix"] == "y[" and meta["suffix"] == "]" and meta["sampled"] == 1
    assert meta["frame_ms"] == animation_frames.FRAME_MS and 1 in meta["speeds"]


def test_the_player_drives_the_frames_not_plotly_controls(fwd):
    *_, fig = fwd
    assert not fig.layout.updatemenus and not fig.layout.sliders


def test_base_figure_shows_the_start_step(fwd):
    *_, fig = fwd
    frame = frames_json(fig)[5]
    for i, d in zip(fig.frames[5].traces, frame["data"]):
        for key, value in d.items():
            if key != "type":
                np.testing.assert_array_equal(np.asarray(fig.data[i][key]), np.asarray(value))


def test_hover_link_holds_every_output_cells_window_and_every_operand_cells_readers(fwd):
    """The relation is computed here once (the browser only draws boxes): each output cell's
    window box, and each operand cell's (output, tap) readers, as selection.reads has them."""
    from convviz.render.selection import reads

    sw, operand, kernel, output, fig = fwd
    link = animation_frames.player_meta(fig)["link"]
    assert [p["key"] for p in link["panels"]] == [operand.key, kernel.key, output.key]
    windows = np.array(link["windows"])
    np.testing.assert_array_equal(windows[:, 0], sw.rows[:, 0])
    np.testing.assert_array_equal(windows[:, 1], sw.rows[:, -1])
    np.testing.assert_array_equal(windows[:, 2], sw.cols[:, 0])
    assert link["kernel"] == list(sw.kernel.shape[1:])
    hover = [fig.data[i] for i in link["traces"]]
    assert [h.name for h in hover] == ["hover"] * 3 and all(len(h.x) == 0 for h in hover)
    assert windows[:, 1].max() < operand.shape[0] and windows[:, 3].max() < operand.shape[1]
    kw = link["kernel"][1]
    for cell, pairs in enumerate(link["readers"]):
        r, c = divmod(cell, operand.shape[1])
        steps = pairs[0::2]
        assert steps == np.flatnonzero(reads(sw, (r, c))).tolist()
        for t, tap in zip(steps, pairs[1::2]):
            assert sw.rows[t, tap // kw] == r and sw.cols[t, tap % kw] == c


def test_sampling_keeps_every_kth_step_the_last_and_start():
    lay = make_layer(H=7, stride=1, padding=1)  # 49 steps
    sw, operand, kernel, output = forward_case(lay)
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output, start=23, max_frames=10)
    names = [int(f.name) for f in fig.frames]
    assert names == sorted({*range(0, 49, 5), 48, 23})
    assert "every 5th step shown" in fig.layout.title.text
    meta = animation_frames.player_meta(fig)
    assert meta["active"] == names.index(23) and meta["sampled"] == 5
    assert len(meta["labels"]) == len(names)


@pytest.mark.parametrize("H", [5, 10, 40])  # 25, 100, 1600 steps (padding 1, stride 1)
def test_every_gif_frame_is_one_the_browser_shows(H):
    """The GIF keeps fewer frames than the browser (its file size), but only frames the browser
    shows as well: the same steps of the same sweep, the result last."""
    sw, operand, kernel, output = forward_case(make_layer(H=H, stride=1, padding=1))
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output, start=sw.steps - 1)
    shown = set(animation_frames.player_meta(fig)["steps"])
    gif = selection.gif_steps(sw.steps)
    assert set(gif) <= shown and gif[-1] == sw.steps - 1
    assert len(gif) <= selection.GIF_FRAMES + 1 and len(gif) == min(sw.steps, len(gif))
    if sw.steps <= selection.GIF_FRAMES:
        assert list(gif) == list(range(sw.steps))  # short sweeps: every step in both


def test_start_out_of_range_is_clamped(fwd):
    sw, operand, kernel, output, _ = fwd
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output, start=999)
    assert animation_frames.player_meta(fig)["active"] == len(fig.frames) - 1


def test_mismatched_panels_are_refused(fwd):
    sw, _, kernel, output, _ = fwd
    with pytest.raises(ValueError, match="operand panel"):
        sweep_animations.sweep_figure(sw, kernel, kernel, output)


def test_sweep_click_overlays_on_operand_and_output(fwd):
    *_, fig = fwd
    _, click = trace(fig, "y:click")
    assert [list(c) for c in click.customdata][:2] == [["y", 0, 0], ["y", 0, 1]]
    trace(fig, "x:click")


def test_animated_figure_is_valid_plotly_and_frames_read_back(fwd):
    *_, fig = fwd
    go.Figure(fig.to_dict())  # the full, slow validation of every frame
    assert fig.frames[3].data[0].type == "heatmap"


def test_payload_of_a_16x16_forward_sweep_stays_under_1_mb():
    lay = make_layer(H=16, stride=1, padding=1)
    sw, operand, kernel, output = forward_case(lay)
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output)
    assert len(fig.frames) == 256
    assert len(pio.to_json(fig.to_dict(), validate=False)) < 1_000_000


# --- scatter_figure ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scat(remainder_layer):
    sc, kernel, g, result = scatter_case(remainder_layer)
    return sc, kernel, g, result, sweep_animations.scatter_figure(sc, kernel, g, result, start=2)


def test_scatter_final_frame_shows_the_full_gradient(scat):
    sc, _, _, result, fig = scat
    i_values, _ = trace(fig, "gxp:values")
    last = frames_json(fig)[-1]
    values = last["data"][fig.frames[-1].traces.index(i_values)]
    z = np.array([[np.nan if v is None else v for v in row] for row in values["z"]])
    pad = result.pad_mask
    np.testing.assert_array_equal(z[~pad], sc.running[-1][~pad])
    assert np.isnan(z[pad]).all()  # the flat padding colour beneath shows through
    np.testing.assert_array_equal(np.asarray(values["text"]), grids.format_values(sc.running[-1]))
    np.testing.assert_allclose(sc.running[-1], result.values)


def test_scatter_stamp_covers_its_window_in_tap_colours(scat):
    sc, kernel, _, result, fig = scat
    i_stamp = fig.frames[0].traces[2]
    assert fig.data[i_stamp].name == "stamp"
    np.testing.assert_array_equal(np.asarray(fig.data[i_stamp].z, float), kernel.taps)
    oy, ox = result.origin
    for t, f in zip((int(f.name) for f in fig.frames), frames_json(fig)):
        stamp = f["data"][2]
        np.testing.assert_array_equal(stamp["x"], sc.cols[t] + ox)
        np.testing.assert_array_equal(stamp["y"], sc.rows[t] + oy)
        shown = [s.replace("+", "") for s in grids.plain(stamp["text"]).ravel()]
        assert shown == list(grids.format_values(sc.stamps[t]).ravel())


def test_scatter_controls_and_start(scat):
    *_, fig = scat
    meta = animation_frames.player_meta(fig)
    assert len(meta["labels"]) == len(fig.frames) == 16
    assert meta["active"] == 2 and meta["link"] is None
    assert len(meta["captions"]) == 16 and meta["captions"][0][0].startswith("∂L/∂y[0, 0] = ")
    # the padded grid's rows and columns as its axes write them: "−1", not "-1"
    assert "rows −1…1, cols −1…1" in meta["captions"][0][0]
    assert not any("-" in line for lines in meta["captions"] for line in lines)
    go.Figure(fig.to_dict())


def test_several_filters_scatter_shows_each_frames_own_filter():
    """channels-small (3 filters): a frame shows the ∂L/∂y and kernel of the filter it stamps
    from, and its stamp is that ∂L/∂y cell times that kernel (not a sum over filters)."""
    from convviz.fields import preset_state
    from convviz.presets import PRESETS_BY_KEY
    from convviz.render.input_story import scatter_panels
    from convviz.state import spec_of
    from convviz.values import layer_values

    state = preset_state(PRESETS_BY_KEY["channels-small"])
    spec = spec_of(state)
    lay = layer(spec, *layer_values(spec, state["seed"], state["kernel"], state["gout"]))
    sc = scatter(lay.forward, lay.input_grad.grad_out, 0, 1)
    fig = sweep_animations.scatter_figure(sc, *scatter_panels(lay, 0, 0, 1))
    i_g, _ = trace(fig, "grad_out:values")
    i_w, _ = trace(fig, "w:taps")
    K, oW = spec.out_channels, spec.out_size[1]
    assert len(fig.frames) == K * spec.out_size[0] * oW  # every filter's stamps, then the sum
    meta = animation_frames.player_meta(fig)
    for s, f, label in zip((int(f.name) for f in fig.frames), frames_json(fig), meta["labels"]):
        k, (r, c) = sc.filters[s], divmod(int(sc.cells[s]), oW)
        traces = fig.frames[0].traces
        shown_g = f["data"][traces.index(i_g)]
        np.testing.assert_array_equal(shown_g["z"], lay.input_grad.grad_out[0, k])
        shown_w = f["data"][traces.index(i_w)]["text"]
        assert list(np.ravel(shown_w)) == list(grids.format_values(lay.forward.w[k, 1]).ravel())
        np.testing.assert_allclose(sc.stamps[s], shown_g["z"][r, c] * lay.forward.w[k, 1])
        assert label.startswith(f"k={k}]")
    assert "filter 2: " in meta["captions"][-1][0]
    np.testing.assert_allclose(sc.running[-1], lay.input_grad.grad_x_padded[0, 1])


def test_scatter_payload_of_16x16_stays_under_1_mb():
    sc, kernel, g, result = scatter_case(make_layer(H=16, stride=1, padding=1))
    fig = sweep_animations.scatter_figure(sc, kernel, g, result)
    assert len(pio.to_json(fig.to_dict(), validate=False)) < 1_000_000


def test_theme_presentation_makes_bigger_cells(classroom):
    from convviz.render.theme import PRESENTATION

    _, _, kernel, output = forward_case(classroom)  # small grids: neither hits the width cap
    small = panels_figure([kernel, output], THEME)
    big = panels_figure([kernel, output], PRESENTATION)
    assert big.layout.width > small.layout.width
    assert big.data[0].textfont.size > small.data[0].textfont.size


def test_frame_sums_are_written_only_while_their_terms_stay_bounded(remainder_layer):
    """Building a frame's formula is the slow part of a big first load: all frames' terms
    together are bounded (a small sweep writes every frame; 400 frames of 125 terms do not)."""
    sw = forward_sweep(remainder_layer.forward)
    assert animation_frames.writes_captions(sw, sw.steps)
    big = np.zeros((5, 5, 5))
    assert sw.kernel.size * sw.steps <= animation_frames.MAX_CAPTION_TERMS
    wide = type(sw)(**{**sw.__dict__, "kernel": big})
    assert not animation_frames.writes_captions(wide, 400)


@pytest.mark.parametrize(("lo", "hi"), [(0, 9), (-101, 232), (-7, -2), (-3, 3), (2, 2)])
def test_channel_tiles_keep_the_symmetric_colours_and_draw_no_colour_they_lack(lo, hi):
    """The Channels grids' colours: a value has its colour on the symmetric scale (±max |v|,
    0 white) whatever the range, and the scale (its colour bar) holds only colours drawn:
    qa-channels' input (0…9) had a colour bar with a blue half and no negative value."""
    from plotly.colors import sample_colorscale, unlabel_rgb

    from convviz.render.channels import heatmap_grid, value_colours
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


def test_every_index_is_labelled_where_the_labels_fit_a_cell():
    """Classroom's full correlation on a projector: at 1920×1080 every second index was labelled
    (∂L/∂x̃'s ring at −1 had none) though '−1' and a gap fit its 50 px cells."""
    from convviz.presets import PRESETS_BY_KEY
    from convviz.render.input_story import input_grad_animation
    from convviz.render.theme import theme_for

    p = PRESETS_BY_KEY["classroom"]
    spec = p.spec()
    x, w = p.values()
    ig = layer(spec, x, w, p.grad_out_for(np.zeros(spec.output_shape))).input_grad
    sweep = input_grad_sweep(ig, 0, 0)
    panels = input_grad_animation(ig, sweep, 0, 0, 0)
    theme = theme_for(True, (1920, 1080, 24)).reserve(100)  # the page's bars: 43 px cells
    fig = sweep_animations.sweep_figure(sweep, *panels, theme, channel=0, start=0)
    assert fig.layout.xaxis3.tickfont.size == 27
    every = list(range(-1, 8))  # x̃'s indices, its ring included
    assert list(fig.layout.xaxis3.tickvals) == every
    assert list(fig.layout.yaxis3.tickvals) == every

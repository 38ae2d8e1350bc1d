"""What a motion sends and draws: the weight gradient's window (spread by the stride, swept over
the padded input drawn as still cells), a big layer's motions (the window's edge alone, many still
cells as one image, the colours and the sum said when the numbers are hidden), every panel kept in
every frame, valid plotly figures of a bounded size, and the GIFs (every frame, a legend that
fits, rows and columns labelled as in the browser)."""

from __future__ import annotations

import base64
import io

import numpy as np
import plotly.graph_objects as go
import pytest
from motion_cases import LAYERS, figure_frame, grid, preset_layer, slice_of
from PIL import Image

import convviz.render.motion.frames as mp
import convviz.render.motion.gif as mg
import convviz.render.motion.model as mv
import convviz.render.motion.motions as mst
from convviz.engine.arrays import layer
from convviz.engine.spec import ConvSpec
from convviz.engine.sweeps import input_grad_sweep, weight_grad_sweep
from convviz.engine.values import layer_values
from convviz.model.presets import PRESETS
from convviz.render.plotly.grids import format_values
from convviz.render.story.board import backward_pass
from convviz.render.theme import PRESENTATION, THEME, theme_for

# --- weight gradient ------------------------------------------------------------------------------


@pytest.mark.parametrize("key", LAYERS)
def test_weight_window_dilates_by_the_stride_then_steps_by_the_dilation(key):
    n, k, c = slice_of(key)
    wg = LAYERS[key].weight_grad
    sweep = weight_grad_sweep(wg, k, c)
    motion = mst.weight_motion(wg, sweep, n, k, c)
    (sh, sw), (pt, pl) = wg.spec.stride, (wg.spec.padding[0][0], wg.spec.padding[1][0])
    oH, oW = wg.spec.out_size
    i, j = np.indices((oH, oW)).reshape(2, -1)
    tight, spread = motion.scenes[0].groups, motion.scenes[1].groups
    assert np.array_equal(tight["grad_out"].row, i) and np.array_equal(tight["window"].row, i - pt)
    assert np.array_equal(spread["grad_out"].row, sh * i)
    assert np.array_equal(spread["window"].col, sw * j - pl)
    # then the zeros between them (once the cells have spread, never under a moving one)
    assert np.array_equal(grid(motion.scenes[2], motion, 0), wg.dilated[n, k])
    last = motion.scenes[-1].groups["window"]  # the sweep's last step
    assert set(last.row + pt) == set(sweep.rows[-1]) and set(last.col + pl) == set(sweep.cols[-1])


@pytest.mark.parametrize("key", LAYERS)
def test_weight_window_sweeps_over_the_engines_padded_input_drawn_as_cells(key):
    # a transition without redraw drops heatmap layers on the axes it animates: the padded input
    # under the window is drawn as still markers, which stay; every number is the engine's
    n, k, c = slice_of(key)
    wg = LAYERS[key].weight_grad
    motion = mst.weight_motion(wg, weight_grad_sweep(wg, k, c), n, k, c)
    fig = mp.motion_figure(motion, THEME, start=0)
    assert {t.type for t in fig.data} == {"scatter"}
    back = next(t for t in fig.data if t.name == "motion:backdrop")
    assert back.xaxis == "x2" and back.yaxis == "y2"
    (pt, _), (pl, _) = wg.spec.padding
    x_pad = wg.x_padded[n, c]  # whole: a remainder the window never reaches is marked, not cut
    rows, cols = np.indices(x_pad.shape).reshape(2, -1)
    assert np.array_equal(np.asarray(back.y) + pt, rows)
    assert np.array_equal(np.asarray(back.x) + pl, cols)
    if back.text is not None:
        np.testing.assert_array_equal(back.text, format_values(x_pad.ravel()))
    still = fig.data.index(back)  # in every frame (a click on its panel needs it), unchanged
    assert all(
        not set(f.data[f.traces.index(still)].to_plotly_json()) - {"type"} for f in fig.frames
    )


# --- a big layer ---------------------------------------------------------------------------------


def test_a_weight_window_too_big_to_tell_its_cells_apart_moves_as_its_edge():
    """qa-channels' 96×96 window sent every cell's place in every frame: 3.5 MB, a 5–7 s page,
    and a moiré over x̃. Over MAX_WINDOW_CELLS cells the window is its edge (its first and last
    rows and columns, on the same places); a smaller one keeps every cell."""
    qa = next(p for p in PRESETS if p.key == "qa-channels")
    for lay, whole in ((preset_layer(qa), False), (LAYERS["recitation-s2"], True)):
        wg = lay.weight_grad
        g = wg.grad_out[0, 0]
        motion = mst.weight_motion(wg, weight_grad_sweep(wg, 0, 0), 0, 0, 0)
        oH, oW = g.shape
        assert (oH * oW <= mst.MAX_WINDOW_CELLS) == whole
        for scene in motion.scenes[1:]:  # spread (dilate), then at each stop of the sweep
            window = scene.groups["window"]
            rows, cols = window.row, window.col
            height, width = np.ptp(rows), np.ptp(cols)
            want = oH * oW if whole else 2 * (oH + oW) - 4
            assert len(rows) == want
            assert height == (oH - 1) * wg.spec.stride[0] and width == (oW - 1) * wg.spec.stride[1]
        words = [w for *_, w in mv.legend_items(motion)]
        assert ("the window's edge" in words) != whole
        assert ("window (tap colours)" in words) == whole
        if not whole:  # ∂L/∂y in its values' colours: 9 216 tap colours drew a moiré
            assert motion.scenes[0].groups["grad_out"].role == "value"
            fig = mp.motion_figure(motion, THEME, start=0)
            assert len(fig.to_json()) < 1_000_000
            notes = " ".join(a.text for a in fig.layout.annotations)
            assert notes.count("■") >= 4  # both grids state their values' range, not "■ 0"


def _pixels(image) -> np.ndarray:
    """A layout image's RGBA pixels."""
    raw = base64.b64decode(image.source.split(",", 1)[1])
    return np.asarray(Image.open(io.BytesIO(raw)).convert("RGBA"))


def test_many_still_cells_are_one_image_of_their_colours():
    """qa-channels' weight window drew x̃ (10,000 cells) and ∂L/∂y (9,216) as SVG markers that
    never move: 20,000 nodes, seconds for the browser to style. Still cells that many are one
    layout image, each cell its colour at its place (the page's screenshot is unchanged, px for
    px); a small layer keeps its markers, and cells that move stay markers."""
    qa = next(p for p in PRESETS if p.key == "qa-channels")
    wg = preset_layer(qa).weight_grad
    motion = mst.weight_motion(wg, weight_grad_sweep(wg, 0, 0), 0, 0, 0)
    fig = mp.motion_figure(motion, THEME, start=0)
    assert len(fig.to_json()) < 300_000
    moving = {i for f in fig.frames for i in f.traces}
    assert all(len(t.x) < mp.PICTURE_CELLS or i in moving for i, t in enumerate(fig.data))
    x_pad, grad_out = mv.backdrop_cells(motion.backdrops[1]), motion.scenes[0].groups["grad_out"]
    stills = {"x2": x_pad, "x": grad_out}
    assert sorted(im.xref for im in fig.layout.images) == sorted(stills)
    for image in fig.layout.images:
        cells = stills[image.xref]
        top, left = cells.row.min(), cells.col.min()
        assert (image.x, image.y) == (left - 0.5, top - 0.5)
        assert (image.sizex, image.sizey) == (np.ptp(cells.col) + 1, np.ptp(cells.row) + 1)
        px = _pixels(image)
        per_cell = px.shape[1] / image.sizex  # the image is drawn at the figure's px
        at_r = ((cells.row - top + 0.5) * per_cell).astype(int)
        at_c = ((cells.col - left + 0.5) * per_cell).astype(int)
        want = [[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in cells.color]
        np.testing.assert_array_equal(px[at_r, at_c, :3], want)
        np.testing.assert_array_equal(px[at_r, at_c, 3], np.round(255 * cells.opacity))
        # under the traces: the faint grid's borders would cross it (they washed it out)
        extent = next(t for t in fig.data if t.name == "extent" and t.xaxis == image.xref)
        assert len(extent.x) == 5  # the outline alone
    small = layer_motions("recitation-s2")
    assert not any(mp.motion_figure(m, THEME, start=0).layout.images for m in small)


def test_the_whole_pass_of_a_big_multi_filter_layer_says_its_colours_and_its_sum():
    """qa-channels' whole pass hides its numbers: each grid's scale line gave "■ 0" (the motion's
    blank panels), now the range of the numbers its cells take. Its result grid sums the 10
    filters' correlations while the motion draws filter 0's: its title says so."""
    from convviz.render.story.board import whole_motion
    from convviz.render.story.subject import Subject

    (qa,) = [p for p in PRESETS if p.key == "qa-channels"]
    lay = preset_layer(qa)
    ig = lay.input_grad
    motion = whole_motion(Subject(lay, selection=("grad_x", 1, 1)))
    fig = mp.motion_figure(motion, theme_for(True, (1280, 720)))
    grad, result = (fig.layout.annotations[i].text for i in (0, 2))
    for text, values in (
        (grad, ig.grad_out[0, 0]),
        (result, np.concatenate([ig.grad_x_padded[0, 0].ravel(), ig.grad_x[0, 0].ravel()])),
    ):
        assert "hidden" in text
        lo, hi = format_values(np.array([values.min(), values.max()]))
        assert f"■</span> {lo} ·" in text and text.endswith(f"■</span> {hi}</span>")
    assert "Σ over 10 filters" in result and "Σ" not in grad
    one = whole_motion(Subject(LAYERS["recitation-s2"], selection=("grad_x", 1, 1)))  # no sum
    assert not any("Σ" in a.text for a in mp.motion_figure(one).layout.annotations)


# --- every motion's figure -----------------------------------------------------------------------


def layer_motions(key: str) -> list[mv.Motion]:
    """The whole backward pass, the weight window and the mask stage of a preset's slice."""
    n, k, c = slice_of(key)
    ig, wg = LAYERS[key].input_grad, LAYERS[key].weight_grad
    return [
        backward_pass(ig, input_grad_sweep(ig, n, c), n, k, c),
        mst.weight_motion(wg, weight_grad_sweep(wg, k, c), n, k, c),
        mst.mask_motion(ig, n, c),
    ]


@pytest.mark.parametrize("key", ["recitation-s1", "recitation-s2", "classroom"])
def test_every_panel_of_a_motion_has_a_trace_in_its_frames(key):
    """A transition without redraw drops every trace of a panel none of whose traces are in the
    frame: a stride-1 layer's ∂L/∂y (nothing on it moves) vanished from the weight window at
    its first step, in Chromium. Each panel keeps a trace in every frame."""
    for motion in layer_motions(key):
        fig = mp.motion_figure(motion, THEME, start=0)
        for frame in fig.frames:
            axes = {fig.data[i].xaxis for i in frame.traces}
            panels = {fig.data[i].xaxis for i in range(len(fig.data)) if fig.data[i].xaxis}
            assert axes == panels, (motion.name, frame.name, panels - axes)


@pytest.mark.parametrize("key", LAYERS)
def test_motion_figures_are_valid_plotly(key):
    # they are built without plotly's validation (animation_frames.animated_figure): validate here
    for motion in layer_motions(key):
        go.Figure(mp.motion_figure(motion, PRESENTATION, start=0).to_dict())


# --- size ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("side", "limit"), [(16, 1_000_000), (32, 5_000_000)])
def test_payload_of_the_motions_stays_small(side, limit):
    """Every motion of the page (at most one is drawn at a time) plus the scatter route's figure
    stays under the page budget; at 32×32 numbers are dropped and frames are fewer."""
    spec = ConvSpec.create((1, 1, side, side), (1, 1, 3, 3), stride=2, padding=1)
    lay = layer(spec, *layer_values(spec, 0, "random", "random"))
    ig = lay.input_grad
    sweep = input_grad_sweep(ig)
    motions = [
        mst.dilate_motion(ig, 0, 0),
        mst.pad_motion(ig, 0, 0),
        mst.rotate_motion(ig, 0, 0),
        mst.mask_motion(ig, 0, 0),
        backward_pass(ig, sweep, 0, 0, 0),
    ]
    sizes = [len(mp.motion_figure(m, THEME).to_json()) for m in motions]
    weight = mst.weight_motion(lay.weight_grad, weight_grad_sweep(lay.weight_grad), 0, 0, 0)
    scatter_budget = 400_000  # the scatter route's figure at this size (measured ≤ 0.4 MB)
    assert max(sizes) + scatter_budget <= limit, sizes
    assert len(mp.motion_figure(weight, THEME).to_json()) <= limit // 4
    if side > THEME.max_text_cells:  # numbers nobody could read are not sent; the kernel's are
        whole = motions[-1]
        shown = figure_frame(mp.motion_figure(whole, PRESENTATION), -1)
        texts = {name.removeprefix("motion:") for name, t in shown.items() if "text" in t}
        big = {g for g, i in whole.where.items() if max(whole.panels[i].shape) > side // 2}
        # the kernel's numbers and its taps' names, if its cells are big
        assert texts <= {"taps", "names:taps"} and not texts & big


# --- GIFs ----------------------------------------------------------------------------------------


@pytest.mark.encoder  # a GIF of every frame of the whole pass: seconds
def test_gif_of_the_whole_pass_plays_every_frame():
    from io import BytesIO

    from PIL import Image, ImageSequence

    ig = LAYERS["recitation-s1"].input_grad
    motion = backward_pass(ig, input_grad_sweep(ig), 0, 0, 0)
    gif = Image.open(BytesIO(mg.motion_gif(motion, cell_px=20)))
    total = sum(f.info["duration"] for f in ImageSequence.Iterator(gif))
    F = len(motion.frames())  # identical neighbours are merged: their times add up
    assert total == mv.MOTION_FRAME_MS * (8 + F - 2 + 20)
    assert 1 < gif.n_frames <= F


@pytest.mark.parametrize("which", ["pad", "whole"])
def test_motion_gifs_carry_a_legend_that_fits_their_frame(which):
    """A GIF explains its marks as the browser's legend does (the motions' GIFs had none): each
    role drawn, in its colour, wrapped inside the frame (a one-grid stage is narrow), under the
    caption."""
    from matplotlib.colors import to_hex

    from convviz.render.motion.model import legend_items

    ig = LAYERS["recitation-s2"].input_grad
    sweep = input_grad_sweep(ig)
    motion = mst.pad_motion(ig, 0, 0) if which == "pad" else backward_pass(ig, sweep, 0, 0, 0)
    canvas, ax, _, _ = mg._gif_stills(motion, 20)
    canvas.draw()
    width = canvas.figure.bbox.width
    said = [t.get_text().strip() for t in ax.texts]
    items = legend_items(motion)
    assert {"zero inserted by dilation"} <= {words for _, _, words in items}
    H = max(p.shape[0] for p in motion.panels)
    for glyph, colour, words in items:
        at = said.index(words)
        swatch, text = ax.texts[at - 1], ax.texts[at]  # the glyph, in its colour, before it
        assert swatch.get_text() == glyph and to_hex(swatch.get_color()) == to_hex(colour)
        box = text.get_window_extent(canvas.get_renderer())
        assert box.x0 >= 0 and box.x1 <= width, f"{words} runs off the frame"
        assert text.get_position()[1] > H + 0.2  # under the caption


def test_motion_gifs_label_rows_and_columns_as_the_browser_does():
    """A GIF's grids had no indices, so 'Computing ∂L/∂x̃[2, 3]' could not be found on it:
    each grid's rows are numbered left of it and its columns under it, from −padding on a
    padded grid, inside the frame and clear of the caption."""
    from convviz.engine.text import number

    ig = LAYERS["recitation-s2"].input_grad
    motion = backward_pass(ig, input_grad_sweep(ig), 0, 0, 0)
    canvas, ax, _, _ = mg._gif_stills(motion, 20)
    canvas.draw()
    rows = [t.get_text() for t in ax.texts if t.get_ha() == "right"]
    cols = [t for t in ax.texts if t.get_ha() == "center" and t.get_va() == "top"]
    parts = [mv.grid_part(p) for p in motion.panels]  # a turn's room around its grid: no index
    assert rows == [number(oy + r) for (h, _), (oy, _) in parts for r in range(h)]
    assert [t.get_text() for t in cols] == [
        number(ox + q) for (_, w), (_, ox) in parts for q in range(w)
    ]
    assert "−2" in rows  # the padded ∂L/∂y counts from −2
    width, H = canvas.figure.bbox.width, max(p.shape[0] for p in motion.panels)
    renderer = canvas.get_renderer()
    for t in [*cols, *(t for t in ax.texts if t.get_ha() == "right")]:
        box = t.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= width
        assert t.get_position()[1] < H + mg.INDEX  # above the caption's line

"""Motions of the backward pass: every frame's numbers are the engine's, every cell ends where the
engine's stage puts it. Checked on the scenes (the model) and on the plotly figure the browser gets
(its base traces merged with the last frame), for every preset and every padding mode."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import plotly.graph_objects as go
import pytest
from PIL import Image

import convviz.render.motion as mv
import convviz.render.motion_gif as mg
import convviz.render.motion_plotly as mp
import convviz.render.motion_scenes as ms
import convviz.render.motion_stages as mst
from convviz.lecture import LECTURE
from convviz.ops import rot180
from convviz.presets import PRESETS
from convviz.render.animation_frames import player_meta
from convviz.render.grids import format_values
from convviz.render.theme import PRESENTATION, THEME, tap_colors, theme_for
from convviz.spec import PADDING_MODES, ConvSpec
from convviz.stages import forward_stages, layer
from convviz.sweeps import input_grad_sweep, weight_grad_sweep
from convviz.values import layer_values

# --- layers --------------------------------------------------------------------------------------


def preset_layer(p):
    spec = p.spec()
    x, w = p.values()
    return layer(spec, x, w, p.grad_out_for(forward_stages(spec, x, w).y))


# channels-small is drawn for its last sample, filter and channel: (n, k, c) ≠ (0, 0, 0)
LAYERS = {p.key: preset_layer(p) for p in PRESETS if p.key != "qa-channels"}
SLICE = {"channels-small": (1, 2, 1)}
MODE_SPECS = {
    mode: ConvSpec.create(
        (1, 1, 5, 6), (1, 1, 3, 2), stride=(2, 1), padding=((1, 2), (2, 1)), padding_mode=mode
    )
    for mode in PADDING_MODES
}


def slice_of(key: str) -> tuple[int, int, int]:
    return SLICE.get(key, (0, 0, 0))


def mode_layer(mode: str):
    spec = MODE_SPECS[mode]
    return layer(spec, *layer_values(spec, 7, "random", "random"))


# --- reading scenes and figures ------------------------------------------------------------------


def grid(scene: mv.Scene, motion: mv.Motion, panel: int) -> np.ndarray:
    """The numbers a scene shows on a panel's grid (not the room a turn has around it): visible
    cells at whole positions (NaN elsewhere)."""
    shape, (oy, ox) = mv.grid_part(motion.panels[panel])
    out = np.full(shape, np.nan)
    for name, c in scene.groups.items():
        if motion.where[name] != panel or c.role == "window":
            continue
        seen = c.opacity > 0.5
        assert np.allclose(c.row[seen], np.round(c.row[seen])), name
        r, q = np.round(c.row[seen]).astype(int) - oy, np.round(c.col[seen]).astype(int) - ox
        assert np.isnan(out[r, q]).all(), f"{name}: two visible cells on one place"
        out[r, q] = c.value[seen]
    return out


def decoded(v):
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
    return np.asarray(v, dtype=object)


def merge(trace: dict, update: dict) -> dict:
    out = dict(trace)
    for k, v in update.items():
        out[k] = merge(out.get(k, {}), v) if isinstance(v, dict) else v
    return out


def figure_frame(fig, index: int) -> dict[str, dict]:
    """Trace name → the trace as the browser shows it at frame `index` (JSON, as sent)."""
    spec = json.loads(fig.to_json())
    frame = spec["frames"][index]
    data = [dict(t) for t in spec["data"]]
    for i, update in zip(frame["traces"], frame["data"]):
        data[i] = merge(data[i], update)
    return {t["name"]: t for t in data}


def shown_grid(fig, index: int, motion: mv.Motion, panel: int) -> np.ndarray:
    """The text the figure shows on a panel's grid at frame `index`, as a grid of strings."""
    shape, (oy, ox) = mv.grid_part(motion.panels[panel])
    out = np.full(shape, "", dtype=object)
    for name, t in figure_frame(fig, index).items():
        group = name.removeprefix("motion:")
        if not name.startswith("motion:") or motion.where[group] != panel or "text" not in t:
            continue
        x, y, text = decoded(t["x"]), decoded(t["y"]), decoded(t["text"])
        for r, q, s in zip(y, x, text):
            assert s, "a faded cell's text is blank, never empty (plotly would drop its node)"
            if s.strip():
                assert out[round(r) - oy, round(q) - ox] == "", "two numbers on one cell"
                out[round(r) - oy, round(q) - ox] = s
    return out


def text(a: np.ndarray) -> np.ndarray:
    return format_values(a)


# --- dilate --------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", LAYERS)
def test_dilated_positions_are_stride_times_index(key):
    n, k, _ = slice_of(key)
    ig = LAYERS[key].input_grad
    motion = mst.dilate_motion(ig, n, k)
    first, last = motion.scenes[0].groups["grad_out"], motion.scenes[-1].groups["grad_out"]
    oH, oW = ig.spec.out_size
    i, j = np.indices((oH, oW)).reshape(2, -1)
    sh, sw = ig.spec.stride
    assert np.array_equal(first.row, i) and np.array_equal(first.col, j)
    assert np.array_equal(last.row, sh * i) and np.array_equal(last.col, sw * j)
    assert np.array_equal(last.value, ig.grad_out[n, k].ravel()), "each cell keeps its number"
    # the figure's last frame draws ∂L/∂y[i, j] at x = sw·j, y = sh·i
    fig = mp.motion_figure(motion, THEME)
    t = figure_frame(fig, -1)["motion:grad_out"]
    assert np.allclose(decoded(t["x"]), sw * j) and np.allclose(decoded(t["y"]), sh * i)


@pytest.mark.parametrize("key", LAYERS)
def test_dilate_ends_on_the_engines_dilated_grad_out_and_zeros_fade_in(key):
    n, k, _ = slice_of(key)
    ig = LAYERS[key].input_grad
    motion = mst.dilate_motion(ig, n, k)
    assert np.array_equal(grid(motion.scenes[-1], motion, 0), ig.dilated[n, k])
    inserted = [f.groups["inserted"].opacity for f in motion.frames()]
    assert all(np.all(o == 0) for o in inserted[:2]) and np.all(inserted[-1] == 1)
    fig = mp.motion_figure(motion, THEME)
    assert np.array_equal(shown_grid(fig, -1, motion, 0), text(ig.dilated[n, k]))


# --- pad -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", LAYERS)
def test_pad_ends_on_the_engines_padded_grid_with_roles(key):
    n, k, _ = slice_of(key)
    ig = LAYERS[key].input_grad
    motion = mst.pad_motion(ig, n, k)
    last = motion.scenes[-1]
    assert np.array_equal(grid(last, motion, 0), ig.padded[n, k])
    # every ring cell is labelled pad or remainder, exactly the engine's ring
    p = motion.panels[0]
    ring = np.zeros(p.shape, bool)
    for name in ("pad", "remainder"):
        c = last.groups[name]
        assert c.role == name and np.all(c.value == 0)
        ring[c.row.astype(int) - p.origin[0], c.col.astype(int) - p.origin[1]] = True
    assert np.array_equal(ring, ig.padded_ring)
    rH, rW = ig.spec.remainder
    assert (last.groups["remainder"].value.size > 0) == bool(rH or rW)
    fig = mp.motion_figure(motion, THEME)
    assert np.array_equal(shown_grid(fig, -1, motion, 0), text(ig.padded[n, k]))


# --- rotate --------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", LAYERS)
def test_every_rotated_tap_ends_on_its_rot180_place_with_its_value_and_colour(key):
    _, k, c = slice_of(key)
    ig = LAYERS[key].input_grad
    kH, kW = ig.spec.kernel_size
    motion = mst.rotate_motion(ig, k, c)
    taps = motion.scenes[-1].groups["taps"]
    i, j = np.indices((kH, kW)).reshape(2, -1)
    assert np.allclose(taps.row, kH - 1 - i) and np.allclose(taps.col, kW - 1 - j)
    assert np.array_equal(taps.value, ig.w[k, c].ravel())
    assert list(taps.color) == tap_colors(kH, kW), "each tap keeps its colour"
    assert np.array_equal(grid(motion.scenes[-1], motion, 1), ig.w_rot[c, k])
    assert np.array_equal(ig.w_rot[c, k], rot180(ig.w[k, c]))
    # a turn, not a cut: every tap keeps its distance to the centre on the way, drawn in (with
    # its square) by the same factor for all, so that the turning kernel stays in its square
    centre = np.array([(kH - 1) / 2, (kW - 1) / 2])
    radius = np.hypot(i - centre[0], j - centre[1])
    for f in motion.scenes[1:]:
        t = f.groups["taps"]
        scale = t.scale[0]
        assert np.allclose(t.scale, scale) and 0.7 < scale <= 1
        assert np.allclose(np.hypot(t.row - centre[0], t.col - centre[1]), scale * radius)
    assert np.allclose(taps.scale, 1)  # arrived: whole cells again
    fig = mp.motion_figure(motion, THEME)
    t = figure_frame(fig, -1)["motion:taps"]
    assert np.allclose(decoded(t["x"]), kW - 1 - j) and np.allclose(decoded(t["y"]), kH - 1 - i)
    assert list(t["marker"]["color"]) == tap_colors(kH, kW)
    assert list(t["text"]) == list(text(ig.w[k, c]).ravel())


def test_rotation_names_the_channel_swap_only_with_channels():
    swap = mst.rotate_motion(LAYERS["channels-small"].input_grad, 2, 1)
    assert "Channels swap" in swap.scenes[-1].caption and "w[c=1, k=2]" in swap.scenes[-1].caption
    assert "w_rot[c=1, k=2]" in swap.panels[1].subtitle  # filter k=2, channel c=1 → [c, k]
    alone = mst.rotate_motion(LAYERS["recitation-s2"].input_grad, 0, 0)
    assert "swap" not in alone.scenes[-1].caption


# --- mask ----------------------------------------------------------------------------------------


def folded(motion: mv.Motion) -> np.ndarray:
    """What arrives on each input cell: its own ∂L/∂x̃ plus every ring value that travels to it."""
    arrive = [s for s in motion.scenes if "travels back" in s.caption]
    start = motion.scenes[0].groups
    own = start["grad_x_padded"]
    p = motion.panels[0]
    H, W = (np.max(own.row) + 1).astype(int), (np.max(own.col) + 1).astype(int)
    total = np.zeros((H, W))
    inner = (own.row >= 0) & (own.col >= 0)
    np.add.at(total, (own.row[inner].astype(int), own.col[inner].astype(int)), own.value[inner])
    if arrive:
        ring = arrive[0].groups["ring"]
        np.add.at(total, (ring.row.astype(int), ring.col.astype(int)), ring.value)
    assert p.origin[0] <= 0 and p.origin[1] <= 0
    return total


@pytest.mark.parametrize("mode", PADDING_MODES)
def test_folded_ring_sums_equal_the_engines_grad_x_for_every_padding_mode(mode):
    ig = mode_layer(mode).input_grad
    motion = mst.mask_motion(ig, 0, 0)
    if mode == "zeros":  # the ring drops: it arrives nowhere
        assert not any("travels back" in s.caption for s in motion.scenes)
        assert np.all(motion.scenes[-1].groups["ring"].opacity == 0)
    assert np.allclose(folded(motion), ig.grad_x[0, 0])
    last = grid(motion.scenes[-1], motion, 0)
    (pt, _), (pl, _) = ig.spec.padding
    H, W = ig.spec.in_size
    assert np.array_equal(last[pt : pt + H, pl : pl + W], ig.grad_x[0, 0])
    assert np.isnan(np.where(ig.pad_mask, last, np.nan)).all(), "nothing left on the ring"
    fig = mp.motion_figure(motion, THEME)
    shown = shown_grid(fig, -1, motion, 0)
    assert np.array_equal(shown[pt : pt + H, pl : pl + W], text(ig.grad_x[0, 0]))
    assert not shown[ig.pad_mask].any()


@pytest.mark.parametrize("key", LAYERS)
def test_mask_of_every_preset_ends_on_grad_x(key):
    n, _, c = slice_of(key)
    ig = LAYERS[key].input_grad
    motion = mst.mask_motion(ig, n, c)
    (pt, _), (pl, _) = ig.spec.padding
    H, W = ig.spec.in_size
    assert np.allclose(folded(motion), ig.grad_x[n, c])
    last = grid(motion.scenes[-1], motion, 0)
    assert np.array_equal(last[pt : pt + H, pl : pl + W], ig.grad_x[n, c])
    assert np.array_equal(grid(motion.scenes[0], motion, 0), ig.grad_x_padded[n, c])


# --- the whole backward pass ---------------------------------------------------------------------


def named(key: str) -> str:
    """The label the player shows for a lecture stage ('6 · mask')."""
    return LECTURE.label(LECTURE.stage(key))


@pytest.mark.parametrize("key", LAYERS)
def test_whole_pass_stage_by_stage_ends_on_each_engine_stage(key):
    n, k, c = slice_of(key)
    ig = LAYERS[key].input_grad
    motion = mst.backward_motion(ig, input_grad_sweep(ig, n, c), n, k, c)
    assert motion.stages == (
        ms.GRAD_OUT,
        ms.DILATE,
        ms.PAD,
        ms.ROTATE,
        ms.CORRELATE,
        ms.MASK,
    )
    (gt, _), (gl, _) = ig.spec.full_padding
    dH, dW = ig.spec.dilated_out_size
    dilated = grid(motion.last(ms.DILATE), motion, 0)[gt : gt + dH, gl : gl + dW]
    assert np.array_equal(dilated, ig.dilated[n, k])
    assert np.array_equal(grid(motion.last(ms.PAD), motion, 0), ig.padded[n, k])
    assert np.array_equal(grid(motion.last(ms.ROTATE), motion, 1), ig.w_rot[c, k])
    assert np.array_equal(grid(motion.last(ms.CORRELATE), motion, 2), ig.grad_x_padded[n, c])
    (pt, _), (pl, _) = ig.spec.padding
    H, W = ig.spec.in_size
    end = grid(motion.scenes[-1], motion, 2)
    assert np.array_equal(end[pt : pt + H, pl : pl + W], ig.grad_x[n, c])
    # the player: one label per frame naming its stage, in the story's order, opened on ∂L/∂y
    fig = mp.motion_figure(motion, THEME, start=0)
    meta = player_meta(fig)
    assert len(meta["labels"]) == len(fig.frames) == len(motion.frames())
    order = list(dict.fromkeys(meta["labels"]))
    assert order == list(map(named, motion.stages)) and meta["active"] == 0
    # read as "stage 2 · dilate": a stage is a name, not an index in brackets
    assert meta["prefix"] + order[1] + meta["suffix"] == "stage 2 · dilate"
    shown = shown_grid(fig, -1, motion, 2)
    assert np.array_equal(shown[pt : pt + H, pl : pl + W], text(ig.grad_x[n, c]))


@pytest.mark.parametrize("key", LAYERS)
def test_whole_pass_tells_the_player_its_stages_and_each_frames_cell(key):
    """meta "stages" drives the stage bar; meta "cells" names the engine cell whose sum a frame
    computes: the full correlation's window target (the sweep's), then the followed ∂L/∂x cell."""
    n, k, c = slice_of(key)
    ig = LAYERS[key].input_grad
    sweep = input_grad_sweep(ig, n, c)
    motion = mst.backward_motion(ig, sweep, n, k, c)
    meta = player_meta(mp.motion_figure(motion, THEME, start=0))
    assert meta["stages"] == list(map(named, motion.stages))
    cells = [tuple(x) for x in meta["cells"]]
    assert len(cells) == len(meta["labels"])
    keyframes = [s for s in motion.scenes if s.stage == ms.CORRELATE and s.cell]
    targets = {tuple(map(int, t)) for t in sweep.targets}
    assert keyframes and all(s.cell[0] == "grad_x_padded" for s in keyframes)
    assert all(s.cell[1:] in targets for s in keyframes)
    (gt, _), (gl, _) = ig.spec.full_padding
    for s in keyframes:  # the window stands where the sweep's step of that target puts it
        stop = next(t for t in range(sweep.steps) if tuple(sweep.targets[t]) == s.cell[1:])
        window = s.groups["window"]
        assert set(window.row + gt) == set(sweep.rows[stop])
        assert set(window.col + gl) == set(sweep.cols[stop])
    for label, cell in zip(meta["labels"], cells):
        if label == named(ms.MASK) and cell:
            assert cell == ms.FOLLOWED
        if label in map(named, (ms.GRAD_OUT, ms.DILATE, ms.PAD, ms.ROTATE)):
            assert cell == ()
    assert cells[-1] == ms.FOLLOWED


# the viewport the browser reports at 1280×720 / 1920×1080, sidebar folded (main column, window
# height), less the page's stage bar (pages/2_Input_gradient.py: STAGE_PRES_PX)
PROJECTORS = {720: ((1232, 720), 8), 1080: ((1848, 1080, 24), 13)}
STAGE_PRES_PX = 48


@pytest.mark.parametrize("height", [720, 1080])
@pytest.mark.parametrize("key", [p.key for p in PRESETS])
def test_whole_pass_on_a_projector_has_48_px_cells_where_they_fit(key, height):
    """Issue 6's rule on the whole pass: cells ≥ 48 px with ≥ 20 px numbers while the tallest grid
    (the padded ∂L/∂y) has room for them (8 rows at 720 px, 13 at 1080); no title, no panel
    subtitles, no stage line in the figure (the page's stage bar says where it is)."""
    viewport, rows_fit = PROJECTORS[height]
    theme = theme_for(True, viewport).reserve(STAGE_PRES_PX)
    lay = LAYERS.get(key) or preset_layer(next(p for p in PRESETS if p.key == key))
    ig = lay.input_grad
    motion = mst.backward_motion(ig, input_grad_sweep(ig, 0, 0), 0, 0, 0)
    fig = mp.motion_figure(motion, theme, start=0)
    assert fig.layout.height <= theme.figure_h
    notes = [a.text for a in fig.layout.annotations]
    assert len(notes) == len(motion.panels) + 1  # the panel titles and the legend
    assert not any("2 · dilate" in t for t in notes)  # the stage line is the page's bar
    rows = max(p.shape[0] for p in motion.panels)
    if rows <= rows_fit:
        cell = min(drawn_cell_px(fig, i, p) for i, p in enumerate(motion.panels))
        fonts = [t.textfont.size for t in fig.data if (t.name or "").startswith("motion:")]
        assert cell >= 47.5 and min(np.min(f) for f in fonts) >= 20, (cell, fonts)


@pytest.mark.parametrize("key", list(LAYERS))
def test_storyboard_stages_on_a_720_px_projector_keep_big_cells(key):
    """Each stage's motion below the stage bar at 1280×720: a grid of up to 9 rows (classroom's
    mask: 9×9 → 7×7) has ≥ 44 px cells and ≥ 20 px numbers (it had 28 px and 12 px: the page's
    title row and a legend row under the grid took the height)."""
    viewport, _ = PROJECTORS[720]
    theme = theme_for(True, viewport).reserve(STAGE_PRES_PX)
    from convviz.render.input_story import Focus, stage_motion

    ig = LAYERS[key].input_grad
    for stage in ("dilate", "pad", "rotate", "mask"):
        motion = stage_motion(stage, ig, None, Focus())
        fig = mp.motion_figure(motion, theme)
        assert fig.layout.height <= theme.figure_h and fig.layout.width <= theme.figure_w
        if max(p.shape[0] for p in motion.panels) <= 9:
            cell = min(drawn_cell_px(fig, i, p) for i, p in enumerate(motion.panels))
            fonts = [t.textfont.size for t in fig.data if (t.name or "").startswith("motion:")]
            assert cell >= 44 and min(np.min(f) for f in fonts) >= 20, (stage, cell, fonts)


def drawn_cell_px(fig, i: int, panel) -> float:
    """The px edge of panel i's cells as the figure lays them out (its axis domain's width)."""
    x0, x1 = fig.layout[f"xaxis{i + 1 if i else ''}"].domain
    plot_w = fig.layout.width - fig.layout.margin.l - fig.layout.margin.r
    return (x1 - x0) * plot_w / panel.shape[1]


def test_window_of_the_full_correlation_sits_where_the_sweep_puts_it():
    ig = LAYERS["recitation-s2"].input_grad
    sweep = input_grad_sweep(ig)
    motion = mst.backward_motion(ig, sweep, 0, 0, 0)
    (gt, _), (gl, _) = ig.spec.full_padding
    stops = [s for s in motion.scenes if s.stage == ms.CORRELATE and "Computing" in s.caption]
    for s in stops:
        r, q = (int(v) for v in s.caption.split("∂L/∂x̃[")[1].split("]")[0].split(", "))
        t = r * ig.spec.padded_size[1] + q  # no padding in this preset
        win = s.groups["window"]
        assert set(win.row + gt) == set(sweep.rows[t]) and set(win.col + gl) == set(sweep.cols[t])
        # its colours are rot180's: the top-left cell of the window holds the last tap
        assert win.color[0] == tap_colors(3, 3)[-1]


def test_only_positions_and_opacity_are_interpolated():
    ig = LAYERS["classroom"].input_grad
    motion = mst.backward_motion(ig, input_grad_sweep(ig), 0, 0, 0)
    frames = motion.frames()
    at = 1
    for a, b, n in zip(motion.scenes, motion.scenes[1:], motion.tweens):
        for f in frames[at : at + n - 1]:  # in between: a's numbers and colours, moving
            for name, c in f.groups.items():
                assert np.array_equal(c.value, a.groups[name].value), name
                assert np.array_equal(c.color, a.groups[name].color), name
        assert frames[at + n - 1] is b  # the arrival is the keyframe itself
        at += n
    engine = {
        "grad_out": ig.grad_out[0, 0],
        "taps": ig.w[0, 0],
        "grad_x_padded": ig.grad_x_padded[0, 0][~ig.pad_mask],
        "ring": ig.grad_x_padded[0, 0][ig.pad_mask],
        "grad_x": ig.grad_x[0, 0],
    }
    for f in frames:
        for name, a in engine.items():
            assert np.array_equal(np.sort(f.groups[name].value), np.sort(a.ravel())), name


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
    still = fig.data.index(back)
    assert all(still not in f.traces for f in fig.frames)


def layer_motions(key: str) -> list[mv.Motion]:
    """The whole backward pass, the weight window and the mask stage of a preset's slice."""
    n, k, c = slice_of(key)
    ig, wg = LAYERS[key].input_grad, LAYERS[key].weight_grad
    return [
        mst.backward_motion(ig, input_grad_sweep(ig, n, c), n, k, c),
        mst.weight_motion(wg, weight_grad_sweep(wg, k, c), n, k, c),
        mst.mask_motion(ig, n, c),
    ]


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
        mst.backward_motion(ig, sweep, 0, 0, 0),
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


@pytest.mark.encoder  # a GIF of every frame of the whole pass: seconds
def test_gif_of_the_whole_pass_plays_every_frame():
    from io import BytesIO

    from PIL import Image, ImageSequence

    ig = LAYERS["recitation-s1"].input_grad
    motion = mst.backward_motion(ig, input_grad_sweep(ig), 0, 0, 0)
    gif = Image.open(BytesIO(mg.motion_gif(motion, cell_px=20)))
    total = sum(f.info["duration"] for f in ImageSequence.Iterator(gif))
    F = len(motion.frames())  # identical neighbours are merged: their times add up
    assert total == mv.MOTION_FRAME_MS * (8 + F - 2 + 20)
    assert 1 < gif.n_frames <= F


def test_the_selected_cell_and_its_copies_are_outlined_and_travel_to_it():
    from convviz.render.input_story import Focus, stage_motion

    ig = LAYERS["reflect"].input_grad  # 5×5, reflect padding 1: x[1, 1] has 3 ring copies
    motion = stage_motion("mask", ig, None, Focus(0, 0, 0, ("grad_x", 1, 1)))
    first, last = motion.scenes[0].groups["selected"], motion.scenes[-1].groups["selected"]
    assert sorted(zip(first.row, first.col)) == [(-1, -1), (-1, 1), (1, -1), (1, 1)]
    assert set(zip(last.row, last.col)) == {(1, 1)} and np.all(last.opacity == 1)
    fig = mp.motion_figure(motion, THEME)
    assert "motion:selected" in figure_frame(fig, -1)
    # zero padding: a selected ring cell is dropped with its gradient
    ig = LAYERS["classroom"].input_grad
    motion = stage_motion("mask", ig, None, Focus(0, 0, 0, ("grad_x_padded", 0, 0)))
    assert np.all(motion.scenes[-1].groups["selected"].opacity == 0)
    motion = stage_motion("mask", ig, None, Focus(0, 0, 0, ("grad_x", 3, 3)))
    assert len(motion.scenes[-1].groups["selected"].row) == 1


def test_pad_and_turn_captions_say_what_happens_in_words():
    """'A ring of … = 2×2 zeros' described a ring 2 cells wide; '180° of 180°' a finished turn."""
    ig = LAYERS["recitation-s2"].input_grad  # a 3×3 kernel: a ring 2 cells wide
    motion = mst.backward_motion(ig, input_grad_sweep(ig), 0, 0, 0)
    pad = next(s.caption for s in motion.scenes if s.stage == ms.PAD)
    assert "2 rows above and below, 2 columns left and right" in pad and "×" not in pad
    turns = [s.caption for s in motion.scenes if s.stage == ms.ROTATE]
    assert "turned 180°" in turns[-1] and not any("180° of 180°" in t for t in turns)


@pytest.mark.parametrize("which", ["pad", "whole"])
def test_motion_gifs_carry_a_legend_that_fits_their_frame(which):
    """A GIF explains its marks as the browser's legend does (the motions' GIFs had none): each
    role drawn, in its colour, wrapped inside the frame (a one-grid stage is narrow), under the
    caption."""
    from matplotlib.colors import to_hex

    from convviz.render.motion import legend_items

    ig = LAYERS["recitation-s2"].input_grad
    sweep = input_grad_sweep(ig)
    motion = mst.pad_motion(ig, 0, 0) if which == "pad" else mst.backward_motion(ig, sweep, 0, 0, 0)
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
    from convviz.text import number

    ig = LAYERS["recitation-s2"].input_grad
    motion = mst.backward_motion(ig, input_grad_sweep(ig), 0, 0, 0)
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


def test_the_whole_pass_counts_stages_as_the_storyboard_does():
    """The storyboard has 6 stages; the end state is the mask's result: stage 6 in the player
    and 'stage 6/6' on the GIF (it said stage 7, of a bar of 6)."""
    from convviz.render.input_story import input_grad_story

    ig = LAYERS["recitation-s2"].input_grad
    motion = mst.backward_motion(ig, input_grad_sweep(ig), 0, 0, 0)
    steps = [s.title for s in input_grad_story(ig, 0, 0, 0)]
    assert [motion.label(s) for s in motion.stages] == steps
    assert motion.scenes[-1].stage == ms.MASK
    lines = [mg._stage_line(motion, s) for s in motion.stages]
    assert lines[1] == "stage 2/6 · dilate" and lines[-1] == "stage 6/6 · mask"
    wg = LAYERS["recitation-s2"].weight_grad
    window = mst.weight_motion(wg, weight_grad_sweep(wg, 0, 0), 0, 0, 0)  # unnumbered stages
    assert mg._stage_line(window, window.stages[-1]) == "stage 3/3 · sweep"


def test_the_whole_pass_outlines_the_followed_cell_once_its_gradient_is_complete():
    from convviz.render.input_story import Focus, stage_motion

    lay = LAYERS["reflect"]  # x[1, 1] has 3 ring copies that fold back onto it
    ig = lay.input_grad
    motion = stage_motion("whole", ig, input_grad_sweep(ig, 0, 0), Focus(0, 0, 0, ("grad_x", 1, 1)))
    assert motion.where["selected"] == 2  # on ∂L/∂x̃ → ∂L/∂x
    stages = [s.stage for s in motion.scenes]
    mask = stages.index(ms.MASK)
    for scene in motion.scenes[: mask - 1]:  # unseen while ∂L/∂x̃ is being computed
        assert np.all(scene.groups["selected"].opacity == 0)
    seen = motion.scenes[mask - 1].groups["selected"]  # ∂L/∂x̃ complete: the cell and its copies
    assert sorted(zip(seen.row, seen.col)) == [(-1, -1), (-1, 1), (1, -1), (1, 1)]
    assert np.all(seen.opacity == 1)
    last = motion.scenes[-1].groups["selected"]
    assert set(zip(last.row, last.col)) == {(1, 1)}  # folded onto the cell whose sum is shown
    assert "motion:selected" in figure_frame(mp.motion_figure(motion, THEME), -1)


@pytest.mark.parametrize("key", ["classroom", "recitation-s2"])
def test_the_whole_pass_legend_takes_the_room_under_the_kernel_so_grids_grow(key):
    """On a projector (1280×720) the whole pass's legend sat under all three grids, and classroom's
    11×11 ∂L/∂y got 28 px cells over an empty third of the screen. It now goes under the short
    kernel when it fits there: inside that column, below the kernel's index labels, clear of the
    other grids; the grids take the height it gave back."""
    from convviz.presets import PRESETS_BY_KEY
    from convviz.render.geometry import grid_layout, ticks_px
    from convviz.render.input_story import Focus, stage_motion

    preset = PRESETS_BY_KEY[key]
    spec = preset.spec()
    x, w = preset.values()
    ig = layer(spec, x, w, preset.grad_out_for(np.zeros(spec.output_shape))).input_grad
    motion = stage_motion("whole", ig, input_grad_sweep(ig, 0, 0), Focus(0, 0, 0, ("grad_x", 1, 1)))
    theme = PRESENTATION.fitted(1232, 720)
    fig = mp.motion_figure(motion, theme)
    legend = next(a for a in fig.layout.annotations if a.xref == "paper")
    lay = fig.layout
    plot_w, plot_h = (
        lay.width - lay.margin.l - lay.margin.r,
        lay.height - lay.margin.t - lay.margin.b,
    )
    left = legend.x * plot_w  # px from the plot area's left edge
    (kernel,) = [i for i, p in enumerate(motion.panels) if p.key == "w_rot"]
    ax = lay["xaxis" + ("" if kernel == 0 else str(kernel + 1))]
    ay = lay["yaxis" + ("" if kernel == 0 else str(kernel + 1))]
    centre = (ax.domain[0] + ax.domain[1]) / 2 * plot_w
    column = 2 * (centre - left)  # the kernel's column (its grid centred in it)
    assert column >= (ax.domain[1] - ax.domain[0]) * plot_w  # at least as wide as the grid
    top = (1 - legend.y) * plot_h  # px from the plot area's top
    assert top >= (1 - ay.domain[0]) * plot_h + ticks_px(theme) - 1  # under its index labels
    assert legend.align == "left" and lay.margin.b <= ticks_px(theme) + 6
    for i in range(len(motion.panels)):  # the column is clear of the other grids
        if i != kernel:
            other = lay["xaxis" + ("" if i == 0 else str(i + 1))]
            assert other.domain[1] * plot_w <= left or other.domain[0] * plot_w >= left + column
    cells = [round((lay[f"xaxis{'' if i == 0 else i + 1}"].domain[1] - lay[
        f"xaxis{'' if i == 0 else i + 1}"].domain[0]) * plot_w / p.shape[1])
        for i, p in enumerate(motion.panels)]  # fmt: skip
    under_all = grid_layout(motion.panels, theme, top=6, bottom=ticks_px(theme) + 80)
    assert min(cells) > under_all.cell  # bigger than with two legend lines under every grid


def test_every_legend_swatch_is_told_apart():
    """The whole pass's legend drew 'window (tap colours)' and 'cell of the formula' as the same
    black □; each role's swatch (glyph and colour) is its own."""
    from itertools import combinations

    from matplotlib.colors import to_rgb

    for (r1, (c1, g1, w1)), (r2, (c2, g2, w2)) in combinations(mv.LEGEND.items(), 2):
        if {r1, r2} == {"ring", "fold"}:  # one or the other, by the padding mode: never together
            continue
        if g1 == g2:  # the same glyph: colours far apart (not two near-blacks)
            distance = np.linalg.norm(np.subtract(to_rgb(c1), to_rgb(c2)))
            assert distance > 0.15, f"{w1!r} and {w2!r} look alike"
    from convviz.render.theme import SELECTED_COLOR

    for colour, glyph, words in mv.LEGEND.values():  # an outline is not the selection's red
        if glyph == "□":
            distance = np.linalg.norm(np.subtract(to_rgb(colour), to_rgb(SELECTED_COLOR)))
            assert distance > 0.25, f"{words!r} looks like the selected cell's red"


def test_a_click_on_the_mask_stage_or_the_whole_pass_selects_a_cell_of_the_gradient():
    """The storyboard's motions took no click (stage 6's ∂L/∂x̃ → ∂L/∂x above all): its grid now
    carries the invisible cell markers the other figures have, in the pages' selection keys. A
    cell of x selects its ∂L/∂x cell (the mask's result; it selected the ∂L/∂x̃ cell, headed
    "padded input x̃"), a ring cell its ∂L/∂x̃ cell; the grids of ∂L/∂y and w name no cell."""
    from convviz.render.input_story import Focus, stage_motion

    lay = LAYERS["reflect"]
    ig = lay.input_grad
    for motion in (
        stage_motion("mask", ig, None, Focus(0, 0, 0, ("grad_x", 1, 1))),
        stage_motion("whole", ig, input_grad_sweep(ig, 0, 0), Focus(0, 0, 0, ("grad_x", 1, 1))),
    ):
        fig = mp.motion_figure(motion)
        (click,) = [t for t in fig.data if t.name and t.name.endswith(":click")]
        i = [p.key for p in motion.panels].index("grad_x_padded")
        assert click.name == "grad_x_padded:click" and click.xaxis == (
            "x" if i == 0 else f"x{i + 1}"
        )
        h, w = motion.panels[i].shape
        oy, ox = motion.panels[i].origin
        assert len(click.customdata) == h * w
        assert click.hoverinfo == "none"  # no label of a value the motion has yet to compute
        ring = ig.pad_mask.ravel()
        assert ring.any() and not ring.all()
        for (key, r, c), x, y, on_ring in zip(click.customdata, click.x, click.y, ring):
            if on_ring:  # padded indices, drawn at their labels
                assert key == "grad_x_padded" and (x, y) == (c + ox, r + oy)
                assert not (0 <= r + oy < ig.spec.in_size[0] and 0 <= c + ox < ig.spec.in_size[1])
            else:  # x's indices, which are the labels
                assert key == "grad_x" and (x, y) == (c, r)
                assert 0 <= r < ig.spec.in_size[0] and 0 <= c < ig.spec.in_size[1]
    dilate = stage_motion("dilate", ig, None, Focus(0, 0, 0, ("grad_x", 1, 1)))
    assert not any(t.name.endswith(":click") for t in mp.motion_figure(dilate).data if t.name)


def test_the_whole_pass_of_a_big_multi_filter_layer_says_its_colours_and_its_sum():
    """qa-channels' whole pass hides its numbers: each grid's scale line gave "■ 0" (the motion's
    blank panels), now the range of the numbers its cells take. Its result grid sums the 10
    filters' correlations while the motion draws filter 0's: its title says so."""
    from convviz.render.input_story import Focus, stage_motion

    (qa,) = [p for p in PRESETS if p.key == "qa-channels"]
    ig = preset_layer(qa).input_grad
    motion = stage_motion("whole", ig, input_grad_sweep(ig, 0, 0), Focus(0, 0, 0, ("grad_x", 1, 1)))
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
    small = LAYERS["recitation-s2"].input_grad  # one filter: no sum
    one = stage_motion(
        "whole", small, input_grad_sweep(small, 0, 0), Focus(0, 0, 0, ("grad_x", 1, 1))
    )
    assert not any("Σ" in a.text for a in mp.motion_figure(one).layout.annotations)


def test_a_motions_player_knows_its_keyframes():
    """The player steps (← →) from keyframe to keyframe: meta["keys"] are the frames on which
    each scene arrives (Motion.frames), the frames between are the way there."""
    from convviz.export.story import Story
    from convviz.render.animation_frames import player_meta
    from convviz.render.motion_plotly import motion_figure

    motion = next(a for a in Story.of("recitation-s2").animations() if a.name == "backward-pass")
    motion = motion.motion()
    keys = player_meta(motion_figure(motion, start=0))["keys"]
    frames = motion.frames()
    assert len(keys) == len(motion.scenes) and keys[0] == 0 and keys[-1] == len(frames) - 1
    arrivals = [(f.stage, f.caption, f.cell) for f in (frames[k] for k in keys)]
    assert arrivals == [(s.stage, s.caption, s.cell) for s in motion.scenes]


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


def test_the_fold_says_a_cell_without_copies_keeps_its_own():
    """Reflect's last mask scene spoke of 'the copies' gradients' under the formula of a cell
    that has none; it says where the sums update, and that the other cells keep their own."""
    lay = mode_layer("reflect")
    ig = lay.input_grad
    last = mst.mask_motion(ig, 0, 0).scenes[-1].caption
    assert "where copies landed" in last and "keeps its own" in last
    copied = np.zeros(ig.spec.in_size, bool)  # the layer has cells no ring cell copied
    (pt, pb), (pl, pr) = ig.spec.padding
    rows = ms.source_index(ig.spec.in_size[0], (pt, pb), "reflect")
    cols = ms.source_index(ig.spec.in_size[1], (pl, pr), "reflect")
    ring = ig.pad_mask
    r, c = np.nonzero(ring)
    copied[rows[r], cols[c]] = True
    assert not copied.all()

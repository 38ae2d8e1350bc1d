"""Motions of the storyboard's stages (dilate, pad, rotate, mask): every frame's numbers are the
engine's, every cell ends where the engine's stage puts it, for every preset and every padding
mode; their captions, the selected cell and its copies, the fold. Checked on the scenes (the model)
and on the plotly figure the browser gets (its base traces merged with the last frame). The whole
pass: test_motion_whole.py; the weight window, the figures' size and the GIFs:
test_motion_figures.py."""

from __future__ import annotations

import numpy as np
import pytest
from motion_cases import LAYERS, decoded, figure_frame, grid, shown_grid, slice_of, text

import convviz.render.motion.frames as mp
import convviz.render.motion.model as mv
import convviz.render.motion.motions as mst
import convviz.render.motion.scenes as ms
from convviz.engine.arrays import layer
from convviz.engine.ops import rot180
from convviz.engine.spec import PADDING_MODES, ConvSpec
from convviz.engine.sweeps import input_grad_sweep
from convviz.engine.values import layer_values
from convviz.render.story.board import backward_pass
from convviz.render.theme import THEME, tap_colors

MODE_SPECS = {
    mode: ConvSpec.create(
        (1, 1, 5, 6), (1, 1, 3, 2), stride=(2, 1), padding=((1, 2), (2, 1)), padding_mode=mode
    )
    for mode in PADDING_MODES
}


def mode_layer(mode: str):
    spec = MODE_SPECS[mode]
    return layer(spec, *layer_values(spec, 7, "random", "random"))


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


def test_pad_and_turn_captions_say_what_happens_in_words():
    """'A ring of … = 2×2 zeros' described a ring 2 cells wide; '180° of 180°' a finished turn."""
    ig = LAYERS["recitation-s2"].input_grad  # a 3×3 kernel: a ring 2 cells wide
    motion = backward_pass(ig, input_grad_sweep(ig), 0, 0, 0)
    pad = next(s.caption for s in motion.scenes if s.stage == ms.PAD)
    assert "2 rows above and below, 2 columns left and right" in pad and "×" not in pad
    turns = [s.caption for s in motion.scenes if s.stage == ms.ROTATE]
    assert "turned 180°" in turns[-1] and not any("180° of 180°" in t for t in turns)


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
    # a turn, not a cut: every tap keeps its distance to the centre on the way, drawn in by the
    # same factor for all, so that the turning kernel stays in its square; the squares shrink
    # with it, and further where their upright corners would meet (`motion.apart`)
    centre = np.array([(kH - 1) / 2, (kW - 1) / 2])
    radius = np.hypot(i - centre[0], j - centre[1])
    away = radius > 0  # the centre tap of an odd kernel turns in place
    for f in motion.scenes[1:]:
        t = f.groups["taps"]
        drawn = np.hypot(t.row - centre[0], t.col - centre[1])[away] / radius[away]
        assert np.allclose(drawn, drawn[0]) and 0.7 < drawn[0] <= 1
        assert np.allclose(t.scale, t.scale[0]) and 0.5 - 1e-9 <= t.scale[0] <= drawn[0] + 1e-9
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


def test_the_selected_cell_and_its_copies_are_outlined_and_travel_to_it():
    from convviz.render.story.input_grad import Focus, stage_motion

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

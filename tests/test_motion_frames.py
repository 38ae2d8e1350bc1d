"""Motions read as motions at every frame (figure objects, no browser): on every frame of every
motion of the seeds' layers and the classroom preset, no two cells that show overlap by more
than a tenth of a cell, and no cell leaves its panel (where it would cover a title or a tick
label). A cell shows when its opacity is over ½ (a cross-fade shows one of two at a time);
outlines (the window, the followed cell) lie over cells by design and are not counted."""

from __future__ import annotations

import numpy as np
import pytest

from convviz.export.story import Story
from convviz.render.motion.model import HOLLOW, backdrop_cells
from convviz.render.story.board import BOARD

PRESETS = ("recitation-s1", "recitation-s2", "classroom")
SIDE = 0.96  # a cell's square, in cells (the gap between two is a few px)
MOST_OVERLAP = 0.1  # of a cell's area
EDGE = 0.02  # rounding


def motions(preset: str):
    story = Story.of(preset)
    for key, drawing in BOARD.items():  # the layer's own motions (the handover has its test)
        if drawing.motion and not key.startswith(("chain-", "handover")):
            yield key, drawing.motion(story).build()


CASES = [(p, key, m) for p in PRESETS for key, m in motions(p)]


def shown(frame, motion, i):
    """(rows, cols, sides) of the filled cells that show on panel i in this frame."""
    rows, cols, sides = [], [], []
    groups = [g for name, g in frame.groups.items() if motion.where[name] == i]
    if i in motion.backdrops:
        groups.append(backdrop_cells(motion.backdrops[i]))
    for g in groups:
        if g.role in HOLLOW:
            continue
        on = g.opacity > 0.5
        rows.append(g.row[on])
        cols.append(g.col[on])
        sides.append(SIDE * g.scale[on])  # a turning kernel's taps shrink with the turn
    if not rows:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(sides)


def worst_overlap(rows, cols, sides=None) -> float:
    """The largest area (in cells) two of these squares (of these sides) share."""
    if len(rows) < 2:
        return 0.0
    half = (np.full(len(rows), SIDE) if sides is None else np.asarray(sides)) / 2
    reach = half[:, None] + half[None, :]  # the centres' distance at which two squares touch
    dr = np.abs(rows[:, None] - rows[None, :])
    dc = np.abs(cols[:, None] - cols[None, :])
    area = np.clip(reach - dr, 0, None) * np.clip(reach - dc, 0, None)
    area = np.minimum(area, np.minimum(half[:, None], half[None, :]) ** 2 * 4)
    np.fill_diagonal(area, 0)
    return float(area.max())


@pytest.mark.parametrize("preset, key, motion", CASES, ids=[f"{p}-{k}" for p, k, _ in CASES])
def test_no_cell_covers_another_or_leaves_its_panel_at_any_frame(preset, key, motion):
    for f, frame in enumerate(motion.frames()):
        for i, panel in enumerate(motion.panels):
            (h, w), (oy, ox) = panel.shape, panel.origin
            rows, cols, sides = shown(frame, motion, i)
            worst = worst_overlap(rows, cols, sides)
            assert worst <= MOST_OVERLAP, f"frame {f}, {panel.title}: cells overlap by {worst:.2f}"
            # every cell that shows, outlines too, inside its panel's extent (its axis range)
            for name, g in frame.groups.items():
                if motion.where[name] != i or not g.value.size:
                    continue
                on = g.opacity > 0.5
                r, c = g.row[on], g.col[on]
                assert np.all(r >= oy - EDGE) and np.all(r <= oy + h - 1 + EDGE), (f, name)
                assert np.all(c >= ox - EDGE) and np.all(c <= ox + w - 1 + EDGE), (f, name)


def test_the_check_can_fail():
    """Two cells half a cell apart are seen; a turn without room leaves its panel."""
    assert worst_overlap(np.array([0.0, 0.5]), np.array([0.0, 0.0])) > MOST_OVERLAP
    assert worst_overlap(np.array([0.0, 1.0]), np.array([0.0, 0.0])) == 0


@pytest.mark.parametrize("preset, key, motion", CASES, ids=[f"{p}-{k}" for p, k, _ in CASES])
def test_a_turning_kernels_taps_share_no_pixel_at_any_frame(preset, key, motion):
    """The rotate-180° tiles (cells with a size: a turning kernel's taps, upright squares) stay
    apart on every frame, tweens included: two squares' half sides add up to no more than their
    centres' distance along rows or columns (their px: a square is its size times a cell less
    the gap, so they keep the gap's width at least). Near 120° they shared a few px."""
    for f, frame in enumerate(motion.frames()):
        for name, g in frame.groups.items():
            if g.size is None or len(g.value) < 2:
                continue
            half = g.scale / 2
            reach = np.maximum(np.abs(g.row[:, None] - g.row[None, :]),
                               np.abs(g.col[:, None] - g.col[None, :]))  # fmt: skip
            shared = half[:, None] + half[None, :] - reach
            np.fill_diagonal(shared, -1)
            assert shared.max() <= 1e-9, f"frame {f}, {name}: taps overlap by {shared.max():.3f}"

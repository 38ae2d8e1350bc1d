"""The whole backward pass as one motion: stage by stage it ends on each engine stage, its player
knows its stages, keyframes and each frame's cell, the full correlation's window stands where the
sweep puts it, only places and opacity are interpolated; on a projector its cells stay big; the
followed cell, its legend and its clicks. Scenes and the plotly figure the browser gets
(tests/motion_cases.py reads them)."""

from __future__ import annotations

import numpy as np
import pytest
from motion_cases import LAYERS, figure_frame, grid, preset_layer, shown_grid, slice_of, text

import convviz.render.motion.frames as mp
import convviz.render.motion.gif as mg
import convviz.render.motion.model as mv
import convviz.render.motion.motions as mst
import convviz.render.motion.scenes as ms
from convviz.engine.arrays import layer
from convviz.engine.sweeps import input_grad_sweep, weight_grad_sweep
from convviz.model.lecture import LECTURE
from convviz.model.presets import PRESETS
from convviz.render.plotly.frames import player_meta
from convviz.render.story.board import backward_pass, whole_motion
from convviz.render.story.subject import Subject
from convviz.render.theme import PRESENTATION, THEME, tap_colors, theme_for

# --- the whole backward pass ---------------------------------------------------------------------


def named(key: str) -> str:
    """The label the player shows for a lecture stage ('6 · mask')."""
    return LECTURE.label(LECTURE.stage(key))


@pytest.mark.parametrize("key", LAYERS)
def test_whole_pass_stage_by_stage_ends_on_each_engine_stage(key):
    n, k, c = slice_of(key)
    ig = LAYERS[key].input_grad
    motion = backward_pass(ig, input_grad_sweep(ig, n, c), n, k, c)
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
    motion = backward_pass(ig, sweep, n, k, c)
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


def test_a_motions_player_knows_its_keyframes():
    """The player steps (← →) from keyframe to keyframe: meta["keys"] are the frames on which
    each scene arrives (Motion.frames), the frames between are the way there."""
    from convviz.export.story import Story
    from convviz.render.motion.frames import motion_figure
    from convviz.render.plotly.frames import player_meta

    motion = next(a for a in Story.of("recitation-s2").animations() if a.name == "backward-pass")
    motion = motion.motion()
    keys = player_meta(motion_figure(motion, start=0))["keys"]
    frames = motion.frames()
    assert len(keys) == len(motion.scenes) and keys[0] == 0 and keys[-1] == len(frames) - 1
    arrivals = [(f.stage, f.caption, f.cell) for f in (frames[k] for k in keys)]
    assert arrivals == [(s.stage, s.caption, s.cell) for s in motion.scenes]


def test_the_whole_pass_counts_stages_as_the_storyboard_does():
    """The storyboard has 6 stages; the end state is the mask's result: stage 6 in the player
    and 'stage 6/6' on the GIF (it said stage 7, of a bar of 6)."""
    from convviz.render.story.input_grad import input_grad_story

    ig = LAYERS["recitation-s2"].input_grad
    motion = backward_pass(ig, input_grad_sweep(ig), 0, 0, 0)
    steps = [s.title for s in input_grad_story(ig, 0, 0, 0)]
    assert [motion.label(s) for s in motion.stages] == steps
    assert motion.scenes[-1].stage == ms.MASK
    lines = [mg._stage_line(motion, s) for s in motion.stages]
    assert lines[1] == "stage 2/6 · dilate" and lines[-1] == "stage 6/6 · mask"
    wg = LAYERS["recitation-s2"].weight_grad
    window = mst.weight_motion(wg, weight_grad_sweep(wg, 0, 0), 0, 0, 0)  # unnumbered stages
    assert mg._stage_line(window, window.stages[-1]) == "stage 3/3 · sweep"


def test_window_of_the_full_correlation_sits_where_the_sweep_puts_it():
    ig = LAYERS["recitation-s2"].input_grad
    sweep = input_grad_sweep(ig)
    motion = backward_pass(ig, sweep, 0, 0, 0)
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
    motion = backward_pass(ig, input_grad_sweep(ig), 0, 0, 0)
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


# --- on a projector ------------------------------------------------------------------------------


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
    motion = backward_pass(ig, input_grad_sweep(ig, 0, 0), 0, 0, 0)
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
    from convviz.render.story.input_grad import Focus, stage_motion

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


@pytest.mark.parametrize("key", ["classroom", "recitation-s2"])
def test_the_whole_pass_legend_takes_the_room_under_the_kernel_so_grids_grow(key):
    """On a projector (1280×720) the whole pass's legend sat under all three grids, and classroom's
    11×11 ∂L/∂y got 28 px cells over an empty third of the screen. It now goes under the short
    kernel when it fits there: inside that column, below the kernel's index labels, clear of the
    other grids; the grids take the height it gave back."""
    from convviz.model.presets import PRESETS_BY_KEY
    from convviz.render.geometry import grid_layout, ticks_px

    preset = PRESETS_BY_KEY[key]
    spec = preset.spec()
    x, w = preset.values()
    lay = layer(spec, x, w, preset.grad_out_for(np.zeros(spec.output_shape)))
    motion = whole_motion(Subject(lay, selection=("grad_x", 1, 1)))
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


# --- the followed cell, the legend, clicks -------------------------------------------------------


def test_the_whole_pass_outlines_the_followed_cell_once_its_gradient_is_complete():
    lay = LAYERS["reflect"]  # x[1, 1] has 3 ring copies that fold back onto it
    motion = whole_motion(Subject(lay, selection=("grad_x", 1, 1)))
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
    """The storyboard's motions took no click (stage 6's ∂L/∂x̃ → ∂L/∂x above all): its grids
    now carry the invisible cell markers the other figures have, in the pages' selection keys. A
    cell of x selects its ∂L/∂x cell (the mask's result; it selected the ∂L/∂x̃ cell, headed
    "padded input x̃"), a ring cell its ∂L/∂x̃ cell; a cell of the other grids (∂L/∂y on its
    way, w turning) itself: a click selects a cell on every stage, during the motion too."""
    from convviz.render.story.input_grad import Focus, stage_motion

    lay = LAYERS["reflect"]
    ig = lay.input_grad
    for motion in (
        stage_motion("mask", ig, None, Focus(0, 0, 0, ("grad_x", 1, 1))),
        whole_motion(Subject(lay, selection=("grad_x", 1, 1))),
    ):
        fig = mp.motion_figure(motion)
        clicks = [t for t in fig.data if t.name and t.name.endswith(":click")]
        assert [t.name for t in clicks] == [f"{p.key}:click" for p in motion.panels]
        (click,) = [t for t in clicks if t.name == "grad_x_padded:click"]
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
    (click,) = [t for t in mp.motion_figure(dilate).data if t.name and t.name.endswith(":click")]
    h, w = dilate.panels[0].shape
    assert click.name == "dilated:click" and sorted(map(tuple, click.customdata)) == [
        ("dilated", r, c) for r in range(h) for c in range(w)
    ]

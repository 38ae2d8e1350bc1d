"""The motions: each storyboard stage's keyframes on its panels, the whole backward pass, and the
weight gradient's window (see `motion` for the model, `motion_scenes` for the keyframes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from convviz.engine.arrays import InputGradArrays, WeightGradArrays, remainder_mask
from convviz.engine.sweeps import Sweep
from convviz.engine.text import count, shape_text
from convviz.model.lecture import LECTURE
from convviz.render.motion.model import (
    MAX_WINDOW_STOPS,
    Motion,
    Scene,
    blank_panel,
    cells,
    even_tweens,
    scale_of,
    within_budget,
)
from convviz.render.motion.scenes import (
    CORRELATE,
    DILATE,
    FOLLOWED,
    MASK,
    PAD,
    ROTATE,
    dilate_keys,
    grad_out_cells,
    grad_x_cells,
    inserted_cells,
    mask_keys,
    pad_keys,
    result_cells,
    ring_cells,
    rotate_keys,
    tap_cells,
    window_cells,
    with_outlines,
)
from convviz.render.panel import Panel
from convviz.render.selection import sampled_steps
from convviz.render.theme import EDGE_COLOR, tap_colors


def _named(*stages: str) -> dict[str, str]:
    """The lecture's labels of these stages (number · title), for the player and the GIF."""
    return {s: LECTURE.label(LECTURE.stage(s)) for s in stages}


def _grad_panel(ig: InputGradArrays, n: int, k: int, extent: str) -> Panel:
    spec = ig.spec
    if extent == "dilated":
        return blank_panel(spec.dilated_out_size, f"∂L/∂y[n={n}, k={k}] → dilated", "dilated")
    (gt, _), (gl, _) = spec.full_padding
    return blank_panel(
        ig.padded.shape[-2:], f"∂L/∂y[n={n}, k={k}] → padded", "padded", (-gt, -gl),
        f"{shape_text(ig.grad_out.shape[-2:])} → {shape_text(ig.padded.shape[-2:])}",
    )  # fmt: skip


def dilate_motion(ig: InputGradArrays, n: int, k: int, tweens: int = 8) -> Motion:
    """Stage 2: ∂L/∂y cells glide to (s·i, s·j) and the inserted zeros fade in."""
    start = {"grad_out": grad_out_cells(ig, n, k, False), "inserted": inserted_cells(ig, n, k, 0.0)}
    scenes = [Scene(DILATE, f"∂L/∂y[n={n}, k={k}]: {shape_text(ig.grad_out.shape[-2:])}.", start)]
    scenes += dilate_keys(ig, n, k, start)
    panel = _grad_panel(ig, n, k, "dilated")
    motion = Motion(
        "dilate", (panel,), {"grad_out": 0, "inserted": 0}, tuple(scenes),
        even_tweens(scenes, tweens), stages=(DILATE,), names=_named(DILATE),
    )  # fmt: skip
    return within_budget(motion)


def pad_motion(ig: InputGradArrays, n: int, k: int, tweens: int = 8) -> Motion:
    """Stage 3: the ring of dil·(k−1) zeros, then the remainder rows/cols, fade in around it at
    their places (no cell moves over another)."""
    start = {
        "grad_out": grad_out_cells(ig, n, k, True),
        "inserted": inserted_cells(ig, n, k, 1.0),
        "pad": ring_cells(ig, n, k, "pad", False),
        "remainder": ring_cells(ig, n, k, "remainder", False),
    }
    scenes = [Scene(PAD, f"∂L/∂y dilated: {shape_text(ig.dilated.shape[-2:])}.", start)]
    scenes += pad_keys(ig, n, k, start)
    where = dict.fromkeys(start, 0)
    motion = Motion(
        "pad", (_grad_panel(ig, n, k, "padded"),), where, tuple(scenes),
        even_tweens(scenes, tweens), stages=(PAD,), names=_named(PAD),
    )  # fmt: skip
    return within_budget(motion)


def rotate_motion(ig: InputGradArrays, k: int, c: int, tweens: int = 3) -> Motion:
    """Stage 4: the kernel w[k, c] beside a copy that turns 180° about its centre."""
    w = ig.w[k, c]
    kH, kW = w.shape
    start = {"before": tap_cells(w, 0), "taps": tap_cells(w, 0)}
    scenes = [Scene(ROTATE, f"w[k={k}, c={c}]: each tap has its own colour.", start)]
    swap = ig.spec.in_channels > 1 or ig.spec.out_channels > 1
    turning = f"= w_rot[c={c}, k={k}]: channels swap" if swap else "turning about the centre"
    scenes += rotate_keys(ig, k, c, start)
    panels = (
        blank_panel((kH, kW), f"w[k={k}, c={c}]", "w"),
        blank_panel((kH, kW), f"rot180 w[k={k}, c={c}]", "w_rot", subtitle=turning),
    )
    return Motion(
        "rotate", panels, {"before": 0, "taps": 1}, tuple(scenes), even_tweens(scenes, tweens),
        stages=(ROTATE,), names=_named(ROTATE),
    )  # fmt: skip


def result_panel(ig: InputGradArrays, n: int, c: int) -> Panel:
    """The grid on which ∂L/∂x̃ becomes ∂L/∂x (its ring is the padding: `pad_mask`). Its title
    says when its numbers add up every filter's correlation, where the motion draws one."""
    spec = ig.spec
    (pt, _), (pl, _) = spec.padding
    K = spec.out_channels
    over = f" (Σ over {count(K, 'filter')})" if K > 1 else ""
    return Panel(
        np.zeros(spec.padded_size), f"∂L/∂x̃[n={n}, c={c}] → ∂L/∂x{over}", "grad_x_padded",
        pad_mask=ig.pad_mask, origin=(-pt, -pl),
        subtitle=f"{shape_text(spec.padded_size)} → {shape_text(spec.in_size)}",
    )  # fmt: skip


def mask_motion(
    ig: InputGradArrays, n: int, c: int, tweens: int = 8, selected: np.ndarray | None = None
) -> Motion:
    """Stage 6: on ∂L/∂x̃ the ring drops away (zeros) or folds back onto its sources.

    selected : (Hp, Wp) bool, padded cells to outline (a selected cell and its copies); the
        outlines travel (or drop) with the ring values they mark.
    """
    start = {
        "grad_x_padded": result_cells(ig, n, c, None, ring=False),
        "ring": result_cells(ig, n, c, None, ring=True),
        "grad_x": grad_x_cells(ig, n, c, 0.0),
    }
    scenes = [Scene(MASK, "∂L/∂x̃: the gradient of every padded-input cell, ring included.", start)]
    scenes += mask_keys(ig, n, c, start)
    if selected is not None and np.any(selected):
        scenes = with_outlines(ig, scenes, selected)
    # the rows and columns no forward window read (their gradient is 0) marked, as on the still
    panel = replace(
        result_panel(ig, n, c), remainder_mask=remainder_mask(ig.spec), unread_mask=ig.unread_mask
    )
    motion = Motion(
        "mask", (panel,), dict.fromkeys(scenes[0].groups, 0), tuple(scenes),
        even_tweens(scenes, tweens),
        stages=(MASK,), names=_named(MASK),
    )  # fmt: skip
    return within_budget(motion)


def backward_motion(
    ig: InputGradArrays,
    sweep: Sweep,
    n: int,
    k: int,
    c: int,
    plan: Sequence[Callable[[dict], list[tuple[Scene, int]]]],
    names: dict[str, str],
    selected: np.ndarray | None = None,
) -> Motion:
    """The whole backward pass: ∂L/∂y → dilate → pad → rotate → correlate → mask → ∂L/∂x.

    sweep : the full correlation of (n, c) (`sweeps.input_grad_sweep`); its channel k is drawn.
    plan : the stages it plays through, in order: each makes its keyframes from the groups as
        the stage before left them (the storyboard's, `render.story.board`), with the frames
        spent reaching each; names : each stage's label, in that order.
    selected : (Hp, Wp) bool, padded cells to outline once ∂L/∂x̃ is complete (as `mask_motion`).
    """
    spec = ig.spec
    groups = {
        "grad_out": grad_out_cells(ig, n, k, False),
        "inserted": inserted_cells(ig, n, k, 0.0),
        "pad": ring_cells(ig, n, k, "pad", False),
        "remainder": ring_cells(ig, n, k, "remainder", False),
        "window": window_cells(ig, sweep, 0, 0.0),  # waits at step 0, unseen
        "taps": tap_cells(ig.w[k, c], 0),
        "grad_x_padded": result_cells(ig, n, c, np.zeros(spec.padded_size, bool), ring=False),
        "ring": result_cells(ig, n, c, np.zeros(spec.padded_size, bool), ring=True),
        "grad_x": grad_x_cells(ig, n, c, 0.0),
    }
    plan_: list[tuple[Scene, int]] = []
    for keyframes in plan:
        plan_ += keyframes(plan_[-1][0].groups if plan_ else groups)
    say = f"∂L/∂x[n={n}, c={c}]: the engine's input gradient."
    end = Scene(MASK, say, plan_[-1][0].groups, FOLLOWED)  # the mask's result
    plan_.append((end, 4))
    if selected is not None and np.any(selected):
        scenes = with_outlines(ig, [s for s, _ in plan_], selected)
        filled = next(i for i, s in enumerate(scenes) if s.stage == MASK) - 1  # ∂L/∂x̃ complete
        for i, scene in enumerate(scenes[:filled]):  # unseen until then
            hidden = scene.groups["selected"].at(opacity=0.0)
            scenes[i] = replace(scene, groups={**scene.groups, "selected": hidden})
        plan_ = [(s, t) for s, (_, t) in zip(scenes, plan_)]
    panels = (
        _grad_panel(ig, n, k, "padded"),
        blank_panel(spec.kernel_size, f"w[k={k}, c={c}] → rot180", "w_rot"),
        result_panel(ig, n, c),
    )  # fmt: skip
    where = {g: 0 for g in ("grad_out", "inserted", "pad", "remainder", "window")}
    where.update(taps=1, grad_x_padded=2, ring=2, grad_x=2, selected=2)
    motion = Motion(
        "backward", panels, where, tuple(s for s, _ in plan_), tuple(t for _, t in plan_[1:]),
        stages=tuple(names), names=names,
    )  # fmt: skip
    return within_budget(motion)


def hide_window(groups: dict) -> Scene:
    """The full correlation done: its window fades, ∂L/∂x̃ complete."""
    window = groups["window"]
    return Scene(
        CORRELATE,
        "∂L/∂x̃ is complete: the gradient of every padded-input cell, ring included.",
        {**groups, "window": window.at(opacity=0.0)},
    )


MAX_WINDOW_CELLS = 32 * 32  # a bigger weight-gradient window is drawn by its edge


def weight_motion(wg: WeightGradArrays, sweep: Sweep, n: int, k: int, c: int) -> Motion:
    """∂L/∂y dilates by the stride into the window, which then sweeps x̃ stepping by the dilation.

    sweep : the weight-gradient correlation of (k, c) (`sweeps.weight_grad_sweep`).
    """
    spec = wg.spec
    g = wg.grad_out[n, k]
    oH, oW = g.shape
    (sh, sw), (dh, dw) = spec.stride, spec.dilation
    (pt, _), (pl, _) = spec.padding
    i, j = np.indices(g.shape).reshape(2, -1)
    # a window of more cells than can be told apart (each its own tap colour: a moiré) is its
    # values' colours, moved by its edge: the frames carry every moving cell's place, 3.5 MB
    # for qa-channels' 96×96 (a 7 s page)
    big = oH * oW > MAX_WINDOW_CELLS
    edge = (i % (oH - 1 or 1) == 0) | (j % (oW - 1 or 1) == 0)
    keep = edge if big else np.ones(i.size, bool)
    colors = np.full(i.size, EDGE_COLOR, object) if big else np.array(tap_colors(oH, oW), object)
    tight = cells("value", i, j, g, scale_of(g)) if big else cells("tap", i, j, g, colors=colors)
    role = "edge" if big else "window"
    window = replace(cells(role, i - pt, j - pl, np.zeros(i.size), colors=colors), color=colors)
    window = window.only(keep)
    zr, zc = np.nonzero(wg.dilation_mask)
    zeros = cells("inserted", zr, zc, wg.dilated[n, k][zr, zc], opacity=0.0)
    start = {"grad_out": tight, "inserted": zeros, "window": window}
    spread_g = tight.at(row=sh * i, col=sw * j)
    stride = f"{sh}×{sw}"
    scenes = [
        Scene("∂L/∂y", f"∂L/∂y[n={n}, k={k}] is the window of this correlation.", start),
        Scene(
            "dilate",
            f"It spreads by the stride {stride}: the forward's stride becomes the window's "
            "dilation.",
            {
                "grad_out": spread_g,
                "inserted": zeros,
                "window": window.at(row=(sh * i - pt)[keep], col=(sw * j - pl)[keep]),
            },
        ),
    ]
    # the zeros between them once they have spread (at once, they showed under moving cells)
    spread = {**scenes[-1].groups, "inserted": zeros.at(opacity=1.0)}
    scenes.append(Scene("dilate", scenes[-1].caption, spread))
    T = sweep.steps
    for t in sampled_steps(T, MAX_WINDOW_STOPS, T - 1)[0]:
        r = np.repeat(sweep.rows[t], oW) - pt
        q = np.tile(sweep.cols[t], oH) - pl
        a, b = sweep.targets[t]
        say = (
            # true all the way, as the full correlation's: while the window glides there too
            f"Computing ∂L/∂w[{a}, {b}] = Σ x̃·∂L/∂y: the window steps by the dilation ({dh}×{dw})."
        )
        groups = {**scenes[-1].groups, "window": window.at(r[keep], q[keep])}
        scenes.append(Scene("sweep", say, groups, cell=("grad_w", int(a), int(b))))
    backdrop = Panel(
        wg.x_padded[n, c], f"x̃[n={n}, c={c}]" + (", padded" if wg.pad_mask.any() else ""),
        "x",
        pad_mask=wg.pad_mask, remainder_mask=wg.remainder_mask, unread_mask=wg.unread_mask,
        origin=(-pt, -pl),
    )  # fmt: skip
    panels = (
        blank_panel(
            wg.dilated.shape[-2:], f"∂L/∂y[n={n}, k={k}] → dilated", "grad_out", subtitle=""
        ),
        replace(backdrop, values=np.zeros(backdrop.shape)),
    )
    motion = Motion(
        "weight-dilate", panels, {"grad_out": 0, "inserted": 0, "window": 1}, tuple(scenes),
        (8, 4, *(4 for _ in scenes[3:])), {1: backdrop}, stages=("∂L/∂y", "dilate", "sweep"),
    )  # fmt: skip
    return within_budget(motion)

"""The backward pass's cell groups and keyframes, read from the engine's stages and sweeps.

Each group is a `motion.Cells` built from a stage's arrays (∂L/∂y, its dilation and padding masks,
the kernel, the full correlation's sweep, ∂L/∂x̃ and ∂L/∂x); each stage's keyframes are
`motion.Scene`s that move or fade those groups. `motion_stages` lays them out as motions.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from convviz.engine.arrays import InputGradArrays
from convviz.engine.ops import source_index
from convviz.engine.sweeps import Sweep
from convviz.engine.text import count, shape_text
from convviz.render.motion.model import (
    ARC_DEG,
    MAX_WINDOW_STOPS,
    Cells,
    Scene,
    apart,
    cells,
    scale_of,
)
from convviz.render.selection import sampled_steps, tap_names
from convviz.render.theme import HIGHLIGHT_COLOR, tap_colors

# --- the backward pass's groups ------------------------------------------------------------------


def grad_out_cells(ig: InputGradArrays, n: int, k: int, dilated: bool) -> Cells:
    """∂L/∂y[n, k] at (i, j), or where dilation puts it: (s·i, s·j)."""
    g = ig.grad_out[n, k]
    i, j = np.indices(g.shape).reshape(2, -1)
    sh, sw = ig.spec.stride if dilated else (1, 1)
    return cells("value", sh * i, sw * j, g, scale_of(g))


def inserted_cells(ig: InputGradArrays, n: int, k: int, opacity: float) -> Cells:
    """The zeros dilation inserted, where the engine's dilation mask has them."""
    r, c = np.nonzero(ig.dilation_mask)
    return cells("inserted", r, c, ig.dilated[n, k][r, c], opacity=opacity)


def _ring_parts(ig: InputGradArrays) -> tuple[np.ndarray, np.ndarray]:
    """(pad, remainder) masks over the padded grad_out: the dil·(k−1) ring, the extra rows/cols."""
    (gt, _), (gl, _) = ig.spec.full_padding
    dH, dW = ig.spec.dilated_out_size
    eh, ew = ig.spec.span
    r, c = np.indices(ig.padded_ring.shape)
    extra = (r - gt >= dH + eh - 1) | (c - gl >= dW + ew - 1)
    return ig.padded_ring & ~extra, ig.padded_ring & extra


def ring_cells(ig: InputGradArrays, n: int, k: int, part: str, grown: bool) -> Cells:
    """Ring cells of one part at their places; before they arrive, invisible. (Grown from the
    grid's edge they passed over one another mid-way: a smear of zeros.)"""
    pad, extra = _ring_parts(ig)
    mask = pad if part == "pad" else extra
    (gt, _), (gl, _) = ig.spec.full_padding
    r, c = np.nonzero(mask)
    values = ig.padded[n, k][r, c]
    return cells(part, r - gt, c - gl, values, opacity=1.0 if grown else 0.0)


def turn_scale(deg: float) -> float:
    """How much a grid turned by `deg` shrinks to stay inside its own square: 1 / (|cos| + |sin|)
    (½√2 at 45°). Its cells shrink with it, so they stay clear of one another too."""
    a = math.radians(deg)
    return 1.0 / (abs(math.cos(a)) + abs(math.sin(a)))


def _arc(kH: int, kW: int, deg: float, origin=(0, 0)) -> tuple[np.ndarray, np.ndarray]:
    """Tap positions turned by `deg` about the kernel's centre, drawn in towards it by
    `turn_scale` (180°: exactly rot180's places)."""
    i, j = np.indices((kH, kW)).reshape(2, -1).astype(float)
    ci, cj = (kH - 1) / 2, (kW - 1) / 2
    a, g = math.radians(deg), turn_scale(deg)
    r = ci + g * ((i - ci) * math.cos(a) - (j - cj) * math.sin(a))
    c = cj + g * ((i - ci) * math.sin(a) + (j - cj) * math.cos(a))
    if deg % 360 == 180:  # exact: no rounding residue at the arrival
        r, c = 2 * ci - i, 2 * cj - j
    return r + origin[0], c + origin[1]


def tap_cells(w2d: np.ndarray, deg: float = 0.0) -> Cells:
    """Kernel taps in their own colours (row-major tap order), turned by `deg` (and shrunk with
    the turn, `turn_scale`, so that they stay inside the kernel's square, clear of each other
    and of its labels)."""
    kH, kW = w2d.shape
    r, c = _arc(kH, kW, deg)
    taps = cells("tap", r, c, w2d, colors=np.array(tap_colors(kH, kW), object))
    names = tap_names(kH, kW)  # each tap's index travels with it: w₂₂ lands top-left
    label = None if names is None else np.array(names, object)
    return apart(replace(taps, size=np.full(len(taps.value), turn_scale(deg)), label=label))


def window_cells(ig: InputGradArrays, sweep: Sweep, t: int, opacity: float) -> Cells:
    """The rotated kernel's taps where step t of the full correlation puts them (outlines).

    The window's cell (i, j) holds rot180's tap, i.e. the original tap (kH−1−i, kW−1−j).
    Positions are labels of the padded grad_out (its ring has negative labels).
    """
    (gt, _), (gl, _) = ig.spec.full_padding
    rows, cols = sweep.rows[t] - gt, sweep.cols[t] - gl
    kH, kW = len(rows), len(cols)
    taps = np.arange(kH * kW).reshape(kH, kW)[::-1, ::-1].ravel()
    r, c = np.meshgrid(rows, cols, indexing="ij")
    colors = np.array(tap_colors(kH, kW), object)[taps]
    out = cells("window", r, c, np.zeros(kH * kW), colors=colors, opacity=opacity)
    return replace(out, color=colors)  # the outline's colour; the fill stays clear


def result_cells(ig: InputGradArrays, n: int, c: int, upto: np.ndarray | None, ring: bool) -> Cells:
    """∂L/∂x̃[n, c] (interior or ring cells); `upto` (Hp, Wp) says which are computed yet."""
    g = ig.grad_x_padded[n, c]
    (pt, _), (pl, _) = ig.spec.padding
    mask = ig.pad_mask if ring else ~ig.pad_mask
    r, q = np.nonzero(mask)
    shown = 1.0 if upto is None else upto[r, q].astype(float)
    role = ("ring" if ig.spec.padding_mode == "zeros" else "fold") if ring else "value"
    return cells(role, r - pt, q - pl, g[r, q], _result_scale(ig, n, c), shown)


def grad_x_cells(ig: InputGradArrays, n: int, c: int, opacity: float) -> Cells:
    """∂L/∂x[n, c] on the interior of the ∂L/∂x̃ panel (labels 0…H−1): what the mask leaves."""
    g = ig.grad_x[n, c]
    r, q = np.indices(g.shape).reshape(2, -1)
    return cells("value", r, q, g, _result_scale(ig, n, c), opacity)


def _result_scale(ig: InputGradArrays, n: int, c: int) -> float:
    return scale_of(ig.grad_x_padded[n, c], ig.grad_x[n, c])


# --- stages as keyframes -------------------------------------------------------------------------

FOLLOWED = ("grad_x",)  # a scene's cell: the ∂L/∂x cell the reader follows (see Scene.cell)
# a scene's stage: the key of its stage in the lecture (`convviz.model.lecture`), which names it
GRAD_OUT, DILATE, PAD, ROTATE, CORRELATE, MASK = (
    "grad-out",
    "dilate",
    "pad",
    "rotate",
    "correlate",
    "mask",
)


def dilate_keys(ig: InputGradArrays, n: int, k: int, base: dict) -> list[Scene]:
    """∂L/∂y glides from (i, j) to (s·i, s·j); then the inserted zeros fade in."""
    (sh, sw) = ig.spec.stride
    if (sh, sw) == (1, 1):
        say = "Stride 1: nothing to insert; ∂L/∂y stays where it is."
        return [Scene(DILATE, say, {**base, "grad_out": grad_out_cells(ig, n, k, True)})]
    glide = f"Each ∂L/∂y[i, j] glides to ({sh}·i, {sw}·j): where its window started."
    spread = {**base, "grad_out": grad_out_cells(ig, n, k, True)}
    fade = f"The {sh - 1}×{sw - 1} zeros between them fade in: ∂L/∂y dilated, " + shape_text(
        ig.dilated[n, k].shape
    )
    return [
        Scene(DILATE, glide, spread),
        Scene(DILATE, fade, {**spread, "inserted": inserted_cells(ig, n, k, 1.0)}),
    ]


def pad_keys(ig: InputGradArrays, n: int, k: int, base: dict) -> list[Scene]:
    """The dil·(k−1) ring of zeros appears around the dilated grid, then the remainder."""
    eh, ew = ig.spec.span
    rH, rW = ig.spec.remainder
    ring = {**base, "pad": ring_cells(ig, n, k, "pad", True)}
    say = (
        f"A ring of zeros appears around it: dilation·(kernel − 1) = {count(eh - 1, 'row')} above "
        f"and below, "
        f"{count(ew - 1, 'column')} left and right."
    )
    scenes = [Scene(PAD, say, ring)]
    if rH or rW:
        say = (
            f"Plus the remainder ({rH} row(s) at the bottom, {rW} col(s) at the right): input "
            "rows/cols no window reached. Padded: " + shape_text(ig.padded[n, k].shape)
        )
        scenes.append(
            Scene(PAD, say, {**ring, "remainder": ring_cells(ig, n, k, "remainder", True)})
        )
    return scenes


def rotate_keys(ig: InputGradArrays, k: int, c: int, base: dict, name="taps") -> list[Scene]:
    """Every tap travels along the arc about the kernel's centre to its rot180 place."""
    w = ig.w[k, c]
    swap = ig.spec.in_channels > 1 or ig.spec.out_channels > 1
    note = (
        f" Channels swap: w[k={k}, c={c}] (filter k={k}, channel c={c}) becomes rot180 "
        f"w[c={c}, k={k}], a filter from output channel {k} back to input channel {c}."
        if swap
        else ""
    )
    scenes = []
    # every ARC_DEG degrees, and at every 45° (where the turn is smallest: the tweens between
    # two keyframes must not cut that corner)
    for deg in sorted({*range(ARC_DEG, 181, ARC_DEG), 45, 135}):
        turned = "turned 180°: rot180 w" if deg == 180 else f"{deg}° of 180°"
        say = f"The kernel turns about its centre: {turned}. Each tap keeps its colour."
        scenes.append(Scene(ROTATE, say + note, {**base, name: tap_cells(w, deg)}))
    if 180 % ARC_DEG:
        scenes.append(Scene(ROTATE, "rot180 w." + note, {**base, name: tap_cells(w, 180)}))
    return scenes


def with_outlines(ig: InputGradArrays, scenes: list[Scene], selected: np.ndarray) -> list:
    """Scenes with outlines on the selected padded cells, following the ring cells they mark."""
    (pt, _), (pl, _) = ig.spec.padding
    r, q = np.nonzero(selected)
    ring = scenes[0].groups["ring"]
    out = []
    for scene in scenes:
        now = scene.groups["ring"]
        rows, cols, alpha = (r - pt).astype(float), (q - pl).astype(float), np.ones(r.size)
        for i, (a, b) in enumerate(zip(r - pt, q - pl)):
            hit = np.flatnonzero((ring.row == a) & (ring.col == b))
            if hit.size and ig.spec.padding_mode != "zeros":  # a copy: it travels with its value
                rows[i], cols[i] = now.row[hit[0]], now.col[hit[0]]
            elif hit.size:  # zero padding: dropped with the ring
                rows[i], cols[i], alpha[i] = now.row[hit[0]], now.col[hit[0]], now.opacity[hit[0]]
        outline = cells("outline", rows, cols, np.zeros(r.size), opacity=alpha)
        outline = replace(outline, color=np.full(r.size, HIGHLIGHT_COLOR, object))
        out.append(replace(scene, groups={**scene.groups, "selected": outline}))
    return out


def mask_keys(ig: InputGradArrays, n: int, c: int, base: dict) -> list[Scene]:
    """Zeros: the ring drops away. Else ring values travel onto their sources; the sums update."""
    spec = ig.spec
    ring = base["ring"]
    interior = base["grad_x_padded"]
    final = {"grad_x_padded": interior.at(opacity=0.0), "grad_x": grad_x_cells(ig, n, c, 1.0)}
    if not ring.value.size:
        say = "No padding, no ring to mask: ∂L/∂x̃ is ∂L/∂x."
        return [Scene(MASK, say, {**base, **final}, FOLLOWED)]
    mode = spec.padding_mode
    if mode == "zeros":
        drop = ring.at(opacity=0.0)  # in place: moved, it passed over the cells beside it
        say = (
            "Zero padding: the padded zeros are constants, so the gradient on the ring is dropped."
        )
        return [
            Scene(MASK, say, {**base, "ring": drop}),
            Scene(MASK, "What is left is ∂L/∂x.", {**base, "ring": drop, **final}, FOLLOWED),
        ]
    (pt, pb), (pl, pr) = spec.padding
    H, W = spec.in_size
    src_r = source_index(H, (pt, pb), mode)[(ring.row + pt).astype(int)]
    src_c = source_index(W, (pl, pr), mode)[(ring.col + pl).astype(int)]
    arrive = ring.at(row=src_r, col=src_c)
    say = f"{mode} padding copied these cells: each ring gradient travels back onto its source."
    return [
        Scene(MASK, say, {**base, "ring": arrive}, FOLLOWED),
        Scene(
            MASK,
            "…and where copies landed the sum updates: ∂L/∂x = own ∂L/∂x̃ + its copies' "
            "gradients (a cell no ring cell copied keeps its own).",
            {**base, "ring": arrive.at(opacity=0.0), **final},
            FOLLOWED,
        ),
    ]


def correlate_keys(ig: InputGradArrays, sweep: Sweep, n: int, c: int, base: dict) -> list[Scene]:
    """The rotated kernel slides (sampled stops); ∂L/∂x̃ cells appear as it computes them."""
    T = sweep.steps
    stops, k = sampled_steps(T, MAX_WINDOW_STOPS, T - 1)
    (pt, _), (pl, _) = ig.spec.padding
    Hp, Wp = ig.spec.padded_size
    K = ig.spec.out_channels
    many = f"; ∂L/∂x̃ adds this up over all {K} filters." if K > 1 else "."
    scenes = []
    for t in stops:
        done = (np.arange(T) <= t).reshape(Hp, Wp)
        r, q = sweep.targets[t]
        say = (
            # true all the way: while the window glides there and when the number appears
            f"Computing ∂L/∂x̃[{r - pt}, {q - pl}]: rot180 w over the padded grid, stride 1"
            + (f" (every {k} steps shown)" if k > 1 else "")
            + many
        )
        groups = {
            **base,
            "window": window_cells(ig, sweep, int(t), 1.0),
            "grad_x_padded": result_cells(ig, n, c, done, ring=False),
            "ring": result_cells(ig, n, c, done, ring=True),
        }
        scenes.append(Scene(CORRELATE, say, groups, ("grad_x_padded", int(r), int(q))))
    return scenes

"""Motion: the backward pass's transformations as moving cells, with the engine's numbers.

A *scene* is plain data: groups of cells (∂L/∂y, inserted zeros, the padding ring, kernel taps,
the window, ∂L/∂x̃ …), each cell with a position (row, col in its panel's labelled coordinates),
a value, a colour, an ink (text colour) and an opacity; every value is read from the engine's
stages and sweeps. A *motion* is a list of scenes (keyframes) and how many frames to spend going
from one to the next. Between two keyframes only positions and opacity are interpolated; values,
colours and text switch on arrival. A 180° turn is many keyframes along the arc (plotly would
tween a straight line through the kernel's centre).

The plotly renderer (`motion_figure`) turns a motion into browser frames that the page's player
drives (`layout.meta["player"]`, as `convviz.render.animate` builds it); the matplotlib renderer
(`motion_gif`) draws the same frames into a GIF, so the app and the export cannot drift apart.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field, replace

import numpy as np
import plotly.graph_objects as go

from convviz.ops import source_index
from convviz.render.animate import _animated_figure, _deep_update, sampled_steps
from convviz.render.grids import (
    GridLayout,
    axis_ids,
    base_layout,
    format_values,
    grid_layout,
    panel_axes,
    panel_header,
    panel_traces,
    ticks_px,
)
from convviz.render.panel import Panel
from convviz.render.theme import (
    BACKGROUND,
    DILATION_COLOR,
    DILATION_TEXT,
    FONT_FAMILY,
    HIGHLIGHT_COLOR,
    MUTED_TEXT,
    PAD_COLOR,
    PAD_TEXT,
    REMAINDER_COLOR,
    TEXT_COLOR,
    TEXT_ON_DARK,
    THEME,
    VALUE_SCALE,
    Theme,
    tap_colors,
)
from convviz.stages import InputGradStages, WeightGradStages
from convviz.sweeps import Sweep

MOTION_FRAME_MS = 110  # one in-between frame at 1× speed
ARC_DEG = 20  # a turn is drawn as keyframes this many degrees apart
CELL_FRAME_BUDGET = 60_000  # moving cells × frames one figure may send (payload bound)
MAX_WINDOW_STOPS = 16  # window positions the whole pass shows of the full correlation
MAX_GIF_SIDE = 12  # the app offers a motion's GIF up to grids this wide (drawing costs seconds)
FAINT_GRID = "#e2e8f0"

# How each role looks: (fill, ink, outline); None: the cell's own (value or tap) colour.
ROLES = {
    "value": (None, None, None),
    "inserted": (DILATION_COLOR, DILATION_TEXT, None),
    "pad": (PAD_COLOR, PAD_TEXT, None),
    "remainder": (PAD_COLOR, PAD_TEXT, REMAINDER_COLOR),
    "tap": (None, TEXT_ON_DARK, None),
    "window": ("rgba(0,0,0,0)", None, None),
    "outline": ("rgba(0,0,0,0)", None, None),
    "ring": (None, None, PAD_TEXT),
}
HOLLOW = ("window", "outline")  # drawn as coloured outlines, no number
LEGEND = {
    "inserted": (DILATION_COLOR, "■", "zero inserted by dilation"),
    "pad": (PAD_COLOR, "■", "zero padding dil·(k − 1)"),
    "remainder": (REMAINDER_COLOR, "▣", "remainder row/col"),
    "window": (TEXT_COLOR, "□", "window (tap colours)"),
    "outline": (HIGHLIGHT_COLOR, "□", "selected cell and its padded copies"),
    "ring": (PAD_TEXT, "▣", "gradient on the padded ring"),
}


# --- the model -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cells:
    """n cells of one role in one scene (a structure of arrays, one entry per cell).

    The same group has the same cells, in the same order, in every scene of a motion: that is
    what lets a cell be followed from one scene to the next.
    """

    role: str  # a key of ROLES
    row: np.ndarray  # (n,) float, in the panel's labelled coordinates (array index + origin)
    col: np.ndarray  # (n,) float
    value: np.ndarray  # (n,) float, the engine's number
    color: np.ndarray  # (n,) str, fill
    ink: np.ndarray  # (n,) str, the number's colour
    opacity: np.ndarray  # (n,) float in [0, 1]

    def at(self, row=None, col=None, opacity=None) -> Cells:
        """The same cells moved and/or faded (numbers and colours unchanged)."""
        n = len(self.value)
        return replace(
            self,
            row=self.row if row is None else np.broadcast_to(row, (n,)).astype(float),
            col=self.col if col is None else np.broadcast_to(col, (n,)).astype(float),
            opacity=self.opacity
            if opacity is None
            else np.broadcast_to(opacity, (n,)).astype(float),
        )


@dataclass(frozen=True)
class Scene:
    """One keyframe: the stage it belongs to, what it says, and every group of cells."""

    stage: str  # e.g. "2 · dilate" (the player's label)
    caption: str
    groups: dict[str, Cells]


@dataclass(frozen=True)
class Motion:
    """Keyframes and the frames spent between them, drawn on a row of panels.

    panels : geometry and headers only (their values give the shape, their origin the labels);
    where : group → index of the panel it is drawn on;
    tweens : frames from scene i to scene i + 1 (the arrival included), len(scenes) − 1;
    backdrops : panels drawn as still grids under the moving cells (e.g. the padded input).
    """

    name: str
    panels: tuple[Panel, ...]
    where: dict[str, int]
    scenes: tuple[Scene, ...]
    tweens: tuple[int, ...]
    backdrops: dict[int, Panel] = field(default_factory=dict)
    stages: tuple[str, ...] = ()  # the stage labels in order, for a stage indicator

    def frames(self) -> list[Scene]:
        """Every frame: the first scene, then for each keyframe its tweens, arriving on it."""
        out = [self.scenes[0]]
        for a, b, n in zip(self.scenes, self.scenes[1:], self.tweens):
            out += [between(a, b, (i + 1) / n) for i in range(n)]
        return out

    def coarser(self, most: int) -> Motion:
        """The same keyframes with at most `most` frames between two (a lighter export)."""
        return replace(self, tweens=tuple(min(t, most) for t in self.tweens))

    def last(self, stage: str) -> Scene:
        """The last keyframe of a stage."""
        return [s for s in self.scenes if s.stage == stage][-1]


def _ease(u: float) -> float:
    return 0.5 - 0.5 * math.cos(math.pi * u)  # slow out, slow in


def between(a: Scene, b: Scene, u: float) -> Scene:
    """Positions and opacity interpolated (eased) from a to b; numbers are b's on arrival only."""
    if u >= 1:
        return b
    e = _ease(u)
    groups = {}
    for name, cb in b.groups.items():
        ca = a.groups[name]
        groups[name] = replace(
            ca,
            row=ca.row + (cb.row - ca.row) * e,
            col=ca.col + (cb.col - ca.col) * e,
            opacity=ca.opacity + (cb.opacity - ca.opacity) * e,
        )
    return Scene(b.stage, b.caption, groups)


def _rgb(hex_color: str) -> np.ndarray:
    return np.array([int(hex_color[i : i + 2], 16) for i in (1, 3, 5)], float)


_STOPS = np.array([s for s, _ in VALUE_SCALE])
_STOP_RGB = np.array([_rgb(c) for _, c in VALUE_SCALE])


def value_colors(values, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(fill, ink) of each value on the diverging scale centred on 0 (±scale at the ends)."""
    v = np.asarray(values, float).ravel()
    t = np.clip(0.5 + v / (2 * (scale or 1.0)), 0, 1)
    rgb = np.stack([np.interp(t, _STOPS, _STOP_RGB[:, i]) for i in range(3)], axis=1)
    fill = np.array([f"#{r:02x}{g:02x}{b:02x}" for r, g, b in np.round(rgb).astype(int)], object)
    ink = np.where(np.abs(t - 0.5) > 0.33, TEXT_ON_DARK, TEXT_COLOR).astype(object)
    return fill, ink


def cells(role: str, rows, cols, values, scale: float = 1.0, opacity=1.0, colors=None) -> Cells:
    """Cells at (rows, cols) holding `values`, styled by role (value colours if it has none)."""
    v = np.asarray(values, float).ravel()
    n = len(v)
    fill, ink, _ = ROLES[role]
    vfill, vink = value_colors(v, scale)
    color = np.full(n, fill, object) if fill else (vfill if colors is None else colors)
    ink_arr = np.full(n, ink, object) if ink else vink
    return Cells(
        role,
        np.asarray(rows, float).ravel(),
        np.asarray(cols, float).ravel(),
        v,
        np.asarray(color, object),
        ink_arr,
        np.broadcast_to(np.asarray(opacity, float), (n,)).copy(),
    )


def _scale(*arrays) -> float:
    return float(max(np.abs(a).max(initial=0) for a in arrays)) or 1.0


def _shape(shape) -> str:
    return "×".join(map(str, shape))


# --- the backward pass's groups ------------------------------------------------------------------


def _grad_cells(st: InputGradStages, n: int, k: int, dilated: bool) -> Cells:
    """∂L/∂y[n, k] at (i, j), or where dilation puts it: (s·i, s·j)."""
    g = st.grad_out[n, k]
    i, j = np.indices(g.shape).reshape(2, -1)
    sh, sw = st.spec.stride if dilated else (1, 1)
    return cells("value", sh * i, sw * j, g, _scale(g))


def _inserted(st: InputGradStages, n: int, k: int, opacity: float) -> Cells:
    """The zeros dilation inserted, where the engine's dilation mask has them."""
    r, c = np.nonzero(st.dilation_mask)
    return cells("inserted", r, c, st.dilated[n, k][r, c], opacity=opacity)


def _ring_parts(st: InputGradStages) -> tuple[np.ndarray, np.ndarray]:
    """(pad, remainder) masks over the padded grad_out: the dil·(k−1) ring, the extra rows/cols."""
    (gt, _), (gl, _) = st.spec.full_padding
    dH, dW = st.spec.dilated_out_size
    eh, ew = st.spec.span
    r, c = np.indices(st.padded_ring.shape)
    extra = (r - gt >= dH + eh - 1) | (c - gl >= dW + ew - 1)
    return st.padded_ring & ~extra, st.padded_ring & extra


def _ring(st: InputGradStages, n: int, k: int, part: str, grown: bool) -> Cells:
    """Ring cells of one part; before they grow they sit on the nearest edge, invisible."""
    pad, extra = _ring_parts(st)
    mask = pad if part == "pad" else extra
    (gt, _), (gl, _) = st.spec.full_padding
    r, c = np.nonzero(mask)
    values = st.padded[n, k][r, c]
    rows, cols = r - gt, c - gl
    if not grown:
        dH, dW = st.spec.dilated_out_size
        eh, ew = st.spec.span
        lo_r, hi_r = (0, dH - 1) if part == "pad" else (-(eh - 1), dH + eh - 2)
        lo_c, hi_c = (0, dW - 1) if part == "pad" else (-(ew - 1), dW + ew - 2)
        rows, cols = np.clip(rows, lo_r, hi_r), np.clip(cols, lo_c, hi_c)
    return cells(part, rows, cols, values, opacity=1.0 if grown else 0.0)


def _arc(kH: int, kW: int, deg: float, origin=(0, 0)) -> tuple[np.ndarray, np.ndarray]:
    """Tap positions turned by `deg` about the kernel's centre (180°: exactly rot180's places)."""
    i, j = np.indices((kH, kW)).reshape(2, -1).astype(float)
    ci, cj = (kH - 1) / 2, (kW - 1) / 2
    a = math.radians(deg)
    r = ci + (i - ci) * math.cos(a) - (j - cj) * math.sin(a)
    c = cj + (i - ci) * math.sin(a) + (j - cj) * math.cos(a)
    if deg % 360 == 180:  # exact: no rounding residue at the arrival
        r, c = 2 * ci - i, 2 * cj - j
    return r + origin[0], c + origin[1]


def _taps(w2d: np.ndarray, deg: float = 0.0) -> Cells:
    """Kernel taps in their own colours (row-major tap order), turned by `deg`."""
    kH, kW = w2d.shape
    r, c = _arc(kH, kW, deg)
    return cells("tap", r, c, w2d, colors=np.array(tap_colors(kH, kW), object))


def _window(st: InputGradStages, sweep: Sweep, t: int, opacity: float) -> Cells:
    """The rotated kernel's taps where step t of the full correlation puts them (outlines).

    The window's cell (i, j) holds rot180's tap, i.e. the original tap (kH−1−i, kW−1−j).
    Positions are labels of the padded grad_out (its ring has negative labels).
    """
    (gt, _), (gl, _) = st.spec.full_padding
    rows, cols = sweep.rows[t] - gt, sweep.cols[t] - gl
    kH, kW = len(rows), len(cols)
    taps = np.arange(kH * kW).reshape(kH, kW)[::-1, ::-1].ravel()
    r, c = np.meshgrid(rows, cols, indexing="ij")
    colors = np.array(tap_colors(kH, kW), object)[taps]
    out = cells("window", r, c, np.zeros(kH * kW), colors=colors, opacity=opacity)
    return replace(out, color=colors)  # the outline's colour; the fill stays clear


def _result(st: InputGradStages, n: int, c: int, upto: np.ndarray | None, ring: bool) -> Cells:
    """∂L/∂x̃[n, c] (interior or ring cells); `upto` (Hp, Wp) says which are computed yet."""
    g = st.grad_x_padded[n, c]
    (pt, _), (pl, _) = st.spec.padding
    mask = st.pad_mask if ring else ~st.pad_mask
    r, q = np.nonzero(mask)
    shown = 1.0 if upto is None else upto[r, q].astype(float)
    return cells(
        "ring" if ring else "value", r - pt, q - pl, g[r, q], _result_scale(st, n, c), shown
    )


def _grad_x(st: InputGradStages, n: int, c: int, opacity: float) -> Cells:
    """∂L/∂x[n, c] on the interior of the ∂L/∂x̃ panel (labels 0…H−1): what the mask leaves."""
    g = st.grad_x[n, c]
    r, q = np.indices(g.shape).reshape(2, -1)
    return cells("value", r, q, g, _result_scale(st, n, c), opacity)


def _result_scale(st: InputGradStages, n: int, c: int) -> float:
    return _scale(st.grad_x_padded[n, c], st.grad_x[n, c])


# --- stages as keyframes -------------------------------------------------------------------------

DILATE, PAD, ROTATE = "2 · dilate", "3 · pad", "4 · rotate 180°"
CORRELATE, MASK, GRAD_OUT, GRAD_X = "5 · correlate", "6 · mask", "1 · ∂L/∂y", "7 · ∂L/∂x"


def _dilate_keys(st: InputGradStages, n: int, k: int, base: dict) -> list[Scene]:
    """∂L/∂y glides from (i, j) to (s·i, s·j); then the inserted zeros fade in."""
    (sh, sw) = st.spec.stride
    if (sh, sw) == (1, 1):
        say = "Stride 1: nothing to insert; ∂L/∂y stays where it is."
        return [Scene(DILATE, say, {**base, "grad_out": _grad_cells(st, n, k, True)})]
    glide = f"Each ∂L/∂y[i, j] glides to ({sh}·i, {sw}·j): where its window started."
    spread = {**base, "grad_out": _grad_cells(st, n, k, True)}
    fade = f"The {sh - 1}×{sw - 1} zeros between them fade in: ∂L/∂y dilated, " + _shape(
        st.dilated[n, k].shape
    )
    return [
        Scene(DILATE, glide, spread),
        Scene(DILATE, fade, {**spread, "inserted": _inserted(st, n, k, 1.0)}),
    ]


def _pad_keys(st: InputGradStages, n: int, k: int, base: dict) -> list[Scene]:
    """The dil·(k−1) ring of zeros grows around the dilated grid, then the remainder."""
    eh, ew = st.spec.span
    rH, rW = st.spec.remainder
    ring = {**base, "pad": _ring(st, n, k, "pad", True)}
    say = f"A ring of dil·(k − 1) = {eh - 1}×{ew - 1} zeros grows around it."
    scenes = [Scene(PAD, say, ring)]
    if rH or rW:
        say = (
            f"Plus the remainder ({rH} row(s) at the bottom, {rW} col(s) at the right): input "
            "rows/cols no window reached. Padded: " + _shape(st.padded[n, k].shape)
        )
        scenes.append(Scene(PAD, say, {**ring, "remainder": _ring(st, n, k, "remainder", True)}))
    return scenes


def _rotate_keys(st: InputGradStages, k: int, c: int, base: dict, name="taps") -> list[Scene]:
    """Every tap travels along the arc about the kernel's centre to its rot180 place."""
    w = st.w[k, c]
    swap = st.spec.in_channels > 1 or st.spec.out_channels > 1
    note = (
        f" Channels swap: w[{k}, {c}] (filter k={k}, channel c={c}) becomes rot180 w[{c}, {k}], "
        f"a filter from output channel {k} back to input channel {c}."
        if swap
        else ""
    )
    scenes = []
    for deg in range(ARC_DEG, 181, ARC_DEG):
        say = f"The kernel turns about its centre, to {deg}° of 180°. Each tap keeps its colour."
        scenes.append(Scene(ROTATE, say + note, {**base, name: _taps(w, deg)}))
    if 180 % ARC_DEG:
        scenes.append(Scene(ROTATE, "rot180 w." + note, {**base, name: _taps(w, 180)}))
    return scenes


def _with_outlines(st: InputGradStages, scenes: list[Scene], selected: np.ndarray) -> list:
    """Scenes with outlines on the selected padded cells, following the ring cells they mark."""
    (pt, _), (pl, _) = st.spec.padding
    r, q = np.nonzero(selected)
    ring = scenes[0].groups["ring"]
    out = []
    for scene in scenes:
        now = scene.groups["ring"]
        rows, cols, alpha = (r - pt).astype(float), (q - pl).astype(float), np.ones(r.size)
        for i, (a, b) in enumerate(zip(r - pt, q - pl)):
            hit = np.flatnonzero((ring.row == a) & (ring.col == b))
            if hit.size and st.spec.padding_mode != "zeros":  # a copy: it travels with its value
                rows[i], cols[i] = now.row[hit[0]], now.col[hit[0]]
            elif hit.size:  # zero padding: dropped with the ring
                rows[i], cols[i], alpha[i] = now.row[hit[0]], now.col[hit[0]], now.opacity[hit[0]]
        outline = cells("outline", rows, cols, np.zeros(r.size), opacity=alpha)
        outline = replace(outline, color=np.full(r.size, HIGHLIGHT_COLOR, object))
        out.append(replace(scene, groups={**scene.groups, "selected": outline}))
    return out


def _mask_keys(st: InputGradStages, n: int, c: int, base: dict) -> list[Scene]:
    """Zeros: the ring drops away. Else ring values travel onto their sources; the sums update."""
    spec = st.spec
    ring = base["ring"]
    interior = base["grad_x_padded"]
    final = {"grad_x_padded": interior.at(opacity=0.0), "grad_x": _grad_x(st, n, c, 1.0)}
    if not ring.value.size:
        return [Scene(MASK, "No padding, no ring to mask: ∂L/∂x̃ is ∂L/∂x.", {**base, **final})]
    mode = spec.padding_mode
    if mode == "zeros":
        drop = ring.at(row=ring.row + 0.6, opacity=0.0)
        say = (
            "Zero padding: the padded zeros are constants, so the gradient on the ring is dropped."
        )
        return [
            Scene(MASK, say, {**base, "ring": drop}),
            Scene(MASK, "What is left is ∂L/∂x.", {**base, "ring": drop, **final}),
        ]
    (pt, pb), (pl, pr) = spec.padding
    H, W = spec.in_size
    src_r = source_index(H, (pt, pb), mode)[(ring.row + pt).astype(int)]
    src_c = source_index(W, (pl, pr), mode)[(ring.col + pl).astype(int)]
    arrive = ring.at(row=src_r, col=src_c)
    say = f"{mode} padding copied these cells: each ring gradient travels back onto its source."
    return [
        Scene(MASK, say, {**base, "ring": arrive}),
        Scene(
            MASK,
            "…and the sum there updates: ∂L/∂x = own ∂L/∂x̃ + the copies' gradients.",
            {**base, "ring": arrive.at(opacity=0.0), **final},
        ),
    ]


def _correlate_keys(st: InputGradStages, sweep: Sweep, n: int, c: int, base: dict) -> list[Scene]:
    """The rotated kernel slides (sampled stops); ∂L/∂x̃ cells appear as it computes them."""
    T = sweep.steps
    stops, k = sampled_steps(T, MAX_WINDOW_STOPS, T - 1)
    (pt, _), (pl, _) = st.spec.padding
    Hp, Wp = st.spec.padded_size
    K = st.spec.out_channels
    many = f"; ∂L/∂x̃ adds this up over all {K} filters." if K > 1 else "."
    scenes = []
    for t in stops:
        done = (np.arange(T) <= t).reshape(Hp, Wp)
        r, q = sweep.targets[t]
        say = (
            f"Window at ∂L/∂x̃[{r - pt}, {q - pl}]: rot180 w over the padded grid, stride 1"
            + (f" (every {k} steps shown)" if k > 1 else "")
            + many
        )
        groups = {
            **base,
            "window": _window(st, sweep, int(t), 1.0),
            "grad_x_padded": _result(st, n, c, done, ring=False),
            "ring": _result(st, n, c, done, ring=True),
        }
        scenes.append(Scene(CORRELATE, say, groups))
    return scenes


# --- the motions ---------------------------------------------------------------------------------


def _panel(shape, title: str, key: str, origin=(0, 0), subtitle: str = "") -> Panel:
    return Panel(np.zeros(shape), title, key, origin=tuple(origin), subtitle=subtitle)


def _tweens(scenes: list[Scene], each: int) -> tuple[int, ...]:
    return tuple(each for _ in scenes[1:])


def _budget(motion: Motion) -> Motion:
    """Fewer in-between frames when many cells move (payload ≤ CELL_FRAME_BUDGET cell-frames)."""
    n = sum(len(g.value) for g in motion.scenes[0].groups.values())
    frames = 1 + sum(motion.tweens)
    if n * frames <= CELL_FRAME_BUDGET:
        return motion
    keys = len(motion.tweens)
    each = max(1, (CELL_FRAME_BUDGET // n - 1) // max(keys, 1))
    return replace(motion, tweens=tuple(min(t, each) for t in motion.tweens))


def _grad_panel(st: InputGradStages, n: int, k: int, extent: str) -> Panel:
    spec = st.spec
    if extent == "dilated":
        return _panel(spec.dilated_out_size, f"∂L/∂y[{n}, {k}] → dilated", "dilated")
    (gt, _), (gl, _) = spec.full_padding
    return _panel(
        st.padded.shape[-2:], f"∂L/∂y[{n}, {k}] → padded", "padded", (-gt, -gl),
        f"{_shape(st.grad_out.shape[-2:])} → {_shape(st.padded.shape[-2:])}",
    )  # fmt: skip


def dilate_motion(st: InputGradStages, n: int, k: int, tweens: int = 8) -> Motion:
    """Stage 2: ∂L/∂y cells glide to (s·i, s·j) and the inserted zeros fade in."""
    start = {"grad_out": _grad_cells(st, n, k, False), "inserted": _inserted(st, n, k, 0.0)}
    scenes = [Scene(DILATE, f"∂L/∂y[{n}, {k}]: {_shape(st.grad_out.shape[-2:])}.", start)]
    scenes += _dilate_keys(st, n, k, start)
    panel = _grad_panel(st, n, k, "dilated")
    motion = Motion(
        "dilate", (panel,), {"grad_out": 0, "inserted": 0}, tuple(scenes),
        _tweens(scenes, tweens), stages=(DILATE,),
    )  # fmt: skip
    return _budget(motion)


def pad_motion(st: InputGradStages, n: int, k: int, tweens: int = 8) -> Motion:
    """Stage 3: the ring of dil·(k−1) zeros, then the remainder rows/cols, grow around it."""
    start = {
        "grad_out": _grad_cells(st, n, k, True),
        "inserted": _inserted(st, n, k, 1.0),
        "pad": _ring(st, n, k, "pad", False),
        "remainder": _ring(st, n, k, "remainder", False),
    }
    scenes = [Scene(PAD, f"∂L/∂y dilated: {_shape(st.dilated.shape[-2:])}.", start)]
    scenes += _pad_keys(st, n, k, start)
    where = dict.fromkeys(start, 0)
    motion = Motion(
        "pad", (_grad_panel(st, n, k, "padded"),), where, tuple(scenes),
        _tweens(scenes, tweens), stages=(PAD,),
    )  # fmt: skip
    return _budget(motion)


def rotate_motion(st: InputGradStages, k: int, c: int, tweens: int = 3) -> Motion:
    """Stage 4: the kernel w[k, c] beside a copy that turns 180° about its centre."""
    w = st.w[k, c]
    kH, kW = w.shape
    start = {"before": _taps(w, 0), "taps": _taps(w, 0)}
    scenes = [Scene(ROTATE, f"w[{k}, {c}]: each tap has its own colour.", start)]
    swap = st.spec.in_channels > 1 or st.spec.out_channels > 1
    turning = f"= w_rot[{c}, {k}]: channels swap" if swap else "turning about the centre"
    scenes += _rotate_keys(st, k, c, start)
    panels = (
        _panel((kH, kW), f"w[{k}, {c}]", "w"),
        _panel((kH, kW), f"rot180 w[{k}, {c}]", "w_rot", subtitle=turning),
    )
    return Motion(
        "rotate", panels, {"before": 0, "taps": 1}, tuple(scenes), _tweens(scenes, tweens),
        stages=(ROTATE,),
    )  # fmt: skip


def mask_motion(
    st: InputGradStages, n: int, c: int, tweens: int = 8, selected: np.ndarray | None = None
) -> Motion:
    """Stage 6: on ∂L/∂x̃ the ring drops away (zeros) or folds back onto its sources.

    selected : (Hp, Wp) bool, padded cells to outline (a selected cell and its copies); the
        outlines travel (or drop) with the ring values they mark.
    """
    (pt, _), (pl, _) = st.spec.padding
    start = {
        "grad_x_padded": _result(st, n, c, None, ring=False),
        "ring": _result(st, n, c, None, ring=True),
        "grad_x": _grad_x(st, n, c, 0.0),
    }
    scenes = [Scene(MASK, "∂L/∂x̃: the gradient of every padded-input cell, ring included.", start)]
    scenes += _mask_keys(st, n, c, start)
    if selected is not None and np.any(selected):
        scenes = _with_outlines(st, scenes, selected)
    panel = _panel(
        st.spec.padded_size, f"∂L/∂x̃[{n}, {c}] → ∂L/∂x", "grad_x_padded", (-pt, -pl),
        f"{_shape(st.spec.padded_size)} → {_shape(st.spec.in_size)}",
    )  # fmt: skip
    motion = Motion(
        "mask", (panel,), dict.fromkeys(scenes[0].groups, 0), tuple(scenes),
        _tweens(scenes, tweens),
        stages=(MASK,),
    )  # fmt: skip
    return _budget(motion)


def backward_motion(st: InputGradStages, sweep: Sweep, n: int, k: int, c: int) -> Motion:
    """The whole backward pass: ∂L/∂y → dilate → pad → rotate → correlate → mask → ∂L/∂x.

    sweep : the full correlation of (n, c) (`sweeps.input_grad_sweep`); its channel k is drawn.
    """
    spec = st.spec
    (pt, _), (pl, _) = spec.padding
    grad = _grad_cells(st, n, k, False)
    base = {
        "grad_out": grad,
        "inserted": _inserted(st, n, k, 0.0),
        "pad": _ring(st, n, k, "pad", False),
        "remainder": _ring(st, n, k, "remainder", False),
        "window": _window(st, sweep, 0, 0.0),  # waits at step 0, unseen
        "taps": _taps(st.w[k, c], 0),
        "grad_x_padded": _result(st, n, c, np.zeros(spec.padded_size, bool), ring=False),
        "ring": _result(st, n, c, np.zeros(spec.padded_size, bool), ring=True),
        "grad_x": _grad_x(st, n, c, 0.0),
    }
    first = Scene(GRAD_OUT, f"∂L/∂y[{n}, {k}] arrives from the next layer.", base)
    plan = [(first, 1)]
    for keys, each in (
        (lambda b: _dilate_keys(st, n, k, b), 8),
        (lambda b: _pad_keys(st, n, k, b), 7),
        (lambda b: _rotate_keys(st, k, c, b), 2),
        (lambda b: _correlate_keys(st, sweep, n, c, b), 2),
        (lambda b: [_hide_window(b)], 3),
        (lambda b: _mask_keys(st, n, c, b), 7),
    ):
        for scene in keys(plan[-1][0].groups):
            plan.append((scene, each))
    end = Scene(GRAD_X, f"∂L/∂x[{n}, {c}]: the engine's input gradient.", plan[-1][0].groups)
    plan.append((end, 4))
    panels = (
        _grad_panel(st, n, k, "padded"),
        _panel(spec.kernel_size, f"w[{k}, {c}] → rot180", "w_rot"),
        _panel(
            spec.padded_size, f"∂L/∂x̃[{n}, {c}] → ∂L/∂x", "grad_x_padded", (-pt, -pl),
            f"{_shape(spec.padded_size)} → {_shape(spec.in_size)}",
        ),
    )  # fmt: skip
    where = {g: 0 for g in ("grad_out", "inserted", "pad", "remainder", "window")}
    where.update(taps=1, grad_x_padded=2, ring=2, grad_x=2)
    motion = Motion(
        "backward", panels, where, tuple(s for s, _ in plan), tuple(t for _, t in plan[1:]),
        stages=(GRAD_OUT, DILATE, PAD, ROTATE, CORRELATE, MASK, GRAD_X),
    )  # fmt: skip
    return _budget(motion)


def _hide_window(groups: dict) -> Scene:
    window = groups["window"]
    return Scene(
        CORRELATE,
        "∂L/∂x̃ is complete: the gradient of every padded-input cell, ring included.",
        {**groups, "window": window.at(opacity=0.0)},
    )


def weight_motion(st: WeightGradStages, sweep: Sweep, n: int, k: int, c: int) -> Motion:
    """∂L/∂y dilates by the stride into the window, which then sweeps x̃ stepping by the dilation.

    sweep : the weight-gradient correlation of (k, c) (`sweeps.weight_grad_sweep`).
    """
    spec = st.spec
    g = st.grad_out[n, k]
    oH, oW = g.shape
    (sh, sw), (dh, dw) = spec.stride, spec.dilation
    (pt, _), (pl, _) = spec.padding
    i, j = np.indices(g.shape).reshape(2, -1)
    colors = np.array(tap_colors(oH, oW), object)
    tight = cells("tap", i, j, g, colors=colors)
    window = replace(cells("window", i - pt, j - pl, np.zeros(i.size), colors=colors), color=colors)
    zr, zc = np.nonzero(st.dilation_mask)
    zeros = cells("inserted", zr, zc, st.dilated[n, k][zr, zc], opacity=0.0)
    start = {"grad_out": tight, "inserted": zeros, "window": window}
    spread_g = tight.at(row=sh * i, col=sw * j)
    stride = f"{sh}×{sw}"
    scenes = [
        Scene("∂L/∂y", f"∂L/∂y[{n}, {k}] is the window of this correlation.", start),
        Scene(
            "dilate",
            f"It spreads by the stride {stride}: the forward's stride becomes the window's "
            "dilation.",
            {
                "grad_out": spread_g,
                "inserted": zeros.at(opacity=1.0),
                "window": window.at(row=sh * i - pt, col=sw * j - pl),
            },
        ),
    ]
    T = sweep.steps
    for t in sampled_steps(T, MAX_WINDOW_STOPS, T - 1)[0]:
        r = np.repeat(sweep.rows[t], oW) - pt
        q = np.tile(sweep.cols[t], oH) - pl
        a, b = sweep.targets[t]
        say = f"Steps of the dilation {dh}×{dw}: this window gives ∂L/∂w[{a}, {b}] = Σ x̃·∂L/∂y."
        groups = {**scenes[-1].groups, "window": window.at(r, q)}
        scenes.append(Scene("sweep", say, groups))
    rH, rW = spec.reach
    backdrop = Panel(
        st.x_padded[n, c, :rH, :rW], f"x̃[{n}, {c}] (padded input)", "x",
        pad_mask=st.pad_mask[:rH, :rW], origin=(-pt, -pl),
    )  # fmt: skip
    panels = (
        _panel(st.dilated.shape[-2:], f"∂L/∂y[{n}, {k}] → dilated", "grad_out", subtitle=""),
        replace(backdrop, values=np.zeros((rH, rW))),
    )
    motion = Motion(
        "weight-dilate", panels, {"grad_out": 0, "inserted": 0, "window": 1}, tuple(scenes),
        (8, *(4 for _ in scenes[2:])), {1: backdrop}, stages=("∂L/∂y", "dilate", "sweep"),
    )  # fmt: skip
    return _budget(motion)


# --- plotly -------------------------------------------------------------------------------------


def _faint_grid(i: int, panel: Panel, geo: GridLayout) -> dict:
    """Light cell borders of a panel's extent: the places cells move into."""
    (h, w), (oy, ox) = panel.shape, panel.origin
    xs, ys = [], []
    for q in range(w + 1):
        xs += [ox + q - 0.5, ox + q - 0.5, None]
        ys += [oy - 0.5, oy + h - 0.5, None]
    for r in range(h + 1):
        xs += [ox - 0.5, ox + w - 0.5, None]
        ys += [oy + r - 0.5, oy + r - 0.5, None]
    xa, ya = axis_ids(i)
    return {
        "type": "scatter", "mode": "lines", "name": "extent", "xaxis": xa, "yaxis": ya,
        "x": xs, "y": ys, "line": {"color": FAINT_GRID, "width": 1}, "hoverinfo": "skip",
        "showlegend": False,
    }  # fmt: skip


def _text(c: Cells, show: bool) -> np.ndarray | None:
    """Numbers of the visible cells ('' where a cell is faded out)."""
    if not show or c.role in HOLLOW:
        return None
    return np.where(c.opacity > 0.5, format_values(c.value), "").astype(object)


def _trace_state(c: Cells, show: bool) -> dict:
    state = {
        "x": np.round(c.col, 3).astype(np.float32),
        "y": np.round(c.row, 3).astype(np.float32),
        "marker.opacity": np.round(c.opacity, 3).astype(np.float32),
        "marker.color": c.color if c.role not in HOLLOW else None,
        "marker.line.color": c.color if c.role in HOLLOW else None,
        "textfont.color": c.ink if show and c.role not in HOLLOW else None,
        "text": _text(c, show),
    }
    return {k: v for k, v in state.items() if v is not None}


def _nested(flat: dict) -> dict:
    out: dict = {}
    for key, v in flat.items():
        *path, last = key.split(".")
        d = out
        for p in path:
            d = d.setdefault(p, {})
        d[last] = v
    return out


def _group_trace(name: str, c: Cells, i: int, geo: GridLayout, show: bool) -> dict:
    _, _, outline = ROLES[c.role]
    size = max(geo.cell - geo.gap, 3)
    line = {"width": 0}
    if c.role in HOLLOW:
        line = {"width": max(2.0, geo.cell / 9)}
        size = max(geo.cell - 2, 3)
    elif outline:
        line = {"width": max(1.5, geo.cell / 14), "color": outline}
    xa, ya = axis_ids(i)
    trace = {
        "type": "scatter",
        "mode": "markers+text" if _text(c, show) is not None else "markers",
        "name": f"motion:{name}",
        "xaxis": xa,
        "yaxis": ya,
        "marker": {"symbol": "square", "size": size, "line": line},
        "textposition": "middle center",
        "textfont": {"size": geo.cell_font, "family": FONT_FAMILY},
        "hoverinfo": "skip",
        "showlegend": False,
        "cliponaxis": False,
    }
    if c.role in HOLLOW:
        trace["marker"]["color"] = "rgba(0,0,0,0)"
    return trace


def _legend_lines(motion: Motion, theme: Theme, width: int) -> list[str]:
    """The roles drawn, each in its colour, wrapped to lines that fit `width` px."""
    roles = {g.role for s in motion.scenes for g in s.groups.values() if len(g.value)}
    items = [(glyph, col, words) for role, (col, glyph, words) in LEGEND.items() if role in roles]
    lines, chars, most = [], 0, int(width / (0.55 * (theme.font_size - 1)))
    for glyph, col, words in items:
        item = f"<span style='color:{col}'>{glyph}</span> {words}"
        if lines and chars + len(words) + 6 <= most:
            lines[-1] += "    " + item
            chars += len(words) + 6
        else:
            lines.append(item)
            chars = len(words) + 2
    return lines


def _legend(lines: list[str], theme: Theme, geo: GridLayout) -> dict:
    return {
        "text": "<br>".join(lines), "xref": "paper", "yref": "paper", "x": 0,
        "y": geo.px_to_paper_y(ticks_px(theme)), "xanchor": "left", "yanchor": "top",
        "showarrow": False, "font": {"size": theme.font_size - 1, "color": MUTED_TEXT},
    }  # fmt: skip


def _stage_bar(motion: Motion, stage: str) -> str:
    """'1 · ∂L/∂y → 2 · dilate → …' with the current stage in bold."""
    if len(motion.stages) < 2:
        return ""
    return " → ".join(
        f"<b>{s}</b>" if s == stage else f"<span style='color:{MUTED_TEXT}'>{s}</span>"
        for s in motion.stages
    )


def motion_figure(
    motion: Motion, theme: Theme = THEME, *, title: str | None = None, start: int | None = None
) -> go.Figure:
    """A motion as plotly frames (scatter markers + text) that the page's player drives.

    start : the frame it opens on; None: the last (the stage's result, as the stills showed it).

    Only what changes over the motion is in the frames (positions, opacity, and the numbers or
    colours of groups whose values update); the base state is frame `start`.
    """
    frames = motion.frames()
    start = len(frames) - 1 if start is None else int(np.clip(start, 0, len(frames) - 1))
    bar = len(motion.stages) > 1
    line = theme.font_size + 10
    top = (theme.title_font_size + 18 if title and theme.show_secondary else 6) + (
        line if bar else 0
    )
    lines = _legend_lines(motion, theme, theme.figure_w)
    for _ in range(2):  # the legend wraps to the figure's width, which depends on its height
        legend_px = (theme.font_size + 4) * len(lines) + 8
        geo = grid_layout(motion.panels, theme, top=top, bottom=ticks_px(theme) + legend_px + 6)
        lines = _legend_lines(motion, theme, geo.width - 16)
    shown_title = title if theme.show_secondary else None
    layout = base_layout(geo, theme, shown_title)
    title_px = theme.title_font_size + 18 if shown_title else 6
    show = max(max(p.shape) for p in motion.panels) <= theme.max_text_cells and geo.cell >= 16
    for i, p in enumerate(motion.panels):
        layout.update(panel_axes(i, p, theme, geo))
        layout["annotations"].append(panel_header(i, replace(p, subtitle=p.subtitle), theme, geo))
    if lines:
        layout["annotations"].append(_legend(lines, theme, geo))
    if bar:
        layout["annotations"].append(
            _bar_annotation(motion, frames[start].stage, theme, geo, title_px)
        )
    data = []
    for i, p in enumerate(motion.panels):
        if i in motion.backdrops:
            data += panel_traces(motion.backdrops[i], i, theme, geo)
        else:
            data.append(_faint_grid(i, p, geo))
    names = [g for g, c in frames[0].groups.items() if len(c.value)]  # empty roles: no trace
    states = [[_trace_state(f.groups[g], show) for g in names] for f in frames]
    varying = [_varying([s[gi] for s in states]) for gi in range(len(names))]
    animated, moving = [], [gi for gi in range(len(names)) if varying[gi]]
    for gi, g in enumerate(names):
        trace = _group_trace(g, frames[0].groups[g], motion.where[g], geo, show)
        trace = _deep_update(trace, _nested(states[start][gi]))
        if gi in moving:  # groups that never change stay out of the frames
            animated.append(len(data))
        data.append(trace)
    frame_dicts = [
        {"name": str(fi), "data": [_nested({k: s[gi][k] for k in varying[gi]}) for gi in moving]}
        for fi, s in enumerate(states)
    ]
    # the stage bar is a layout annotation: frames rewrite it (see _bar_annotation)
    if bar:
        index = len(layout["annotations"]) - 1
        for fd, f in zip(frame_dicts, frames):
            fd["layout"] = {f"annotations[{index}].text": _stage_bar(motion, f.stage)}
    player = {
        "labels": [f.stage for f in frames],
        "prefix": "stage [",
        "sampled": 1,
        "link": None,
        "captions": [[f.caption] for f in frames],
        "frame_ms": MOTION_FRAME_MS,
        "smooth": True,  # markers glide between frames (no full redraw): see ui/player.js
    }
    steps = np.arange(len(frames))
    return _animated_figure(data, layout, frame_dicts, animated, steps, start, player)


def _bar_annotation(motion: Motion, stage: str, theme: Theme, geo: GridLayout, below: int):
    """The stage indicator, `below` px under the figure's top (under the title)."""
    return {
        "text": _stage_bar(motion, stage), "xref": "paper", "yref": "paper", "x": 0,
        "y": 1 + (geo.margin["t"] - below) / geo.plot_h, "xanchor": "left", "yanchor": "top",
        "showarrow": False, "font": {"size": theme.font_size, "color": TEXT_COLOR},
    }  # fmt: skip


def _varying(states: list[dict]) -> list[str]:
    """The keys of a trace whose value differs between some frames."""
    keys = []
    for key in states[0]:
        first = states[0][key]
        if any(not np.array_equal(s[key], first) for s in states[1:]):
            keys.append(key)
    return keys


# --- matplotlib: the same frames as a GIF -------------------------------------------------------


def motion_gif(motion: Motion, *, cell_px: int = 40, frame_ms: int = MOTION_FRAME_MS) -> bytes:
    """The motion's frames drawn with matplotlib (Agg), as GIF bytes (Pillow).

    The same frames as the browser's (`Motion.frames`): the still parts are drawn once, each
    frame's cells are drawn, rasterised and removed.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    frames = motion.frames()
    gap = 1.5
    widths = [p.shape[1] for p in motion.panels]
    H = max(p.shape[0] for p in motion.panels)
    W = sum(widths) + gap * (len(widths) - 1)
    top, bottom = 2.4, 1.4  # rows of room: stage line and titles; the caption
    fig = Figure(figsize=((W + 1) * cell_px / 100, (H + top + bottom) * cell_px / 100), dpi=100)
    fig.patch.set_facecolor(BACKGROUND)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-1.0, W)
    ax.set_ylim(H - 0.5 + bottom, -0.5 - top)
    ax.set_axis_off()
    shift, left = [], 0.0  # label coordinates → drawing coordinates, per panel
    for p, w in zip(motion.panels, widths):
        shift.append((-p.origin[0], left - p.origin[1]))
        left += w + gap
    font = cell_px * 0.36
    for i, p in enumerate(motion.panels):
        dy, dx = shift[i]
        _gif_extent(ax, p, dy, dx)
        x0, w = dx + p.origin[1] - 0.5, p.shape[1]
        ax.text(x0 + w / 2, -0.8, p.title, ha="center", va="bottom", fontsize=font * 0.9,
                weight="bold", color=TEXT_COLOR)  # fmt: skip
        if i in motion.backdrops:
            _gif_cells(ax, _backdrop_cells(motion.backdrops[i]), dy, dx, font)
    images = []
    for f in frames:
        drawn = []
        for name, c in f.groups.items():
            dy, dx = shift[motion.where[name]]
            drawn += _gif_cells(ax, c, dy, dx, font)
        if len(motion.stages) > 1:
            n = motion.stages.index(f.stage) + 1
            drawn.append(ax.text(-0.5, -1.9, f"stage {n}/{len(motion.stages)} · {f.stage[4:]}",
                                 fontsize=font, weight="bold", color=TEXT_COLOR))  # fmt: skip
        drawn.append(ax.text(-0.5, H + 0.2, f.caption[:150], fontsize=font * 0.62,
                             color=MUTED_TEXT, va="top", wrap=True))  # fmt: skip
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        images.append(Image.fromarray(rgba[..., :3]).convert("P", palette=Image.ADAPTIVE))
        for artist in drawn:
            artist.remove()
    out = io.BytesIO()
    durations = [frame_ms * 8] + [frame_ms] * (len(images) - 2) + [frame_ms * 20]
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:],
                   duration=durations[: len(images)], loop=0)  # fmt: skip
    return out.getvalue()


def _gif_extent(ax, p: Panel, dy: float, dx: float) -> None:
    """Faint cell borders of a panel's extent (as `_faint_grid` in the browser)."""
    (h, w), (oy, ox) = p.shape, p.origin
    x0, y0 = dx + ox - 0.5, dy + oy - 0.5
    for q in range(w + 1):
        ax.plot([x0 + q, x0 + q], [y0, y0 + h], color=FAINT_GRID, lw=1, zorder=0)
    for r in range(h + 1):
        ax.plot([x0, x0 + w], [y0 + r, y0 + r], color=FAINT_GRID, lw=1, zorder=0)


def _gif_cells(ax, c: Cells, dy: float, dx: float, font: float) -> list:
    """Squares (one collection) and numbers of the visible cells; returns the artists."""
    from matplotlib.collections import PatchCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Rectangle

    seen = c.opacity > 0.02
    if not seen.any():
        return []
    _, _, outline = ROLES[c.role]
    rows, cols = c.row[seen] + dy, c.col[seen] + dx
    alpha = c.opacity[seen]
    colors = [to_rgba(col, a) for col, a in zip(c.color[seen], alpha)]
    boxes = [Rectangle((q - 0.46, r - 0.46), 0.92, 0.92) for r, q in zip(rows, cols)]
    if c.role in HOLLOW:
        coll = PatchCollection(boxes, facecolors="none", edgecolors=colors, lw=3, zorder=4)
        return [ax.add_collection(coll)]
    edge = [to_rgba(outline, a) for a in alpha] if outline else "none"
    coll = PatchCollection(boxes, facecolors=colors, edgecolors=edge, lw=1.5, zorder=2)
    artists = [ax.add_collection(coll)]
    text = format_values(c.value[seen])
    for r, q, s, ink, a in zip(rows, cols, text, c.ink[seen], alpha):
        if a > 0.5:
            artists.append(ax.text(q, r, s, ha="center", va="center", fontsize=font, color=ink,
                                   zorder=3))  # fmt: skip
    return artists


def _backdrop_cells(panel: Panel) -> Cells:
    """A still panel (e.g. the padded input) as cells: value colours, padding grey."""
    vals = np.asarray(panel.values, float)
    oy, ox = panel.origin
    r, q = np.indices(vals.shape).reshape(2, -1)
    pad = panel.mask("pad_mask").ravel()
    c = cells("value", r + oy, q + ox, vals.ravel(), _scale(vals))
    return replace(c, color=np.where(pad, PAD_COLOR, c.color), ink=np.where(pad, PAD_TEXT, c.ink))

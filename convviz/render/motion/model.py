"""Motion: the backward pass's transformations as moving cells, with the engine's numbers.

A *scene* is plain data: groups of cells (∂L/∂y, inserted zeros, the padding ring, kernel taps,
the window, ∂L/∂x̃ …), each cell with a position (row, col in its panel's labelled coordinates),
a value, a colour, an ink (text colour) and an opacity; every value is read from the engine's
stages and sweeps. A *motion* is a list of scenes (keyframes) and how many frames to spend going
from one to the next. Between two keyframes only positions, opacity and size are interpolated;
values, colours and text switch on arrival. A 180° turn is many keyframes along the arc (plotly
would tween a straight line through the kernel's centre).

This module is the model (no plotting library). The scenes are read from the engine in
`motion_scenes` (cell groups and keyframes of each stage) and assembled into motions in
`motion_stages`; `motion_plotly.motion_figure` turns a motion into browser frames that the page's
player drives, and `motion_gif.motion_gif` draws the same frames into a GIF (matplotlib), so the
app and the exports cannot drift apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

import numpy as np

from convviz.engine.spec import ConvSpec
from convviz.render.panel import Panel
from convviz.render.plotly.shapes import unread_items
from convviz.render.theme import (
    DILATION_COLOR,
    EDGE_COLOR,
    GATE_COLOR,
    HIGHLIGHT_COLOR,
    INK_DARK,
    PAD_COLOR,
    PAD_TEXT,
    REMAINDER_COLOR,
    TAP_LABEL_INSET,
    VALUE_SCALE,
    tap_colors,
    text_color,
)

MOTION_FRAME_MS = 110  # one in-between frame at 1× speed
ARC_DEG = 20  # a turn is drawn as keyframes this many degrees apart
CELL_FRAME_BUDGET = 60_000  # moving cells × frames one figure may send (payload bound)
MAX_WINDOW_STOPS = 25  # window positions a motion shows of a sweep: all of a 5×5 one
MAX_GIF_SIDE = 12  # the app offers a motion's GIF up to grids this wide (drawing costs seconds)

# How each role looks: (fill, ink, outline); None: the cell's own (value or tap) colour. The ink
# of a number is always its fill's (theme.text_color, `inks_of`): the column stays None.
ROLES = {
    "value": (None, None, None),
    "inserted": (DILATION_COLOR, None, None),
    "pad": (PAD_COLOR, None, None),
    "remainder": (PAD_COLOR, None, REMAINDER_COLOR),
    "tap": (None, None, None),
    "window": ("rgba(0,0,0,0)", None, None),
    "outline": ("rgba(0,0,0,0)", None, None),
    "edge": ("rgba(0,0,0,0)", None, None),  # a window too big to tell its cells apart, outlined
    "ring": (None, None, PAD_TEXT),  # the padded ring's gradient, which the mask drops
    "fold": (None, None, PAD_TEXT),  # … or adds back onto its sources (reflect, replicate, …)
    "shut": ("rgba(0,0,0,0)", None, None),  # a ReLU gate that passes no gradient (two layers)
}
HOLLOW = ("window", "outline", "edge", "shut")  # drawn as coloured outlines, no number
LEGEND = {
    "inserted": (DILATION_COLOR, "■", "zero inserted by dilation"),
    "pad": (PAD_COLOR, "■", "zero padding"),  # how much: the pad stage says
    "remainder": (REMAINDER_COLOR, "▣", "remainder row/col"),
    # in a tap's colour (the second: the first is a red, the selection's colour on a projector);
    # the formula's cell is the black one
    "window": (tap_colors(1, 2)[1], "□", "window (tap colours)"),
    "outline": (HIGHLIGHT_COLOR, "□", "cell of the formula"),
    "edge": (EDGE_COLOR, "□", "the window's edge"),
    "ring": (PAD_TEXT, "▣", "ring's gradient (dropped)"),
    "fold": (PAD_TEXT, "▣", "ring's gradient (folded back)"),
    "shut": (GATE_COLOR, "□", "ReLU gate shut (pre ≤ 0)"),
}


GIF_TOO_WIDE = f"grids wider than {MAX_GIF_SIDE} cells take minutes to draw"  # why none


def gif_fits(spec: ConvSpec) -> bool:
    """Whether the layer's motions are drawn as GIFs (and MP4s): its padded grid is at most
    MAX_GIF_SIDE cells wide. Every frame draws every cell, so a 100-wide grid takes minutes."""
    return max(spec.padded_size) <= MAX_GIF_SIDE


def legend_items(motion: Motion) -> list[tuple[str, str, str]]:
    """(glyph, colour, words) of each role the motion draws, in LEGEND's order."""
    roles = {g.role for s in motion.scenes for g in s.groups.values() if len(g.value)}
    items = [(glyph, col, words) for role, (col, glyph, words) in LEGEND.items() if role in roles]
    return items + unread_items(motion.panels)  # a grid's bands, not a role


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
    # (n,) float: the square's and its number's size, in cells' (a turning kernel shrinks so
    # that its taps stay inside their panel and clear of each other); None: 1
    size: np.ndarray | None = None
    # (n,) str: each tap's name in the original kernel (w₀₂), written in its square's top-left
    # corner and carried wherever the tap goes; None: no names
    label: np.ndarray | None = None

    def only(self, keep: np.ndarray) -> Cells:
        """The cells where `keep` (n,) bool is true."""
        arrays = (f.name for f in fields(self) if f.name != "role")  # the per-cell fields
        return replace(
            self,
            **{n: getattr(self, n)[keep] for n in arrays if getattr(self, n) is not None},
        )

    def label_corner(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols) of each cell's name: the top-left corner of its square (which shrinks
        with a turn), TAP_LABEL_INSET inside it; the name hangs from there, down and right."""
        corner = self.scale * (0.5 - TAP_LABEL_INSET)
        return self.row - corner, self.col - corner

    @property
    def scale(self) -> np.ndarray:
        """(n,) each cell's size in cells' (1: a whole cell)."""
        return np.ones(len(self.value)) if self.size is None else self.size

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

    stage: str  # its stage: a key of the lecture ("dilate"), or a phase's words ("sweep")
    caption: str
    groups: dict[str, Cells]
    # the engine cell whose sum this scene computes or updates, for the formula under the player:
    # ("grad_x_padded", row, col) in padded indices, ("grad_w", row, col), or ("grad_x",): the
    # ∂L/∂x cell the reader follows (the page's selection); () when the scene has no one cell's sum
    cell: tuple = ()


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
    stages: tuple[str, ...] = ()  # the scenes' stages in order, for a stage indicator
    names: dict[str, str] = field(default_factory=dict)  # stage → its label (number · title)

    def label(self, stage: str) -> str:
        """How the player and the GIF name a stage: its lecture label, else its own words."""
        return self.names.get(stage, stage)

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


def apart(c: Cells) -> Cells:
    """Sized cells (a turning kernel's taps) no bigger than what keeps them apart: every square
    at most the distance, along rows or along columns, from one tap to its nearest (the squares
    are upright, the kernel turns), so two never share a pixel."""
    if c.size is None or len(c.value) < 2:
        return c
    reach = np.maximum(np.abs(c.row[:, None] - c.row[None, :]),
                       np.abs(c.col[:, None] - c.col[None, :]))  # fmt: skip
    np.fill_diagonal(reach, np.inf)
    return replace(c, size=np.minimum(c.size, reach.min()))


def _ease(u: float) -> float:
    return 0.5 - 0.5 * math.cos(math.pi * u)  # slow out, slow in


def between(a: Scene, b: Scene, u: float) -> Scene:
    """Positions, opacity and size interpolated (eased) from a to b; numbers are b's on arrival
    only."""
    if u >= 1:
        return b
    e = _ease(u)
    groups = {}
    for name, cb in b.groups.items():
        ca = a.groups[name]
        sized = ca.size is not None or cb.size is not None
        groups[name] = apart(
            replace(
                ca,
                row=ca.row + (cb.row - ca.row) * e,
                col=ca.col + (cb.col - ca.col) * e,
                opacity=ca.opacity + (cb.opacity - ca.opacity) * e,
                size=ca.scale + (cb.scale - ca.scale) * e if sized else None,
            )
        )
    return Scene(b.stage, b.caption, groups, b.cell)


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
    return fill, inks_of(fill)


def inks_of(fills) -> np.ndarray:
    """Each number's colour on its fill, by the one rule (theme.text_color); a clear fill (an
    outline's) takes the page's ink."""
    return np.array([text_color(f) if f.startswith("#") else INK_DARK for f in fills], object)


def cells(role: str, rows, cols, values, scale: float = 1.0, opacity=1.0, colors=None) -> Cells:
    """Cells at (rows, cols) holding `values`, styled by role (value colours if it has none)."""
    v = np.asarray(values, float).ravel()
    n = len(v)
    fill, _, _ = ROLES[role]
    vfill, vink = value_colors(v, scale)
    color = np.full(n, fill, object) if fill else (vfill if colors is None else colors)
    ink_arr = vink if color is vfill else inks_of(np.asarray(color, object).ravel())
    return Cells(
        role,
        np.asarray(rows, float).ravel(),
        np.asarray(cols, float).ravel(),
        v,
        np.asarray(color, object),
        ink_arr,
        np.broadcast_to(np.asarray(opacity, float), (n,)).copy(),
    )


def scale_of(*arrays) -> float:
    return float(max(np.abs(a).max(initial=0) for a in arrays)) or 1.0


def backdrop_cells(panel: Panel) -> Cells:
    """A still panel (e.g. the padded input) as cells: value colours, padding grey."""
    vals = np.asarray(panel.values, float)
    oy, ox = panel.origin
    r, q = np.indices(vals.shape).reshape(2, -1)
    pad = panel.mask("pad_mask").ravel()
    c = cells("value", r + oy, q + ox, vals.ravel(), scale_of(vals))
    color = np.where(pad, PAD_COLOR, c.color)
    return replace(c, color=color, ink=np.where(pad, text_color(PAD_COLOR), c.ink))


def blank_panel(shape, title: str, key: str, origin=(0, 0), subtitle: str = "") -> Panel:
    return Panel(np.zeros(shape), title, key, origin=tuple(origin), subtitle=subtitle)


def grid_part(panel: Panel) -> tuple[tuple[int, int], tuple[int, int]]:
    """(shape, origin) of the cells a panel draws a grid for: all of them, or without the room
    around them (`blank_panel`'s margin)."""
    if panel.indexed is None:
        return panel.shape, panel.origin
    return panel.indexed, (
        panel.origin[0] + panel.labelled(0)[0],
        panel.origin[1] + panel.labelled(1)[0],
    )


def even_tweens(scenes: list[Scene], each: int) -> tuple[int, ...]:
    return tuple(each for _ in scenes[1:])


def within_budget(motion: Motion) -> Motion:
    """Fewer in-between frames when many cells move (payload ≤ CELL_FRAME_BUDGET cell-frames)."""
    n = sum(len(g.value) for g in motion.scenes[0].groups.values())
    frames = 1 + sum(motion.tweens)
    if n * frames <= CELL_FRAME_BUDGET:
        return motion
    keys = len(motion.tweens)
    each = max(1, (CELL_FRAME_BUDGET // n - 1) // max(keys, 1))
    return replace(motion, tweens=tuple(min(t, each) for t in motion.tweens))


# A motion's cell roles as the keyboard grid's letters (`panel.ROLES`)
ROLE_LETTERS = {"inserted": "z", "pad": "p", "remainder": "p", "ring": "d"}


def shown_cells(motion: Motion, i: int) -> tuple[np.ndarray, np.ndarray]:
    """What each cell of panel i shows when the motion ends: its number (NaN: no cell there) and
    its role's letter ('.' for none): its backdrop's, then each group's visible cells that sit on
    it, the last drawn on top. What a keyboard grid says of the panel (`grids.cell_meta`)."""
    panel = motion.panels[i]
    (h, w), (oy, ox) = panel.shape, panel.origin
    values, roles = np.full((h, w), np.nan), np.full((h, w), ".", dtype="<U1")
    if i in motion.backdrops:
        values[:] = np.asarray(motion.backdrops[i].values, dtype=float)
        roles[:] = motion.backdrops[i].roles()
    for name, g in motion.scenes[-1].groups.items():
        if motion.where.get(name) != i or g.role in HOLLOW:
            continue
        r, c = np.rint(g.row).astype(int) - oy, np.rint(g.col).astype(int) - ox
        on = (g.opacity > 0.5) & (r >= 0) & (r < h) & (c >= 0) & (c < w)
        on &= np.isclose(g.row, np.rint(g.row)) & np.isclose(g.col, np.rint(g.col))
        values[r[on], c[on]] = g.value[on]
        roles[r[on], c[on]] = ROLE_LETTERS.get(g.role, ".")
    return values, roles

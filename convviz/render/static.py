"""Static exports: Panels drawn with matplotlib and saved as PNG, SVG or an animated GIF.

This runs inside the server, so it never touches pyplot: every figure is a
`matplotlib.figure.Figure` with its own Agg canvas. A panel is one pcolormesh of cell colours
(vector in SVG), a number per cell, and one overlay per role: hatched padding, dashed remainder
band, crossed-out drops, tap borders, highlight and selection outlines. Figures are laid out by
hand in inches (not by a layout engine) so every cell is the same size in every panel and every
GIF frame keeps the same geometry.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.colors import LinearSegmentedColormap, Normalize, to_rgba, to_rgba_array
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties, fontManager
from matplotlib.patches import PathPatch, Rectangle
from matplotlib.path import Path
from matplotlib.patheffects import withStroke
from matplotlib.textpath import TextToPath
from matplotlib.transforms import Affine2D, ScaledTranslation
from PIL import Image  # Pillow is a dependency of matplotlib

from convviz.render.panel import Panel
from convviz.render.theme import (
    BACKGROUND,
    DILATION_COLOR,
    DILATION_TEXT,
    DROPPED_COLOR,
    EXPORT_DPI,
    EXPORT_MAX_INCHES,
    EXPORT_PX_PER_INCH,
    FONT_FAMILY,
    GIF_DPI,
    GRID_LINE,
    HIGHLIGHT_COLOR,
    MATH_FONTSET,
    MUTED_TEXT,
    PAD_COLOR,
    PAD_HATCH,
    PAD_TEXT,
    REMAINDER_COLOR,
    SELECTED_COLOR,
    TEXT_COLOR,
    TEXT_ON_DARK,
    THEME,
    VALUE_SCALE,
    Theme,
    tap_colors,
)
from convviz.sweeps import Sweep
from convviz.text import AXIS_WORDS, MINUS, cell_name, number

# Line widths as fractions of a cell's edge, so strokes scale with the cells.
_GRID_LW, _TAP_LW, _HIGHLIGHT_LW, _SELECTED_LW = 0.035, 0.085, 0.075, 0.1
_REMAINDER_LW, _DROPPED_LW = 0.055, 0.04
_PAD_HATCH = "//"
_MIN_CELL_FONT = 5.0  # points; below this a panel shows colours without numbers
# Layout of one figure, in inches (points where named _PT).
_MARGIN, _GAP = 0.2, 0.45
_TICK_PAD_PT, _LABEL_PAD_PT, _TITLE_PAD_PT = 3.0, 4.0, 5.0
_LINE = 1.3  # line height as a multiple of the font size
_T2P = TextToPath()
_CORNERS = ((-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5))  # of a cell, from its centre
# GIF palette: slots for the most frequent colours, taken exactly, and the closest (per channel)
# another colour may come to one already taken
_EXACT_COLORS, _NEAR_LEVELS = 128, 8


# --- fonts, colours, numbers ------------------------------------------------------------------


@lru_cache(maxsize=1)
def font_families() -> tuple[str, ...]:
    """FONT_FAMILY's installed fonts, then DejaVu Sans (bundled) and the generic sans-serif.

    Naming a missing font makes matplotlib log a warning on every draw, so those are left out;
    the generic name at the end makes an SVG list the usual fallbacks (Arial, Helvetica).
    """
    installed = {f.name for f in fontManager.ttflist}
    wanted = [name.strip() for name in FONT_FAMILY.split(",")]
    found = [name for name in wanted if name in installed]
    return tuple(dict.fromkeys([*found, "DejaVu Sans", "sans-serif"]))


def _font(size: float, weight: str = "normal") -> FontProperties:
    return FontProperties(
        family=list(font_families()), size=size, weight=weight, math_fontfamily=MATH_FONTSET
    )


def _text_width(s: str, size: float, weight: str = "normal", ismath: bool = False) -> float:
    """Width in points of s set in the export font (ismath: parsed as matplotlib mathtext)."""
    return float(_T2P.get_text_width_height_descent(s, _font(size, weight), ismath=ismath)[0])


def value_cmap() -> LinearSegmentedColormap:
    """The diverging colormap of theme.VALUE_SCALE (blue negative, white 0, orange positive)."""
    return LinearSegmentedColormap.from_list("convviz", [(p, c) for p, c in VALUE_SCALE])


def value_norm(panel: Panel) -> Normalize:
    """Symmetric limits ±max|v| over the real cells, so 0 is the scale's white middle."""
    real = ~(panel.mask("pad_mask") | panel.mask("dilation_mask"))
    vals = np.asarray(panel.values, float)[real]
    vmax = float(np.nanmax(np.abs(vals))) if np.isfinite(vals).any() else 0.0
    vmax = vmax if vmax > 0 else 1.0
    return Normalize(-vmax, vmax)


def cell_colors(panel: Panel, norm: Normalize | None = None) -> np.ndarray:
    """(h, w, 4) RGBA fill of every cell: value colour, overridden by padding and dilation."""
    values = np.asarray(panel.values, float)
    rgba = value_cmap()((norm or value_norm(panel))(values))
    rgba[~np.isfinite(values)] = to_rgba(BACKGROUND)
    rgba[panel.mask("pad_mask")] = to_rgba(PAD_COLOR)
    rgba[panel.mask("dilation_mask")] = to_rgba(DILATION_COLOR)
    return rgba


def _luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of RGB(A) colours, shape (..., 3 or 4) -> (...)."""
    c = np.asarray(rgb, float)[..., :3]
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return c @ np.array([0.2126, 0.7152, 0.0722])


def text_colors(panel: Panel, fills: np.ndarray) -> np.ndarray:
    """(h, w) text colour per cell: the role's, else the better contrast of dark and light."""
    lum = _luminance(fills)
    dark, light = _luminance(to_rgba_array([TEXT_COLOR, TEXT_ON_DARK]))
    # WCAG contrast ratio (L1 + 0.05) / (L2 + 0.05) against each candidate text colour
    prefer_dark = (lum + 0.05) / (dark + 0.05) >= (light + 0.05) / (lum + 0.05)
    colors = np.where(prefer_dark, TEXT_COLOR, TEXT_ON_DARK).astype(object)
    colors[panel.mask("pad_mask")] = PAD_TEXT
    colors[panel.mask("dilation_mask")] = DILATION_TEXT
    return colors


def _fit_font(labels, cell_pt: float, preferred: float, room: float = 0.72) -> float:
    """The largest size ≤ preferred at which the longest label spans `room` of a cell.

    0.72 leaves the number clear of a tap border on either side.
    """
    longest = max(labels, key=len, default="")
    if not longest:
        return preferred
    per_point = _text_width(longest, 10.0) / 10.0  # width grows linearly with the size
    return min(preferred, cell_pt * room / per_point)


# --- mask geometry ----------------------------------------------------------------------------


def _runs(row: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) of each run of True in a 1-D bool array."""
    d = np.diff(np.concatenate([[0], row.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist()))


def mask_rects(mask: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(row, col, n_rows, n_cols) rectangles that tile mask: row runs merged down the rows."""
    open_runs: dict[tuple[int, int], int] = {}  # (c0, c1) -> first row
    rects = []
    for r, row in enumerate([*np.asarray(mask, bool), np.zeros(mask.shape[1], bool)]):
        runs = set(_runs(row))
        for (c0, c1), r0 in list(open_runs.items()):
            if (c0, c1) not in runs:
                rects.append((r0, c0, r - r0, c1 - c0))
                del open_runs[(c0, c1)]
        for run in runs:
            open_runs.setdefault(run, r)
    return sorted(rects)


def mask_outline(mask: np.ndarray) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Segments ((x0, y0), (x1, y1)) of the boundary of mask, in cell coordinates."""
    m = np.pad(np.asarray(mask, bool), 1)
    horizontal = m[:-1, 1:-1] != m[1:, 1:-1]  # (h+1, w): edge on top of row r
    vertical = m[1:-1, :-1] != m[1:-1, 1:]  # (h, w+1): edge left of column c
    segs = [
        ((c0 - 0.5, r - 0.5), (c1 - 0.5, r - 0.5))
        for r, line in enumerate(horizontal)
        for c0, c1 in _runs(line)
    ]
    segs += [
        ((c - 0.5, r0 - 0.5), (c - 0.5, r1 - 0.5))
        for c, line in enumerate(vertical.T)
        for r0, r1 in _runs(line)
    ]
    return segs


# --- one panel --------------------------------------------------------------------------------


@dataclass
class _Drawn:
    """What _draw put on an Axes that an animation updates."""

    mesh: object  # the QuadMesh of cell colours
    fills: np.ndarray  # (h, w, 4)
    texts: dict  # (row, col) -> Text
    cell_pt: float  # edge of one cell in points


def _cell_pt(ax: Axes, shape: tuple[int, int]) -> float:
    """Edge of one cell in points, from the Axes' box on its figure."""
    box = ax.get_position()
    fw, fh = ax.get_figure().get_size_inches()
    return 72 * min(box.width * fw / shape[1], box.height * fh / shape[0])


def draw_panel(ax: Axes, panel: Panel, theme: Theme = THEME) -> Axes:
    """Draw one Panel on a matplotlib Axes: coloured cells, numbers, role overlays, labels."""
    _draw(ax, panel, theme)
    return ax


def _draw(ax: Axes, panel: Panel, theme: Theme) -> _Drawn:
    """draw_panel's work, returning the artists an animation updates; layers bottom to top."""
    h, w = panel.shape
    cell_pt = _cell_pt(ax, (h, w))
    fills = cell_colors(panel)
    mesh = ax.pcolormesh(
        np.arange(w + 1) - 0.5,
        np.arange(h + 1) - 0.5,
        fills,
        edgecolors=GRID_LINE,
        linewidth=_GRID_LW * cell_pt if cell_pt >= 4 else 0,  # lines would hide tiny cells
        snap=True,
        zorder=1,
    )
    mesh.set_label("cells")
    _frame(ax, panel, theme, cell_pt)
    _draw_pad(ax, panel, cell_pt)
    _draw_outline(ax, panel.mask("remainder_mask"), "remainder", cell_pt)
    texts = _draw_numbers(ax, panel, theme, fills, cell_pt)
    if not texts:  # colours only: their scale under the grid
        _draw_scale(ax, panel, theme)
    _draw_dropped(ax, panel.mask("dropped_mask"), cell_pt)
    _draw_taps(ax, panel, cell_pt)
    _draw_outline(ax, panel.mask("highlight"), "highlight", cell_pt)
    if panel.selected is not None:
        ax.add_patch(
            _cell_box(panel.selected, SELECTED_COLOR, _SELECTED_LW * cell_pt, 5.0, "selected")
        )
    return _Drawn(mesh, fills, texts, cell_pt)


def _frame(ax: Axes, panel: Panel, theme: Theme, cell_pt: float) -> None:
    """Limits (row 0 on top), square cells, indices offset by origin, title and subtitle."""
    h, w = panel.shape
    ax.set_xlim(-0.5, w - 0.5)
    ax.set_ylim(h - 0.5, -0.5)
    ax.set_aspect("equal", adjustable="box")
    ax.set_facecolor(BACKGROUND)
    for spine in ax.spines.values():
        spine.set_visible(False)
    tick = dict(fontsize=_tick_size(theme), color=MUTED_TEXT, fontfamily=font_families())
    for n, o, set_ticks in (
        (w, panel.origin[1], ax.set_xticks),
        (h, panel.origin[0], ax.set_yticks),
    ):
        idx = _tick_cells(n, o, cell_pt, _tick_size(theme))
        set_ticks(idx, [number(i + o) for i in idx], **tick)
    ax.xaxis.tick_top()
    ax.tick_params(length=0, pad=_TICK_PAD_PT)
    ax.set_title(
        panel.title,
        fontsize=theme.title_font_size,
        fontweight="bold",
        color=TEXT_COLOR,
        fontfamily=font_families(),
        pad=_TITLE_PAD_PT,
    )
    if panel.subtitle:
        ax.xaxis.set_label_position("top")
        ax.set_xlabel(
            panel.subtitle,
            fontsize=_sub_size(theme),
            color=MUTED_TEXT,
            fontfamily=font_families(),
            labelpad=_LABEL_PAD_PT,
        )


def _tick_size(theme: Theme) -> float:
    return 0.8 * theme.font_size


def _sub_size(theme: Theme) -> float:
    return 0.9 * theme.font_size


def _tick_cells(n: int, origin: int, cell_pt: float, size: float) -> list[int]:
    """Cells that get an index label: all when they fit, else every 2nd, 5th, 10th… (0 included)."""
    need = 2.2 * size / max(cell_pt, 1e-9)  # cells per label so labels do not touch
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**9) if s >= need)
    return [i for i in range(n) if (i + origin) % step == 0]


def _draw_pad(ax: Axes, panel: Panel, cell_pt: float) -> None:
    """Padded cells: PAD_COLOR (in the mesh) under one hatched rectangle per band."""
    for r, c, nr, nc in mask_rects(panel.mask("pad_mask")):
        rect = Rectangle(
            (c - 0.5, r - 0.5),
            nc,
            nr,
            facecolor=PAD_COLOR,
            hatch=_PAD_HATCH,
            hatchcolor=PAD_HATCH,
            edgecolor=GRID_LINE,
            linewidth=_GRID_LW * cell_pt if cell_pt >= 4 else 0,  # lines would hide tiny cells
            zorder=1.5,
            label="pad",
        )
        rect.set_hatch_linewidth(max(0.4, 0.02 * cell_pt))
        ax.add_patch(rect)
    # the band rectangles hide the grid lines between padded cells: draw them again on top
    if panel.mask("pad_mask").any():
        _draw_grid(ax, panel.mask("pad_mask"), cell_pt)


def _draw_grid(ax: Axes, mask: np.ndarray, cell_pt: float) -> None:
    """The white grid lines around every cell of mask."""
    r, c = np.nonzero(mask)
    x0, x1, y0, y1 = c - 0.5, c + 0.5, r - 0.5, r + 0.5
    segs = np.stack(
        [
            np.stack([x0, y0, x1, y0], 1),
            np.stack([x0, y1, x1, y1], 1),
            np.stack([x0, y0, x0, y1], 1),
            np.stack([x1, y0, x1, y1], 1),
        ]
    ).reshape(-1, 2, 2)  # (4·cells, 2 ends, xy)
    lines = LineCollection(segs, colors=GRID_LINE, linewidths=_GRID_LW * cell_pt, zorder=1.6)
    ax.add_collection(lines)


def _draw_outline(ax: Axes, mask: np.ndarray, role: str, cell_pt: float) -> None:
    """The boundary of mask: remainder dashed, highlight solid and thick."""
    if not mask.any():
        return
    color, lw, style, z = {
        "remainder": (REMAINDER_COLOR, _REMAINDER_LW, (0, (3, 2)), 2.0),
        "highlight": (HIGHLIGHT_COLOR, _HIGHLIGHT_LW, "solid", 4.5),
    }[role]
    lines = LineCollection(
        mask_outline(mask),
        colors=color,
        linewidths=lw * cell_pt,
        linestyles=style,
        capstyle="projecting",
        zorder=z,
        label=role,
    )
    ax.add_collection(lines)


def _draw_numbers(ax, panel, theme, fills, cell_pt) -> dict:
    """(row, col) -> Text of every cell; none when a side exceeds theme.max_text_cells."""
    h, w = panel.shape
    if max(h, w) > theme.max_text_cells:
        return {}
    labels = [[number(v) for v in row] for row in np.asarray(panel.values, float)]
    size = _fit_font([s for row in labels for s in row], cell_pt, theme.cell_font_size)
    if size < _MIN_CELL_FONT:  # cells too small to read a number: colours only
        return {}
    colors = text_colors(panel, fills)
    dropped = panel.mask("dropped_mask")
    texts = {}
    for i in range(h):
        for j in range(w):
            # a halo in the cell's own colour keeps a crossed-out number legible over its cross
            halo = [withStroke(linewidth=0.1 * cell_pt, foreground=fills[i, j])]
            texts[i, j] = ax.text(
                j,
                i,
                labels[i][j],
                ha="center",
                va="center_baseline",
                fontsize=size,
                color=colors[i, j],
                fontfamily=font_families(),
                zorder=3,
                path_effects=halo if dropped[i, j] else None,
            )
    return texts


def _draw_scale(ax: Axes, panel: Panel, theme: Theme) -> Axes:
    """A colour bar under the grid, as wide as the grid (at least an inch): the panel's colours
    from −max|v| to max|v|, ticks at its smallest value, 0 and its largest (real cells)."""
    norm = value_norm(panel)
    real = ~(panel.mask("pad_mask") | panel.mask("dilation_mask"))
    vals = np.asarray(panel.values, float)[real]
    vals = vals[np.isfinite(vals)]
    lo, hi = (float(vals.min()), float(vals.max())) if vals.size else (0.0, 0.0)
    box = ax.get_position()
    fw, fh = ax.get_figure().get_size_inches()
    w_in, h_in = box.width * fw, box.height * fh
    span = max(w_in, 1.0) / w_in
    bar = ax.inset_axes(((1 - span) / 2, -0.14 / h_in, span, 0.09 / h_in))
    ramp = np.linspace(norm.vmin, norm.vmax, 256)[None, :]
    bar.imshow(value_cmap()(norm(ramp)), aspect="auto", extent=(norm.vmin, norm.vmax, 0, 1))
    ticks = sorted({lo, hi} | ({0.0} if lo < 0 < hi else set()))
    bar.set_xticks(ticks, [number(t) for t in ticks], fontsize=_tick_size(theme) * 0.9)
    bar.tick_params(length=2, pad=1, colors=MUTED_TEXT)
    bar.set_yticks([])
    for spine in bar.spines.values():
        spine.set_visible(False)
    bar.set_label("colour scale")
    return bar


def _draw_dropped(ax: Axes, mask: np.ndarray, cell_pt: float) -> None:
    """A cross over every cell whose gradient the mask drops, under its (still legible) number."""
    if not mask.any():
        return
    r, c = np.nonzero(mask)
    e = 0.3  # half the cross, in cells
    segs = np.concatenate(
        [np.stack([c - e, r - e, c + e, r + e], 1), np.stack([c - e, r + e, c + e, r - e], 1)]
    ).reshape(-1, 2, 2)
    ax.add_collection(
        LineCollection(
            segs,
            colors=DROPPED_COLOR,
            linewidths=_DROPPED_LW * cell_pt,
            alpha=0.8,
            zorder=2.5,
            label="dropped",
        )
    )


def _draw_taps(ax: Axes, panel: Panel, cell_pt: float) -> None:
    """A border in the tap's own colour inside every cell a kernel tap covers."""
    if panel.taps is None:
        return
    taps = np.asarray(panel.taps, int)
    if (taps < 0).all():
        return
    colors = tap_colors(1, int(taps.max()) + 1)  # a tap's colour depends only on its index
    outlined = panel.mask("highlight").any()
    for (i, j), t in np.ndenumerate(taps):
        if t >= 0:
            ax.add_patch(_tap_box((i, j), colors[t], cell_pt, outlined))


def _tap_box(cell, color: str, cell_pt: float, outlined: bool = True) -> Rectangle:
    """A border inside the cell: against the grid line, or clear of a highlight outline."""
    lw = _TAP_LW * cell_pt
    edge = (_HIGHLIGHT_LW if outlined else _GRID_LW) * cell_pt
    inset = (lw + edge) / 2 / cell_pt  # points -> cells
    i, j = cell
    return Rectangle(
        (j - 0.5 + inset, i - 0.5 + inset),
        1 - 2 * inset,
        1 - 2 * inset,
        facecolor="none",
        edgecolor=color,
        linewidth=lw,
        joinstyle="miter",
        zorder=3.5,
        label="tap",
    )


def _cell_box(cell, color: str, lw: float, zorder: float, label: str) -> Rectangle:
    i, j = cell
    return Rectangle(
        (j - 0.5, i - 0.5),
        1,
        1,
        facecolor="none",
        edgecolor=color,
        linewidth=lw,
        joinstyle="miter",
        zorder=zorder,
        label=label,
    )


# --- legend -----------------------------------------------------------------------------------

# What each mark means, in the order a legend lists them (the same words as the app's captions).
LEGEND_WORDS = {
    "pad": "padding (added cells)",
    "dilation": "zero inserted by the stride",
    "remainder": "rows/columns no window reaches",
    "dropped": "gradient the mask drops",
    "tap": "kernel tap (each its own colour)",
    "highlight": "cells linked to the selection",
    "selected": "selected cell",
    "window": "the window the kernel covers",
    "current": "the output cell being written",
}
_LEGEND_FONT = 0.8  # of the theme's font size


def legend_marks(panels: list[Panel]) -> list[str]:
    """The marks these panels draw (keys of LEGEND_WORDS), so an export says what they mean."""
    present = {
        "pad": any(p.mask("pad_mask").any() for p in panels),
        "dilation": any(p.mask("dilation_mask").any() for p in panels),
        "remainder": any(p.mask("remainder_mask").any() for p in panels),
        "dropped": any(p.mask("dropped_mask").any() for p in panels),
        "tap": any(p.taps is not None and (np.asarray(p.taps) >= 0).any() for p in panels),
        "highlight": any(p.mask("highlight").any() for p in panels),
        "selected": any(p.selected is not None for p in panels),
    }
    return [mark for mark, shown in present.items() if shown]


def _legend_handle(mark: str) -> Rectangle:
    """A one-cell swatch drawn as the panels draw that mark."""
    face, edge, hatch, style, lw = {
        "pad": (PAD_COLOR, GRID_LINE, _PAD_HATCH, "solid", 0.8),
        "dilation": (DILATION_COLOR, GRID_LINE, None, "solid", 0.8),
        "remainder": ("none", REMAINDER_COLOR, None, (0, (3, 2)), 1.5),
        "dropped": ("white", DROPPED_COLOR, "xx", "solid", 0.8),
        "tap": ("none", tap_colors(1, 1)[0], None, "solid", 2.0),
        "highlight": ("none", HIGHLIGHT_COLOR, None, "solid", 2.0),
        "selected": ("none", SELECTED_COLOR, None, "solid", 2.5),
        "window": ("none", HIGHLIGHT_COLOR, None, "solid", 2.0),
        "current": ("none", SELECTED_COLOR, None, "solid", 2.5),
    }[mark]
    return Rectangle((0, 0), 1, 1, facecolor=face, edgecolor=edge, hatch=hatch,
                     linestyle=style, linewidth=lw)  # fmt: skip


def _legend_columns(marks: list[str], theme: Theme, width_in: float) -> int:
    """How many entries fit side by side in width_in inches."""
    size = _LEGEND_FONT * theme.font_size
    widest = max(_text_width(LEGEND_WORDS[m], size) for m in marks) + 3.5 * size  # + swatch
    return max(1, min(len(marks), int((width_in - 2 * _MARGIN) * 72 // widest)))


def _legend_band(marks: list[str], theme: Theme, width_in: float) -> float:
    """Height in points of the legend's rows (0 without marks)."""
    if not marks:
        return 0.0
    rows = math.ceil(len(marks) / _legend_columns(marks, theme, width_in))
    return rows * 1.9 * _LEGEND_FONT * theme.font_size + _GAP * 72 / 2


def _place_legend(fig: Figure, marks: list[str], theme: Theme, layout: _Layout) -> None:
    """The legend at the foot of the figure, centred."""
    if not marks:
        return
    width, height = layout.size
    fig.legend(
        [_legend_handle(m) for m in marks],
        [LEGEND_WORDS[m] for m in marks],
        loc="lower center",
        bbox_to_anchor=(0.5, _MARGIN / 2 / height),
        ncol=_legend_columns(marks, theme, width),
        frameon=False,
        prop=_font(_LEGEND_FONT * theme.font_size),
        labelcolor=MUTED_TEXT,
        handlelength=1.2,
        handleheight=1.2,
        columnspacing=1.5,
    )


# --- figures ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """Positions in inches of a row of panels over an optional bottom band (formula/caption)."""

    size: tuple[float, float]  # figure (width, height)
    boxes: list[tuple[float, float, float, float]]  # per panel (left, bottom, width, height)
    cell: float  # edge of one cell
    bottom: tuple[float, float]  # (y, height) of the band under the panels


def _decoration(panel: Panel, theme: Theme) -> tuple[float, float, float]:
    """(left labels width, stack height above the grid, widest title/subtitle) in points."""
    rows = [number(i + panel.origin[0]) for i in range(panel.shape[0])]
    left = max(_text_width(s, _tick_size(theme)) for s in rows) + _TICK_PAD_PT
    above = _TICK_PAD_PT + _LINE * _tick_size(theme) + _TITLE_PAD_PT + _LINE * theme.title_font_size
    widest = _text_width(panel.title, theme.title_font_size, "bold")
    if panel.subtitle:
        above += _LABEL_PAD_PT + _LINE * _sub_size(theme)
        widest = max(widest, _text_width(panel.subtitle, _sub_size(theme)))
    return left, above, widest


_SCALE_IN = 0.42  # room under the grids for a colour scale (a bar and its tick labels)


def _hides_numbers(panel: Panel, theme: Theme, cell_in: float) -> bool:
    """Whether a panel drawn with cell_in-inch cells shows colours only (as _draw_numbers)."""
    if max(panel.shape) > theme.max_text_cells:
        return True
    labels = [number(v) for v in np.asarray(panel.values, float).ravel()]
    return _fit_font(labels, 72 * cell_in, theme.cell_font_size) < _MIN_CELL_FONT


def _cell_sizes(panels, theme: Theme, room_w: float, room_h: float) -> list[float]:
    """Inches of each panel's cells: one size for all, unless a big panel hides its numbers;
    then each small panel (up to theme.max_text_cells a side) gets cells of its own, at most
    the theme's, sharing the width so the big panels keep at least half their size."""
    top = theme.cell_px / EXPORT_PX_PER_INCH
    cols = sum(p.shape[1] for p in panels)
    shared = max(min(top, room_w / cols, room_h / max(p.shape[0] for p in panels)), 0.02)
    small = [max(p.shape) <= theme.max_text_cells for p in panels]
    hidden = [_hides_numbers(p, theme, shared) for p in panels]
    if not any(hidden) or all(small) or not any(s and h for s, h in zip(small, hidden)):
        return [shared] * len(panels)
    small_cols = sum(p.shape[1] for p, s in zip(panels, small) if s)
    small_rows = max(p.shape[0] for p, s in zip(panels, small) if s)
    big_cols = cols - small_cols
    own = min(top, room_h / small_rows, room_w / 2 / small_cols)
    big = min((room_w - own * small_cols) / big_cols, shared)
    if big < shared / 2:
        return [shared] * len(panels)
    return [own if s else big for s in small]


def _layout(
    panels: list[Panel], theme: Theme, title: str | None, band_pt: float, min_width_pt: float = 0.0
) -> _Layout:
    """Side by side; cells of the theme's size, smaller if the figure would exceed the maximum
    (small panels beside a big one keep cells of their own, `_cell_sizes`); a colour scale's
    room under the grids when one shows colours only."""
    if not panels:
        raise ValueError("panels_figure needs at least one panel")
    deco = [_decoration(p, theme) for p in panels]
    title_in = _LINE * 1.15 * theme.title_font_size / 72 if title else 0.0
    above = max(d[1] for d in deco) / 72
    fixed_w = 2 * _MARGIN + len(panels) * _GAP + sum(d[0] for d in deco) / 72
    fixed_h = 2 * _MARGIN + title_in + above + band_pt / 72
    max_w, max_h = EXPORT_MAX_INCHES
    cells = _cell_sizes(panels, theme, max_w - fixed_w, max_h - fixed_h - _SCALE_IN)
    scale = _SCALE_IN if any(_hides_numbers(p, theme, c) for p, c in zip(panels, cells)) else 0.0
    slots = [
        max(d[0] / 72 + p.shape[1] * c, d[0] / 72 + d[2] / 72) + _GAP
        for p, d, c in zip(panels, deco, cells)
    ]
    grids_h = max(p.shape[0] * c for p, c in zip(panels, cells))
    width = max(2 * _MARGIN + sum(slots), min(min_width_pt / 72 + 2 * _MARGIN, max_w))
    height = fixed_h + grids_h + scale
    grid_top = height - _MARGIN - title_in - above
    x = (width - sum(slots)) / 2
    boxes = []
    for p, d, slot, c in zip(panels, deco, slots, cells):
        gw, gh = p.shape[1] * c, p.shape[0] * c
        left = x + (slot - gw + d[0] / 72) / 2  # the grid and its row labels centred in the slot
        boxes.append((left, grid_top - gh, gw, gh))  # grids top-aligned
        x += slot
    return _Layout((width, height), boxes, min(cells), (_MARGIN, band_pt / 72))


def _figure(
    layout: _Layout, title: str | None, theme: Theme, dpi: float = EXPORT_DPI
) -> tuple[Figure, list[Axes]]:
    """An Agg-backed Figure with one Axes per box of the layout."""
    W, H = layout.size
    fig = Figure(figsize=(W, H), dpi=dpi, facecolor=BACKGROUND)
    FigureCanvasAgg(fig)
    axes = [fig.add_axes((l / W, b / H, w / W, h / H)) for l, b, w, h in layout.boxes]
    if title:
        fig.text(
            0.5,
            1 - _MARGIN / H,
            title,
            ha="center",
            va="top",
            color=TEXT_COLOR,
            fontsize=1.15 * theme.title_font_size,
            fontweight="bold",
            fontfamily=font_families(),
        )
    return fig, axes


def panels_figure(
    panels: list[Panel],
    theme: Theme = THEME,
    *,
    title: str | None = None,
    formula: str | None = None,
    formula_text: str | None = None,
) -> Figure:
    """Panels side by side with equal cells, an optional title, a formula line underneath and
    under it a legend of the marks drawn (padding, inserted zeros, taps, outlines, ...).

    formula : LaTeX such as r"$\\frac{\\partial L}{\\partial x_{22}} = \\ldots$". \\color{..}{body}
        wrappers are reduced to their body and \\tfrac becomes \\frac (mathtext supports neither).
        It is set as vector outlines (identical in PNG and SVG) and wrapped at top-level + and =
        to fit the figure. If mathtext cannot parse it, formula_text (plain text) is shown
        instead, or the LaTeX source itself.
    """
    size = theme.title_font_size
    max_width = (EXPORT_MAX_INCHES[0] - 2 * _MARGIN) * 72
    lines, ismath, widest = _formula_lines(formula, formula_text, size, max_width)
    band = _formula_step(size, ismath) * len(lines) + (_GAP * 72 if lines else 0.0)
    marks = legend_marks(panels)
    width = _layout(panels, theme, title, band, widest).size[0]
    legend = _legend_band(marks, theme, width)
    layout = _layout(panels, theme, title, band + legend, widest)
    fig, axes = _figure(layout, title, theme)
    for ax, panel in zip(axes, panels):
        _draw(ax, panel, theme)
    _place_lines(fig, lines, ismath, size, layout)
    _place_legend(fig, marks, theme, layout)
    return fig


# --- formulas ---------------------------------------------------------------------------------


def _closing_brace(s: str, start: int) -> int:
    """Index of the '}' matching the '{' at s[start]."""
    depth = 0
    for i in range(start, len(s)):
        depth += {"{": 1, "}": -1}.get(s[i], 0)
        if depth == 0:
            return i
    raise ValueError(f"unbalanced braces in {s!r}")


def mathtext_source(latex: str) -> str:
    """LaTeX reduced to what matplotlib mathtext parses: no \\color, \\tfrac/\\dfrac -> \\frac."""
    s = re.sub(r"\\[td]frac\b", r"\\frac", latex)
    while (m := re.search(r"\\(?:text)?color\s*\{[^{}]*\}\s*\{", s)) is not None:
        end = _closing_brace(s, m.end() - 1)
        s = s[: m.start()] + "{" + s[m.end() : end] + "}" + s[end + 1 :]
    return re.sub(r"\\color\s*\{[^{}]*\}", "", s)  # the switch form, {\color{gray} x}


def _split_top_level(body: str) -> list[str]:
    """Pieces of a math body cut before every '+' or '=' outside braces."""
    pieces, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0 and ch in "+=" and i > start and body[i - 1] == " ":
            pieces.append(body[start:i].strip())
            start = i
    pieces.append(body[start:].strip())
    return [p for p in pieces if p]


def _wrap(pieces: list[str], width_of, max_width: float, sep: str = " ") -> list[str]:
    """Greedy lines of pieces within max_width, each piece measured once (widths add up)."""
    gap = width_of(f"x{sep}x") - 2 * width_of("x")
    lines: list[str] = []
    used = 0.0
    for piece in pieces:
        w = width_of(piece)
        if lines and used + gap + w <= 0.97 * max_width:  # a little slack for kerning
            lines[-1] += sep + piece
            used += gap + w
        else:
            lines.append(piece)
            used = w
    return lines


def _formula_lines(formula, formula_text, size, max_width) -> tuple[list[str], bool, float]:
    """(lines, ismath, widest line in points): the formula wrapped to max_width, or plain text."""
    if formula:
        try:
            src = mathtext_source(formula).strip()
            if src.startswith("$") and src.endswith("$") and src.count("$") == 2:
                measure = lambda s: _text_width(f"${s}$", size, ismath=True)  # noqa: E731
                lines = [f"${s}$" for s in _wrap(_split_top_level(src[1:-1]), measure, max_width)]
            else:
                lines = [src]
            # measuring parses every line: a formula mathtext cannot read fails here, not on draw
            return lines, True, max(_text_width(s, size, ismath=True) for s in lines)
        except ValueError:  # mathtext's parse errors (and unbalanced braces) are ValueErrors
            pass
    text = formula_text or formula
    if not text:
        return [], False, 0.0
    measure = lambda s: _text_width(s, size)  # noqa: E731
    lines = _wrap(text.split(" "), measure, max_width)
    return lines, False, max(measure(s) for s in lines)


def _formula_step(size: float, ismath: bool) -> float:
    """Line pitch of a formula in points; mathtext fractions need more room than text."""
    return _LINE * size * (1.6 if ismath else 1.0)


def _place_lines(fig: Figure, lines: list[str], ismath: bool, size: float, layout: _Layout):
    """Each line as outlines (PathPatch), centred, stacked downward from the top of the band."""
    H = layout.size[1]
    y_band, h_band = layout.bottom
    step = _formula_step(size, ismath) / 72
    top = y_band + h_band - _GAP  # a gap between the panels and the formula
    for k, line in enumerate(lines):
        verts, codes = _T2P.get_text_path(_font(size), line, ismath=ismath)
        path = Path(np.asarray(verts) * size / _T2P.FONT_SCALE, codes)  # font units -> points
        # the control points' box: exact enough to centre on, far cheaper than get_extents
        drawn = path.vertices[np.asarray(codes) != Path.CLOSEPOLY]  # CLOSEPOLY's point is unused
        (x0, y0), (x1, y1) = drawn.min(axis=0), drawn.max(axis=0)
        y_mid = (top - (k + 0.5) * step) / H  # figure fraction of the line's middle
        to_inches = Affine2D().translate(-(x0 + x1) / 2, -(y0 + y1) / 2)
        transform = (
            to_inches.scale(1 / 72)
            + fig.dpi_scale_trans
            + ScaledTranslation(0.5, y_mid, fig.transFigure)
        )
        patch = PathPatch(
            path,
            facecolor=TEXT_COLOR,
            edgecolor="none",
            transform=transform,
            label=line,
            gid=f"formula-{k}",
        )
        fig.add_artist(patch)


# --- bytes ------------------------------------------------------------------------------------


def to_png(fig: Figure, dpi: int = EXPORT_DPI) -> bytes:
    """The figure as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor=BACKGROUND)
    return buf.getvalue()


def to_svg(fig: Figure) -> bytes:
    """The figure as SVG bytes; cell numbers and labels stay text (editable in Inkscape/Office).

    svg.fonttype is only settable through rcParams: rc_context restores it afterwards.
    """
    buf = io.BytesIO()
    with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "convviz"}):
        fig.savefig(buf, format="svg", facecolor=BACKGROUND, metadata={"Date": None})
    return buf.getvalue()


# --- the sliding-window GIF -------------------------------------------------------------------


def sampled_steps(steps: int, max_frames: int) -> np.ndarray:
    """At most max_frames step indices, evenly spread, always the first and the last."""
    n = max(1, min(steps, max_frames))
    return np.unique(np.linspace(0, steps - 1, n).round().astype(int))


def _term(a: float, b: float) -> str:
    wrap = lambda s: f"({s})" if s.startswith(MINUS) else s  # noqa: E731
    return f"{wrap(number(a))}·{wrap(number(b))}"


# What a sweep's output is and what its channel axis runs over, by the output panel's key: the
# forward sums over input channels c, the full correlation over filters k, ∂L/∂w over samples n.
SWEEP_AXES = {"y": ("y", "c"), "grad_x_padded": ("∂L/∂x̃", "k"), "grad_w": ("∂L/∂w", "n")}


def sweep_caption(
    sweep: Sweep, t: int, channel: int = 0, max_terms: int = 9, output: str = "y"
) -> str:
    """'y[i, j]: a·b + … = s' for step t, with the sum over channels (or filters, or samples:
    by the output's key, SWEEP_AXES) and the bias when there are any.

    Past max_terms products the rest is one bracket that says what it adds up to.
    """
    name, axis = SWEEP_AXES.get(output, (output, "c"))
    one, many = AXIS_WORDS[axis]
    i, j = sweep.targets[t]
    x = sweep.operand[channel][np.ix_(sweep.rows[t], sweep.cols[t])].ravel()
    k = sweep.kernel[channel].ravel()
    terms = [_term(a, b) for a, b in zip(x, k)]
    if len(terms) > max_terms:
        hidden = sweep.products[t, channel].ravel()[max_terms - 1 :]
        terms = [*terms[: max_terms - 1], f"[{hidden.size} more = {number(hidden.sum())}]"]
    text = f"step {t + 1}/{sweep.steps} · {cell_name(name, i, j)}:  {' + '.join(terms)} = "
    text += number(sweep.partial[t, channel])
    K, bias = sweep.kernel.shape[0], " + bias" if sweep.offset else ""
    if K > 1:
        text += f" ({one} {axis}={channel});  Σ over the {K} {many}{bias} = "
        text += number(sweep.sums[t])
    elif bias:
        text += f"{bias} {number(sweep.offset)} = {number(sweep.sums[t])}"
    return text


@dataclass
class _Frames:
    """What a GIF frame repaints over the saved background (every artist here is animated)."""

    taps: list[Rectangle]  # per tap: its coloured border on the operand
    operand_cell_pt: float
    window: Rectangle  # the window's span on the operand
    products: _Drawn  # the products panel: its mesh and numbers change every frame
    products_above: list  # its tap borders, repainted over the new mesh
    products_sum: object  # its subtitle, "Σ = …"
    current: Rectangle  # the output cell being written
    caption: object
    output: _Drawn  # its numbers are animated: each is painted once, when its cell is written


def _animated(artist):
    artist.set_animated(True)
    return artist


def _kernel_taps(kernel: Panel) -> np.ndarray:
    """The tap index of each kernel cell: the panel's own (rot180 keeps each tap's colour), or
    row-major when the panel has none."""
    kh, kw = kernel.shape
    return np.arange(kh * kw).reshape(kh, kw) if kernel.taps is None else np.asarray(kernel.taps)


def _products_panel(
    sweep: Sweep, steps: np.ndarray, channel: int, taps: np.ndarray
) -> tuple[Panel, Normalize]:
    """The kernel-shaped grid of window · kernel for the first step, on a norm fit for all steps.

    taps : (kh, kw) the kernel's tap index per cell, so each product wears its tap's colour.
    """
    kw = sweep.kernel.shape[2]
    prods = sweep.products[steps, channel]  # (frames, kh, kw)
    panel = Panel(
        prods[0],
        "window × kernel",
        "products",
        taps=taps,
        subtitle=f"Σ = {number(-np.abs(sweep.partial[:, channel]).max())}",  # the widest it gets
    )
    return panel, value_norm(replace(panel, values=prods.reshape(-1, kw)))


def _frame_artists(fig, axes, drawn, taps_of, theme) -> _Frames:
    """Create every artist the frames move; the output starts blank (the scale's neutral middle).

    taps_of : (kh, kw) tap index of each kernel cell; the border that follows kernel cell (a, b)
    over the operand wears that tap's colour (after rot180, the colour the tap had before).
    """
    (ax_op, _, ax_prod, ax_out), (op, _, prod, out) = axes, drawn
    colors = tap_colors(1, int(taps_of.max()) + 1)  # a tap's colour depends only on its index
    taps = [
        ax_op.add_patch(_animated(_tap_box((0, 0), colors[t], op.cell_pt)))
        for t in taps_of.ravel()  # row-major, as _place_step walks the kernel
    ]
    window = _cell_box((0, 0), HIGHLIGHT_COLOR, _HIGHLIGHT_LW * op.cell_pt, 4.5, "highlight")
    for artist in [prod.mesh, *prod.texts.values()]:
        _animated(artist)
    above = [_animated(p) for p in ax_prod.patches if p.get_label() == "tap"]
    current = _cell_box((0, 0), SELECTED_COLOR, _SELECTED_LW * out.cell_pt, 5.0, "selected")
    caption = fig.text(
        0.5,
        0.0,
        "",
        ha="center",
        va="center",
        color=TEXT_COLOR,
        fontsize=theme.font_size,
        fontfamily=font_families(),
        animated=True,
    )
    out.mesh.set_array(np.broadcast_to(value_cmap()(0.5), out.fills.shape))
    for text in out.texts.values():
        _animated(text)
    return _Frames(
        taps,
        op.cell_pt,
        ax_op.add_patch(_animated(window)),
        prod,
        above,
        _animated(ax_prod.xaxis.label),
        ax_out.add_patch(_animated(current)),
        caption,
        out,
    )


def _place_step(fr: _Frames, sweep: Sweep, t: int, channel: int, scene: _GifScene) -> None:
    """Move the window to step t, show its products and their sum, point at its output cell."""
    rows, cols = sweep.rows[t], sweep.cols[t]
    for tap, (a, b) in enumerate(np.ndindex(sweep.kernel.shape[1:])):
        cell = (int(rows[a]), int(cols[b]))
        fr.taps[tap].set_xy(_tap_box(cell, "none", fr.operand_cell_pt).get_xy())
    fr.window.set_bounds(
        cols[0] - 0.5, rows[0] - 0.5, cols[-1] - cols[0] + 1, rows[-1] - rows[0] + 1
    )
    panel = Panel(sweep.products[t, channel], "", "products")
    fills = cell_colors(panel, scene.norm)
    fr.products.mesh.set_array(fills)
    colors = text_colors(panel, fills)
    for (i, j), text in fr.products.texts.items():
        text.set(text=number(panel.values[i, j]), color=colors[i, j])
    fr.products_sum.set_text(f"Σ = {number(sweep.partial[t, channel])}")
    i, j = sweep.targets[t]
    fr.current.set_xy((j - 0.5, i - 0.5))
    caption = sweep_caption(sweep, t, channel, output=scene.output_key)
    fr.caption.set_text(_wrap_caption(caption, scene.wrap_chars))


@dataclass
class _GifScene:
    """A GIF's figure, the artists its frames move, and the steps it samples."""

    fig: Figure
    axes: list[Axes]
    frames: _Frames
    steps: np.ndarray
    norm: Normalize
    wrap_chars: int
    output_key: str  # the sweep's output panel: what its caption names (SWEEP_AXES)


def _gif_scene(
    sweep: Sweep,
    operand: Panel,
    kernel: Panel,
    output: Panel,
    theme: Theme,
    channel: int,
    max_frames: int,
) -> _GifScene:
    """Lay out and draw the still parts of a sweep's GIF; create the artists each frame moves."""
    taps = _kernel_taps(kernel)
    if kernel.taps is None:
        kernel = replace(kernel, taps=taps)
    steps = sampled_steps(sweep.steps, max_frames)
    products, norm = _products_panel(sweep, steps, channel, taps)
    bare = dict(taps=None, highlight=None, selected=None)
    panels = [replace(operand, **bare), kernel, products, replace(output, **bare)]
    caption = 2 * _LINE * theme.font_size
    marks = [*legend_marks(panels), "window", "current"]  # what each frame moves
    width = _layout(panels, theme, None, caption).size[0]
    legend = _legend_band(marks, theme, width)
    layout = _layout(panels, theme, None, caption + legend)
    fig, axes = _figure(layout, None, theme, dpi=GIF_DPI)
    drawn = [_draw(ax, p, theme) for ax, p in zip(axes, panels)]
    fr = _frame_artists(fig, axes, drawn, taps, theme)
    middle = layout.bottom[0] + (legend + caption / 2) / 72  # the caption over the legend
    fr.caption.set_position((0.5, middle / layout.size[1]))
    _place_legend(fig, marks, theme, layout)
    wrap_chars = int((layout.size[0] - 2 * _MARGIN) * 72 / (0.5 * theme.font_size))
    return _GifScene(fig, axes, fr, steps, norm, wrap_chars, output.key)


def sweep_gif(
    sweep: Sweep,
    operand: Panel,
    kernel: Panel,
    output: Panel,
    theme: Theme = THEME,
    *,
    channel: int = 0,
    max_frames: int = 60,
    fps: float = 4,
) -> bytes:
    """An animated GIF of the sliding window: operand, kernel, products, the output filling.

    sweep : the sweep whose steps animate; operand, kernel, output : its panels (showing
    sweep.operand[channel], sweep.kernel[channel] and sweep.result()). The operand's and output's
    own taps, highlight and selection give way to the animation's; a kernel without taps gets
    them row-major. Each tap keeps the kernel panel's colour on the operand and in the products
    (so a rot180 kernel's taps wear the colours they had before the flip). A products panel
    (window × kernel, tap by tap, and their sum) sits before the output. More than max_frames
    steps are sampled evenly (first and last kept); every frame shows all output cells up to its
    step.

    Frames are blitted: the still parts are drawn once and each frame repaints only what moves
    (FuncAnimation and PillowWriter would redraw the whole figure per frame, several times
    slower); Pillow writes the GIF with one shared palette.
    """
    scene = _gif_scene(sweep, operand, kernel, output, theme, channel, max_frames)
    fig, axes, fr = scene.fig, scene.axes, scene.frames
    canvas = fig.canvas
    fr.products_sum.set_alpha(0)  # an Axis draws its label even when animated: keep it blank
    canvas.draw()
    fr.products_sum.set_alpha(1)
    background, shown = canvas.copy_from_bbox(fig.bbox), 0
    frames = []
    for t in scene.steps:
        canvas.restore_region(background)
        _paint_cells(axes[-1], fr.output, sweep.targets[shown : t + 1])  # written for good
        background, shown = canvas.copy_from_bbox(fig.bbox), t + 1
        _place_step(fr, sweep, int(t), channel, scene)
        moving = [*fr.taps, fr.window, fr.products.mesh, *fr.products.texts.values()]
        for artist in [*moving, *fr.products_above, fr.products_sum, fr.current, fr.caption]:
            fig.draw_artist(artist)
        frames.append(np.asarray(canvas.buffer_rgba())[..., :3].copy())
    return gif_bytes(frames, fps)


def _paint_cells(ax: Axes, out: _Drawn, cells: np.ndarray) -> None:
    """Paint output cells (n, 2) with their colour and number onto the canvas, once."""
    i, j = cells[:, 0], cells[:, 1]
    squares = np.stack([np.stack([j + dx, i + dy], 1) for dx, dy in _CORNERS], 1)  # (n, 4, xy)
    patch = PolyCollection(squares, facecolors=out.fills[i, j], edgecolors=GRID_LINE,
                           linewidths=_GRID_LW * out.cell_pt, animated=True)  # fmt: skip
    ax.add_collection(patch, autolim=False)
    ax.draw_artist(patch)
    patch.remove()  # the pixels stay; the figure does not grow a collection per frame
    for cell in zip(i.tolist(), j.tolist()):
        if cell in out.texts:
            ax.draw_artist(out.texts[cell])


def _shared_palette(rgb: np.ndarray) -> Image.Image:
    """A palette image for the frames: the most frequent colours exactly, so flat fills (white,
    PAD_COLOR, cell colours) stay true, then a median cut of the rest for anti-aliased edges.

    rgb (h, w, 3) should hold the colours of every frame (the first and last frames do). Pillow
    maps pixels to a palette through a coarse cache, so a colour within a few levels of one
    already taken is left out: otherwise white could come out as (252, 252, 252).
    """
    pixels = rgb.reshape(-1, 3)[::3].astype(np.int32)  # a sample is plenty for a histogram
    keys, counts = np.unique(pixels @ np.array([1 << 16, 1 << 8, 1]), return_counts=True)
    top = keys[np.argsort(-counts)[:256]]
    exact = np.stack([top >> 16, (top >> 8) & 255, top & 255], axis=1)  # (n, 3), by frequency
    cut = np.array(Image.fromarray(rgb).quantize(256).getpalette()).reshape(-1, 3)
    kept: list[np.ndarray] = []
    for color in [*exact[:_EXACT_COLORS], *cut, *exact[_EXACT_COLORS:]]:
        if len(kept) == 256:
            break
        if not kept or np.abs(np.array(kept) - color).max(axis=1).min() > _NEAR_LEVELS:
            kept.append(color)
    palette = Image.new("P", (1, 1))
    palette.putpalette(np.array(kept, int).ravel().tolist())
    return palette


GIF_HOLD_MS = 2500  # the last frame (the finished result) stays this long before the loop


def gif_bytes(frames: list[np.ndarray], fps: float, hold_ms: int = GIF_HOLD_MS) -> bytes:
    """An endlessly looping GIF of RGB frames (h, w, 3), quantised to one shared palette, that
    holds its last frame for hold_ms."""
    palette = _shared_palette(np.concatenate([frames[0], frames[-1]]))
    images = [
        Image.fromarray(f).quantize(palette=palette, dither=Image.Dither.NONE) for f in frames
    ]
    buf = io.BytesIO()
    images[0].save(
        buf,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=[round(1000 / max(fps, 0.1))] * (len(images) - 1) + [max(hold_ms, 20)],
        loop=0,
    )
    return buf.getvalue()


def _wrap_caption(text: str, chars: int) -> str:
    """Break a caption that is too long for the figure once, before a ' + '."""
    if len(text) <= chars:
        return text
    cut = text.rfind(" + ", 0, chars)
    return text if cut < 0 else text[:cut] + "\n" + text[cut + 1 :]

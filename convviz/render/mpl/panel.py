"""One Panel drawn on a matplotlib Axes: coloured cells, numbers, role overlays, a colour scale.

The drawing the static exports and the GIF frames share. Never pyplot: the Axes belongs to a
`matplotlib.figure.Figure` with its own Agg canvas. Line widths are fractions of a cell's edge,
so strokes scale with the cells.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.colors import LinearSegmentedColormap, Normalize, to_hex, to_rgba, to_rgba_array
from matplotlib.font_manager import FontProperties, fontManager
from matplotlib.patches import Rectangle
from matplotlib.patheffects import withStroke
from matplotlib.textpath import TextToPath

from convviz.engine.text import number
from convviz.render.geometry import scale_ticks, tick_cells
from convviz.render.mask_geometry import mask_outline, mask_rects
from convviz.render.panel import Panel
from convviz.render.theme import (
    BACKGROUND,
    DILATION_COLOR,
    DROPPED_COLOR,
    FONT_FAMILY,
    GRID_LINE,
    HALO_COLOR,
    HIGHLIGHT_COLOR,
    MATH_FONTSET,
    MUTED_TEXT,
    PAD_COLOR,
    PAD_HATCH,
    REMAINDER_COLOR,
    SELECTED_COLOR,
    TAP_CYCLE,
    TAP_LABEL_INSET,
    TEXT_COLOR,
    THEME,
    VALUE_SCALE,
    Theme,
    tap_colors,
)
from convviz.render.theme import text_colors as theme_text_colors

# Line widths as fractions of a cell's edge, so strokes scale with the cells.
GRID_LW, _TAP_LW, HIGHLIGHT_LW, SELECTED_LW = 0.035, 0.085, 0.075, 0.1
_REMAINDER_LW, _DROPPED_LW = 0.055, 0.04
LINKED_STYLE = (0, (1, 3))  # linked to the selection: dotted (with projecting caps), as on screen
UNREAD_STYLE = (0, (3, 1.5, 1, 1.5))  # between the windows: dash-dotted, as on screen
UNREAD_ALPHA = 0.13  # their wash: as `shapes.REMAINDER_WASH`
PAD_HATCH_STYLE = "//"
MIN_CELL_FONT = 5.0  # points; below this a panel shows colours without numbers
MIN_LABEL_PT = 8.0  # a tap's name (w₀₂), in points: 22 px in a 200 dpi PNG, 11 px in a GIF
# Layout of one figure, in inches (points where named _PT).
MARGIN, GAP = 0.2, 0.45
TICK_PAD_PT, LABEL_PAD_PT, TITLE_PAD_PT = 3.0, 4.0, 5.0
LINE = 1.3  # line height as a multiple of the font size
T2P = TextToPath()
CORNERS = ((-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5))  # of a cell, from its centre


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


def font(size: float, weight: str = "normal") -> FontProperties:
    return FontProperties(
        family=list(font_families()), size=size, weight=weight, math_fontfamily=MATH_FONTSET
    )


def text_width(s: str, size: float, weight: str = "normal", ismath: bool = False) -> float:
    """Width in points of s set in the export font (ismath: parsed as matplotlib mathtext)."""
    return float(T2P.get_text_width_height_descent(s, font(size, weight), ismath=ismath)[0])


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
    """(h, w, 4) RGBA fill of every cell: value colour, overridden by padding and dilation; a
    kernel (every cell a tap) in its taps' own colours, as the app fills it (rot180's taps keep
    theirs: the still and the app's picture of a stage agree)."""
    values = np.asarray(panel.values, float)
    rgba = value_cmap()((norm or value_norm(panel))(values))
    rgba[~np.isfinite(values)] = to_rgba(BACKGROUND)
    rgba[panel.mask("pad_mask")] = to_rgba(PAD_COLOR)
    rgba[panel.mask("dilation_mask")] = to_rgba(DILATION_COLOR)
    if _tap_filled(panel):
        taps = np.mod(np.asarray(panel.taps, int), TAP_CYCLE)
        colours = to_rgba_array(tap_colors(1, int(taps.max()) + 1))
        rgba[...] = colours[taps]
    return rgba


KERNEL_KEYS = ("w", "w_rot")  # the panels of a kernel, as the pages key them


def _tap_filled(panel: Panel) -> bool:
    """A kernel's panel with its taps: each cell in its tap's colour, not outlined by it (a
    sweep GIF's products keep their outlines)."""
    taps = panel.taps
    return panel.key in KERNEL_KEYS and taps is not None and bool((np.asarray(taps) >= 0).all())


def text_colors(panel: Panel, fills: np.ndarray) -> np.ndarray:
    """(h, w) text colour per cell: its fill's ink by the one rule (theme.text_color)."""
    hexes = [to_hex(f) for f in np.asarray(fills).reshape(-1, np.shape(fills)[-1])]
    return np.array(theme_text_colors(hexes), dtype=object).reshape(np.shape(fills)[:-1])


def fit_font(labels, cell_pt: float, preferred: float, room: float = 0.72) -> float:
    """The largest size ≤ preferred at which the longest label spans `room` of a cell.

    0.72 leaves the number clear of a tap border on either side.
    """
    longest = max(labels, key=len, default="")
    if not longest:
        return preferred
    per_point = text_width(longest, 10.0) / 10.0  # width grows linearly with the size
    return min(preferred, cell_pt * room / per_point)


# --- one panel --------------------------------------------------------------------------------


@dataclass
class Drawn:
    """What draw put on an Axes that an animation updates."""

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
    draw(ax, panel, theme)
    return ax


def draw(ax: Axes, panel: Panel, theme: Theme) -> Drawn:
    """draw_panel's work, returning the artists an animation updates; layers bottom to top."""
    h, w = panel.shape
    cell_pt = _cell_pt(ax, (h, w))
    fills = cell_colors(panel)
    mesh = ax.pcolormesh(
        np.arange(w + 1) - 0.5,
        np.arange(h + 1) - 0.5,
        fills,
        edgecolors=GRID_LINE,
        linewidth=GRID_LW * cell_pt if cell_pt >= 4 else 0,  # lines would hide tiny cells
        snap=True,
        zorder=1,
    )
    mesh.set_label("cells")
    _frame(ax, panel, theme, cell_pt)
    _draw_pad(ax, panel, cell_pt)
    _draw_unread_wash(ax, panel)
    draw_outline(ax, panel.mask("remainder_mask"), "remainder", cell_pt)
    draw_outline(ax, panel.between(), "unread", cell_pt)
    texts = _draw_numbers(ax, panel, theme, fills, cell_pt)
    if not texts:  # colours only: their scale under the grid
        _draw_scale(ax, panel, theme)
    _draw_dropped(ax, panel.mask("dropped_mask"), cell_pt)
    _draw_taps(ax, panel, cell_pt)
    if texts:
        _draw_tap_labels(ax, panel, theme, fills, cell_pt, texts[0, 0].get_fontsize())
    draw_outline(ax, panel.mask("highlight"), "highlight", cell_pt)
    if panel.selected is not None:
        box = cell_box(panel.selected, SELECTED_COLOR, SELECTED_LW * cell_pt, 5.0, "selected")
        box.set_path_effects(
            [withStroke(linewidth=1.7 * SELECTED_LW * cell_pt, foreground=HALO_COLOR)]
        )
        ax.add_patch(box)  # on a white halo, as on screen
    if panel.written is not None:  # as an animation outlines the cell it computes
        ax.add_patch(
            cell_box(panel.written, HIGHLIGHT_COLOR, SELECTED_LW * cell_pt, 5.0, "written")
        )
    return Drawn(mesh, fills, texts, cell_pt)


def _frame(ax: Axes, panel: Panel, theme: Theme, cell_pt: float) -> None:
    """Limits (row 0 on top), square cells, indices offset by origin, title and subtitle."""
    h, w = panel.shape
    ax.set_xlim(-0.5, w - 0.5)
    ax.set_ylim(h - 0.5, -0.5)
    ax.set_aspect("equal", adjustable="box")
    ax.set_facecolor(BACKGROUND)
    for spine in ax.spines.values():
        spine.set_visible(False)
    tick = dict(fontsize=tick_size(theme), color=MUTED_TEXT, fontfamily=font_families())
    for axis, set_ticks in ((1, ax.set_xticks), (0, ax.set_yticks)):
        first, n = panel.labelled(axis)
        o = panel.origin[axis]
        idx = [first + i for i in _tick_cells(n, o + first, cell_pt, tick_size(theme))]
        set_ticks(idx, [number(i + o) for i in idx], **tick)
    ax.xaxis.tick_top()
    ax.tick_params(length=0, pad=TICK_PAD_PT)
    ax.set_title(
        panel.title,
        fontsize=theme.title_font_size,
        fontweight="bold",
        color=TEXT_COLOR,
        fontfamily=font_families(),
        pad=TITLE_PAD_PT,
    )
    if panel.subtitle:
        ax.xaxis.set_label_position("top")
        ax.set_xlabel(
            panel.subtitle,
            fontsize=sub_size(theme),
            color=MUTED_TEXT,
            fontfamily=font_families(),
            labelpad=LABEL_PAD_PT,
        )


def tick_size(theme: Theme) -> float:
    return 0.8 * theme.font_size


def sub_size(theme: Theme) -> float:
    return 0.9 * theme.font_size


def _tick_cells(n: int, origin: int, cell_pt: float, size: float) -> list[int]:
    """Cells that get an index label: a label of font `size` needs 2.2·size pt, so none touch."""
    return tick_cells(n, origin, 2.2 * size / max(cell_pt, 1e-9))


def _draw_pad(ax: Axes, panel: Panel, cell_pt: float) -> None:
    """Padded cells: PAD_COLOR (in the mesh) under one hatched rectangle per band."""
    for r, c, nr, nc in mask_rects(panel.mask("pad_mask")):
        rect = Rectangle(
            (c - 0.5, r - 0.5),
            nc,
            nr,
            facecolor=PAD_COLOR,
            hatch=PAD_HATCH_STYLE,
            hatchcolor=PAD_HATCH,
            edgecolor=GRID_LINE,
            linewidth=GRID_LW * cell_pt if cell_pt >= 4 else 0,  # lines would hide tiny cells
            zorder=1.5,
            label="pad",
        )
        rect.set_hatch_linewidth(max(0.4, 0.02 * cell_pt))
        ax.add_patch(rect)
    # the band rectangles hide the grid lines between padded cells: draw them again on top
    if panel.mask("pad_mask").any():
        _draw_grid(ax, panel.mask("pad_mask"), cell_pt)


def _draw_unread_wash(ax: Axes, panel: Panel) -> None:
    """The cells no window reads (the remainder, between the windows) washed faintly in the
    remainder's colour, as on screen (`shapes.REMAINDER_WASH`): a number stays legible."""
    unread = panel.mask("unread_mask") | panel.mask("remainder_mask")
    for r, c, nr, nc in mask_rects(unread):
        wash = Rectangle((c - 0.5, r - 0.5), nc, nr, facecolor=REMAINDER_COLOR, alpha=UNREAD_ALPHA,
                         linewidth=0, zorder=1.7, label="unread wash")  # fmt: skip
        ax.add_patch(wash)


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
    lines = LineCollection(segs, colors=GRID_LINE, linewidths=GRID_LW * cell_pt, zorder=1.6)
    ax.add_collection(lines)


def draw_outline(
    ax: Axes, mask: np.ndarray, role: str, cell_pt: float, at: tuple[float, float] = (0, 0)
) -> None:
    """The boundary of mask (its cell [0, 0] drawn at `at`, x then y): remainder dashed, the
    cells between the windows dash-dotted, highlight dotted and thick (as on screen: solid is
    an animation's current cell)."""
    if not mask.any():
        return
    color, lw, style, z = {
        "remainder": (REMAINDER_COLOR, _REMAINDER_LW, (0, (3, 2)), 2.0),
        "unread": (REMAINDER_COLOR, _REMAINDER_LW, UNREAD_STYLE, 2.0),
        "highlight": (HIGHLIGHT_COLOR, HIGHLIGHT_LW, LINKED_STYLE, 4.5),
    }[role]
    x0, y0 = at
    lines = LineCollection(
        [((a + x0, b + y0), (c + x0, d + y0)) for (a, b), (c, d) in mask_outline(mask)],
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
    size = fit_font([s for row in labels for s in row], cell_pt, theme.cell_font_size)
    if size < MIN_CELL_FONT:  # cells too small to read a number: colours only
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
    ticks = scale_ticks(lo, hi)
    bar.set_xticks(ticks, [number(t) for t in ticks], fontsize=tick_size(theme) * 0.9)
    bar.tick_params(length=2, pad=1, colors=MUTED_TEXT)
    bar.set_yticks([])
    for spine in bar.spines.values():
        spine.set_visible(False)
    bar.set_label("colour scale")
    return bar


def _draw_dropped(ax: Axes, mask: np.ndarray, cell_pt: float) -> None:
    """A cross over every cell whose gradient the mask drops, its arms in the cell's corners:
    the number stays whole (an arm ending at a minus sign made '−1' read '=1')."""
    if not mask.any():
        return
    r, c = np.nonzero(mask)
    near, far = 0.24, 0.42  # where each arm starts and ends, in cells from the centre
    segs = np.concatenate(
        [
            np.stack([c + dx * near, r + dy * near, c + dx * far, r + dy * far], 1)
            for dx, dy in ((-1, -1), (1, -1), (-1, 1), (1, 1))
        ]
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
    """A border in the tap's own colour inside every cell a kernel tap covers (a window on an
    operand; a kernel's cells are filled with their colours instead)."""
    if panel.taps is None or _tap_filled(panel):
        return
    taps = np.asarray(panel.taps, int)
    if (taps < 0).all():
        return
    colors = tap_colors(1, int(taps.max()) + 1)  # a tap's colour depends only on its index
    outlined = panel.mask("highlight").any()
    for (i, j), t in np.ndenumerate(taps):
        if t >= 0:
            ax.add_patch(tap_box((i, j), colors[t], cell_pt, outlined))


def _draw_tap_labels(ax: Axes, panel: Panel, theme: Theme, fills, cell_pt, number_pt) -> None:
    """Each tap cell's name (w₀₂) in its top-left corner, in its fill's ink, as on screen
    (`grids.tap_label_trace`); inside a window's tap border where the cell has one."""
    labels = panel.tap_labels()
    if labels is None:
        return
    inks = text_colors(panel, fills)
    for (i, j), name in np.ndenumerate(labels):
        if name:
            tap_name(ax, (i, j), name, inks[i, j], theme, cell_pt, number_pt, _tap_filled(panel))


def tap_name(ax: Axes, cell, name: str, ink: str, theme: Theme, cell_pt, number_pt, filled=True):
    """A tap's name in the top-left corner of cell (row, col) (inside its tap border unless the
    cell is `filled` with the tap's colour); None where the cell has no room for it."""
    inset = TAP_LABEL_INSET if filled else TAP_LABEL_INSET + 2 * _TAP_LW
    size = theme.tap_label_font(cell_pt, number_pt, MIN_LABEL_PT, inset)
    if size is None:
        return None
    i, j = cell
    return ax.text(j - 0.5 + inset, i - 0.5 + inset, name, ha="left", va="top", fontsize=size,
                   color=ink, fontfamily=font_families(), zorder=3, gid="tap name")  # fmt: skip


def tap_box(cell, color: str, cell_pt: float, outlined: bool = True) -> Rectangle:
    """A border inside the cell: against the grid line, or clear of a highlight outline."""
    lw = _TAP_LW * cell_pt
    edge = (HIGHLIGHT_LW if outlined else GRID_LW) * cell_pt
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
        # a white edge inside it: an orange tap stays visible on an orange (positive) cell
        path_effects=[withStroke(linewidth=1.6 * lw, foreground=HALO_COLOR)],
    )


def cell_box(cell, color: str, lw: float, zorder: float, label: str) -> Rectangle:
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

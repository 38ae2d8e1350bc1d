"""Static exports: Panels drawn with matplotlib side by side and saved as PNG or SVG.

This runs inside the server, so it never touches pyplot: every figure is a
`matplotlib.figure.Figure` with its own Agg canvas. Figures are laid out by hand in inches (not by
a layout engine), so a GIF's frames keep one geometry. One panel is drawn by `static_panel`, the
legend by `static_legend`, the sliding-window GIF by `static_gif`; this module lays out the
figure, sets the formula under it and writes the bytes.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch
from matplotlib.path import Path
from matplotlib.transforms import Affine2D, ScaledTranslation

from convviz.engine.formulas import SHORT_TERMS, Formula
from convviz.engine.text import number
from convviz.render.mpl.legend import legend_band, legend_marks, legend_words, place_legend
from convviz.render.mpl.panel import (
    GAP,
    LABEL_PAD_PT,
    LINE,
    MARGIN,
    MIN_CELL_FONT,
    T2P,
    TICK_PAD_PT,
    TITLE_PAD_PT,
    draw,
    fit_font,
    font,
    font_families,
    sub_size,
    text_width,
    tick_size,
)
from convviz.render.panel import Panel
from convviz.render.selection import told_apart
from convviz.render.theme import (
    BACKGROUND,
    EXPORT_DPI,
    EXPORT_MAX_INCHES,
    EXPORT_PX_PER_INCH,
    TEXT_COLOR,
    THEME,
    Theme,
)

# --- figures ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Positions in inches of a row of panels over an optional bottom band (formula/caption)."""

    size: tuple[float, float]  # figure (width, height)
    boxes: list[tuple[float, float, float, float]]  # per panel (left, bottom, width, height)
    cell: float  # edge of one cell
    bottom: tuple[float, float]  # (y, height) of the band under the panels


def _decoration(panel: Panel, theme: Theme) -> tuple[float, float, float]:
    """(left labels width, stack height above the grid, widest title/subtitle) in points."""
    rows = [number(i + panel.origin[0]) for i in range(panel.shape[0])]
    left = max(text_width(s, tick_size(theme)) for s in rows) + TICK_PAD_PT
    above = TICK_PAD_PT + LINE * tick_size(theme) + TITLE_PAD_PT + LINE * theme.title_font_size
    widest = text_width(panel.title, theme.title_font_size, "bold")
    if panel.subtitle:
        above += LABEL_PAD_PT + LINE * sub_size(theme)
        widest = max(widest, text_width(panel.subtitle, sub_size(theme)))
    return left, above, widest


_SCALE_IN = 0.42  # room under the grids for a colour scale (a bar and its tick labels)


def _hides_numbers(panel: Panel, theme: Theme, cell_in: float) -> bool:
    """Whether a panel drawn with cell_in-inch cells shows colours only (as _draw_numbers)."""
    if max(panel.shape) > theme.max_text_cells:
        return True
    labels = [number(v) for v in np.asarray(panel.values, float).ravel()]
    return fit_font(labels, 72 * cell_in, theme.cell_font_size) < MIN_CELL_FONT


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


def title_size(theme: Theme) -> float:
    """Points of a figure's title (a step above the panels' titles)."""
    return 1.15 * theme.title_font_size


def row_layout(
    panels: list[Panel], theme: Theme, title: str | None, band_pt: float, min_width_pt: float = 0.0
) -> Layout:
    """Side by side; cells of the theme's size, smaller if the figure would exceed the maximum
    (small panels beside a big one keep cells of their own, `_cell_sizes`); a colour scale's
    room under the grids when one shows colours only."""
    if not panels:
        raise ValueError("panels_figure needs at least one panel")
    deco = [_decoration(p, theme) for p in panels]
    title_in = LINE * title_size(theme) / 72 if title else 0.0
    above = max(d[1] for d in deco) / 72
    fixed_w = 2 * MARGIN + len(panels) * GAP + sum(d[0] for d in deco) / 72
    fixed_h = 2 * MARGIN + title_in + above + band_pt / 72
    max_w, max_h = EXPORT_MAX_INCHES
    cells = _cell_sizes(panels, theme, max_w - fixed_w, max_h - fixed_h - _SCALE_IN)
    scale = _SCALE_IN if any(_hides_numbers(p, theme, c) for p, c in zip(panels, cells)) else 0.0
    slots = [
        max(d[0] / 72 + p.shape[1] * c, d[0] / 72 + d[2] / 72) + GAP
        for p, d, c in zip(panels, deco, cells)
    ]
    grids_h = max(p.shape[0] * c for p, c in zip(panels, cells))
    width = max(2 * MARGIN + sum(slots), min(min_width_pt / 72 + 2 * MARGIN, max_w))
    height = fixed_h + grids_h + scale
    grid_top = height - MARGIN - title_in - above
    x = (width - sum(slots)) / 2
    boxes = []
    for p, d, slot, c in zip(panels, deco, slots, cells):
        gw, gh = p.shape[1] * c, p.shape[0] * c
        left = x + (slot - gw + d[0] / 72) / 2  # the grid and its row labels centred in the slot
        boxes.append((left, grid_top - gh, gw, gh))  # grids top-aligned
        x += slot
    return Layout((width, height), boxes, min(cells), (MARGIN, band_pt / 72))


def new_figure(
    layout: Layout, title: str | None, theme: Theme, dpi: float = EXPORT_DPI
) -> tuple[Figure, list[Axes]]:
    """An Agg-backed Figure with one Axes per box of the layout."""
    W, H = layout.size
    fig = Figure(figsize=(W, H), dpi=dpi, facecolor=BACKGROUND)
    FigureCanvasAgg(fig)
    axes = [fig.add_axes((l / W, b / H, w / W, h / H)) for l, b, w, h in layout.boxes]
    if title:
        fig.text(
            0.5,
            1 - MARGIN / H,
            title,
            ha="center",
            va="top",
            color=TEXT_COLOR,
            fontsize=title_size(theme),
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
    highlight: str | None = None,
) -> Figure:
    """Panels side by side with equal cells, an optional title, a formula line underneath and
    under it a legend of the marks drawn (padding, inserted zeros, taps, outlines, ...).

    formula : LaTeX such as r"$\\frac{\\partial L}{\\partial x_{22}} = \\ldots$", in what
        matplotlib's mathtext parses (`Formula.latex` without a `mark`: no colour commands).
        It is set as vector outlines (identical in PNG and SVG) and wrapped at top-level + and =
        to fit the figure. If mathtext cannot parse it, formula_text (plain text) is shown
        instead, or the LaTeX source itself.
    highlight : what a lit cell means (the legend's words), where it is not a selection's link.
    """
    panels = told_apart(panels, theme.max_text_cells)
    words = legend_words(highlight)
    size = theme.title_font_size
    max_width = (EXPORT_MAX_INCHES[0] - 2 * MARGIN) * 72
    lines, ismath, widest = _formula_lines(formula, formula_text, size, max_width)
    if title:  # as wide as its title too (one small grid under a long title cut it off)
        widest = max(widest, text_width(title, title_size(theme), "bold"))
    band = _formula_step(size, ismath) * len(lines) + (GAP * 72 if lines else 0.0)
    marks = legend_marks(panels)
    width = row_layout(panels, theme, title, band, widest).size[0]
    legend = legend_band(marks, theme, width, words)
    layout = row_layout(panels, theme, title, band + legend, widest)
    fig, axes = new_figure(layout, title, theme)
    for ax, panel in zip(axes, panels):
        draw(ax, panel, theme)
    _place_lines(fig, lines, ismath, size, layout)
    place_legend(fig, marks, theme, layout, words)
    return fig


def stage_figure(
    panels: list[Panel],
    formula: Formula | None = None,
    theme: Theme = THEME,
    *,
    title: str | None = None,
    highlight: str | None = None,
) -> Figure:
    """A stage's picture as its PNG, SVG and handout page draw it: its panels, and under them
    its formula in numbers (cut short: `SHORT_TERMS`, the rest summed)."""
    latex = f"${formula.latex(numeric=True, max_terms=SHORT_TERMS)}$" if formula else None
    text = formula.text(numeric=True, max_terms=SHORT_TERMS) if formula else None
    return panels_figure(panels, theme, title=title, formula=latex, formula_text=text,
                         highlight=highlight)  # fmt: skip


# --- formulas ---------------------------------------------------------------------------------


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
            src = formula.strip()
            if src.startswith("$") and src.endswith("$") and src.count("$") == 2:
                measure = lambda s: text_width(f"${s}$", size, ismath=True)  # noqa: E731
                lines = [f"${s}$" for s in _wrap(_split_top_level(src[1:-1]), measure, max_width)]
            else:
                lines = [src]
            # measuring parses every line: a formula mathtext cannot read fails here, not on draw
            return lines, True, max(text_width(s, size, ismath=True) for s in lines)
        except ValueError:  # mathtext's parse errors are ValueErrors
            pass
    text = formula_text or formula
    if not text:
        return [], False, 0.0
    measure = lambda s: text_width(s, size)  # noqa: E731
    lines = _wrap(text.split(" "), measure, max_width)
    return lines, False, max(measure(s) for s in lines)


def _formula_step(size: float, ismath: bool) -> float:
    """Line pitch of a formula in points; mathtext fractions need more room than text."""
    return LINE * size * (1.6 if ismath else 1.0)


def _place_lines(fig: Figure, lines: list[str], ismath: bool, size: float, layout: Layout):
    """Each line as outlines (PathPatch), centred, stacked downward from the top of the band."""
    H = layout.size[1]
    y_band, h_band = layout.bottom
    step = _formula_step(size, ismath) / 72
    top = y_band + h_band - GAP  # a gap between the panels and the formula
    for k, line in enumerate(lines):
        verts, codes = T2P.get_text_path(font(size), line, ismath=ismath)
        path = Path(np.asarray(verts) * size / T2P.FONT_SCALE, codes)  # font units -> points
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

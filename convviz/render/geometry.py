"""Geometry of a row of grids: square cells, columns as wide as a grid or its title, headers.

Pure arithmetic in pixels (no plotly): the static grids (`convviz.render.plotly.grid_figure`), the
sliding windows (`animate`) and the motions (`motion_plotly`) all lay their panels out with
`grid_layout`. Cells are one size unless a big panel hides its numbers; then small panels keep
readable cells of their own.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise

import numpy as np

from convviz.engine.text import number
from convviz.render.panel import Panel
from convviz.render.theme import (
    Theme,
)

HIDDEN_NOTE = "(numbers hidden at this size)"
_Y_LABELS_PX = 34  # room for a panel's row indices left of its grid (at a 16 px rem)
_PANEL_GAP_PX = 22  # blank space between one panel's row indices and the previous grid
# A main column narrower than this (a phone) stacks a figure's panels, each the column's width:
# side by side, a 9×9 input, its 3×3 kernel and 4×4 output had 8 px cells on a 390 px phone.
NARROW_PX = 600
_STACK_GAP_PX = 14  # between one grid's column indices and the next panel's header

# --- geometry ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GridLayout:
    """Pixel geometry of panels in one row: square cells, grids top-aligned.

    Cells are one size (`cell`) unless a big panel hides its numbers: then small panels (a
    kernel beside a 100×5 input) get cells of their own, `cells[i]`, big enough to read.
    """

    cell: int  # px edge of a cell of the big panels (of every panel when `cells` is empty)
    gap: int  # px of white line between cells
    cell_font: int
    x_domains: tuple[tuple[float, float], ...]  # paper fractions of each grid
    y_domains: tuple[tuple[float, float], ...]
    plot_w: int  # px of the plot area (margins excluded)
    plot_h: int
    margin: dict  # l, r, t, b in px (t includes the panel headers)
    columns: tuple[int, ...] = ()  # px width of each panel's column (its grid or its title)
    cells: tuple[int, ...] = ()  # px edge of each panel's cells
    fonts: tuple[int, ...] = ()  # px of each panel's cell numbers
    header: int = 0  # px above the grids for the panel headers (in margin["t"])
    stacked: bool = False  # panels in rows (a narrow screen: one each), not in one row

    @property
    def width(self) -> int:
        return self.plot_w + self.margin["l"] + self.margin["r"]

    @property
    def height(self) -> int:
        return self.plot_h + self.margin["t"] + self.margin["b"]

    def px_to_paper_y(self, px: float) -> float:
        """A distance in px below the plot area as a (negative) paper y."""
        return -px / self.plot_h

    def cell_of(self, i: int) -> int:
        """The px edge of panel i's cells."""
        return self.cells[i] if self.cells else self.cell

    def font_of(self, i: int) -> int:
        return self.fonts[i] if self.fonts else self.cell_font

    def gap_of(self, i: int) -> int:
        return _gap(self.cell_of(i))


def _gap(cell: int) -> int:
    return 2 if cell >= 20 else (1 if cell >= 8 else 0)


def _text_px(text: str, theme: Theme) -> int:
    """Rough px width of a bold title line."""
    return int(0.6 * theme.title_font_size * len(text))


def _title_px(panel: Panel, theme: Theme) -> int:
    """Rough px width of a panel's bold title: a narrow grid's column is at least this wide."""
    return _text_px(panel.title, theme)


def _two_lines(title: str) -> list[str]:
    """The title broken before its arrow (what a stage makes opens the second line, on every
    panel alike), else at the space (outside brackets) that makes its longest line shortest."""
    return list(_two_lines_of(title))


@lru_cache(maxsize=4096)  # a layout tries a few dozen cell sizes with the same few titles
def _two_lines_of(title: str) -> tuple[str, ...]:
    if " → " in title:
        made = title.index(" → ")
        return title[:made], title[made + 1 :]
    depth, best = 0, [title]
    for i, ch in enumerate(title):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == " " and depth == 0:
            lines = [title[:i], title[i + 1 :]]
            if max(map(len, lines)) < max(map(len, best)):
                best = lines
    return tuple(best)


def title_lines(panel: Panel, theme: Theme, column_px: float) -> list[str]:
    """A panel's title on one line, or on two when one does not fit its column."""
    if _title_px(panel, theme) <= column_px + 1:
        return [panel.title]
    return _two_lines(panel.title)


def _narrow_title_px(panel: Panel, theme: Theme) -> int:
    return max(_text_px(line, theme) for line in _two_lines(panel.title))


def subtitle_lines(panel: Panel, theme: Theme, column_px: float, hidden: bool) -> list[str]:
    """A panel's subtitle (and the hidden-numbers note) wrapped to its column."""
    sub = " · ".join(s for s in (panel.subtitle, HIDDEN_NOTE if hidden else "") if s)
    chars = max(8, int(column_px / (0.52 * (theme.font_size - 1))))
    if not theme.show_secondary:
        # a projector keeps the grids big: one line where it can, notes after " · " (then after
        # ", ") dropped from the end until it fits; the first clause whole, wrapped if it must
        for sep in (" · ", ", "):
            parts = sub.split(sep)
            while len(parts) > 1 and len(sep.join(parts)) > chars:
                parts.pop()
            sub = sep.join(parts)
    return _wrap_clauses(sub, chars)


def _wrap_clauses(text: str, chars: int) -> list[str]:
    """Lines of at most `chars`, never breaking before a clause's last word ('2×2' alone on a
    line read as another shape); broken after ', ' and ' · ' rather than inside a clause when
    that takes no more lines ('4×4,' / 'spread by the stride 2×2')."""
    return list(_wrapped_clauses(text, chars))


@lru_cache(maxsize=4096)  # a layout tries a few dozen widths with the same few subtitles
def _wrapped_clauses(text: str, chars: int) -> tuple[str, ...]:

    def wrap(part: str) -> list[str]:
        glued = re.sub(r" (?=\S+$)", "\u00a0", part)  # the last word kept with the one before
        return textwrap.wrap(glued, chars)

    # an index ('x[i, j]') is never broken: its spaces are glued until the lines are made
    text = re.sub(r"\[[^\]]*\]", lambda m: m.group().replace(" ", "\u00a0"), text)
    by_clause: list[str] = []
    for clause in re.split(r"(?<=,) |(?<= ·) ", text) if text else []:
        if by_clause and len(by_clause[-1]) + 1 + len(clause) <= chars:
            by_clause[-1] += " " + clause
        else:
            by_clause += wrap(clause)
    by_word = wrap(text) if text else []
    lines = by_clause if len(by_clause) <= len(by_word) else by_word
    # a break between clauses says what their ' · ' said
    return tuple(
        line.replace("\u00a0", " ").removesuffix(" ·").removeprefix("· ") for line in lines
    )


def _header_h(lines: int, theme: Theme) -> int:
    """Vertical room of a panel header: the title and `lines` more lines under it.

    plotly spaces the lines of an annotation by its own font (the title's), whatever their span.
    """
    return round((1 + lines) * 1.3 * theme.title_font_size) + 6


def colorbar_px(theme: Theme) -> int:
    """Room of the colour-scale line a header adds when its grid hides the numbers (plotly
    spaces an annotation's lines by its title font)."""
    return round(1.3 * theme.title_font_size)


def legible(panel: Panel, theme: Theme, cell: int) -> bool:
    return max(panel.shape) <= theme.max_text_cells and cell >= 16


DIGIT_EM = 0.56  # width of a digit (and of "−") in the sans-serif of the grids, in font sizes


def number_font(panel: Panel, theme: Theme, cell: int) -> int:
    """The size of panel's numbers in `cell` px cells: the theme's for that cell, smaller when
    its widest number would not fit 90 % of a cell (a 4-digit ∂L/∂w ran into its neighbours)."""
    font = theme.cell_font(cell)
    if not legible(panel, theme, cell):
        return font
    widest = max((len(number(v)) for v in np.unique(panel.values)), default=1)
    return max(8, min(font, int(0.9 * cell / (DIGIT_EM * max(widest, 1)))))


def _labels_px(theme: Theme) -> int:
    """Room for a panel's row indices, whose font grows with the page's rem."""
    return round(_Y_LABELS_PX * theme.scale)


def _fixed_px(n: int, theme: Theme) -> int:
    """Row-index labels and gaps of n panels in a row."""
    return n * _labels_px(theme) + (n - 1) * _PANEL_GAP_PX + 16


@dataclass(frozen=True)
class _Fit:
    cells: list[int]
    columns: list[int]
    header: int


def _fit(panels: Sequence[Panel], theme: Theme, cells: list[int]) -> _Fit | None:
    """Columns and header of panels drawn with `cells`, or None if they are wider than the box.

    A title wider than its grid wraps onto two lines before it is allowed to widen the row.
    """
    grids = [p.shape[1] * c for p, c in zip(panels, cells)]
    columns = [max(g, _title_px(p, theme)) for p, g in zip(panels, grids)]
    if sum(columns) + _fixed_px(len(panels), theme) > theme.figure_w:
        columns = [max(g, _narrow_title_px(p, theme)) for p, g in zip(panels, grids)]
        if sum(columns) + _fixed_px(len(panels), theme) > theme.figure_w:
            return None
    hidden = [not legible(p, theme, c) for p, c in zip(panels, cells)]
    lines = max(
        len(title_lines(p, theme, col)) - 1 + len(subtitle_lines(p, theme, col, h))
        for p, col, h in zip(panels, columns, hidden)
    )
    scale = colorbar_px(theme) if any(hidden) else 0  # a colour scale under hidden titles
    return _Fit(cells, columns, _header_h(lines, theme) + scale)


def _height(fit: _Fit, panels: Sequence[Panel], top: int, bottom: int) -> int:
    return top + fit.header + max(p.shape[0] * c for p, c in zip(panels, fit.cells)) + bottom


def _uniform(panels, theme: Theme, top: int, bottom: int) -> _Fit:
    """The biggest one cell size (up to theme.cell_px) with which the panels fit the box."""
    # grids that show their numbers keep them legible (a laptop's page scrolls instead)
    numbered = max(p.shape[0] for p in panels) <= theme.max_text_cells
    floor = theme.min_cell_px if numbered else min(16, theme.min_cell_px)
    fit = None
    for cell in range(max(theme.cell_px, 1), 0, -1):  # a few dozen sizes, largest first
        here = _fit(panels, theme, [cell] * len(panels))
        if here is None:
            continue
        fit = here
        if _height(fit, panels, top, bottom) <= theme.figure_h or cell <= floor:
            break
    if fit is None:  # titles wider than the box: the smallest cells, titles as they fall
        cells = [4] * len(panels)
        columns = [max(p.shape[1] * 4, _narrow_title_px(p, theme)) for p in panels]
        fit = _Fit(cells, columns, _header_h(2, theme))
    return fit


def _own_cells(panels, theme: Theme, top: int, bottom: int, base: _Fit) -> _Fit:
    """Small panels beside a big one get readable cells of their own.

    When a big panel hides its numbers at the shared size, each small panel (up to
    theme.max_text_cells a side) takes the biggest cell up to theme.cell_px with which the big
    panels keep at least two thirds of their shared size; otherwise the shared size stays.
    """
    cell = base.cells[0]
    small = [max(p.shape) <= theme.max_text_cells for p in panels]
    if all(legible(p, theme, cell) for p in panels) or not any(small) or all(small):
        return base
    least = max(1, (2 * cell) // 3)
    tallest = max(theme.figure_h, _height(base, panels, top, bottom))  # normal mode may scroll
    for own in range(max(theme.cell_px, 1), cell, -1):
        for big in range(min(cell, own), least - 1, -1):
            fit = _fit(panels, theme, [own if s else big for s in small])
            if fit is not None and _height(fit, panels, top, bottom) <= tallest:
                return fit
    return base


def grid_layout(
    panels: Sequence[Panel],
    theme: Theme,
    *,
    top: int,
    bottom: int,
    min_plot_h: int = 0,
    own_cells: bool = True,
) -> GridLayout:
    """The biggest square cells (up to theme.cell_px) with which the panels fit theme's box.

    Each column is as wide as its grid or its title (wrapped onto two lines if that is what
    fits); subtitles wrap to their column. The box is theme.figure_w wide and theme.figure_h
    tall (top and bottom margins included); cells shrink below theme.min_cell_px only to fit
    the width. With own_cells, small panels beside a big one that hides its numbers keep
    readable cells of their own (`_own_cells`).

    The geometry follows from the grids' shapes and headers alone, and is made once for them
    (a new layer of the same shape is laid out as the last); the numbers' fonts, from the
    widest number each grid holds.
    """
    outlines = tuple(_Outline(p.shape, p.title, p.subtitle) for p in panels)
    frame = _laid_out(outlines, theme, top, bottom, min_plot_h, own_cells)
    fonts = tuple(number_font(p, theme, c) for p, c in zip(panels, frame.cells))
    return replace(frame, fonts=fonts)


@dataclass(frozen=True)
class _Outline:
    """What a panel's geometry reads of it: its grid's shape and its header."""

    shape: tuple[int, int]
    title: str
    subtitle: str | None


@lru_cache(maxsize=512)
def _laid_out(
    panels: tuple[_Outline, ...],
    theme: Theme,
    top: int,
    bottom: int,
    min_plot_h: int,
    own_cells: bool,
) -> GridLayout:
    """`grid_layout` without the numbers' fonts (left empty)."""
    if len(panels) > 1 and theme.figure_w < NARROW_PX:
        return _stacked(panels, theme, top=top, bottom=bottom, min_plot_h=min_plot_h)
    base = _uniform(panels, theme, top, bottom)
    wrapped = _wrapped(panels, theme, top, bottom, base.cells[0], min_plot_h)
    if wrapped is not None:
        return wrapped
    fit = _own_cells(panels, theme, top, bottom, base) if own_cells else base
    cells, columns = fit.cells, fit.columns
    plot_w = sum(columns) + _fixed_px(len(panels), theme) - 16
    plot_h = max(max(p.shape[0] * c for p, c in zip(panels, cells)), min_plot_h)
    x_domains, y_domains, left = [], [], 0
    for col, p, c in zip(columns, panels, cells):
        h, w = p.shape
        left += _labels_px(theme)
        x0 = left + (col - w * c) / 2  # the grid centred in its column
        x_domains.append((x0 / plot_w, (x0 + w * c) / plot_w))
        y_domains.append((1 - h * c / plot_h, 1.0))
        left += col + _PANEL_GAP_PX
    shared = base.cells[0] if cells == base.cells else min(cells)
    return GridLayout(
        shared,
        _gap(shared),
        theme.cell_font(shared),
        tuple(x_domains),
        tuple(y_domains),
        plot_w,
        plot_h,
        {"l": 8, "r": 8, "t": top + fit.header, "b": bottom},
        tuple(columns),
        tuple(cells),
        (),
        fit.header,
    )


WRAP_BELOW_PX = 20  # numbered grids whose cells one row would shrink below this wrap (16 px rem)


def _rows(n: int, count: int) -> list[range]:
    """n panels in `count` rows, in order, the first rows holding the extra one."""
    sizes = [n // count + (i < n % count) for i in range(count)]
    starts = np.cumsum([0, *sizes])
    return [range(int(a), int(b)) for a, b in pairwise(starts)]


def _wrapped(panels, theme: Theme, top: int, bottom: int, one_row: int, min_plot_h: int):
    """Numbered grids in rows when one row would shrink their cells below WRAP_BELOW_PX (five
    grids on a laptop's column): the fewest rows that give the biggest cells, every row's
    headers in the same room above its grids (the page scrolls down, never sideways). None
    when one row is as good, and on a projector (a slide is one screen: its grids stay in a
    row, as big as the screen lets them)."""
    if not theme.show_secondary or len(panels) < 2:
        return None
    if max(max(p.shape) for p in panels) > theme.max_text_cells:
        return None
    if one_row >= WRAP_BELOW_PX * theme.scale:
        return None
    best = None
    for count in range(2, len(panels) + 1):
        rows = _rows(len(panels), count)
        for cell in range(max(theme.cell_px, 1), one_row, -1):
            fits = [_fit([panels[i] for i in row], theme, [cell] * len(row)) for row in rows]
            if any(f is None for f in fits):
                continue
            header = max(f.header for f in fits)
            below = ticks_px(theme) + _STACK_GAP_PX
            heights = [max(panels[i].shape[0] for i in row) * cell for row in rows]
            tall = top + bottom + sum(heights) + (count - 1) * (below + header) + header
            if tall <= theme.figure_h or cell <= theme.min_cell_px:
                if best is None or cell > best[0]:
                    best = (cell, rows, fits, header)
                break
    if best is None:
        return None
    return _in_rows(panels, theme, top, bottom, min_plot_h, *best)


def _in_rows(panels, theme, top, bottom, min_plot_h, cell, rows, fits, header) -> GridLayout:
    """The geometry of panels in rows (`_wrapped`): each row centred, top-aligned grids."""
    widths = [sum(f.columns) + _fixed_px(len(row), theme) - 16 for row, f in zip(rows, fits)]
    plot_w = max(widths)
    below = ticks_px(theme) + _STACK_GAP_PX
    heights = [max(panels[i].shape[0] for i in row) * cell for row in rows]
    plot_h = max(sum(heights) + (len(rows) - 1) * (below + header), min_plot_h)
    x_domains, y_domains, columns, y = [None] * len(panels), [None] * len(panels), [], 0
    for row, fit, width, height in zip(rows, fits, widths, heights):
        left = (plot_w - width) / 2
        for i, col in zip(row, fit.columns):
            h, w = panels[i].shape
            left += _labels_px(theme)
            x0 = left + (col - w * cell) / 2  # the grid centred in its column
            x_domains[i] = (x0 / plot_w, (x0 + w * cell) / plot_w)
            y_domains[i] = (1 - (y + h * cell) / plot_h, 1 - y / plot_h)
            left += col + _PANEL_GAP_PX
            columns.append(col)
        y += height + below + header
    return GridLayout(
        cell,
        _gap(cell),
        theme.cell_font(cell),
        tuple(x_domains),
        tuple(y_domains),
        plot_w,
        plot_h,
        {"l": 8, "r": 8, "t": top + header, "b": bottom},
        tuple(columns),
        (cell,) * len(panels),
        (),
        header,
        stacked=True,
    )


def _stacked(
    panels: Sequence[Panel], theme: Theme, *, top: int, bottom: int, min_plot_h: int = 0
) -> GridLayout:
    """Panels one under another, each with the biggest cells (up to theme.cell_px) that fit the
    column's width; every panel's header in the same room above its grid (the first one's in the
    top margin). For a narrow screen: the page scrolls down, never sideways."""
    column = max(1, theme.figure_w - _fixed_px(1, theme))
    cells = [max(1, min(theme.cell_px, column // p.shape[1])) for p in panels]
    hidden = [not legible(p, theme, c) for p, c in zip(panels, cells)]
    header = max(
        _header_h(len(title_lines(p, theme, column)) - 1 + len(subtitle_lines(p, theme, column, h)),
                  theme) + (colorbar_px(theme) if h else 0)
        for p, h in zip(panels, hidden)
    )  # fmt: skip
    below = ticks_px(theme) + _STACK_GAP_PX  # a grid's column indices, then the gap
    heights = [p.shape[0] * c for p, c in zip(panels, cells)]
    plot_h = max(sum(heights) + (len(panels) - 1) * (below + header), min_plot_h)
    plot_w = column + _fixed_px(1, theme) - 16
    x_domains, y_domains, y = [], [], 0
    for p, c, h in zip(panels, cells, heights):
        x0 = _labels_px(theme) + (column - p.shape[1] * c) / 2  # centred in the column
        x_domains.append((x0 / plot_w, (x0 + p.shape[1] * c) / plot_w))
        y_domains.append((1 - (y + h) / plot_h, 1 - y / plot_h))
        y += h + below + header
    return GridLayout(
        min(cells),
        _gap(min(cells)),
        theme.cell_font(min(cells)),
        tuple(x_domains),
        tuple(y_domains),
        plot_w,
        plot_h,
        {"l": 8, "r": 8, "t": top + header, "b": bottom},
        (column,) * len(panels),
        tuple(cells),
        (),
        header,
        stacked=True,
    )


def shows_text(panel: Panel, theme: Theme, geo: GridLayout, i: int | None = None) -> bool:
    """Per-cell numbers only on grids up to theme.max_text_cells per side, in legible cells
    (panel i's own cells when i is given, else the shared size)."""
    return legible(panel, theme, geo.cell if i is None else geo.cell_of(i))


def axis_ids(i: int) -> tuple[str, str]:
    """Trace axis references of panel i (0-based): ("x", "y"), ("x2", "y2"), …"""
    s = "" if i == 0 else str(i + 1)
    return f"x{s}", f"y{s}"


TICK_STEPS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**9)  # 10**9: index 0 alone


def tick_cells(n: int, origin: int, cells_per_label: float) -> list[int]:
    """Cells i of an n-cell axis whose index origin + i gets a label: every step-th index,
    0 included, step the first of TICK_STEPS ≥ cells_per_label (the room one label needs)."""
    step = next(s for s in TICK_STEPS if s >= cells_per_label)
    return list(range(-origin % step, n, step))


def tick_values(n: int, origin: int, cell: int, room: float = 24) -> list[int]:
    """The indices a plotly axis labels: a label needs `room` px, cells are `cell` px."""
    return [origin + i for i in tick_cells(n, origin, room / max(cell, 1))]


def scale_ticks(lo: float, hi: float) -> list[float]:
    """A colour scale's ticks: its smallest and largest value, and 0 when it lies between."""
    return sorted({lo, hi} | ({0.0} if lo < 0 < hi else set()))


def ticks_px(theme: Theme) -> int:
    """Room under a grid for its column indices."""
    return theme.font_size + 10

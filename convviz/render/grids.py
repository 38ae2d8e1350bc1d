"""Plotly grids: Panels side by side as annotated heatmaps, with cell roles and click selection.

Every panel lives on its own pair of axes whose coordinates are the panel's labelled indices
(array index + `panel.origin`), so a padded input's first row sits at y = -1. Cells are square and
the same pixel size in every panel. The building blocks here (layout, traces, shapes, controls'
geometry) are shared with the animations in `convviz.render.animate`.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from convviz.render.panel import Panel
from convviz.render.theme import (
    BACKGROUND,
    DILATION_COLOR,
    DILATION_TEXT,
    DROPPED_COLOR,
    EXPORT_SCALE,
    FONT_FAMILY,
    HIGHLIGHT_COLOR,
    MUTED_TEXT,
    PAD_COLOR,
    PAD_TEXT,
    REMAINDER_COLOR,
    SELECTED_COLOR,
    TEXT_COLOR,
    THEME,
    VALUE_SCALE,
    Theme,
    tap_colors,
)
from convviz.text import MINUS, number

# The toolbar: a PNG export at slide resolution; no lasso/box tools (a click selects a cell).
PLOTLY_CONFIG = {
    "toImageButtonOptions": {"format": "png", "scale": EXPORT_SCALE, "filename": "convviz"},
    "displaylogo": False,
    "modeBarButtonsToRemove": [
        "lasso2d",
        "select2d",
        "zoom2d",
        "pan2d",
        "zoomIn2d",
        "zoomOut2d",
        "autoScale2d",
        "resetScale2d",
    ],
}
MAX_CLICK_CELLS = 64  # per side; bigger grids get no click overlay (the UI has a keyboard fallback)
HIDDEN_NOTE = "(numbers hidden at this size)"
SMALL_GRID = 9  # rows: the seeds' layers and their padded inputs; they keep legible cells
_Y_LABELS_PX = 34  # room for a panel's row indices left of its grid
_PANEL_GAP_PX = 22  # blank space between one panel's row indices and the previous grid
_REMAINDER_WASH = "rgba(178, 58, 72, 0.13)"  # REMAINDER_COLOR, faint, over the remainder band


# --- numbers -------------------------------------------------------------------------------------


format_value = number  # the one rule (convviz.text), under the renderers' name


def format_values(a: np.ndarray) -> np.ndarray:
    """format_value over an array; an object array of str with a's shape."""
    a = np.asarray(a, dtype=float)
    finite = np.isfinite(a)
    whole = np.where(finite, np.round(a), 0)
    small = np.abs(whole).max(initial=0) < 1e15
    if small and np.all(np.abs(np.where(finite, a, 0) - whole) < 1e-9):
        # the common case (small integers), vectorized: thousands of cells per animation
        s = np.char.replace(whole.astype(np.int64).astype(str), "-", MINUS).astype(object)
        s[~finite] = ""
        return s
    return np.array([format_value(v) for v in a.ravel()], dtype=object).reshape(a.shape)


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
    """The title broken at the space (outside brackets) that makes its longest line shortest."""
    depth, best = 0, [title]
    for i, ch in enumerate(title):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == " " and depth == 0:
            lines = [title[:i], title[i + 1 :]]
            if max(map(len, lines)) < max(map(len, best)):
                best = lines
    return best


def title_lines(panel: Panel, theme: Theme, column_px: float) -> list[str]:
    """A panel's title on one line, or on two when one does not fit its column."""
    if _title_px(panel, theme) <= column_px + 1:
        return [panel.title]
    return _two_lines(panel.title)


def _narrow_title_px(panel: Panel, theme: Theme) -> int:
    return max(_text_px(line, theme) for line in _two_lines(panel.title))


def _subtitle_lines(panel: Panel, theme: Theme, column_px: float, hidden: bool) -> list[str]:
    """A panel's subtitle (and the hidden-numbers note) wrapped to its column."""
    sub = f"{panel.subtitle} {HIDDEN_NOTE}".strip() if hidden else panel.subtitle
    chars = max(8, int(column_px / (0.52 * (theme.font_size - 1))))
    most = None if theme.show_secondary else 1  # a projector keeps the grids big instead
    return textwrap.wrap(sub, chars, max_lines=most, placeholder=" …") if sub else []


def _header_h(lines: int, theme: Theme) -> int:
    """Vertical room of a panel header: the title and `lines` more lines under it.

    plotly spaces the lines of an annotation by its own font (the title's), whatever their span.
    """
    return round((1 + lines) * 1.3 * theme.title_font_size) + 6


def colorbar_px(theme: Theme) -> int:
    """Room of the colour scale between a header and a grid that hides its numbers."""
    return theme.font_size + 14


def _shows(panel: Panel, theme: Theme, cell: int) -> bool:
    return max(panel.shape) <= theme.max_text_cells and cell >= 16


def _fixed_px(n: int) -> int:
    """Row-index labels and gaps of n panels in a row."""
    return n * _Y_LABELS_PX + (n - 1) * _PANEL_GAP_PX + 16


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
    if sum(columns) + _fixed_px(len(panels)) > theme.figure_w:
        columns = [max(g, _narrow_title_px(p, theme)) for p, g in zip(panels, grids)]
        if sum(columns) + _fixed_px(len(panels)) > theme.figure_w:
            return None
    hidden = [not _shows(p, theme, c) for p, c in zip(panels, cells)]
    lines = max(
        len(title_lines(p, theme, col)) - 1 + len(_subtitle_lines(p, theme, col, h))
        for p, col, h in zip(panels, columns, hidden)
    )
    scale = colorbar_px(theme) if any(hidden) else 0  # a colour scale under hidden titles
    return _Fit(cells, columns, _header_h(lines, theme) + scale)


def _height(fit: _Fit, panels: Sequence[Panel], top: int, bottom: int) -> int:
    return top + fit.header + max(p.shape[0] * c for p, c in zip(panels, fit.cells)) + bottom


def _uniform(panels, theme: Theme, top: int, bottom: int) -> _Fit:
    """The biggest one cell size (up to theme.cell_px) with which the panels fit the box."""
    heights = [p.shape[0] for p in panels]
    floor = theme.min_cell_px if max(heights) <= SMALL_GRID else min(16, theme.min_cell_px)
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
    if all(_shows(p, theme, cell) for p in panels) or not any(small) or all(small):
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
    """
    base = _uniform(panels, theme, top, bottom)
    fit = _own_cells(panels, theme, top, bottom, base) if own_cells else base
    cells, columns = fit.cells, fit.columns
    plot_w = sum(columns) + _fixed_px(len(panels)) - 16
    plot_h = max(max(p.shape[0] * c for p, c in zip(panels, cells)), min_plot_h)
    x_domains, y_domains, left = [], [], 0
    for col, p, c in zip(columns, panels, cells):
        h, w = p.shape
        left += _Y_LABELS_PX
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
        tuple(theme.cell_font(c) for c in cells),
    )


def shows_text(panel: Panel, theme: Theme, geo: GridLayout, i: int | None = None) -> bool:
    """Per-cell numbers only on grids up to theme.max_text_cells per side, in legible cells
    (panel i's own cells when i is given, else the shared size)."""
    return _shows(panel, theme, geo.cell if i is None else geo.cell_of(i))


def axis_ids(i: int) -> tuple[str, str]:
    """Trace axis references of panel i (0-based): ("x", "y"), ("x2", "y2"), …"""
    s = "" if i == 0 else str(i + 1)
    return f"x{s}", f"y{s}"


def _ticks(n: int, origin: int, cell: int) -> list[int]:
    step = max(1, math.ceil(24 / max(cell, 1)))
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 10**9) if s >= step)
    return [origin + i for i in range(n) if (origin + i) % step == 0]


def panel_axes(i: int, panel: Panel, theme: Theme, geo: GridLayout) -> dict:
    """Layout entries of panel i's axes: exact ranges, row 0 on top, indices as tick labels."""
    (h, w), (oy, ox) = panel.shape, panel.origin
    xa, ya = axis_ids(i)
    common = {
        "showgrid": False,
        "zeroline": False,
        "showline": False,
        "ticks": "",
        "fixedrange": True,
        "tickfont": {"size": max(9, theme.font_size - 3), "color": MUTED_TEXT},
    }
    suffix = xa[1:]
    return {
        f"xaxis{suffix}": {
            **common,
            "domain": list(geo.x_domains[i]),
            "range": [ox - 0.5, ox + w - 0.5],
            "tickmode": "array",
            "tickvals": _ticks(w, ox, geo.cell_of(i)),
            "anchor": ya,
        },
        f"yaxis{suffix}": {
            **common,
            "domain": list(geo.y_domains[i]),
            "range": [oy + h - 0.5, oy - 0.5],  # reversed: row 0 at the top
            "autorange": False,
            "tickmode": "array",
            "tickvals": _ticks(h, oy, geo.cell_of(i)),
            "anchor": xa,
            "scaleanchor": xa,  # square cells even if the page stretches the figure
            "scaleratio": 1,
            "constrain": "domain",
        },
    }


def panel_header(i: int, panel: Panel, theme: Theme, geo: GridLayout) -> dict:
    """The title (bold) and subtitle above panel i, as one annotation."""
    xa, ya = axis_ids(i)
    column = geo.columns[i] if geo.columns else panel.shape[1] * geo.cell_of(i)
    hidden = not shows_text(panel, theme, geo, i)
    lines = _subtitle_lines(panel, theme, column, hidden)
    text = "<br>".join(f"<b>{line}</b>" for line in title_lines(panel, theme, column))
    if lines:
        style = f"font-size:{theme.font_size - 1}px;color:{MUTED_TEXT}"
        text += "".join(f"<br><span style='{style}'>{line}</span>" for line in lines)
    return {
        "text": text,
        "xref": f"{xa} domain",
        "yref": f"{ya} domain",
        "x": 0.5,
        "y": 1.0,
        "xanchor": "center",
        "yanchor": "bottom",
        "yshift": 4 + (colorbar_px(theme) if hidden else 0),
        "showarrow": False,
        "font": {"size": theme.title_font_size, "color": TEXT_COLOR},
    }


# --- traces --------------------------------------------------------------------------------------


def flat_colorscale(color: str) -> list[list]:
    return [[0.0, color], [1.0, color]]


def tap_colorscale(n: int) -> list[list]:
    """A stepwise scale mapping z = 0 … n-1 (with zmin -0.5, zmax n - 0.5) to the tap colours."""
    colors = tap_colors(1, max(n, 1))
    if n <= 1:
        return flat_colorscale(colors[0])
    scale = []
    for t, c in enumerate(colors):
        scale += [[t / n, c], [(t + 1) / n, c]]
    return scale


def heatmap(
    z: np.ndarray,
    i: int,
    x: np.ndarray,
    y: np.ndarray,
    geo: GridLayout,
    *,
    text: np.ndarray | None = None,
    colorscale: list | None = None,
    font_color: str | None = None,
    name: str = "",
    **extra,
) -> dict:
    """A heatmap trace (as a dict) on panel i's axes; NaN cells are transparent."""
    xa, ya = axis_ids(i)
    trace = {
        "type": "heatmap",
        "name": name,
        "z": z,
        "x": x,
        "y": y,
        "xaxis": xa,
        "yaxis": ya,
        "colorscale": colorscale or VALUE_SCALE,
        "showscale": False,
        "xgap": geo.gap_of(i),
        "ygap": geo.gap_of(i),
        "hoverinfo": "skip",
    }
    if text is not None:
        trace["text"] = text
        trace["texttemplate"] = "%{text}"
        trace["textfont"] = {"size": geo.font_of(i), "family": FONT_FAMILY}
        if font_color:
            trace["textfont"]["color"] = font_color
    trace.update(extra)
    return trace


def value_scale(values: np.ndarray, i: int, theme: Theme, geo: GridLayout) -> dict:
    """Heatmap entries that draw panel i's colour scale above its grid (numbers hidden): the
    range is symmetric about 0 as the colours are; the ticks are the grid's min, 0 and max."""
    finite = values[np.isfinite(values)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    reach = max(abs(lo), abs(hi)) or 1.0
    ticks = sorted({lo, hi} | ({0.0} if lo < 0 < hi else set()))
    x0, x1 = geo.x_domains[i]
    column = geo.columns[i] if geo.columns else (x1 - x0) * geo.plot_w
    return {
        "zmin": -reach,
        "zmax": reach,
        "zmid": None,
        "showscale": True,
        "colorbar": {
            "orientation": "h",
            "x": (x0 + x1) / 2,
            "xanchor": "center",
            "len": 0.9 * column / geo.plot_w,
            "y": 1 + 4 / geo.plot_h,
            "yanchor": "bottom",
            "yref": "paper",
            "thickness": 8,
            "outlinewidth": 0,
            "ticklabelposition": "outside top",
            "tickmode": "array",
            "tickvals": ticks,
            "ticktext": [format_value(t) for t in ticks],
            "tickfont": {"size": max(9, theme.font_size - 3), "color": MUTED_TEXT},
        },
    }


def _coords(panel: Panel) -> tuple[np.ndarray, np.ndarray]:
    (h, w), (oy, ox) = panel.shape, panel.origin
    return np.arange(w) + ox, np.arange(h) + oy


def role_overlay(
    panel: Panel, role: str, color: str, text_color: str, i: int, geo: GridLayout, show: bool
) -> dict:
    """Cells of one role ("pad", "dilation") in a flat colour with their numbers.

    Padding wins over dilation where both apply. The trace is named "<panel.key>:<role>".
    """
    pad = panel.mask("pad_mask")
    mask = pad if role == "pad" else panel.mask("dilation_mask") & ~pad
    x, y = _coords(panel)
    values = np.asarray(panel.values, dtype=float)
    z = np.where(mask, values, np.nan)
    text = np.where(mask, format_values(values), "") if show else None
    return heatmap(
        z,
        i,
        x,
        y,
        geo,
        text=text,
        colorscale=flat_colorscale(color),
        font_color=text_color,
        name=f"{panel.key}:{role}",
    )


def tap_overlay(panel: Panel, i: int, geo: GridLayout, show: bool) -> dict:
    """Cells carrying a kernel tap, filled with that tap's colour, numbers in white."""
    x, y = _coords(panel)
    taps = np.asarray(panel.taps)
    n = int(taps.max()) + 1
    z = np.where(taps >= 0, taps, np.nan).astype(float)
    text = np.where(taps >= 0, format_values(panel.values), "") if show else None
    return heatmap(
        z,
        i,
        x,
        y,
        geo,
        text=text,
        colorscale=tap_colorscale(n),
        zmin=-0.5,
        zmax=n - 0.5,
        name=f"{panel.key}:taps",
    )


def click_overlay(panel: Panel, i: int, geo: GridLayout) -> dict | None:
    """Invisible square markers at every cell centre: what a click on the chart selects."""
    (h, w), (oy, ox) = panel.shape, panel.origin
    if max(h, w) > MAX_CLICK_CELLS:
        return None
    rr, cc = np.divmod(np.arange(h * w), w)
    values = format_values(panel.values).ravel()
    hover = [f"{panel.key}[{r + oy}, {c + ox}] = {v}" for r, c, v in zip(rr, cc, values)]
    xa, ya = axis_ids(i)
    return {
        "type": "scatter",
        "mode": "markers",
        "name": f"{panel.key}:click",
        "x": cc + ox,
        "y": rr + oy,
        "xaxis": xa,
        "yaxis": ya,
        "customdata": [[panel.key, int(r), int(c)] for r, c in zip(rr, cc)],
        "hovertext": hover,
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {
            "symbol": "square",
            "size": max(geo.cell_of(i) - geo.gap_of(i), 4),
            "color": "rgba(0,0,0,0)",  # invisible but hoverable and selectable
            "line": {"width": 0},
        },
        "selected": {"marker": {"opacity": 0}},
        "unselected": {"marker": {"opacity": 0}},
        "showlegend": False,
    }


def panel_traces(
    panel: Panel, i: int, theme: Theme, geo: GridLayout, *, taps: bool = True
) -> list[dict]:
    """The value heatmap and the role overlays (padding, dilation zeros, taps) of panel i."""
    show = shows_text(panel, theme, geo, i)
    values = np.asarray(panel.values, dtype=float)
    pad, dil = panel.mask("pad_mask"), panel.mask("dilation_mask")
    has_taps = taps and panel.taps is not None and (np.asarray(panel.taps) >= 0).any()
    covered = pad | dil | (np.asarray(panel.taps) >= 0 if has_taps else False)
    x, y = _coords(panel)
    text = np.where(covered, "", format_values(values)) if show else None
    base = heatmap(values, i, x, y, geo, text=text, zmid=0, name=f"{panel.key}:values")
    if max(panel.shape) > MAX_CLICK_CELLS:  # no click overlay: let the heatmap answer hovers
        base["hoverinfo"] = None
        base["hovertemplate"] = f"{panel.key}[%{{y}}, %{{x}}] = %{{z:.4g}}<extra></extra>"
    if not show:
        base.update(value_scale(values, i, theme, geo))
    traces = [base]
    if (dil & ~pad).any():
        traces.append(role_overlay(panel, "dilation", DILATION_COLOR, DILATION_TEXT, i, geo, show))
    if pad.any():
        traces.append(role_overlay(panel, "pad", PAD_COLOR, PAD_TEXT, i, geo, show))
    if has_taps:
        traces.append(tap_overlay(panel, i, geo, show))
    return traces


# --- shapes --------------------------------------------------------------------------------------


def _num(v: float) -> str:
    return f"{v:g}"


def outline_path(mask: np.ndarray, origin: tuple[int, int]) -> str:
    """SVG path of the boundary of the True region (edges between True and False cells)."""
    oy, ox = origin
    m = np.pad(np.asarray(mask, dtype=bool), 1)
    above = m[1:, 1:-1] != m[:-1, 1:-1]  # (h+1, w): the edge above row r differs
    left = m[1:-1, 1:] != m[1:-1, :-1]  # (h, w+1): the edge left of column c differs
    parts = [
        f"M{_num(c + ox - 0.5)},{_num(r + oy - 0.5)}H{_num(c + ox + 0.5)}"
        for r, c in zip(*np.nonzero(above))
    ]
    parts += [
        f"M{_num(c + ox - 0.5)},{_num(r + oy - 0.5)}V{_num(r + oy + 0.5)}"
        for r, c in zip(*np.nonzero(left))
    ]
    return "".join(parts)


def fill_path(mask: np.ndarray, origin: tuple[int, int]) -> str:
    """SVG path filling the True region, one rectangle per run of True cells in a row."""
    oy, ox = origin
    m = np.asarray(mask, dtype=bool)
    parts = []
    for r in np.nonzero(m.any(axis=1))[0]:
        edges = np.diff(np.concatenate([[0], m[r].astype(np.int8), [0]]))
        starts, stops = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
        y0, y1 = r + oy - 0.5, r + oy + 0.5
        for a, b in zip(starts, stops):
            x0, x1 = a + ox - 0.5, b + ox - 0.5
            parts.append(f"M{_num(x0)},{_num(y0)}H{_num(x1)}V{_num(y1)}H{_num(x0)}Z")
    return "".join(parts)


def cross_path(mask: np.ndarray, origin: tuple[int, int], inset: float = 0.1) -> str:
    """SVG path of an X over every True cell, open in the middle so the number stays legible."""
    oy, ox = origin
    parts = []
    a, b = 0.5 - inset, 0.24  # from the corner (inset) to just short of the number
    for r, c in zip(*np.nonzero(mask)):
        x, y = c + ox, r + oy
        for sx, sy in ((-1, -1), (1, 1), (-1, 1), (1, -1)):
            parts.append(
                f"M{_num(x + sx * a)},{_num(y + sy * a)}L{_num(x + sx * b)},{_num(y + sy * b)}"
            )
    return "".join(parts)


def _path_shape(i: int, path: str, name: str, **style) -> dict:
    xa, ya = axis_ids(i)
    return {
        "type": "path",
        "path": path,
        "xref": xa,
        "yref": ya,
        "name": name,
        "layer": "above",
        **style,
    }


def panel_shapes(panel: Panel, i: int, theme: Theme, geo: GridLayout) -> list[dict]:
    """Remainder band, dropped crosses, highlight and selection outlines of panel i.

    Region outlines are one path each; per-cell marks (the crosses) only on small grids.
    """
    shapes = []
    o = panel.origin
    lw = max(1.5, geo.cell_of(i) / 16)
    rem = panel.mask("remainder_mask")
    if rem.any():
        shapes.append(
            _path_shape(
                i, fill_path(rem, o), "remainder", fillcolor=_REMAINDER_WASH, line={"width": 0}
            )
        )
        shapes.append(
            _path_shape(
                i,
                outline_path(rem, o),
                "remainder",
                line={"color": REMAINDER_COLOR, "width": lw, "dash": "dash"},
            )
        )
    dropped = panel.mask("dropped_mask")
    if dropped.any() and shows_text(panel, theme, geo, i):
        shapes.append(
            _path_shape(
                i, cross_path(dropped, o), "dropped", line={"color": DROPPED_COLOR, "width": lw}
            )
        )
    high = panel.mask("highlight")
    if high.any():
        shapes.append(
            _path_shape(
                i,
                outline_path(high, o),
                "highlight",
                line={"color": HIGHLIGHT_COLOR, "width": 1.8 * lw},
            )
        )
    if panel.selected is not None:
        sel = np.zeros(panel.shape, dtype=bool)
        sel[tuple(panel.selected)] = True
        shapes.append(
            _path_shape(
                i, fill_path(sel, o), "selected", line={"color": SELECTED_COLOR, "width": 2.4 * lw}
            )
        )
    return shapes


def legend_note(panels: Sequence[Panel], theme: Theme) -> str:
    """One line naming the cell roles present, each in its colour."""

    def swatch(color: str, glyph: str = "■") -> str:
        return f"<span style='color:{color}'>{glyph}</span>"

    items = []
    if any(p.mask("pad_mask").any() for p in panels):
        items.append(f"{swatch(PAD_COLOR)} padding")
    if any(p.mask("dilation_mask").any() for p in panels):
        items.append(f"{swatch(DILATION_COLOR)} zero inserted by dilation")
    if any(p.mask("remainder_mask").any() for p in panels):
        items.append(f"{swatch(REMAINDER_COLOR, '┅')} remainder: no window reaches it")
    if any(p.mask("dropped_mask").any() for p in panels):
        items.append(f"{swatch(DROPPED_COLOR, '✕')} dropped by the mask")
    if any(p.mask("highlight").any() for p in panels):
        items.append(f"{swatch(HIGHLIGHT_COLOR, '□')} linked to the selection")
    if any(p.selected is not None for p in panels):
        items.append(f"{swatch(SELECTED_COLOR, '□')} selected")
    return "    ".join(items)


# --- the figure ----------------------------------------------------------------------------------


def base_layout(geo: GridLayout, theme: Theme, title: str | None) -> dict:
    layout = {
        "width": geo.width,
        "height": geo.height,
        "margin": {**geo.margin, "autoexpand": False},
        "paper_bgcolor": BACKGROUND,
        "plot_bgcolor": BACKGROUND,
        "font": {"family": FONT_FAMILY, "size": theme.font_size, "color": TEXT_COLOR},
        "showlegend": False,
        "hovermode": "closest",
        "annotations": [],
        "shapes": [],
    }
    if title:
        layout["title"] = {
            "text": f"<b>{title}</b>",
            "x": 0.0,
            "xref": "paper",
            "xanchor": "left",
            "y": 1 - 8 / geo.height,
            "yanchor": "top",
            "font": {"size": theme.title_font_size + 2},
        }
    return layout


def add_panels(layout: dict, panels: Sequence[Panel], theme: Theme, geo: GridLayout) -> None:
    """Axes, headers and shapes of every panel, into layout (in place)."""
    for i, p in enumerate(panels):
        layout.update(panel_axes(i, p, theme, geo))
        layout["annotations"].append(panel_header(i, p, theme, geo))
        layout["shapes"].extend(panel_shapes(p, i, theme, geo))


def add_legend(layout: dict, panels: Sequence[Panel], theme: Theme, geo: GridLayout, y_px: float):
    note = legend_note(panels, theme)
    if note:
        layout["annotations"].append(
            {
                "text": note,
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": geo.px_to_paper_y(y_px),
                "xanchor": "left",
                "yanchor": "top",
                "showarrow": False,
                "font": {"size": theme.font_size - 1, "color": MUTED_TEXT},
            }
        )


def ticks_px(theme: Theme) -> int:
    return theme.font_size + 10


def panels_figure(
    panels: list[Panel], theme: Theme = THEME, *, title: str | None = None
) -> go.Figure:
    """Panels side by side: numbers on a diverging scale, roles styled, every cell clickable.

    A click returns customdata [panel.key, row, col] (array indices): ui.controls.clicked_cell.
    """
    title_px = theme.title_font_size + 18 if title else 6
    legend_px = theme.font_size + 12 if legend_note(panels, theme) else 0
    geo = grid_layout(panels, theme, top=title_px, bottom=ticks_px(theme) + legend_px + 6)
    layout = base_layout(geo, theme, title)
    add_panels(layout, panels, theme, geo)
    add_legend(layout, panels, theme, geo, ticks_px(theme))
    data = [t for i, p in enumerate(panels) for t in panel_traces(p, i, theme, geo)]
    data += [c for i, p in enumerate(panels) if (c := click_overlay(p, i, geo)) is not None]
    return go.Figure(data=data, layout=layout)

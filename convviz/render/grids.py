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
    """Pixel geometry of panels in one row: square cells, grids top-aligned."""

    cell: int  # px edge of a cell
    gap: int  # px of white line between cells
    cell_font: int
    x_domains: tuple[tuple[float, float], ...]  # paper fractions of each grid
    y_domains: tuple[tuple[float, float], ...]
    plot_w: int  # px of the plot area (margins excluded)
    plot_h: int
    margin: dict  # l, r, t, b in px (t includes the panel headers)
    columns: tuple[int, ...] = ()  # px width of each panel's column (its grid or its title)

    @property
    def width(self) -> int:
        return self.plot_w + self.margin["l"] + self.margin["r"]

    @property
    def height(self) -> int:
        return self.plot_h + self.margin["t"] + self.margin["b"]

    def px_to_paper_y(self, px: float) -> float:
        """A distance in px below the plot area as a (negative) paper y."""
        return -px / self.plot_h


def _title_px(panel: Panel, theme: Theme) -> int:
    """Rough px width of a panel's bold title: a narrow grid's column is at least this wide."""
    return int(0.6 * theme.title_font_size * len(panel.title))


def _subtitle_lines(panel: Panel, theme: Theme, column_px: float, hidden: bool) -> list[str]:
    """A panel's subtitle (and the hidden-numbers note) wrapped to its column."""
    sub = f"{panel.subtitle} {HIDDEN_NOTE}".strip() if hidden else panel.subtitle
    chars = max(8, int(column_px / (0.52 * (theme.font_size - 1))))
    most = None if theme.show_secondary else 1  # a projector keeps the grids big instead
    return textwrap.wrap(sub, chars, max_lines=most, placeholder=" …") if sub else []


def _header_h(lines: int, theme: Theme) -> int:
    """Vertical room of a panel header: the title and `lines` subtitle lines.

    plotly spaces the lines of an annotation by its own font (the title's), whatever their span.
    """
    return round((1 + lines) * 1.3 * theme.title_font_size) + 6


def grid_layout(
    panels: Sequence[Panel],
    theme: Theme,
    *,
    top: int,
    bottom: int,
    min_plot_h: int = 0,
) -> GridLayout:
    """The biggest square cells (up to theme.cell_px) with which the panels fit theme's box.

    Each column is as wide as its grid or its title; subtitles wrap to their column. The box
    is theme.figure_w wide and theme.figure_h tall (top and bottom margins included); cells
    shrink below theme.min_cell_px only to fit the width.
    """
    widths = [p.shape[1] for p in panels]
    heights = [p.shape[0] for p in panels]
    titles = [_title_px(p, theme) for p in panels]
    fixed = len(panels) * _Y_LABELS_PX + (len(panels) - 1) * _PANEL_GAP_PX + 16
    floor = theme.min_cell_px if max(heights) <= SMALL_GRID else min(16, theme.min_cell_px)
    fit = None
    for cell in range(max(theme.cell_px, 1), 0, -1):  # a few dozen sizes, largest first
        columns = [max(w * cell, t) for w, t in zip(widths, titles)]
        if sum(columns) + fixed > theme.figure_w:
            continue
        hidden = [max(p.shape) > theme.max_text_cells or cell < 16 for p in panels]
        lines = max(
            len(_subtitle_lines(p, theme, c, h)) for p, c, h in zip(panels, columns, hidden)
        )
        header = _header_h(lines, theme)
        fit = cell, columns, lines, header
        if top + header + max(heights) * cell + bottom <= theme.figure_h:
            break
        if cell <= floor:
            break
    cell, columns, lines, header = fit or (
        4,
        [max(w * 4, t) for w, t in zip(widths, titles)],
        1,
        _header_h(1, theme),
    )
    gap = 2 if cell >= 20 else (1 if cell >= 8 else 0)
    plot_w = sum(columns) + len(panels) * _Y_LABELS_PX + (len(panels) - 1) * _PANEL_GAP_PX
    plot_h = max(max(heights) * cell, min_plot_h)
    x_domains, y_domains, left = [], [], 0
    for col, w, h in zip(columns, widths, heights):
        left += _Y_LABELS_PX
        x0 = left + (col - w * cell) / 2  # the grid centred in its column
        x_domains.append((x0 / plot_w, (x0 + w * cell) / plot_w))
        y_domains.append((1 - h * cell / plot_h, 1.0))
        left += col + _PANEL_GAP_PX
    margin = {"l": 8, "r": 8, "t": top + header, "b": bottom}
    return GridLayout(
        cell,
        gap,
        theme.cell_font(cell),
        tuple(x_domains),
        tuple(y_domains),
        plot_w,
        plot_h,
        margin,
        tuple(columns),
    )


def shows_text(panel: Panel, theme: Theme, geo: GridLayout) -> bool:
    """Per-cell numbers only on grids up to theme.max_text_cells per side, in legible cells."""
    return max(panel.shape) <= theme.max_text_cells and geo.cell >= 16


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
            "tickvals": _ticks(w, ox, geo.cell),
            "anchor": ya,
        },
        f"yaxis{suffix}": {
            **common,
            "domain": list(geo.y_domains[i]),
            "range": [oy + h - 0.5, oy - 0.5],  # reversed: row 0 at the top
            "autorange": False,
            "tickmode": "array",
            "tickvals": _ticks(h, oy, geo.cell),
            "anchor": xa,
            "scaleanchor": xa,  # square cells even if the page stretches the figure
            "scaleratio": 1,
            "constrain": "domain",
        },
    }


def panel_header(i: int, panel: Panel, theme: Theme, geo: GridLayout) -> dict:
    """The title (bold) and subtitle above panel i, as one annotation."""
    xa, ya = axis_ids(i)
    column = geo.columns[i] if geo.columns else panel.shape[1] * geo.cell
    lines = _subtitle_lines(panel, theme, column, not shows_text(panel, theme, geo))
    text = f"<b>{panel.title}</b>"
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
        "yshift": 4,
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
        "xgap": geo.gap,
        "ygap": geo.gap,
        "hoverinfo": "skip",
    }
    if text is not None:
        trace["text"] = text
        trace["texttemplate"] = "%{text}"
        trace["textfont"] = {"size": geo.cell_font, "family": FONT_FAMILY}
        if font_color:
            trace["textfont"]["color"] = font_color
    trace.update(extra)
    return trace


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
            "size": max(geo.cell - geo.gap, 4),
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
    show = shows_text(panel, theme, geo)
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
    lw = max(1.5, geo.cell / 16)
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
    if dropped.any() and shows_text(panel, theme, geo):
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

"""Plotly grids as one figure: each panel's axes and header, the legend, `panels_figure`.

Every panel lives on its own pair of axes whose coordinates are the panel's labelled indices
(array index + `panel.origin`), so a padded input's first row sits at y = -1. Cells are square;
their sizes and the headers come from `convviz.render.geometry`, the outlines over the grids from
`convviz.render.plotly.shapes`, the traces in them (values, roles, taps, click targets) from
`convviz.render.plotly.grids`. The layout here is shared with the animations
(`convviz.render.plotly.sweeps`) and motions (`convviz.render.motion.frames`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from convviz.render.geometry import (
    GridLayout,
    axis_ids,
    grid_layout,
    shows_text,
    subtitle_lines,
    tick_values,
    ticks_px,
    title_lines,
)
from convviz.render.panel import Panel
from convviz.render.plotly.adapter import Figure, figure
from convviz.render.plotly.grids import click_overlay, panel_traces, scale_line
from convviz.render.plotly.shapes import legend_items, panel_shapes
from convviz.render.selection import told_apart
from convviz.render.theme import BACKGROUND, FONT_FAMILY, MUTED_TEXT, TEXT_COLOR, THEME, Theme

# --- each panel's axes and header ----------------------------------------------------------------


def panel_axes(i: int, panel: Panel, theme: Theme, geo: GridLayout) -> dict:
    """Layout entries of panel i's axes: exact ranges, row 0 on top, indices as tick labels."""
    (h, w), (oy, ox) = panel.shape, panel.origin
    (y0, ny), (x0, nx) = panel.labelled(0), panel.labelled(1)
    xa, ya = axis_ids(i)
    font = max(9, theme.font_size - 3)

    def room(origin: int, n: int, across: bool) -> float:
        """px a label needs: across, its widest number and a gap; down, its line's height."""
        if not across:
            return 1.3 * font
        widest = max(len(str(origin)), len(str(origin + n - 1)))  # '−2', '10', '−12'
        return max(18, 0.62 * font * widest + 8)

    common = {
        "showgrid": False,
        "zeroline": False,
        "showline": False,
        "ticks": "",
        "ticklabelstandoff": 4,  # clear of a selected cell's halo on the grid's edge
        "fixedrange": True,
        "tickfont": {"size": font, "color": MUTED_TEXT},
    }
    suffix = xa[1:]
    return {
        f"xaxis{suffix}": {
            **common,
            "domain": list(geo.x_domains[i]),
            "range": [ox - 0.5, ox + w - 0.5],
            "tickmode": "array",
            "tickvals": tick_values(nx, ox + x0, geo.cell_of(i), room(ox + x0, nx, True)),
            "anchor": ya,
        },
        f"yaxis{suffix}": {
            **common,
            "domain": list(geo.y_domains[i]),
            "range": [oy + h - 0.5, oy - 0.5],  # reversed: row 0 at the top
            "autorange": False,
            "tickmode": "array",
            "tickvals": tick_values(ny, oy + y0, geo.cell_of(i), room(oy + y0, ny, False)),
            "anchor": xa,
            "scaleanchor": xa,  # square cells even if the page stretches the figure
            "scaleratio": 1,
            "constrain": "domain",
        },
    }


def panel_header(
    i: int, panel: Panel, theme: Theme, geo: GridLayout, coloured: np.ndarray | None = None
) -> dict:
    """The title (bold) and subtitle above panel i, as one annotation: the titles of a row stand
    at one height (the top of the headers' room), a longer subtitle reaching lower.

    coloured : the numbers whose colours the grid shows, when not the panel's values (a motion
        draws its cells over a blank panel).
    """
    xa, ya = axis_ids(i)
    column = geo.columns[i] if geo.columns else panel.shape[1] * geo.cell_of(i)
    hidden = not shows_text(panel, theme, geo, i)
    lines = subtitle_lines(panel, theme, column, hidden)
    text = "<br>".join(f"<b>{line}</b>" for line in title_lines(panel, theme, column))
    if hidden:  # colours without numbers: what the colours mean, one line
        values = panel.values if coloured is None else coloured
        lines = [*lines, scale_line(np.asarray(values, dtype=float))]
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
        "yanchor": "top",
        "yshift": geo.header - 2,
        "showarrow": False,
        "font": {"size": theme.title_font_size, "color": TEXT_COLOR},
    }


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


Legend = list[tuple[str, str, str]]  # (glyph, colour, words) of each mark a figure draws


def _legend_char_px(theme: Theme) -> float:
    return 0.5 * (theme.font_size - 1)  # a legend character, a little wide (measured: ~0.42)


def _legend_lines(items: Legend, theme: Theme, width: float) -> list[str]:
    """The items, each in its colour, wrapped to lines that fit `width` px."""
    lines, chars, most = [], 0, int(width / _legend_char_px(theme))
    for glyph, col, words in items:
        item = f"<span style='color:{col}'>{glyph}</span> {words}"
        if lines and chars + len(words) + 6 <= most:
            lines[-1] += "    " + item
            chars += len(words) + 6
        else:
            lines.append(item)
            chars = len(words) + 2
    return lines


def _legend_px(lines: list[str], theme: Theme) -> int:
    return (theme.font_size + 4) * len(lines) + 8


def _legend(lines: list[str], theme: Theme, geo: GridLayout, x: float = 0, below: int = 0) -> dict:
    """The legend at paper x, under the index labels of a grid whose foot is `below` px above
    the plot area's (0: under every grid)."""
    return {
        "text": "<br>".join(lines), "xref": "paper", "yref": "paper", "x": x,
        "y": geo.px_to_paper_y(ticks_px(theme) - below), "xanchor": "left", "yanchor": "top",
        "align": "left", "showarrow": False,
        "font": {"size": theme.font_size - 1, "color": MUTED_TEXT},
    }  # fmt: skip


def _legend_beside(items: Legend, panels, theme: Theme, geo: GridLayout) -> dict | None:
    """The legend in the room under a short grid (the kernel beside a 9×9 input), when it fits
    there: the grids then take the height a legend under them all would have taken."""
    # px from each grid's foot down to the plot area's, the largest first
    belows = sorted(((geo.plot_h - p.shape[0] * geo.cell_of(i), i) for i, p in enumerate(panels)))
    widest = max(len(words) + 2 for _, _, words in items) * _legend_char_px(theme)
    for below, i in reversed(belows):
        column = geo.columns[i] if geo.columns else panels[i].shape[1] * geo.cell_of(i)
        lines = _legend_lines(items, theme, column)
        if widest <= column and _legend_px(lines, theme) <= below - ticks_px(theme):
            x0, x1 = (v * geo.plot_w for v in geo.x_domains[i])
            left = (x0 + x1) / 2 - column / 2  # the column's left edge (the grid is centred)
            return _legend(lines, theme, geo, left / geo.plot_w, below)
    return None


def layout_with_legend(
    panels: Sequence[Panel], items: Legend, theme: Theme, top: int
) -> tuple[GridLayout, dict | None]:
    """The panels' geometry (`grid_layout`) and the legend of `items` (None without items).

    The legend goes in the room under a short grid when it fits there; else beside the grids
    when the figure may widen by it; else under every grid, wrapped to the figure's width, and
    the grids leave it that height.
    """
    geo = grid_layout(panels, theme, top=top, bottom=ticks_px(theme) + 6)
    if not items:
        return geo, None
    legend = None if geo.stacked else _legend_beside(items, panels, theme, geo)
    if legend is not None:
        return geo, legend
    lines = _legend_lines(items, theme, 0)  # one item a line
    right = 16 + int(max(len(words) + 2 for _, _, words in items) * _legend_char_px(theme))
    fits = geo.width + right <= theme.figure_w and _legend_px(lines, theme) <= geo.plot_h
    if fits and not geo.stacked:
        # beside the grids, at their foot: the figure widens, the grids keep their height
        geo = replace(geo, margin={**geo.margin, "r": geo.margin["r"] + right})
        return geo, {**_legend(lines, theme, geo, 1 + 16 / geo.plot_w), "y": 0, "yanchor": "bottom"}
    lines = _legend_lines(items, theme, theme.figure_w)
    for _ in range(2):  # the figure's width depends on the legend's lines, and they on it
        bottom = ticks_px(theme) + _legend_px(lines, theme) + 6
        geo = grid_layout(panels, theme, top=top, bottom=bottom)
        lines = _legend_lines(items, theme, geo.width - 16)
    return geo, _legend(lines, theme, geo)


def panels_layout(
    panels: Sequence[Panel], theme: Theme, title: str | None = None, **words: str
) -> tuple[list[Panel], GridLayout, dict | None]:
    """The panels as panels_figure draws them (no tap colours where there are too many to tell
    apart), their geometry and their legend (`words`: `shapes.legend_items`' own)."""
    panels = told_apart(panels, theme.max_text_cells)
    title_px = theme.title_font_size + 18 if title else 6
    words = {mark: said for mark, said in words.items() if said}  # None: the legend's own words
    geo, legend = layout_with_legend(panels, legend_items(panels, **words), theme, title_px)
    return panels, geo, legend


def panels_figure(
    panels: list[Panel], theme: Theme = THEME, *, title: str | None = None, **words: str
) -> Figure:
    """Panels side by side: numbers on a diverging scale, roles styled, every cell clickable.

    A click returns customdata [panel.key, row, col] (array indices): ui.controls.clicked_cell.
    words : what the legend calls a mark, e.g. highlight="the cells that matter".
    """
    panels, geo, legend = panels_layout(panels, theme, title, **words)
    layout = base_layout(geo, theme, title)
    add_panels(layout, panels, theme, geo)
    layout["annotations"] += [legend] if legend else []
    data = [t for i, p in enumerate(panels) for t in panel_traces(p, i, theme, geo)]
    data += [c for i, p in enumerate(panels) if (c := click_overlay(p, i, geo)) is not None]
    return figure(data, layout)

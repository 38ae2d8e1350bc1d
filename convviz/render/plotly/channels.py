"""Grids of small heatmaps for the multi-channel view: grad_w as C_out × C_in, sums over k."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from plotly.colors import sample_colorscale

from convviz.render import theme as th
from convviz.render.geometry import scale_ticks
from convviz.render.plotly.adapter import Figure, figure
from convviz.render.plotly.grids import compact, format_value, format_values
from convviz.render.plotly.shapes import REMAINDER_WASH, fill_path

GAP_PX = 18  # between heatmaps
# a laptop's window less its figure's box (`Theme.fitted`: 300 px of chrome) gives back all but
# a header's worth: a grid of rows is drawn at most the window's height less ~120 px
SCREEN_PX = 180
MIN_FONT_PX = 9  # numbers in a tile's cells, no smaller
MIN_CELL_PX = 0.1  # a 128-wide tile is 13 px at the least
LABEL_PX = 26  # room for a column title above / a row title to the right (at a 16 px rem)
OUTLINE_PX = 7  # room beyond a tile for its outline: 4 px off, its 3 px line centred there
RIGHT_PX = 130  # right of the grid: the row labels, then the colour scale (at a 16 px rem)
CLICK_CELLS = 16  # per tile side at most, a click target per cell (which shows the cell's value)
CLICK_BLOCKS = 8  # per side of a bigger tile: a target spans a block of cells (a lighter figure)


@dataclass(frozen=True)
class _Tiles:
    """Pixel geometry of a rows × cols grid of h × w heatmaps."""

    rows: int
    cols: int
    h: int
    w: int
    cell: float  # px edge of a cell
    width: float  # px of all tiles and gaps
    height: float
    label: float = LABEL_PX  # px above the first row for the column titles

    @property
    def pw(self) -> float:
        return self.w * self.cell

    @property
    def ph(self) -> float:
        return self.h * self.cell

    def origin(self, r: int, c: int) -> tuple[float, float]:
        """Paper (x, y) of the top-left corner of tile (r, c); column titles above row 0."""
        x0 = c * (self.pw + GAP_PX) / self.width
        y0 = 1 - (self.label + r * (self.ph + GAP_PX)) / self.height
        return x0, y0


def _tiles(arrays: np.ndarray, theme: th.Theme, title: str) -> _Tiles:
    """Cells as wide as the column allows, up to ¾ of a numbered cell; on a projector (a theme
    that never scrolls) as big as the screen's box allows, numbers growing with them."""
    R, C, h, w = arrays.shape
    label = LABEL_PX * theme.scale
    widest = theme.figure_w - RIGHT_PX * theme.scale
    fits = (widest - GAP_PX * (C - 1)) / (C * w)
    # a cell may be under a pixel (16 tiles of 128 × 128): the tiles stay square and fit the
    # width; a whole-pixel floor made them wider than the figure, squeezed into slivers
    if theme.min_cell_px > 1:  # a laptop: the page scrolls past several grids …
        cell = max(MIN_CELL_PX, min(0.75 * theme.cell_px_for_font, fits))
        # … but a grid of rows too small to number fits the window, to be seen whole (∂L/∂w of
        # 10 × 5 tiles; its numbers are in the close-up of a tile); one that shows numbers keeps
        # them, and scrolls
        if R > 1 and _font(arrays, cell, theme) is None:
            room = theme.figure_h + SCREEN_PX * theme.scale - _top(title) - 20 - label
            cell = max(MIN_CELL_PX, min(cell, (room - GAP_PX * (R - 1)) / (R * h)))
    else:
        tall = (theme.figure_h - _top(title) - 20 - label - GAP_PX * (R - 1)) / (R * h)
        cell = max(MIN_CELL_PX, min(theme.cell_px, fits, tall))
    ph = h * cell
    width = C * w * cell + GAP_PX * (C - 1)
    return _Tiles(R, C, h, w, cell, width, label + R * ph + GAP_PX * (R - 1), label)


def oriented(grid, theme: th.Theme):
    """The grid (a `stories.Grid`) turned the way its tiles come out biggest: a projector puts its
    longer side across; a laptop takes whichever way fits its width and its window better."""
    if not theme.show_secondary:
        return grid.across()
    across = grid.across()
    if across is grid:
        return grid
    cell = _tiles(grid.arrays, theme, grid.title).cell
    return across if _tiles(across.arrays, theme, grid.title).cell > cell else grid


def _axes(g: _Tiles, r: int, c: int) -> dict:
    i = r * g.cols + c + 1
    ax = "" if i == 1 else str(i)
    x0, y0 = g.origin(r, c)
    return {
        f"xaxis{ax}": {
            "domain": [max(0.0, x0), min(1.0, x0 + g.pw / g.width)],  # rounding stays in [0, 1]
            "visible": False,
            "anchor": f"y{ax}",
            "range": [-0.5, g.w - 0.5],
        },
        f"yaxis{ax}": {
            "domain": [max(0.0, y0 - g.ph / g.height), min(1.0, y0)],
            "visible": False,
            "anchor": f"x{ax}",
            "range": [g.h - 0.5, -0.5],
        },
    }


def value_colours(lo: float, hi: float) -> dict:
    """zmin, zmax and colour scale of tiles whose values span [lo, hi]: each value keeps its
    colour on the symmetric scale (±max |value|, 0 white), and the scale holds only the colours
    drawn, so that its colour bar has no blue half beside an all-positive grid."""
    lim = max(abs(lo), abs(hi))
    if lo == hi:
        return {"zmin": -(lim or 1.0), "zmax": lim or 1.0, "colorscale": th.VALUE_SCALE}
    values = [lo, *([0.0] if lo < 0 < hi else []), hi]
    colours = sample_colorscale(th.VALUE_SCALE, [(v + lim) / (2 * lim) for v in values])
    stops = [[(v - lo) / (hi - lo), colour] for v, colour in zip(values, colours)]
    return {"zmin": lo, "zmax": hi, "colorscale": stops}


def _tile(z, r, c, g: _Tiles, colours: dict, name: str, text, font: int) -> dict:
    i = r * g.cols + c + 1
    ax = "" if i == 1 else str(i)
    gap = 1 if g.cell >= 8 else 0
    return {
        "type": "heatmap",
        "z": compact(z),
        "xaxis": f"x{ax}",
        "yaxis": f"y{ax}",
        **colours,
        "showscale": False,
        "xgap": gap,
        "ygap": gap,
        "text": text,
        "texttemplate": "%{text}" if text is not None else None,
        "textfont": {"size": font, "color": th.VALUE_INK},  # every value colour takes it
        "hovertemplate": f"{name}<br>[%{{y}}, %{{x}}] = %{{z:.4g}}<extra></extra>",
    }


def _click_targets(g: _Tiles, r: int, c: int, key: str, name: str, z: np.ndarray) -> dict:
    """Invisible squares over tile (r, c): a click anywhere on it selects [key, r, c].

    A tile stands for one choice (a filter, a channel), so every target of a tile carries the
    tile's indices; a target is one cell (it shows that cell's value) or, in a big tile, a block.
    """
    i = r * g.cols + c + 1
    ax = "" if i == 1 else str(i)
    per_cell = max(g.h, g.w) <= CLICK_CELLS
    rows, cols = (g.h, g.w) if per_cell else (min(g.h, CLICK_BLOCKS), min(g.w, CLICK_BLOCKS))
    bh, bw = g.h / rows, g.w / cols  # cells per target
    yy, xx = np.meshgrid(
        (np.arange(rows) + 0.5) * bh - 0.5, (np.arange(cols) + 0.5) * bw - 0.5, indexing="ij"
    )  # (rows, cols) centres in cell coordinates
    click = f"click: show {name}"
    if per_cell:
        values = format_values(z).ravel()
        cells = np.ndindex(g.h, g.w)
        hover = [f"{name}<br>[{y}, {x}] = {v}<br>{click}" for (y, x), v in zip(cells, values)]
    else:
        hover = f"{name}<br>{click}"
    return {
        "type": "scatter",
        "mode": "markers",
        "name": f"{key}:click",
        "x": xx.ravel(),
        "y": yy.ravel(),
        "xaxis": f"x{ax}",
        "yaxis": f"y{ax}",
        "customdata": [[key, r, c]] * (rows * cols),
        "hovertext": hover,
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {
            "symbol": "square",
            "size": max(bh, bw, 1) * g.cell,
            "color": "rgba(0,0,0,0)",  # invisible but hoverable and selectable
            "line": {"width": 0},
        },
        "selected": {"marker": {"opacity": 0}},
        "unselected": {"marker": {"opacity": 0}},
        "showlegend": False,
    }


def _scale(lo: float, hi: float, g: _Tiles) -> dict:
    """The grid's one colour scale, right of the row labels: ticks at its min, 0 and max."""
    ticks = scale_ticks(lo, hi)
    return {
        "showscale": True,
        "colorbar": {
            "x": 1 + 44 / g.width,
            "xanchor": "left",
            "y": 1,
            "yanchor": "top",
            "len": min(1.0, 220 / g.height),
            "thickness": 10,
            "outlinewidth": 0,
            "tickmode": "array",
            "tickvals": ticks,
            "ticktext": [format_value(t) for t in ticks],
        },
    }


def _label(text: str, x: float, y: float, size: int | None, side: str) -> dict:
    """A column label (side 'top', centred above its tile) or a row label ('right')."""
    note = {"text": text, "x": x, "y": y, "xref": "paper", "yref": "paper", "showarrow": False}
    # each clear of a selected tile's outline, which draws beyond the tile (`_outline`)
    if side == "top":  # 'auto' would slide labels near the edges sideways
        note.update(xanchor="center", yanchor="bottom", yshift=OUTLINE_PX, font={"size": size})
    else:
        note.update(xanchor="left", xshift=OUTLINE_PX)
    return note


def _outline(g: _Tiles, r: int, c: int) -> dict:
    """A box around tile (r, c): the (filter, channel) the other views show."""
    x0, y0 = g.origin(r, c)
    pad_x, pad_y = (OUTLINE_PX - 3) / g.width, (OUTLINE_PX - 3) / g.height
    return {
        "type": "rect",
        "xref": "paper",
        "yref": "paper",
        "x0": x0 - pad_x,
        "x1": x0 + g.pw / g.width + pad_x,
        "y0": y0 - g.ph / g.height - pad_y,
        "y1": y0 + pad_y,
        "line": {"color": th.SELECTED_COLOR, "width": 3},
        "name": "selected tile",
    }


def heatmap_grid(
    arrays: np.ndarray,
    row_labels: list[str],
    col_labels: list[str],
    theme: th.Theme = th.THEME,
    *,
    title: str = "",
    selected: tuple[int, int] | None = None,
    click: str | None = None,
    click_cols: int | None = None,
    unread: np.ndarray | None = None,
) -> Figure:
    """A rows × cols grid of small heatmaps; arrays : shape (rows, cols, h, w).

    All share one symmetric colour range so they compare; numbers only where cells are big,
    else a colour scale. `selected` (row, col) outlines one tile.
    click : if given, a click on a tile selects it: its points carry customdata [click, row,
        col] (the tile's indices), after the heatmaps; click_cols : only tiles in the first
        click_cols columns are clickable (default all; e.g. not a column that holds a sum).
    unread : (h, w) bool, the cells of every tile that no window reads (a gradient of 0 there):
        washed in the remainder's colour.
    Axes are laid out by hand (pixel domains): make_subplots costs ~40 ms a figure.
    """
    g = _tiles(arrays, theme, title)
    names = [[f"{row} {col}".strip() for col in col_labels] for row in row_labels]
    data = _heatmaps(arrays, g, names, theme)
    if click is not None:
        _add_click_targets(data, arrays, g, names, click, click_cols or g.cols)
    notes = _labels(g, row_labels, col_labels, theme)
    layout = _layout(g, theme, title, notes, selected)
    if unread is not None and np.any(unread):
        layout["shapes"] += [_unread_wash(g, r, c, unread) for r, c in np.ndindex(g.rows, g.cols)]
    return figure(data, layout)


def _unread_wash(g: _Tiles, r: int, c: int, unread: np.ndarray) -> dict:
    """Tile (r, c)'s cells no window reads, washed as the grids wash them (`shapes`)."""
    i = r * g.cols + c + 1
    ax = "" if i == 1 else str(i)
    return {
        "type": "path",
        "path": fill_path(np.asarray(unread, bool), (0, 0)),
        "xref": f"x{ax}",
        "yref": f"y{ax}",
        "name": "unread",
        "layer": "above",
        "fillcolor": REMAINDER_WASH,
        "line": {"width": 0},
    }


def _font(arrays: np.ndarray, cell: float, theme: th.Theme, labels=None) -> int | None:
    """The px size of the numbers in tiles of `cell` px cells, or None where none fit."""
    labels = format_values(arrays) if labels is None else labels
    longest = max((len(t) for t in labels.ravel()), default=1)
    grown = max(theme.cell_font_size, theme.cell_font(int(cell)))  # with a projector's cells
    # as big as the cell allows, smaller for long numbers ('−1638' in a 32 px cell: 9 px)
    fits = min(grown, int(cell * 0.45), int((cell - 4) / (0.6 * longest)))
    show = fits >= MIN_FONT_PX and cell >= 22 and max(arrays.shape[2:]) <= theme.max_text_cells
    return max(MIN_FONT_PX, fits) if show else None


def _heatmaps(arrays: np.ndarray, g: _Tiles, names: list[list[str]], theme: th.Theme) -> list[dict]:
    """A heatmap per tile on one symmetric colour range: numbers where they fit, else the
    first heatmap carries the grid's colour scale."""
    labels = format_values(arrays)
    lo, hi = float(arrays.min()), float(arrays.max())
    colours = value_colours(lo, hi)
    font = _font(arrays, g.cell, theme, labels)
    show_text = font is not None
    font = font or MIN_FONT_PX
    text = labels if show_text else np.full(arrays.shape[:2], None)
    data = [
        _tile(arrays[r, c], r, c, g, colours, names[r][c], text[r, c], font)
        for r, c in np.ndindex(g.rows, g.cols)
    ]
    if not show_text:
        data[0].update(_scale(lo, hi, g))
    return data


def _add_click_targets(
    data: list[dict], arrays: np.ndarray, g: _Tiles, names: list[list[str]], click: str, cols: int
) -> None:
    """Append click targets over the tiles of the first `cols` columns; where a target is one
    cell it answers hovers with the value, so its heatmap's own hover is skipped."""
    for r, c in np.ndindex(g.rows, g.cols):
        if c < cols:
            data.append(_click_targets(g, r, c, click, names[r][c], arrays[r, c]))
            if max(g.h, g.w) <= CLICK_CELLS:
                data[r * g.cols + c]["hoverinfo"] = "skip"


def _labels(g: _Tiles, row_labels: list[str], col_labels: list[str], theme: th.Theme) -> list[dict]:
    """Column titles above the first row; row titles right of the last column (if rows > 1)."""

    # column titles no wider than their column (plus the gap): they never run into each other;
    # narrow columns say "k=3", not "from k=3", and "Σ", not "Σ = ∂L/∂x"
    def font_for(labels: list[str]) -> int:
        longest = max(map(len, labels), default=1)
        return max(8, min(theme.font_size, int((g.pw + GAP_PX - 4) / (0.6 * longest))))

    short = [label.removeprefix("from ").split(" = ")[0] for label in col_labels]
    if font_for(short) > font_for(col_labels):
        col_labels = short
    label_font = font_for(col_labels)
    notes = []
    for r, c in np.ndindex(g.rows, g.cols):
        x0, y0 = g.origin(r, c)
        if r == 0:
            notes.append(_label(col_labels[c], x0 + g.pw / g.width / 2, y0, label_font, "top"))
        if g.rows > 1 and c == g.cols - 1:
            notes.append(_label(row_labels[r], 1, y0 - g.ph / g.height / 2, None, "right"))
    return notes


def _top(title: str) -> int:
    """px above the tiles: the title's room."""
    return 60 if title else 10


def _layout(
    g: _Tiles, theme: th.Theme, title: str, notes: list[dict], selected: tuple[int, int] | None
) -> dict:
    """The tiles' axes, the title, the labels, the selected tile's outline and the figure size."""
    layout = {}
    for r, c in np.ndindex(g.rows, g.cols):
        layout.update(_axes(g, r, c))
    top = _top(title)
    fig_width = max(g.width + RIGHT_PX * theme.scale, len(title) * theme.title_font_size * 0.55)
    layout.update(
        title={"text": title, "font": {"size": theme.title_font_size}, "x": 0, "xanchor": "left"},
        width=int(fig_width),
        height=int(g.height + top + 20),
        annotations=notes,
        shapes=[_outline(g, *selected)] if selected is not None else [],
        margin={"l": 20, "r": int(fig_width - g.width - 20), "t": top, "b": 20},
        font={"family": th.FONT_FAMILY, "size": theme.font_size},
        plot_bgcolor=th.BACKGROUND,
        paper_bgcolor=th.BACKGROUND,
    )
    return layout

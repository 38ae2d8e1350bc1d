"""Outlines and marks over a plotly grid, as SVG paths in a panel's axis coordinates: the
cells no window reads (the remainder band, the cells between the windows), crossed-out drops,
the highlight and the selection; and the legend line."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from convviz.render.geometry import GridLayout, axis_ids, shows_text
from convviz.render.mask_geometry import mask_outline, mask_rects
from convviz.render.panel import Panel
from convviz.render.theme import (
    DILATION_COLOR,
    DROPPED_COLOR,
    HALO_COLOR,
    HIGHLIGHT_COLOR,
    PAD_COLOR,
    REMAINDER_COLOR,
    SELECTED_COLOR,
    Theme,
)

REMAINDER_WASH = "rgba(178, 58, 72, 0.13)"  # REMAINDER_COLOR, faint, over cells no window reads

# --- shapes --------------------------------------------------------------------------------------


def _num(v: float) -> str:
    return f"{v:g}"


def outline_path(mask: np.ndarray, origin: tuple[int, int]) -> str:
    """SVG path of the boundary of the True region (edges between True and False cells)."""
    oy, ox = origin
    parts = []
    for (x0, y0), (x1, y1) in mask_outline(mask):
        move = f"M{_num(x0 + ox)},{_num(y0 + oy)}"
        parts.append(f"{move}H{_num(x1 + ox)}" if y0 == y1 else f"{move}V{_num(y1 + oy)}")
    return "".join(parts)


def fill_path(mask: np.ndarray, origin: tuple[int, int]) -> str:
    """SVG path filling the True region, one rectangle per rectangle of `mask_rects`."""
    oy, ox = origin
    parts = []
    for r, c, nr, nc in mask_rects(mask):
        x0, y0 = c + ox - 0.5, r + oy - 0.5
        x1, y1 = x0 + nc, y0 + nr
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


def _cell_domain_path(cell: tuple[int, int], shape: tuple[int, int], inset: float = 0.0) -> str:
    """The square of one cell in its panel's axis-domain fractions (0 at the left and bottom),
    `inset` (a fraction of the cell) inside its edges."""
    (r, c), (h, w) = cell, shape
    x0, x1 = (c + inset) / w, (c + 1 - inset) / w
    y0, y1 = 1 - (r + inset) / h, 1 - (r + 1 - inset) / h
    return f"M{_num(x0)},{_num(y0)}H{_num(x1)}V{_num(y1)}H{_num(x0)}Z"


def _path_shape(i: int, path: str, name: str, domain: bool = False, **style) -> dict:
    """A path in panel i's axis coordinates, or with `domain` in its axis-domain fractions:
    plotly clips a shape in axis coordinates to the grid, but not one in domain fractions."""
    xa, ya = axis_ids(i)
    end = " domain" if domain else ""
    return {
        "type": "path",
        "path": path,
        "xref": xa + end,
        "yref": ya + end,
        "name": name,
        "layer": "above",
        **style,
    }


def remainder_shapes(panel: Panel, i: int, geo: GridLayout) -> list[dict]:
    """The cells of panel i no window reads, washed: the remainder band (rows and columns no
    window reaches) outlined dashed, the cells between the windows dash-dotted."""
    o, lw = panel.origin, max(1.5, geo.cell_of(i) / 16)
    wash = {"fillcolor": REMAINDER_WASH, "line": {"width": 0}}
    shapes = []
    for name, mask, dash in (
        ("remainder", panel.mask("remainder_mask"), "dash"),
        ("unread", panel.between(), "dashdot"),
    ):
        if mask.any():
            line = {"line": {"color": REMAINDER_COLOR, "width": lw, "dash": dash}}
            shapes += [
                _path_shape(i, fill_path(mask, o), name, **wash),
                _path_shape(i, outline_path(mask, o), name, **line),
            ]
    return shapes


def panel_shapes(panel: Panel, i: int, theme: Theme, geo: GridLayout) -> list[dict]:
    """Remainder band, dropped crosses, highlight and selection outlines of panel i.

    Region outlines are one path each; per-cell marks (the crosses) only on small grids.
    """
    o = panel.origin
    lw = max(1.5, geo.cell_of(i) / 16)
    shapes = remainder_shapes(panel, i, geo)
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
                "highlight",  # dotted: an animation's current cell is outlined solid, same colour
                line={"color": HIGHLIGHT_COLOR, "width": 1.8 * lw, "dash": "dot"},
            )
        )
    if panel.selected is not None:
        # on a white halo: the red stays visible over any tap colour (the first tap is red too);
        # in domain fractions, so that a cell on the grid's edge keeps its whole box; the red
        # on the cell's edge, its halo as far beyond (clear of the index labels) as within: 80%
        # of the cell stays clear for its number ('195' ran into the red when the frame took
        # half a cell)
        path = _cell_domain_path(tuple(panel.selected), panel.shape, 0.0)
        shapes += [
            _path_shape(
                i, path, "selected halo", domain=True, line={"color": HALO_COLOR, "width": 2.8 * lw}
            ),
            _path_shape(
                i, path, "selected", domain=True, line={"color": SELECTED_COLOR, "width": 2 * lw}
            ),
        ]
    return shapes


def remainder_item(panels: Sequence[Panel]) -> list[tuple[str, str, str]]:
    """The legend's entry for the remainder band, if a panel has one: on x no window reaches
    it; on a gradient, no window read it in the forward pass, so its gradient is 0."""
    marked = [p for p in panels if p.mask("remainder_mask").any()]
    if not marked:
        return []
    on_x = any(p.key == "x" for p in marked)
    words = "no window reaches it" if on_x else "no window read it, gradient 0"
    return [("┅", REMAINDER_COLOR, f"remainder: {words}")]


def unread_items(panels: Sequence[Panel]) -> list[tuple[str, str, str]]:
    """The legend's entries for the cells no window reads: the remainder band, and the cells
    between the windows (a stride wider than the dilated kernel, or a dilation's gaps)."""
    marked = [p for p in panels if p.between().any()]
    if not marked:
        return remainder_item(panels)
    on_x = all(p.key == "x" for p in marked)
    words = "no window reads it" if on_x else "no window reads it, gradient 0"
    return [*remainder_item(panels), ("┄", REMAINDER_COLOR, f"between the windows: {words}")]


def legend_items(
    panels: Sequence[Panel], highlight: str = "linked to the selection"
) -> list[tuple[str, str, str]]:
    """(glyph, colour, words) of each cell role the panels draw; `highlight` says what the
    dotted outline means (the quiz lights the cells that matter to a question)."""

    def marked(*marks):
        return [(g, c, w) for m, g, c, w in marks if any(p.mask(m).any() for p in panels)]

    items = [
        *marked(
            ("pad_mask", "■", PAD_COLOR, "padding"),
            ("dilation_mask", "■", DILATION_COLOR, "zero inserted by dilation"),
        ),
        *unread_items(panels),
        *marked(
            ("dropped_mask", "✕", DROPPED_COLOR, "dropped by the mask"),
            ("highlight", "⬚", HIGHLIGHT_COLOR, highlight),
        ),
    ]
    if any(p.selected is not None for p in panels):
        items.append(("□", SELECTED_COLOR, "selected"))
    return items

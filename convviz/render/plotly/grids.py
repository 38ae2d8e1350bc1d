"""Plotly grids' traces: a Panel's numbers as an annotated heatmap, its cell roles, taps and
click targets, and the numbers and colour scale they write.

Each trace lies on its panel's axes, whose coordinates are the panel's labelled indices (array
index + `panel.origin`); `convviz.render.plotly.grid_figure` lays the axes out and makes the figure.
The traces here are shared with the animations (`convviz.render.plotly.sweeps`) and motions
(`convviz.render.motion.frames`); PLOTLY_CONFIG is every chart's toolbar.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

import numpy as np

from convviz.engine.text import number
from convviz.render.geometry import GridLayout, axis_ids, scale_ticks, shows_text
from convviz.render.panel import Panel
from convviz.render.theme import (
    DILATION_COLOR,
    EXPORT_SCALE,
    FONT_FAMILY,
    INK_DARK,
    PAD_COLOR,
    TAP_CYCLE,
    TAP_LABEL_INSET,
    VALUE_INK,
    VALUE_SCALE,
    Theme,
    tap_colors,
    text_color,
    text_colors,
)

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


# --- numbers -------------------------------------------------------------------------------------


format_value = number  # the one rule (convviz.engine.text), under the renderers' name


_TABLED = 9999  # whole numbers up to this size are written from a table made once
_WHOLE = np.array([format_value(v) for v in range(-_TABLED, _TABLED + 1)], dtype=object)


def format_values(a: np.ndarray) -> np.ndarray:
    """format_value over an array; an object array of str with a's shape. Whole numbers are
    looked up in a table made once (thousands of cells per animation); each other distinct
    value is written once."""
    a = np.asarray(a, dtype=float)
    finite = np.isfinite(a)
    whole = np.where(finite, np.round(a), 0)
    if np.abs(whole).max(initial=0) <= _TABLED and np.all(
        np.abs(np.where(finite, a, 0) - whole) < 1e-9
    ):  # the common case (small integers), one lookup
        s = _WHOLE[np.atleast_1d(whole.astype(np.intp) + _TABLED)].reshape(a.shape)
        s[~finite] = ""
        return s
    values, where = np.unique(a, return_inverse=True)  # NaNs kept apart, written as ""
    return np.array([format_value(v) for v in values], dtype=object)[where].reshape(a.shape)


# --- traces --------------------------------------------------------------------------------------


def flat_colorscale(color: str) -> list[list]:
    return [[0.0, color], [1.0, color]]


def tap_heatmap(taps: np.ndarray, n: int) -> dict:
    """z, colorscale and range that colour cells by kernel tap index (-1 or NaN: no tap) for
    `heatmap`, among n taps; indices past TAP_CYCLE share colours (theme.tap_colors)."""
    n = max(1, min(n, TAP_CYCLE))
    taps = np.asarray(taps, float)
    z = np.where(taps >= 0, np.mod(taps, TAP_CYCLE), np.nan)
    colors = tap_colors(1, n)
    scale = flat_colorscale(colors[0]) if n == 1 else []
    for t, c in enumerate(colors if n > 1 else ()):
        scale += [[t / n, c], [(t + 1) / n, c]]
    return {"z": z, "colorscale": scale, "zmin": -0.5, "zmax": n - 0.5}


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


def _range(values: np.ndarray) -> tuple[float, float, float]:
    """(smallest, largest, reach) of the finite values; the colours run from −reach to reach."""
    finite = values[np.isfinite(values)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    return lo, hi, max(abs(lo), abs(hi)) or 1.0


def value_scale(values: np.ndarray) -> dict:
    """Heatmap entries that pin its colours to −reach … reach, as `scale_line` reads them."""
    _, _, reach = _range(values)
    return {"zmin": -reach, "zmax": reach, "zmid": None}


def scale_color(v: float, reach: float) -> str:
    """The colour VALUE_SCALE gives v on a −reach … reach heatmap, as '#rrggbb'."""
    t = min(max((v + reach) / (2 * reach), 0.0), 1.0)
    stops = [(p, tuple(int(c[i : i + 2], 16) for i in (1, 3, 5))) for p, c in VALUE_SCALE]
    for (p0, c0), (p1, c1) in pairwise(stops):
        if t <= p1:
            f = (t - p0) / (p1 - p0)
            return "#" + "".join(f"{round(a + f * (b - a)):02x}" for a, b in zip(c0, c1))
    return VALUE_SCALE[-1][1]


def scale_line(values: np.ndarray) -> str:
    """A grid's colour scale in one header line: a swatch and the number at its smallest value,
    at 0 (when it is between) and at its largest, e.g. '■ −36 · ■ 0 · ■ 50'."""
    lo, hi, reach = _range(values)
    ticks = scale_ticks(lo, hi)
    return " · ".join(
        f"<span style='color:{scale_color(t, reach)}'>■</span> {format_value(t)}" for t in ticks
    )


def tap_inks(taps: np.ndarray) -> np.ndarray:
    """The ink of each cell's tap colour by the one rule (theme.text_color); "" where no tap."""
    taps = np.asarray(taps)
    n = min(int(taps.max(initial=-1)) + 1, TAP_CYCLE)
    inks = np.array(text_colors(tap_colors(1, max(n, 1))), dtype=object)
    return np.where(taps >= 0, inks[np.mod(np.maximum(taps, 0), TAP_CYCLE)], "")


def inked(text: np.ndarray, inks: np.ndarray, ink: str = INK_DARK) -> np.ndarray:
    """text where each number whose ink is not the trace's own `ink` carries its own: a plotly
    heatmap has one text colour per trace, its text takes a span's colour per cell."""
    other = (inks != ink) & (inks != "") & (text != "")
    if not other.any():
        return text
    out = np.array(text, dtype=object)  # a copy
    out[other] = [f"<span style='color:{c}'>{t}</span>" for c, t in zip(inks[other], out[other])]
    return out


_TAG = re.compile(r"<[^>]*>")


def plain(text) -> np.ndarray:
    """A trace's text without the spans `inked` put around numbers: the numbers as written."""
    return np.vectorize(lambda t: _TAG.sub("", t) if isinstance(t, str) else t, otypes=[object])(
        np.asarray(text, dtype=object)
    )


def _coords(panel: Panel) -> tuple[np.ndarray, np.ndarray]:
    (h, w), (oy, ox) = panel.shape, panel.origin
    return np.arange(w) + ox, np.arange(h) + oy


def role_overlay(panel: Panel, role: str, color: str, i: int, geo: GridLayout, show: bool) -> dict:
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
        font_color=text_color(color),
        name=f"{panel.key}:{role}",
    )


def tap_overlay(panel: Panel, i: int, geo: GridLayout, show: bool) -> dict:
    """Cells carrying a kernel tap, filled with that tap's colour, numbers in its ink."""
    x, y = _coords(panel)
    taps = np.asarray(panel.taps)
    colour = tap_heatmap(taps, int(taps.max()) + 1)
    text = None
    if show:
        text = inked(np.where(taps >= 0, format_values(panel.values), ""), tap_inks(taps))
    return heatmap(
        colour.pop("z"),
        i,
        x,
        y,
        geo,
        text=text,
        font_color=INK_DARK,
        name=f"{panel.key}:taps",
        **colour,
    )


def tap_label_trace(panel: Panel, i: int, theme: Theme, geo: GridLayout) -> dict | None:
    """The taps' names (w₀₂) in their cells' top-left corners, in the tap's ink: text only,
    anchored at its top-left; None without names or where the cells are too small."""
    labels = panel.tap_labels()
    size = theme.tap_label_font(geo.cell_of(i), geo.font_of(i))
    if labels is None or size is None or not (labels != "").any():
        return None
    r, c = np.nonzero(labels != "")
    (oy, ox), corner = panel.origin, 0.5 - TAP_LABEL_INSET
    xa, ya = axis_ids(i)
    return {
        "type": "scatter",
        "mode": "text",
        "name": f"{panel.key}:tap names",
        "x": c + ox - corner,
        "y": r + oy - corner,  # rows run down the reversed axis: the cell's top
        "xaxis": xa,
        "yaxis": ya,
        "text": labels[r, c],
        "textposition": "bottom right",
        "textfont": {"size": size, "family": FONT_FAMILY, "color": tap_inks(panel.taps)[r, c]},
        "hoverinfo": "skip",
        "showlegend": False,
        "cliponaxis": False,
    }


SAID_CELLS = Theme.max_text_cells  # a side: grids drawn with numbers; a bigger one, its close-up


def cell_meta(
    panel: Panel,
    values: np.ndarray | None = None,
    roles: np.ndarray | None = None,
    written: np.ndarray | None = None,
) -> dict | None:
    """What a keyboard grid (convviz/player/grid.js) says of each cell of a panel, in its click
    markers' order (row-major): the grid's name, shape and labels' origin, each cell's number as
    written and role, and the cell it opens on (the selected one). None for a grid
    too big to number (its close-up is walked instead). values, roles : the numbers it shows and
    their roles' letters, when not the panel's (a motion's cells, as its last keyframe leaves
    them); written : the shown numbers already written (`format_values`)."""
    if max(panel.shape) > SAID_CELLS:
        return None
    shown = panel.values if values is None else values
    meta = {
        "name": _TAG.sub("", panel.title),
        "shape": list(panel.shape),
        "origin": list(panel.origin),
        # as written, row-major, joined by "|" (a list's quotes and commas cost 3 bytes a cell)
        "values": "|".join((format_values(shown) if written is None else written).ravel()),
    }
    letters = panel.roles() if roles is None else roles  # grid.js is sent their words
    if (letters != ".").any():
        meta["roles"] = "".join(letters.ravel())
    start = panel.selected  # else grid.js opens on the first cell of the last grid (the result)
    if start is not None:
        meta["start"] = [int(start[0]), int(start[1])]
    return meta


def click_overlay(
    panel: Panel,
    i: int,
    geo: GridLayout,
    values: np.ndarray | None = None,
    roles: np.ndarray | None = None,
) -> dict | None:
    """Invisible square markers at every cell centre: what a click on the chart selects, and
    what the keyboard grid says of each cell (`cell_meta`, as the trace's meta)."""
    (h, w), (oy, ox), (dr, dc) = panel.shape, panel.origin, panel.offset
    if max(h, w) > MAX_CLICK_CELLS:
        return None
    written = format_values(panel.values)
    grid = cell_meta(panel, values, roles, written if values is None else None)
    rr, cc = np.divmod(np.arange(h * w), w)
    names, customdata = _cells(panel.key, (h, w), (int(oy), int(ox)), (int(dr), int(dc)))
    hover = list(map(str.__add__, names, written.ravel().tolist()))
    xa, ya = axis_ids(i)
    return {
        "type": "scatter",
        "mode": "markers",
        "name": f"{panel.key}:click",
        "x": cc + ox,
        "y": rr + oy,
        "xaxis": xa,
        "yaxis": ya,
        "customdata": customdata,
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
        **({"meta": {"grid": grid}} if grid else {}),
    }


@lru_cache(maxsize=1024)
def _cells(key: str, shape: tuple[int, int], origin, offset) -> tuple[list[str], list[list]]:
    """A grid's cells, row-major: each one's hover name ('y[0, 1] = ', as its axes label it) and
    click data ([key, row, col] in array indices). Made once per grid shape: the figures that
    hold them never change them."""
    (h, w), (oy, ox), (dr, dc) = (tuple(map(int, pair)) for pair in (shape, origin, offset))
    cells = [(r, c) for r in range(h) for c in range(w)]
    names = [f"{key}[{r + oy}, {c + ox}] = " for r, c in cells]
    return names, [[key, r + dr, c + dc] for r, c in cells]


def compact(z: np.ndarray) -> np.ndarray:
    """A tile's values as sent to the browser: whole numbers as integers (the adapter sends them
    in the narrowest type: 1–2 bytes a cell, not 8), others as float32 (the hover writes 4
    significant digits). A 5-channel 100×100 layer's channel tiles were 2.8 MB of float64."""
    z = np.asarray(z)
    finite = np.isfinite(z)
    if finite.all() and np.abs(z).max(initial=0) < 2**31 and np.all(z == np.round(z)):
        return z.astype(np.int64)
    return z.astype(np.float32)


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
    z = values if show else compact(values)  # numbered grids are small; big ones, compact
    base = heatmap(
        z, i, x, y, geo, text=text, font_color=VALUE_INK, zmid=0, name=f"{panel.key}:values"
    )
    if max(panel.shape) > MAX_CLICK_CELLS:  # no click overlay: let the heatmap answer hovers
        base["hoverinfo"] = None
        base["hovertemplate"] = f"{panel.key}[%{{y}}, %{{x}}] = %{{z:.4g}}<extra></extra>"
    if not show:
        base.update(value_scale(values))
    traces = [base]
    if (dil & ~pad).any():
        traces.append(role_overlay(panel, "dilation", DILATION_COLOR, i, geo, show))
    if pad.any():
        traces.append(role_overlay(panel, "pad", PAD_COLOR, i, geo, show))
    if has_taps:
        traces.append(tap_overlay(panel, i, geo, show))
        names = tap_label_trace(panel, i, theme, geo) if show else None
        traces += [names] if names else []
    return traces

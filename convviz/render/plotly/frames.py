"""The plumbing every animated plotly figure shares: its frames, the player's meta data, the
overlay traces the frames replace, and which steps become frames.

A figure holds static traces (the grids, their roles, the click overlays) and a few overlay traces
that the frames replace. Frames are plain dicts holding only those overlays, so playing, pausing
and scrubbing happen in the browser without a server round trip, and the payload stays small.

The figure carries no play buttons or slider of its own: `layout.meta["player"]` tells the page's
player (an HTML control bar, `convviz.ui.player`) the frames, their labels, the step it opens on
and how cells link (for hover), and the player drives the frames with plotly's animate. The
figures built on this are in `sweep_animations` (the sliding window, the scatter route) and
`motion_plotly` (the input-gradient story).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from convviz.engine.formulas import FULL_TERMS
from convviz.engine.sweeps import Sweep
from convviz.render.geometry import GridLayout, axis_ids
from convviz.render.panel import Panel
from convviz.render.plotly.adapter import Figure, figure
from convviz.render.plotly.grid_figure import add_panels, base_layout, layout_with_legend
from convviz.render.plotly.grids import format_values, heatmap, inked, tap_heatmap, tap_inks
from convviz.render.plotly.shapes import legend_items
from convviz.render.theme import GRID_LINE, INK_DARK, PENDING_COLOR, TAP_CYCLE, Theme

FRAME_MS = 700  # one step at 1× speed
SPEEDS = (0.5, 1, 2, 4)
# Each frame's sum is written under the player while all frames' terms together stay below this
# (building them is the slow part of a big layer's first load); past it, NO_CAPTION says why.
MAX_CAPTION_TERMS = 20_000
NO_CAPTION = "At this size each frame's sum is not written out: click a cell for its formula."


def writes_captions(sweep: Sweep, frames: int) -> bool:
    """Whether the player writes the sum of each of `frames` frames of this sweep."""
    return frames * sweep.kernel.size <= MAX_CAPTION_TERMS


# --- steps and text ------------------------------------------------------------------------------


def ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


# --- overlay traces ------------------------------------------------------------------------------


def outline_trace(i: int, width: float, color: str, name: str) -> dict:
    """An outline trace (its x/y come from the frames); drawn whole around an edge cell too."""
    xa, ya = axis_ids(i)
    return {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "xaxis": xa,
        "yaxis": ya,
        "x": [],
        "y": [],
        "line": {"color": color, "width": width},
        "cliponaxis": False,  # a box on the grid's edge: its outer half is not cut off
        "hoverinfo": "skip",
        "showlegend": False,
    }


def box_xy(r0, r1, c0, c1, origin) -> dict:
    """Corners of the box around rows r0…r1, cols c0…c1 (inclusive), in axis coordinates."""
    oy, ox = origin
    x0, x1, y0, y1 = c0 + ox - 0.5, c1 + ox + 0.5, r0 + oy - 0.5, r1 + oy + 0.5
    return {"x": [x0, x1, x1, x0, x0], "y": [y0, y0, y1, y1, y0]}


def pending_xy(t: int, shape: tuple[int, int], origin) -> dict:
    """The region of output cells after step t (row-major) as one polygon; empty when none."""
    (h, w), (oy, ox) = shape, origin
    r, c = divmod(t, w)
    if t >= h * w - 1:
        return {"x": [], "y": []}
    L, R, B = ox - 0.5, ox + w - 0.5, oy + h - 0.5
    top, mid = r + oy - 0.5, r + oy + 0.5
    if c == w - 1:
        return {"x": [L, R, R, L, L], "y": [mid, mid, B, B, mid]}
    xc = c + ox + 0.5
    return {"x": [xc, R, R, L, L, xc, xc], "y": [top, top, B, B, mid, mid, top]}


def grid_lines_trace(
    i: int,
    shape: tuple[int, int],
    origin,
    geo: GridLayout,
    color: str = GRID_LINE,
    width: float | None = None,
    name: str = "grid",
) -> dict:
    """Cell borders of a grid on panel i's axes: by default white, drawn over the pending cover so
    pending cells still read as cells (width: the grid's gap)."""
    (h, w), (oy, ox) = shape, origin
    xs, ys = [], []
    for k in range(w + 1):
        xs += [ox + k - 0.5, ox + k - 0.5, None]
        ys += [oy - 0.5, oy + h - 0.5, None]
    for k in range(h + 1):
        xs += [ox - 0.5, ox + w - 0.5, None]
        ys += [oy + k - 0.5, oy + k - 0.5, None]
    xa, ya = axis_ids(i)
    return {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "xaxis": xa,
        "yaxis": ya,
        "x": xs,
        "y": ys,
        "line": {"color": color, "width": geo.gap if width is None else width},
        "hoverinfo": "skip",
        "showlegend": False,
    }


def pending_trace(i: int) -> dict:
    """The cover over output cells not yet written (its polygon comes from the frames)."""
    xa, ya = axis_ids(i)
    return {
        "type": "scatter",
        "mode": "lines",
        "name": "pending",
        "xaxis": xa,
        "yaxis": ya,
        "x": [],
        "y": [],
        "fill": "toself",
        "fillcolor": PENDING_COLOR,
        "line": {"width": 0, "color": PENDING_COLOR},
        "hoverinfo": "skip",
        "showlegend": False,
    }


def tap_ids(kernel: Panel) -> np.ndarray:
    """The colour index of each kernel cell (its tap; past TAP_CYCLE taps colours repeat)."""
    kh, kw = kernel.shape
    taps = None if kernel.taps is None else np.asarray(kernel.taps)
    return np.mod(np.arange(kh * kw).reshape(kh, kw) if taps is None else taps, TAP_CYCLE)


def window_grids(
    values: np.ndarray, taps: np.ndarray, dilation: tuple[int, int], show: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """Tap-index z (span_h, span_w) with NaN between dilated taps, and per-step text.

    values : shape (S, kh, kw), the numbers each step writes on its covered cells.
    """
    S, kh, kw = values.shape
    dh, dw = dilation
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    z = np.full(span, np.nan, dtype=np.float32)
    z[::dh, ::dw] = taps
    if not show:
        return z, None
    text = np.full((S, *span), "", dtype=object)
    inks = np.broadcast_to(tap_inks(taps), values.shape)
    text[:, ::dh, ::dw] = inked(format_values(values), inks)
    return z, text


def window_trace(
    i: int, n_taps: int, z: np.ndarray, geo: GridLayout, show: bool, name: str = "window"
) -> dict:
    """The window (or stamp) in tap colours, z from `window_grids` (its x/y, text from frames)."""
    colour = tap_heatmap(z, n_taps)
    text = np.full(z.shape, "", dtype=object) if show else None
    x, y = np.arange(z.shape[1]), np.arange(z.shape[0])
    z = colour.pop("z")
    return heatmap(z, i, x, y, geo, text=text, font_color=INK_DARK, name=name, **colour)


# --- the animated figure -------------------------------------------------------------------------


def animated_figure(
    data: list[dict],
    layout: dict,
    frames: list[dict],
    animated: list[int],
    steps: np.ndarray,
    start: int,
    player: dict,
) -> Figure:
    """The base state (= the frame of step `start`), the frames, and the player's meta data.

    player : what the page's player needs besides the frames: "labels" (one per frame),
        "prefix" and "suffix" (around a label), "sampled" (every k-th step), "link" (hover
        linking or None).

    Nothing is validated by plotly on the way (`plotly_adapter.figure`): per frame it costs ~1 ms
    per trace (0.5 s for 400 frames), and the base data's per-cell colour arrays took ~45 % of a
    128×128 weight-gradient rerun (a regex per colour). A test validates the figures the slow way.
    """
    active = int(np.searchsorted(steps, start))
    for i, d in zip(animated, frames[active]["data"]):
        data[i] = deep_update(data[i], d)
    names = [f["name"] for f in frames]
    layout["meta"] = {
        "player": {
            **player,
            "names": names,
            "steps": [int(t) for t in steps],
            "active": active,
            "frame_ms": player.get("frame_ms", FRAME_MS),
            "speeds": list(SPEEDS),
        }
    }
    types = [data[i]["type"] for i in animated]
    return figure(
        data,
        layout,
        [
            {
                "name": f["name"],
                "traces": animated,
                # an unchanged trace (in the frame to be replotted) as {}: no bytes per frame
                "data": [{"type": ty, **d} if d else {} for ty, d in zip(types, f["data"])],
                "layout": f.get("layout", {}),
            }
            for f in frames
        ],
    )


def stills_animation(figs: Sequence[Figure], player: dict, start: int) -> Figure:
    """Still figures of one layout (the same traces, other numbers: a step's taps moving, a
    run's steps) as one animation the page's player steps through (`stepwise`): a frame holds
    what differs between the figures, each trace's entries that change, and the annotations
    (the panels' headers) when they do."""
    first, notes = figs[0].traces, figs[0].layout_dict["annotations"]
    changing = {
        i: keys
        for i, t in enumerate(first)
        if (keys := [k for k in t if any(not _same(f.traces[i].get(k), t[k]) for f in figs)])
    }
    headed = any(f.layout_dict["annotations"] != notes for f in figs)
    frames = [
        {
            "name": str(f),
            "data": [{k: fig.traces[i][k] for k in keys} for i, keys in changing.items()],
            "layout": {"annotations": fig.layout_dict["annotations"]} if headed else {},
        }
        for f, fig in enumerate(figs)
    ]
    data, layout = list(figs[start].traces), {**figs[start].layout_dict}
    steps = np.arange(len(figs))
    return animated_figure(data, layout, frames, list(changing), steps, start, player)


def _same(a, b) -> bool:
    """Whether two traces' entries (dicts of numbers, strings and arrays) are equal."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
            and all(_same(a[k], b[k]) for k in a)
        )  # fmt: skip
    if isinstance(a, np.ndarray | list | tuple) or isinstance(b, np.ndarray | list | tuple):
        x, y = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
        if x.shape != y.shape:
            return False
        number = (float, int, np.floating, np.integer)
        return all(u == v or (isinstance(u, number) and isinstance(v, number) and u != u and v != v)
                   for u, v in zip(x.ravel(), y.ravel()))  # fmt: skip
    return a == b


def deep_update(trace: dict, update: dict) -> dict:
    """trace with update's entries; nested dicts (marker, textfont) merged, as plotly animates."""
    out = dict(trace)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_update(out[key], value)
        else:
            out[key] = value
    return out


def player_meta(fig: Figure) -> dict:
    """What an animated figure tells its player (see `animated_figure`)."""
    return fig.meta["player"]


def stepwise(fig: Figure) -> bool:
    """Whether the player applies the animated `fig`'s frames itself, one update each: a sliding
    window or a run's steps, whose frames redraw heatmaps. Plotly's animate runs a frame as a
    transition, which replots the scatter traces alone and drops every heatmap until a redraw a
    timer later (the blank grids a slow laptop paints between the two). A motion's markers glide
    in plotly's transitions (`smooth`: it draws no heatmap)."""
    meta = fig.meta.get("player")
    return meta is not None and not meta.get("smooth", False)


def outline_px(geo: GridLayout) -> float:
    return max(2.5, geo.cell / 12)


def animation_layout(
    panels: Sequence[Panel], theme: Theme, title: str | None, subtitle: bool = False
) -> tuple[GridLayout, dict]:
    """Geometry and base layout of an animated figure (a subtitle line if the frames write one).

    On a projector, panel subtitles give way when without them the cells reach legible size
    (theme.cell_px_for_font) and with them they do not: the grids' numbers come first.
    """
    line = theme.font_size + 8
    top = (theme.title_font_size + 18 if title else 6) + (line if subtitle else 0)
    items = legend_items(panels)
    geo, legend = layout_with_legend(panels, items, theme, top)
    if not theme.show_secondary and geo.cell < theme.cell_px_for_font:
        bare = [replace(p, subtitle="") for p in panels]
        without = layout_with_legend(bare, items, theme, top)
        if without[0].cell >= theme.cell_px_for_font:
            panels, (geo, legend) = bare, without
    layout = base_layout(geo, theme, title)
    if subtitle:
        layout.setdefault("title", {"text": "", "x": 0.0, "xanchor": "left"})
        layout["title"]["subtitle"] = {"text": "", "font": {"size": theme.font_size + 1}}
    add_panels(layout, panels, theme, geo)
    layout["annotations"] += [legend] if legend else []
    return geo, layout


def formula_lines(formula, theme: Theme) -> list[str]:
    """The two lines a player shows for a frame: the sum in symbols, then in numbers.

    On a projector each is one line: fewer terms written out, the rest stated as their sum.
    """
    if theme.show_secondary:
        return [formula.text(numeric=n, max_terms=FULL_TERMS) for n in (False, True)]
    chars = int(theme.figure_w / (0.55 * 1.3 * theme.rem))  # the player's formula: 1.3 rem
    formula = formula.vanishing_last()  # cut short, it writes the terms that count
    for most in range(9, 0, -1):
        lines = [formula.text(numeric=n, max_terms=most) for n in (False, True)]
        if max(map(len, lines)) <= chars:
            break
    return lines


def cell_lines(meta: dict, formula_of, lines_of, words: bool = True) -> list[list[str]]:
    """Per frame of a motion (its `player_meta`), the lines under its player: `lines_of` the
    formula of the cell that frame computes (Scene.cell; `formula_of(cell)`, built once a cell),
    then the stage's words (with `words`); a frame with no one cell: the words."""
    written, out = {}, []  # a cell's lines, written once however many frames compute it
    for said, cell in zip(meta["captions"], meta["cells"]):
        cell = tuple(cell)
        if not cell:
            out.append(said)
            continue
        if cell not in written:
            written[cell] = lines_of(formula_of(cell))
        out.append([*written[cell], *said] if words else written[cell])
    return out


def animation_title(title: str | None, default: str, k: int, theme: Theme) -> str | None:
    """The figure's title in normal mode (presentation mode: the page title says it)."""
    if not theme.show_secondary:
        return None
    text = title or default
    return f"{text} — every {ordinal(k)} step shown" if k > 1 else text

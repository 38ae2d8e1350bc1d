"""Plotly animations of a sweep (the sliding window) and of the scatter route, as browser frames.

Each frame moves the window (or the stamp) and shows the output (or the running sum) so far; the
frames, the overlay traces they replace and the player's meta data come from `animation_frames`.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import numpy as np

from convviz.engine.sweeps import Scatter, Sweep
from convviz.engine.text import MINUS
from convviz.render.geometry import axis_ids, shows_text
from convviz.render.panel import Panel
from convviz.render.plotly.adapter import Figure
from convviz.render.plotly.frames import (
    animated_figure,
    animation_layout,
    animation_title,
    box_xy,
    grid_lines_trace,
    outline_px,
    outline_trace,
    pending_trace,
    pending_xy,
    tap_ids,
    window_grids,
    window_trace,
)
from convviz.render.plotly.grids import (
    MAX_CLICK_CELLS,
    click_overlay,
    format_value,
    format_values,
    heatmap,
    panel_traces,
    role_overlay,
    tap_heatmap,
    tap_inks,
)
from convviz.render.plotly.spoken import window_says
from convviz.render.selection import BROWSER_FRAMES, sampled_steps, taps_told_apart
from convviz.render.theme import (
    DILATION_COLOR,
    FONT_FAMILY,
    HIGHLIGHT_COLOR,
    HOVER_COLOR,
    PAD_COLOR,
    TAP_LABEL_INSET,
    THEME,
    VALUE_INK,
    Theme,
    text_color,
)

CELL_NAMES = {"y": "y", "grad_x_padded": "∂L/∂x̃", "grad_w": "∂L/∂w", "grad_out": "∂L/∂y"}
SCATTER_CELL_BUDGET = 120_000  # result cells sent over all frames of a scatter animation


# --- the sliding window --------------------------------------------------------------------------


def sweep_figure(
    sweep: Sweep,
    operand: Panel,
    kernel: Panel,
    output: Panel,
    theme: Theme = THEME,
    *,
    channel: int = 0,
    start: int = 0,
    max_frames: int = BROWSER_FRAMES,
    title: str | None = None,
) -> Figure:
    """The sliding window, one frame per step: operand with the window, kernel, output so far.

    operand, kernel : Panels of channel `channel` of sweep.operand / sweep.kernel (their taps
        and highlight are not drawn: the window shows the step instead; a selected cell is);
    output : Panel of the result, shape sweep.out_size; its cells appear as the sweep writes them.
    The figure opens at step `start`; with more than max_frames steps every k-th step is kept.
    """
    _check_shapes(sweep, operand, kernel, output, channel)
    T = sweep.steps
    start = int(np.clip(start, 0, T - 1))
    steps, k = sampled_steps(T, max_frames, start)
    # what slides over the operand: the kernel, or (for ∂L/∂w) ∂L/∂y, cell by cell
    note = "window coloured by " + ("∂L/∂y cell" if kernel.key == "grad_out" else "kernel tap")
    coloured = taps_told_apart(kernel, theme.max_text_cells)
    if not coloured:  # too many taps to tell apart: the kernel shows its values
        kernel, note = replace(kernel, taps=None), "window outlined"
    sub = f"{operand.subtitle} · {note}" if operand.subtitle else note
    op = replace(operand, taps=None, highlight=None, subtitle=sub)
    out = replace(output, values=sweep.result())
    panels = [op, kernel, out]
    geo, layout = animation_layout(
        panels, theme, animation_title(title, "Sliding window", k, theme)
    )
    data, animated = _sweep_traces(sweep, steps, channel, op, kernel, out, theme, geo, coloured)
    show = shows_text(op, theme, geo)
    frames = _sweep_frames(sweep, steps, channel, op, kernel, out, show, coloured)
    names = _window_names(sweep, steps, op, kernel, theme, geo) if coloured and show else None
    if names is not None:  # the window's taps named as the kernel's: w₂₂ rides top-left
        trace, updates = names
        animated.append(len(data))
        data.append(trace)
        for frame, update in zip(frames, updates):
            frame["data"].append(update)
    hover = len(data)
    data += [outline_trace(i, outline_px(geo), HOVER_COLOR, "hover") for i in range(3)]
    oy, ox = out.origin
    player = {
        "labels": [f"{r + oy}, {c + ox}" for r, c in sweep.targets[steps]],
        "prefix": f"{_name(out)}[",
        "suffix": "]",
        "sampled": k,
        "link": _sweep_link(sweep, op, kernel, out, hover),
        "says": window_says(sweep, steps, op, _name(out)),  # what each step does, in words
    }
    return animated_figure(data, layout, frames, animated, steps, start, player)


MAX_LINK_PAIRS = 20_000  # (output, tap) pairs sent for hover from an operand cell; past it, none


def _sweep_link(sweep: Sweep, op: Panel, kernel: Panel, out: Panel, hover: int) -> dict | None:
    """How cells link, for hover in the browser, computed here once (the browser draws boxes):
    "windows", per output cell (row-major) the box [r0, r1, c0, c1] of operand cells its window
    covers; "readers", per operand cell the flat pairs [t, tap, …] of the output cells whose
    window reads it and the kernel tap that does (`selection.reads`), when there are at most
    MAX_LINK_PAIRS. None when the grids are too big to hover cell by cell.
    """
    (h, w), T = out.shape, sweep.steps
    row_major = np.array_equal(sweep.targets, np.indices((h, w)).reshape(2, -1).T)
    if not row_major or max(*op.shape, *out.shape) > MAX_CLICK_CELLS:
        return None
    rows, cols = sweep.rows[:T], sweep.cols[:T]  # (T, kh), (T, kw): each window's cells
    kh, kw = rows.shape[1], cols.shape[1]
    windows = np.stack([rows[:, 0], rows[:, -1], cols[:, 0], cols[:, -1]], axis=1)
    readers = None
    if T * kh * kw <= MAX_LINK_PAIRS:
        t, i, j = np.indices((T, kh, kw)).reshape(3, -1)
        cell = rows[t, i] * op.shape[1] + cols[t, j]  # the operand cell tap (i, j) of step t reads
        order = np.argsort(cell, kind="stable")
        pairs = np.stack([t, i * kw + j], axis=1)[order]
        ends = np.searchsorted(cell[order], np.arange(op.shape[0] * op.shape[1] + 1))
        readers = [pairs[a:b].ravel().tolist() for a, b in pairwise(ends)]
    return {
        "panels": [
            {"key": p.key, "origin": list(p.origin), "shape": list(p.shape)}
            for p in (op, kernel, out)
        ],
        "windows": windows.tolist(),
        "readers": readers,
        "kernel": [kh, kw],
        "traces": [hover, hover + 1, hover + 2],
    }


def _sweep_traces(sweep, steps, channel, op, kernel, out, theme, geo, coloured=True):
    """(traces, indices of the animated ones): the three grids, then the overlays frames replace.
    Without `coloured` the window is its outline alone (the operand's values show through).

    The output shows its final values under a 'pending' cover that each frame shrinks, so a
    frame carries a 7-point polygon instead of the whole output grid.
    """
    show = shows_text(op, theme, geo)
    taps = tap_ids(kernel)
    z, _ = window_grids(sweep.products[steps[:1], channel], taps, sweep.dilation, False)
    if not coloured:
        z = np.full(z.shape, np.nan)
    data = panel_traces(op, 0, theme, geo)
    i_win = len(data)
    data += [
        window_trace(0, int(taps.max()) + 1, z, geo, show),
        outline_trace(0, outline_px(geo), HIGHLIGHT_COLOR, "window outline"),
    ]
    data += panel_traces(kernel, 1, theme, geo)
    data += panel_traces(out, 2, theme, geo)
    i_pending = len(data)
    data.append(pending_trace(2))
    if geo.gap:
        data.append(grid_lines_trace(2, out.shape, out.origin, geo))
    i_target = len(data)
    data.append(outline_trace(2, outline_px(geo), HIGHLIGHT_COLOR, "target"))
    data += [c for c in (click_overlay(op, 0, geo), click_overlay(out, 2, geo)) if c]
    return data, [i_win, i_win + 1, i_pending, i_target]


def _sweep_frames(sweep, steps, channel, op, kernel, out, show: bool, coloured=True) -> list[dict]:
    """Frame dicts: the window (tap colours, operand values), its outline, the cover, the target.

    The padding and the zeros a dilation inserted keep their own look under a coloured window
    (in tap colours they looked like the operand's own cells): the window leaves them out.
    """
    # the covered operand cells keep their own numbers; the products are in the running sum
    rows, cols = sweep.rows[steps], sweep.cols[steps]  # (S, kh), (S, kw)
    covered = sweep.operand[channel][rows[:, :, None], cols[:, None, :]]  # (S, kh, kw)
    taps = tap_ids(kernel)
    z, text = window_grids(covered, taps, sweep.dilation, show)
    added = op.mask("pad_mask") | op.mask("dilation_mask")
    added = added[rows[:, :, None], cols[:, None, :]] if coloured else np.zeros(covered.shape, bool)
    zs = None
    if added.any():
        dh, dw = sweep.dilation
        zs = np.repeat(z[None], len(steps), axis=0)
        zs[:, ::dh, ::dw][added] = np.nan
        zs = tap_heatmap(zs, int(taps.max()) + 1)["z"]  # as window_trace colours its z
        if text is not None:
            text[:, ::dh, ::dw][added] = ""
    (oy, ox), span = op.origin, z.shape
    frames = []
    for s, t in enumerate(steps):
        r0, c0 = int(sweep.rows[t, 0]), int(sweep.cols[t, 0])
        window = {"x": np.arange(c0, c0 + span[1]) + ox, "y": np.arange(r0, r0 + span[0]) + oy}
        if text is not None:
            window["text"] = text[s]
        if zs is not None:
            window["z"] = zs[s]
        r, c = (int(v) for v in sweep.targets[t])
        frames.append(
            {
                "name": str(t),
                "data": [
                    window,
                    box_xy(r0, r0 + span[0] - 1, c0, c0 + span[1] - 1, op.origin),
                    pending_xy(int(t), out.shape, out.origin),
                    box_xy(r, r, c, c, out.origin),
                ],
            }
        )
    return frames


def _window_names(sweep, steps, op: Panel, kernel: Panel, theme: Theme, geo):
    """(trace, per-frame updates): the kernel's tap names in the corners of the operand cells its
    window covers at each step, in the ink of what each cell shows (its tap's colour, or the
    padding's or an inserted zero's, which the window leaves uncoloured); None without names
    or room for them on the operand's cells."""
    labels = kernel.tap_labels()
    size = theme.tap_label_font(geo.cell_of(0), geo.font_of(0))
    if labels is None or size is None:
        return None
    kh, kw = labels.shape
    i, j = np.indices((kh, kw)).reshape(2, -1)
    corner = 0.5 - TAP_LABEL_INSET
    (oy, ox) = op.origin
    rows, cols = sweep.rows[steps], sweep.cols[steps]  # (S, kh), (S, kw): each tap's cell
    pad, dil = op.mask("pad_mask"), op.mask("dilation_mask")
    inks = np.where(pad, text_color(PAD_COLOR), np.where(dil, text_color(DILATION_COLOR), ""))
    under = inks[rows[:, i], cols[:, j]]  # (S, kh·kw)
    inks = np.where(under != "", under, tap_inks(kernel.taps).ravel()).astype(object)
    updates = [
        {
            "x": (cols[s, j] + ox - corner).astype(np.float32),
            "y": (rows[s, i] + oy - corner).astype(np.float32),
            "textfont": {"color": inks[s]},
        }
        for s in range(len(steps))
    ]
    xa, ya = axis_ids(0)
    trace = {
        "type": "scatter",
        "mode": "text",
        "name": "window:tap names",
        "xaxis": xa,
        "yaxis": ya,
        "text": labels.ravel(),
        "textposition": "bottom right",  # hangs from the cell's top-left corner
        "textfont": {"size": size, "family": FONT_FAMILY},
        "hoverinfo": "skip",
        "showlegend": False,
        "cliponaxis": False,
    }
    return trace, updates


def _check_shapes(sweep: Sweep, operand: Panel, kernel: Panel, output: Panel, channel: int):
    C = sweep.operand.shape[0]
    if not 0 <= channel < C:
        raise ValueError(f"channel {channel} is out of range: the sweep has {C} channels")
    for name, panel, want in (
        ("operand", operand, sweep.operand.shape[1:]),
        ("kernel", kernel, sweep.kernel.shape[1:]),
        ("output", output, tuple(sweep.out_size)),
    ):
        if tuple(panel.shape) != tuple(want) and not _remainder_beyond(panel, want):
            raise ValueError(f"the {name} panel has shape {panel.shape}, the sweep needs {want}")


def _remainder_beyond(panel: Panel, want: tuple[int, int]) -> bool:
    """Whether the panel is the sweep's operand plus rows and columns marked as the remainder
    (no window reaches them: the weight gradient's sweep leaves them out of its operand)."""
    extra = np.ones(panel.shape, dtype=bool)
    extra[: want[0], : want[1]] = False
    return all(a >= b for a, b in zip(panel.shape, want)) and np.array_equal(
        panel.mask("remainder_mask") & extra, extra
    )


# --- the scatter route ---------------------------------------------------------------------------


def _masked_z(a: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """a with NaN (None) where mask, in the shortest JSON: whole numbers as ints, else 4 decimals.

    Arrays holding NaN are sent as JSON lists, not base64; ints keep those lists short.
    """
    if np.all(a == np.round(a)):
        out = np.round(a).astype(np.int64).astype(object)
    else:
        out = np.round(a, 4).astype(object)
    out[..., mask] = None
    return out


def _name(panel: Panel) -> str:
    """How a panel's cells are written: ∂L/∂x̃ for grad_x_padded."""
    return CELL_NAMES.get(panel.key, panel.key)


def scatter_formulas(scatter: Scatter, steps, grad_out: Panel, result: Panel) -> list[str]:
    """One line per step: which grad_out cell of which filter stamps what, and where it lands."""
    K, _, oW = scatter.grad_out.shape
    (gy, gx), (ry, rx) = grad_out.origin, result.origin
    lines = []
    for s in steps:
        k, t = int(scatter.filters[s]), int(scatter.cells[s])
        r, c = divmod(t, oW)
        g = format_value(scatter.grad_out[k].flat[t])
        (r0, r1), (c0, c1) = (
            (format_value(v[0] + o), format_value(v[-1] + o))  # "−1", as the axes write it
            for v, o in ((scatter.rows[s], ry), (scatter.cols[s], rx))
        )
        lines.append(
            f"{f'filter {k}: ' if K > 1 else ''}{_name(grad_out)}[{r + gy}, {c + gx}] = {g}: "
            f"stamp {g}·w onto {_name(result)} rows {r0}…{r1}, cols {c0}…{c1}"
        )
    return lines


def scatter_figure(
    scatter: Scatter,
    kernel: Panel,
    grad_out: Panel,
    result: Panel,
    theme: Theme = THEME,
    *,
    start: int = 0,
    max_frames: int = BROWSER_FRAMES,
    title: str | None = None,
) -> Figure:
    """The scatter route: each grad_out cell stamps grad_out·w onto its window; the sum grows.

    result : Panel of the padded-input gradient (values = scatter.running[-1], pad/remainder
        masks; its dilation mask and taps are not drawn); frame t shows scatter.running[t] and
        the stamp of step t in tap colours.
    """
    T = len(scatter.stamps)
    K = scatter.grad_out.shape[0]
    if K * grad_out.shape[0] * grad_out.shape[1] != T:
        raise ValueError(
            f"the grad_out panel has {grad_out.shape} cells, the scatter {T} stamps of {K} filters"
        )
    if tuple(result.shape) != scatter.running.shape[1:]:
        raise ValueError(
            f"the result panel has shape {result.shape}, "
            f"the scatter needs {scatter.running.shape[1:]}"
        )
    start = int(np.clip(start, 0, T - 1))
    # every frame carries the whole result grid: bigger grids get fewer frames
    max_frames = max(2, min(max_frames, SCATTER_CELL_BUDGET // result.values.size))
    steps, k = sampled_steps(T, max_frames, start)
    g_panel = replace(grad_out, highlight=None, selected=None)
    if K > 1:  # every frame shows the ∂L/∂y and the kernel of its own filter: what it stamps
        turn = f"k = 0…{K - 1} in turn"
        g_panel = replace(g_panel, title=f"{_name(grad_out)} of filter k", subtitle=turn)
        kernel = replace(kernel, title="its kernel w[k, c]", subtitle=turn)
    panels = [g_panel, kernel, result]
    geo, layout = animation_layout(panels, theme, animation_title(title, "Scatter route", k, theme))
    data, animated = _scatter_traces(scatter, steps, g_panel, kernel, result, theme, geo)
    show = shows_text(result, theme, geo)
    frames = _scatter_frames(scatter, steps, g_panel, kernel, result, show)
    oW, (gy, gx) = grad_out.shape[1], grad_out.origin
    cells = [divmod(int(scatter.cells[s]), oW) for s in steps]
    labels = [f"{r + gy}, {c + gx}" for r, c in cells]
    if K > 1:
        labels = [f"k={scatter.filters[s]}][{label}" for s, label in zip(steps, labels)]
    player = {
        "labels": labels,
        "prefix": f"stamp of {_name(grad_out)}[",
        "suffix": "]",
        "sampled": k,
        "link": None,
        "captions": [[line] for line in scatter_formulas(scatter, steps, g_panel, result)],
    }
    return animated_figure(data, layout, frames, animated, steps, start, player)


def _scatter_traces(scatter, steps, g_panel, kernel, result, theme, geo):
    """(traces, indices of the animated ones) of the scatter route's three grids.

    The result's values trace is animated and has NaN on padded cells, so the flat padding
    colour drawn beneath it shows through; its text covers every cell, padded ones included.
    """
    show = shows_text(result, theme, geo)
    data = panel_traces(g_panel, 0, theme, geo)
    i_current = len(data)
    data.append(outline_trace(0, outline_px(geo), HIGHLIGHT_COLOR, "current"))
    data += panel_traces(kernel, 1, theme, geo)
    if result.mask("pad_mask").any():
        data.append(role_overlay(result, "pad", PAD_COLOR, 2, geo, show=False))
    m = float(np.abs(scatter.running).max(initial=0)) or 1.0
    x, y = (np.arange(n) + o for n, o in zip(result.shape[::-1], result.origin[::-1]))
    i_values = len(data)
    data.append(
        heatmap(
            np.asarray(result.values, dtype=float),
            2,
            x,
            y,
            geo,
            text=np.full(result.shape, "", dtype=object) if show else None,
            font_color=VALUE_INK,
            zmin=-m,
            zmax=m,
            name=f"{result.key}:values",
        )
    )
    taps = tap_ids(kernel)
    z, _ = window_grids(scatter.stamps[steps[:1]], taps, _spacing(scatter), False)
    i_stamp = len(data)
    data += [
        window_trace(2, int(taps.max()) + 1, z, geo, show, name="stamp"),
        outline_trace(2, outline_px(geo), HIGHLIGHT_COLOR, "stamp outline"),
    ]
    data += [c for c in (click_overlay(g_panel, 0, geo), click_overlay(result, 2, geo)) if c]
    animated = [i_current, i_values, i_stamp, i_stamp + 1]
    if scatter.grad_out.shape[0] > 1:  # the frame's filter: its ∂L/∂y and its kernel's numbers
        i_g = next(i for i, t in enumerate(data) if t["name"] == f"{g_panel.key}:values")
        m = float(np.abs(scatter.grad_out).max(initial=0)) or 1.0
        data[i_g].update(zmin=-m, zmax=m)  # one colour scale for every filter
        names = (f"{kernel.key}:taps", f"{kernel.key}:values")
        i_w = next(i for name in names for i, t in enumerate(data) if t["name"] == name)
        animated += [i_g, i_w]
    return data, animated


def _scatter_frames(scatter, steps, g_panel, kernel, result, show: bool) -> list[dict]:
    """Frame dicts: the current grad_out cell, the running sum, the stamp and its outline."""
    running = scatter.running[steps]  # (S, Hp, Wp)
    pad = result.mask("pad_mask")
    values_z = _masked_z(running, pad)
    texts = format_values(running) if show else None
    z, stamp_text = window_grids(scatter.stamps[steps], tap_ids(kernel), _spacing(scatter), show)
    stamp_text = None if stamp_text is None else _plus(stamp_text)
    (ry, rx), span, oW = result.origin, z.shape, g_panel.shape[1]
    many = scatter.grad_out.shape[0] > 1
    frames = []
    for s, t in enumerate(steps):
        r, c = divmod(int(scatter.cells[t]), oW)
        r0, c0 = int(scatter.rows[t, 0]), int(scatter.cols[t, 0])
        values = {"z": values_z[s]}
        stamp = {"x": np.arange(c0, c0 + span[1]) + rx, "y": np.arange(r0, r0 + span[0]) + ry}
        if show:
            values["text"] = texts[s]
            stamp["text"] = stamp_text[s]
        data = [
            box_xy(r, r, c, c, g_panel.origin),
            values,
            stamp,
            box_xy(r0, r0 + span[0] - 1, c0, c0 + span[1] - 1, result.origin),
        ]
        if many:  # the filter this step stamps from: its ∂L/∂y, its kernel's numbers
            k = int(scatter.filters[t])
            g, w = scatter.grad_out[k], scatter.kernels[k]
            data += [{"z": g, "text": format_values(g)}, {"text": format_values(w)}]
        frames.append({"name": str(t), "data": data})
    return frames


def _spacing(scatter: Scatter) -> tuple[int, int]:
    """The dilation: the step between a stamp's rows (cols); 1 for a one-tap axis."""
    rows, cols = scatter.rows[0], scatter.cols[0]
    return (
        int(rows[1] - rows[0]) if len(rows) > 1 else 1,
        int(cols[1] - cols[0]) if len(cols) > 1 else 1,
    )


def _plus(text: np.ndarray) -> np.ndarray:
    """'+3' / '+−2' reads as 'this is added'; empty cells stay empty."""
    out = text.copy()
    positive = (out != "") & ~np.char.startswith(out.astype(str), MINUS) & (out != "0")
    out[positive] = np.char.add("+", out[positive].astype(str)).astype(object)
    return out

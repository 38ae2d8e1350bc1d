"""Which cells a view lights up: a window's cells and taps, the output cells reading an input
cell, the grad_out cells feeding a gradient, a zoomed crop around a window. Masks and index
arithmetic only, from the engine's sweeps; no values are computed here.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from convviz.engine.arrays import InputGradArrays, remainder_mask
from convviz.engine.formulas import Formula
from convviz.engine.ops import copies_mask
from convviz.engine.sweeps import Sweep
from convviz.engine.terms import Symbol
from convviz.render.panel import Panel
from convviz.render.theme import TAP_LABEL_MAX_SIDE

BROWSER_FRAMES = 400  # most frames of a sweep in the browser (a plotly figure's size)
GIF_FRAMES = 60  # most frames of a sweep's GIF (its file size)


def sampled_steps(steps: int, max_frames: int, start: int) -> tuple[np.ndarray, int]:
    """(step indices to draw, k): every k-th step, plus the last one and `start`.

    The one rule for which steps an animation shows: the browser's frames, the GIF's (see
    `gif_steps`), the motions' window stops.
    """
    k = max(1, math.ceil(steps / max(max_frames, 1)))
    picked = np.unique(np.concatenate([np.arange(0, steps, k), [steps - 1, start]]))
    return picked, k


def gif_steps(steps: int, max_frames: int = GIF_FRAMES) -> np.ndarray:
    """The GIF's steps: every m-th of the browser's (opened on the result), and the last, so
    each GIF frame is one the browser shows, whatever the two budgets."""
    shown, _ = sampled_steps(steps, BROWSER_FRAMES, steps - 1)
    m = max(1, math.ceil(len(shown) / max(max_frames, 1)))
    return np.unique(np.concatenate([shown[::m], shown[-1:]]))


def taps_told_apart(panel: Panel, max_side: int) -> bool:
    """Whether colours can tell the panel's taps apart: up to max_side² taps (the most cells a
    grid writes numbers in). A 96×96 ∂L/∂y sliding as the weight gradient's kernel would give
    every cell its own hue, which reads as noise; such a kernel shows its values instead and its
    window is outlined."""
    return panel.taps is None or int(np.max(panel.taps)) < max_side**2


def told_apart(panels, max_side: int) -> list[Panel]:
    """The panels, without the tap colours that `taps_told_apart` finds too many to tell."""
    return [p if taps_told_apart(p, max_side) else replace(p, taps=None) for p in panels]


def tap_grid(kH: int, kW: int, rotated: bool = False) -> np.ndarray:
    """Tap index of each kernel cell (row-major); rotated: the tap each cell holds after 180°."""
    taps = np.arange(kH * kW).reshape(kH, kW)
    return taps[::-1, ::-1] if rotated else taps


def tap_names(kH: int, kW: int) -> tuple[str, ...] | None:
    """Each tap's name by its index in the original kernel (row-major), as a formula writes it:
    w₀₀, w₀₁, …; None for a kernel wider than TAP_LABEL_MAX_SIDE (its cells carry no index)."""
    if max(kH, kW) > TAP_LABEL_MAX_SIDE:
        return None
    return tuple(Symbol("w", divmod(t, kW)).text() for t in range(kH * kW))


def window_mask(shape: tuple[int, int], sweep: Sweep, t: int, channel_taps=None):
    """(highlight mask, taps) of the cells step t covers; taps give each covered cell its tap."""
    mask = np.zeros(shape, dtype=bool)
    taps = np.full(shape, -1)
    rows, cols = sweep.rows[t], sweep.cols[t]
    kh, kw = len(rows), len(cols)
    tap_ids = tap_grid(kh, kw) if channel_taps is None else channel_taps
    mask[np.ix_(rows, cols)] = True
    taps[np.ix_(rows, cols)] = tap_ids
    return mask, taps


def step_of(sweep: Sweep, cell: tuple[int, int]) -> int:
    """The step at which the sweep writes output cell (row, col)."""
    return int(cell[0]) * sweep.out_size[1] + int(cell[1])


def reads(sweep: Sweep, cell: tuple[int, int]) -> np.ndarray:
    """(T,) bool: whether step t's window reads operand cell `cell` (array indices)."""
    r, q = cell
    return (sweep.rows == r).any(axis=1) & (sweep.cols == q).any(axis=1)


def first_reader(sweep: Sweep, cell: tuple[int, int] | None) -> tuple[int, int] | None:
    """The first output cell whose window reads operand cell `cell` (None: none reads it)."""
    steps = np.flatnonzero(reads(sweep, cell)) if cell is not None else ()
    return tuple(map(int, sweep.targets[steps[0]])) if len(steps) else None


def opening(sweep: Sweep, selected: tuple[int, int] | None) -> tuple[int, tuple[int, int]]:
    """The step an animation opens on and the output cell whose sum the page writes: the
    selected cell's, else the last one (the full result on screen)."""
    start = step_of(sweep, selected) if selected else sweep.steps - 1
    return start, selected or tuple(map(int, sweep.targets[start]))


def copies_of(ig: InputGradArrays, cell: tuple[int, int] | None) -> np.ndarray | None:
    """The padded cells that hold input `cell` (itself and, unless zero padding, its copies)."""
    if cell is None:
        return None
    spec = ig.spec
    return copies_mask(spec.in_size, spec.padding, spec.padding_mode, cell)


def grad_x_marks(ig: InputGradArrays) -> dict[str, np.ndarray]:
    """The masks of ∂L/∂x (H, W) for a Panel: the cells no window reads (gradient 0), and of
    them the remainder's (the bottom/right band cropped from x̃)."""
    (pt, _), (pl, _) = ig.spec.padding
    H, W = ig.spec.in_size
    unread = ig.unread_x_mask
    band = remainder_mask(ig.spec)[pt : pt + H, pl : pl + W]
    return {"unread_mask": unread, "remainder_mask": band & unread}


def centre(shape: tuple[int, int]) -> tuple[int, int]:
    """The middle cell of a grid: the default cell whose formula a page shows."""
    return shape[0] // 2, shape[1] // 2


def in_panel(key: str, selected: tuple[str, int, int] | None) -> tuple[int, int] | None:
    """The selected (row, col) if it belongs to panel `key`."""
    return selected[1:] if selected is not None and selected[0] == key else None


def cell_mask(shape, cell) -> np.ndarray | None:
    if cell is None:
        return None
    m = np.zeros(shape, dtype=bool)
    m[cell] = True
    return m


def adds_cells(padding) -> bool:
    """Whether per-side padding ((top, bottom), (left, right)) adds any cell."""
    return any(side for sides in padding for side in sides)


def feeding_cells(formula: Formula, k: int, shape: tuple[int, int]) -> np.ndarray:
    """Bool mask of the grad_out[:, k] cells whose terms reach the formula's cell (non-zero)."""
    mask = np.zeros(shape, dtype=bool)
    for t in formula.terms:
        if t.left.name == "dy" and dict(t.left.tags)["k"] == k:
            mask[t.left.index] = True
    return mask


def users_of(output: Panel, sweep: Sweep, cell: tuple[int, int]) -> Panel:
    """The output Panel with the cells whose window covers operand `cell` highlighted."""
    return replace(output, highlight=reads(sweep, cell).reshape(sweep.out_size))


ZOOM_CELLS = 11  # the most rows/columns a zoomed crop shows: legible numbers at any layer size


def _span(lo: int, hi: int, size: int, most: int) -> tuple[int, int]:
    """[a, b) of at most `most` indices around lo…hi (inclusive), inside 0…size."""
    if hi - lo + 1 >= most:
        return lo, lo + most
    extra = most - (hi - lo + 1)
    a = max(0, min(lo - extra // 2, size - most))
    return a, min(size, a + most)


def crop(panel: Panel, rows: tuple[int, int], cols: tuple[int, int], note: str) -> Panel:
    """Panel rows[0]:rows[1] × cols[0]:cols[1], masks and labels kept (its indices stay the
    big grid's), titled as a zoom."""
    (r0, r1), (c0, c1) = rows, cols
    box = np.s_[r0:r1, c0:c1]

    def cut(m):
        return None if m is None else np.asarray(m)[box]

    oy, ox = panel.origin
    sel = panel.selected
    inside = sel is not None and r0 <= sel[0] < r1 and c0 <= sel[1] < c1
    return replace(
        panel,
        values=np.asarray(panel.values)[box],
        title=f"{panel.title} (zoom)",
        pad_mask=cut(panel.pad_mask),
        dilation_mask=cut(panel.dilation_mask),
        remainder_mask=cut(panel.remainder_mask),
        unread_mask=cut(panel.unread_mask),
        dropped_mask=cut(panel.dropped_mask),
        taps=cut(panel.taps),
        highlight=cut(panel.highlight),
        selected=(sel[0] - r0, sel[1] - c0) if inside else None,
        origin=(oy + r0, ox + c0),
        offset=(panel.offset[0] + r0, panel.offset[1] + c0),
        subtitle=f"rows {oy + r0}…{oy + r1 - 1}, columns {ox + c0}…{ox + c1 - 1}: {note}",
    )


def close_up(panel: Panel, cell: tuple[int, int] | None, most: int = ZOOM_CELLS) -> Panel:
    """The cells of a big panel around `cell` (array indices; its selected cell, else its
    centre), `most` a side: numbers a grid too big to number hides. A selected cell stays
    outlined; the centre is not (nothing was selected)."""
    cell = cell or panel.selected or centre(panel.shape)
    (h, w), (r, c) = panel.shape, cell
    rows, cols = _span(r, r, h, most), _span(c, c, w, most)
    where = "around the selected cell" if panel.selected else "around the centre"
    return crop(panel, rows, cols, where)


def zoom_panels(
    sweep: Sweep,
    operand: Panel,
    kernel: Panel,
    output: Panel,
    cell: tuple[int, int] | None = None,
    most: int = ZOOM_CELLS,
) -> list[Panel]:
    """A readable close-up of a sweep too big to number: the window of output `cell` (the
    selected one, else the output's centre) and its neighbourhood on the operand, the kernel
    (its top-left corner if it is big), and the output around the cell. Values are the panels'
    own (the engine's), cropped; the window's taps are coloured as in the animation."""
    cell = cell or output.selected or centre(output.shape)
    t = step_of(sweep, cell)
    rows, cols = sweep.rows[t], sweep.cols[t]
    high, taps = window_mask(operand.shape, sweep, t, kernel.taps)
    op = replace(operand, highlight=high, taps=taps)
    out = replace(output, selected=tuple(cell), highlight=None)
    (kh, kw), (oh, ow), (H, W) = kernel.shape, output.shape, operand.shape
    whole = max(rows[-1] - rows[0], cols[-1] - cols[0]) < most  # the window fits the crop
    window = "the window" if whole else "the window's top-left corner"
    panels = [
        crop(op, _span(rows[0], rows[-1], H, most), _span(cols[0], cols[-1], W, most), window),
        kernel
        if max(kernel.shape) <= most
        else crop(kernel, (0, min(kh, most)), (0, min(kw, most)), "its top-left corner"),
        crop(out, _span(cell[0], cell[0], oh, most), _span(cell[1], cell[1], ow, most), "the cell"),
    ]
    return panels

"""Stories: engine stages turned into the Panels each page draws, with captions and links.

Which cells a selected cell depends on comes from the engine's sweeps (rows × cols of its step);
this module only turns those into highlight masks. No arithmetic on values happens here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from convviz.formulas import Formula
from convviz.ops import copies_mask
from convviz.render.motion import Motion
from convviz.render.motion_stages import (
    backward_motion,
    dilate_motion,
    mask_motion,
    pad_motion,
    rotate_motion,
    weight_motion,
)
from convviz.render.panel import Panel
from convviz.spec import ConvSpec
from convviz.stages import ForwardStages, InputGradStages, Layer, WeightGradStages
from convviz.sweeps import Sweep
from convviz.text import RECITATION_NOTE, count, slice_name


@dataclass(frozen=True)
class Step:
    """One step of a storyboard: what it shows, one or two sentences, and its grids."""

    title: str  # short, for the step buttons
    heading: str  # a sentence, above the step's figure and on its exports
    caption: str
    panels: list[Panel] = field(default_factory=list)


def _shape(a: np.ndarray) -> str:
    return "×".join(str(s) for s in a.shape)


_count = count


def _pads(padding) -> bool:
    """Whether per-side padding ((top, bottom), (left, right)) adds any cell."""
    return any(side for sides in padding for side in sides)


def _padded_title(name: str, padding) -> str:
    """'input x[n=0, c=0], padded', or without ', padded' when the padding adds nothing."""
    return f"{name}, padded" if _pads(padding) else name


def _padded_note(x: np.ndarray, x_padded: np.ndarray) -> str:
    """'5×5 → padded 7×7', or '5×5, no padding' when the padding adds nothing."""
    if x.shape == x_padded.shape:
        return f"{_shape(x)}, no padding"
    return f"{_shape(x)} → padded {_shape(x_padded)}"


def tap_grid(kH: int, kW: int, rotated: bool = False) -> np.ndarray:
    """Tap index of each kernel cell (row-major); rotated: the tap each cell holds after 180°."""
    taps = np.arange(kH * kW).reshape(kH, kW)
    return taps[::-1, ::-1] if rotated else taps


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


def _copies(st: InputGradStages, cell: tuple[int, int] | None) -> np.ndarray | None:
    """The padded cells that hold input `cell` (itself and, unless zero padding, its copies)."""
    if cell is None:
        return None
    spec = st.spec
    return copies_mask(spec.in_size, spec.padding, spec.padding_mode, cell)


def centre(shape: tuple[int, int]) -> tuple[int, int]:
    """The middle cell of a grid: the default cell whose formula a page shows."""
    return shape[0] // 2, shape[1] // 2


def _in(key: str, selected: tuple[str, int, int] | None) -> tuple[int, int] | None:
    """The selected (row, col) if it belongs to panel `key`."""
    return selected[1:] if selected is not None and selected[0] == key else None


def _cell_mask(shape, cell) -> np.ndarray | None:
    if cell is None:
        return None
    m = np.zeros(shape, dtype=bool)
    m[cell] = True
    return m


def forward_panels(
    st: ForwardStages, sweep: Sweep, n: int, k: int, c: int, selected: tuple[int, int] | None = None
) -> list[Panel]:
    """x_padded[n, c], w[k, c] and y[n, k]; a selected y cell lights up its window."""
    spec = st.spec
    (pt, _), (pl, _) = spec.padding
    highlight = taps = None
    if selected is not None:
        highlight, taps = window_mask(spec.padded_size, sweep, step_of(sweep, selected))
    return [
        Panel(
            st.x_padded[n, c],
            _padded_title(f"input {slice_name('x', n=n, c=c)}", spec.padding),
            "x",
            pad_mask=st.pad_mask,
            remainder_mask=st.remainder_mask,
            taps=taps,
            highlight=highlight,
            origin=(-pt, -pl),
            subtitle=_padded_note(st.x[n, c], st.x_padded[n, c]),
        ),
        Panel(
            st.w[k, c],
            f"kernel {slice_name('w', k=k, c=c)}",
            "w",
            taps=tap_grid(*spec.kernel_size),
            subtitle=f"{_shape(st.w[k, c])}, dilation {spec.dilation[0]}×{spec.dilation[1]}",
        ),
        Panel(
            st.y[n, k],
            f"output {slice_name('y', n=n, k=k)}",
            "y",
            selected=selected,
            highlight=_cell_mask(spec.out_size, selected),
            subtitle=f"{_shape(st.y[n, k])}, stride {spec.stride[0]}×{spec.stride[1]}",
        ),
    ]


def feeding_cells(formula: Formula, k: int, shape: tuple[int, int]) -> np.ndarray:
    """Bool mask of the grad_out[:, k] cells whose terms reach the formula's cell (non-zero)."""
    mask = np.zeros(shape, dtype=bool)
    for t in formula.terms:
        if t.left.name == "dy" and dict(t.left.tags).get("k", k) == k:
            mask[t.left.index] = True
    return mask


def input_grad_story(
    st: InputGradStages,
    n: int,
    k: int,
    c: int,
    feeding: np.ndarray | None = None,
    selected: tuple[str, int, int] | None = None,
) -> list[Step]:
    """The textbook route, one Step per stage, for grad_out[n, k] and input channel c.

    feeding : bool mask over grad_out[n, k] of the cells that reach the selected cell;
    selected : (panel key, row, col) of the selected grad_x or grad_x_padded cell.
    """
    return [
        _grad_out_step(st, n, k, feeding),
        _dilate_step(st, n, k),
        _pad_step(st, n, k),
        _rotate_step(st, k, c),
        _correlate_step(st, n, k, c),
        _mask_step(st, n, c, selected),
    ]


def _grad_out_step(st: InputGradStages, n: int, k: int, feeding) -> Step:
    g = st.grad_out[n, k]
    return Step(
        "1 · ∂L/∂y",
        "∂L/∂y, the gradient from the next layer",
        f"∂L/∂y arrives from the next layer: {_shape(g)}.",
        [Panel(g, slice_name("∂L/∂y", n=n, k=k), "grad_out", highlight=feeding)],
    )


def _dilate_step(st: InputGradStages, n: int, k: int) -> Step:
    spread = st.dilation_mask.any()  # a stride > 1 with at least two cells along it
    title = f"{slice_name('∂L/∂y', n=n, k=k)}{', dilated' if spread else ''}"
    return Step(
        "2 · dilate",
        "Dilate ∂L/∂y by the stride",
        _dilate_caption(st.spec.stride, st.dilated[n, k], spread),
        [
            Panel(
                st.dilated[n, k],
                title,
                "dilated",
                dilation_mask=st.dilation_mask,
                subtitle=_shape(st.dilated[n, k]),
            )
        ],
    )


def _pad_caption(spec: ConvSpec, padded: np.ndarray) -> str:
    eh, ew = spec.span
    (gt, gb), (gl, gr) = spec.full_padding
    rH, rW = spec.remainder
    if not _pads(spec.full_padding):  # a 1×1 kernel, no remainder
        return (
            f"A 1×1 kernel reaches no further than its cell: nothing to pad, "
            f"the grid stays {_shape(padded)}."
        )
    rest = (
        f", plus the remainder ({_count(rH, 'row')}, {_count(rW, 'column')}) at the bottom/right"
        if rH or rW
        else ""
    )
    return (
        f"Pad with zeros: dil·(k − 1) = {_count(eh - 1, 'row')} / {_count(ew - 1, 'column')} "
        f"per side{rest}: ({gt}, {gb}) × ({gl}, {gr}) → {_shape(padded)}."
    )


def _grad_operand_title(st: InputGradStages, n: int, k: int) -> str:
    """∂L/∂y[n=…, k=…] with the words that fit: padded and/or dilated, or neither."""
    words = [
        word
        for word, mask in (("padded", st.padded_ring), ("dilated", st.padded_dilation_mask))
        if mask.any()
    ]
    return slice_name("∂L/∂y", n=n, k=k) + (f", {' and '.join(words)}" if words else "")


def _pad_step(st: InputGradStages, n: int, k: int) -> Step:
    spec = st.spec
    (gt, _), (gl, _) = spec.full_padding
    return Step(
        "3 · pad",
        "Pad it for the full correlation",
        _pad_caption(spec, st.padded[n, k]),
        [
            Panel(
                st.padded[n, k],
                _grad_operand_title(st, n, k),
                "padded",
                pad_mask=st.padded_ring,
                dilation_mask=st.padded_dilation_mask,
                origin=(-gt, -gl),
                subtitle=_shape(st.padded[n, k]),
            )
        ],
    )


def _rotate_step(st: InputGradStages, k: int, c: int) -> Step:
    kH, kW = st.spec.kernel_size
    return Step(
        "4 · rotate 180°",
        "Rotate the kernel 180°",
        "Flip up-down, then left-right; every tap keeps its colour, so you can follow it. "
        f"Channels swap: the kernel of filter k={k} on channel c={c} now carries the gradient "
        f"from output channel {k} back to input channel {c}.",
        [
            Panel(st.w[k, c], slice_name("w", k=k, c=c), "w", taps=tap_grid(kH, kW)),
            Panel(
                st.w_rot[c, k],
                f"rot180 {slice_name('w', k=k, c=c)}",
                "w_rot",
                taps=tap_grid(kH, kW, rotated=True),
            ),
        ],
    )


def _correlate_caption(spec: ConvSpec, n: int, k: int, c: int, shape) -> str:
    K = spec.out_channels
    text = (
        f"Slide the rotated kernel (dilation {spec.dilation[0]}×{spec.dilation[1]}) over the "
        f"padded grid one cell at a time: the gradient of every padded-input cell, ring "
        f"included: {'×'.join(map(str, shape))}."
    )
    if K > 1:
        text += (
            f" With {_count(K, 'filter')}, {slice_name('∂L/∂x̃', n=n, c=c)} is the sum over "
            f"the filters of one such correlation each; this view shows filter k={k}."
        )
    return f"{text} {RECITATION_NOTE}"


def _correlate_step(st: InputGradStages, n: int, k: int, c: int) -> Step:
    return Step(
        "5 · correlate",
        "Full correlation at stride 1",
        _correlate_caption(st.spec, n, k, c, st.grad_x_padded[n, c].shape),
        [],
    )


def _mask_step(st: InputGradStages, n: int, c: int, selected) -> Step:
    spec = st.spec
    (pt, _), (pl, _) = spec.padding
    mode, padded = spec.padding_mode, _pads(spec.padding)
    ring = "padded input" if padded else "no padding: the same cells as ∂L/∂x"
    return Step(
        "6 · mask",
        "Mask the padded ring, crop to ∂L/∂x" if padded else "No ring to mask: ∂L/∂x̃ is ∂L/∂x",
        _mask_caption(spec.padding, mode),
        [
            Panel(
                st.grad_x_padded[n, c],
                slice_name("∂L/∂x̃", n=n, c=c),
                "grad_x_padded",
                pad_mask=st.pad_mask,
                dropped_mask=st.pad_mask if mode == "zeros" else None,
                origin=(-pt, -pl),
                subtitle=f"{_shape(st.grad_x_padded[n, c])}, {ring}",
                selected=_in("grad_x_padded", selected),
                highlight=_copies(st, _in("grad_x", selected)),
            ),
            Panel(
                st.grad_x[n, c],
                slice_name("∂L/∂x", n=n, c=c),
                "grad_x",
                subtitle=_shape(st.grad_x[n, c]),
                selected=_in("grad_x", selected),
            ),
        ],
    )


def stage_motion(
    st: InputGradStages,
    stage: int,
    n: int,
    k: int,
    c: int,
    selected: tuple[str, int, int] | None = None,
) -> Motion | None:
    """The motion of storyboard stage `stage` (0-based), or None where the stage is a still
    (∂L/∂y as it arrives) or the sliding window (the full correlation, `input_grad_animation`).

    selected : (panel key, row, col) of a selected grad_x or grad_x_padded cell: the mask
        outlines it (and its padded copies, which travel back onto it).
    """
    if stage == 5:
        copies = _copies(st, _in("grad_x", selected))
        if copies is None:
            copies = _cell_mask(st.spec.padded_size, _in("grad_x_padded", selected))
        return mask_motion(st, n, c, selected=copies)
    motions = {
        1: lambda: dilate_motion(st, n, k),
        2: lambda: pad_motion(st, n, k),
        3: lambda: rotate_motion(st, k, c),
    }
    return motions[stage]() if stage in motions else None


def whole_pass(st: InputGradStages, sweep: Sweep, n: int, k: int, c: int) -> Motion:
    """∂L/∂y → dilate → pad → rotate → full correlation → mask → ∂L/∂x as one motion."""
    return backward_motion(st, sweep, n, k, c)


WHOLE_PASS = "The whole backward pass: ∂L/∂y → dilate → pad → rotate → correlate → mask → ∂L/∂x"


def _dilate_caption(stride: tuple[int, int], dilated: np.ndarray, spread: bool) -> str:
    sh, sw = stride
    if sh == sw == 1:
        return f"Stride 1: there are no zeros to insert, ∂L/∂y stays {_shape(dilated)}."
    if not spread:
        return (
            f"Stride {sh}×{sw}, but ∂L/∂y has no two neighbouring cells along a strided axis: "
            f"there are no zeros to insert, it stays {_shape(dilated)}."
        )
    return (
        f"Insert stride − 1 = {sh - 1}×{sw - 1} zeros between neighbouring cells, so each "
        f"gradient sits where its window started: {_shape(dilated)}."
    )


def _mask_caption(padding, mode: str) -> str:
    """Step 6 in words that fit the layer: no ring, a ring of zeros, or a ring of copies."""
    if not any(side for sides in padding for side in sides):
        return "This layer has no padding, so there is no ring to mask: ∂L/∂x̃ is ∂L/∂x."
    if mode == "zeros":
        return (
            "The gradient on the padded ring is dropped: the padded zeros are constants. "
            "What is left is ∂L/∂x."
        )
    return (
        f"The gradient on the padded ring is added back onto the cells the {mode} padding "
        "copied them from. What is left is ∂L/∂x. Outlined: the selected cell and its padded "
        "copies, whose gradients add up."
    )


def weight_grad_panels(
    st: WeightGradStages,
    sweep: Sweep,
    n: int,
    k: int,
    c: int,
    selected: tuple[int, int] | None = None,
) -> list[Panel]:
    """x_padded[n, c], grad_out[n, k] (the sliding 'kernel', dilated by the stride) and grad_w."""
    spec = st.spec
    (pt, _), (pl, _) = spec.padding
    rH, rW = spec.reach
    operand = st.x_padded[n, c, :rH, :rW]
    highlight = taps = None
    if selected is not None:
        highlight, taps = window_mask(operand.shape, sweep, step_of(sweep, selected))
    return [
        Panel(
            operand,
            _padded_title(f"input {slice_name('x', n=n, c=c)}", spec.padding),
            "x",
            pad_mask=st.pad_mask[:rH, :rW],
            taps=taps,
            highlight=highlight,
            origin=(-pt, -pl),
            subtitle=_shape(operand),
        ),
        Panel(
            st.grad_out[n, k],
            slice_name("∂L/∂y", n=n, k=k),
            "grad_out",
            taps=tap_grid(*spec.out_size),
            subtitle=f"{_shape(st.grad_out[n, k])}, "
            f"spread by the stride {spec.stride[0]}×{spec.stride[1]}",
        ),
        Panel(
            st.grad_w[k, c],
            slice_name("∂L/∂w", k=k, c=c),
            "grad_w",
            selected=selected,
            highlight=_cell_mask(spec.kernel_size, selected),
            subtitle=f"{_shape(st.grad_w[k, c])}, Σ over {_count(spec.batch, 'sample')}",
        ),
    ]


def overview_panels(lay: Layer, n: int, k: int, c: int) -> tuple[list[Panel], list[Panel]]:
    """The layer at a glance: (x padded, w, y) and (grad_out, grad_x, grad_w) for one slice."""
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    (pt, _), (pl, _) = fw.spec.padding
    forward = [
        Panel(
            fw.x_padded[n, c],
            _padded_title(slice_name("x", n=n, c=c), fw.spec.padding),
            "x",
            pad_mask=fw.pad_mask,
            remainder_mask=fw.remainder_mask,
            origin=(-pt, -pl),
            subtitle=_padded_note(fw.x[n, c], fw.x_padded[n, c]),
        ),
        Panel(
            fw.w[k, c],
            slice_name("w", k=k, c=c),
            "w",
            taps=tap_grid(*fw.spec.kernel_size),
            subtitle=_shape(fw.w[k, c]),
        ),
        Panel(fw.y[n, k], slice_name("y", n=n, k=k), "y", subtitle=_shape(fw.y[n, k])),
    ]
    backward = [
        Panel(ig.grad_out[n, k], slice_name("∂L/∂y", n=n, k=k), "grad_out", subtitle="given"),
        Panel(
            ig.grad_x[n, c],
            slice_name("∂L/∂x", n=n, c=c),
            "grad_x",
            subtitle=_shape(ig.grad_x[n, c]),
        ),
        Panel(
            wg.grad_w[k, c],
            slice_name("∂L/∂w", k=k, c=c),
            "grad_w",
            subtitle=_shape(wg.grad_w[k, c]),
        ),
    ]
    return forward, backward


def shape_rows(lay: Layer) -> list[dict]:
    """One row per array of the layer: its name, shape and role."""
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    rows = [
        ("x", fw.x, "input (N, C_in, H, W)"),
        ("x padded", fw.x_padded, "input with the padding ring"),
        ("w", fw.w, "kernel (C_out, C_in, kH, kW)"),
        ("y", fw.y, "output (N, C_out, oH, oW)"),
        ("∂L/∂y", ig.grad_out, "gradient from the next layer"),
        ("∂L/∂y dilated", ig.dilated, "stride − 1 zeros between cells"),
        ("∂L/∂y dilated, padded", ig.padded, "ready for the full correlation"),
        ("∂L/∂x̃", ig.grad_x_padded, "gradient on the padded input, ring included"),
        ("∂L/∂x", ig.grad_x, "input gradient, after the mask"),
        ("∂L/∂w", wg.grad_w, "weight gradient, Σ over the batch"),
        ("∂L/∂b", wg.grad_b, "bias gradient, Σ over batch and space"),
    ]
    return [
        {"array": name, "shape": " × ".join(map(str, a.shape)), "what": what}
        for name, a, what in rows
    ]


def users_of(output: Panel, sweep: Sweep, cell: tuple[int, int]) -> Panel:
    """The output Panel with the cells whose window covers operand `cell` highlighted."""
    r, q = cell
    covers = (sweep.rows == r).any(axis=1) & (sweep.cols == q).any(axis=1)  # (T,)
    return replace(output, highlight=covers.reshape(sweep.out_size))


def input_grad_animation(
    st: InputGradStages,
    sweep: Sweep,
    n: int,
    k: int,
    c: int,
    selected: tuple[int, int] | None = None,
) -> list[Panel]:
    """Operand, kernel and output of the full correlation (the sweep's channel is filter k)."""
    spec = st.spec
    (gt, _), (gl, _) = spec.full_padding
    (pt, _), (pl, _) = spec.padding
    highlight = taps = None
    if selected is not None:
        highlight, taps = window_mask(
            st.padded.shape[-2:],
            sweep,
            step_of(sweep, selected),
            tap_grid(*spec.kernel_size, rotated=True),
        )
    return [
        Panel(
            st.padded[n, k],
            _grad_operand_title(st, n, k),
            "padded",
            pad_mask=st.padded_ring,
            dilation_mask=st.padded_dilation_mask,
            taps=taps,
            highlight=highlight,
            origin=(-gt, -gl),
            subtitle=_shape(st.padded[n, k]),
        ),
        Panel(
            st.w_rot[c, k],
            f"rot180 {slice_name('w', k=k, c=c)}",
            "w_rot",
            taps=tap_grid(*spec.kernel_size, rotated=True),
            subtitle="rotated 180°",
        ),
        Panel(
            st.grad_x_padded[n, c],
            f"{slice_name('∂L/∂x̃', n=n, c=c)} from filter k={k}"
            if spec.out_channels > 1
            else slice_name("∂L/∂x̃", n=n, c=c),
            "grad_x_padded",
            pad_mask=st.pad_mask,
            selected=selected,
            origin=(-pt, -pl),
            subtitle="padded input, ring included" if _pads(spec.padding) else "no padding",
        ),
    ]


def scatter_panels(lay: Layer, n: int, k: int, c: int) -> list[Panel]:
    """Kernel, grad_out and the padded-input gradient for the scatter route of (n, c)."""
    fw, ig = lay.forward, lay.input_grad
    (pt, _), (pl, _) = fw.spec.padding
    return [
        Panel(fw.w[k, c], slice_name("w", k=k, c=c), "w", taps=tap_grid(*fw.spec.kernel_size)),
        Panel(ig.grad_out[n, k], slice_name("∂L/∂y", n=n, k=k), "grad_out"),
        Panel(
            ig.grad_x_padded[n, c],
            slice_name("∂L/∂x̃", n=n, c=c),
            "grad_x_padded",
            pad_mask=fw.pad_mask,
            remainder_mask=fw.remainder_mask,
            origin=(-pt, -pl),
        ),
    ]


def window_motion(st: WeightGradStages, sweep: Sweep, n: int, k: int, c: int) -> Motion:
    """∂L/∂y[n, k] spreads by the stride into the window that sweeps x̃[n, c] (sweep: (k, c))."""
    return weight_motion(st, sweep, n, k, c)


def dilated_grad_panel(st: WeightGradStages, n: int, k: int) -> Panel:
    """∂L/∂y[n, k] with stride − 1 zeros between cells: the spacing the weight window sees."""
    return Panel(
        st.dilated[n, k],
        f"{slice_name('∂L/∂y', n=n, k=k)}, dilated by the stride"
        if st.dilation_mask.any()
        else f"{slice_name('∂L/∂y', n=n, k=k)} (no zeros to insert)",
        "dilated",
        dilation_mask=st.dilation_mask,
        subtitle=_shape(st.dilated[n, k]),
    )


@dataclass(frozen=True)
class Grid:
    """A rows × cols grid of small heatmaps for the channels page."""

    key: str
    title: str
    arrays: np.ndarray  # (rows, cols, h, w)
    row_labels: list[str]
    col_labels: list[str]
    caption: str = ""
    selected: tuple[int, int] | None = None  # the tile of the slice the other views show


def channel_grids(
    lay: Layer, n: int, c: int, contributions: np.ndarray, k: int | None = None
) -> list[Grid]:
    """x[n] by channel, grad_w as filters × channels, grad_x[n, c] as a sum over filters.

    contributions : (C_out, H, W), each filter's share of grad_x[n, c] (engine data);
    k : the filter the other views show; its tiles are outlined (with channel c).
    """
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    K, C = fw.spec.out_channels, fw.spec.in_channels
    chans = [f"c={i}" for i in range(C)]
    return [
        Grid(
            "x",
            f"input {slice_name('x', n=n)}: {_count(C, 'channel')}",
            fw.x[n][None],
            [""],
            chans,
            selected=None if k is None else (0, c),
        ),
        Grid(
            "grad_w",
            f"∂L/∂w: {_count(K, 'filter')} × {_count(C, 'channel')}, each a small correlation",
            wg.grad_w,
            [f"k={i}" for i in range(K)],
            chans,
            "Row k, column c is x̃[:, c] ⋆ dilate(∂L/∂y[:, k]), summed over the batch"
            + (
                f"; outlined: k={k}, c={c}, drawn with its operands below."
                if k is not None
                else "."
            ),
            None if k is None else (k, c),
        ),
        Grid(
            "sum_k",
            f"{slice_name('∂L/∂x', n=n, c=c)} = Σ over "
            + ("the " + _count(K, "filter") if K > 1 else "its 1 filter"),
            np.concatenate([contributions, ig.grad_x[n, c][None]])[None],
            [""],
            [*(f"from k={i}" for i in range(K)), "Σ = ∂L/∂x"],
            "Each filter sends back its own full correlation; the channel's gradient is their sum.",
            None if k is None else (0, k),
        ),
        Grid(
            "grad_x",
            f"{slice_name('∂L/∂x', n=n)}: every channel",
            ig.grad_x[n][None],
            [""],
            chans,
            selected=None if k is None else (0, c),
        ),
    ]


def _sub(r: int, c: int) -> str:
    return f"{r},{c}" if max(abs(r), abs(c)) > 9 or min(r, c) < 0 else f"{r}{c}"


def feeds_text(sweep: Sweep, cell: tuple[int, int], origin: tuple[int, int]) -> str:
    """Which output cells read operand cell `cell`, through which tap: the forward pass seen
    from one input, which is exactly the list of terms of that input's gradient."""
    r, q = cell
    hit_r, hit_c = sweep.rows == r, sweep.cols == q  # (T, kh), (T, kw)
    steps = np.flatnonzero(hit_r.any(axis=1) & hit_c.any(axis=1))
    name = f"x_{{{_sub(r + origin[0], q + origin[1])}}}"
    if steps.size == 0:
        return f"${name}$ is read by no window (a remainder cell): its gradient is 0."
    pairs = [(sweep.targets[t], hit_r[t].argmax(), hit_c[t].argmax()) for t in steps]
    reads = ", ".join(f"$y_{{{_sub(*o)}}}$ through $f_{{{a}{b}}}$" for o, a, b in pairs)
    grad = " + ".join(
        rf"\frac{{\partial L}}{{\partial y_{{{_sub(*o)}}}}} f_{{{a}{b}}}" for o, a, b in pairs
    )
    return (
        f"${name}$ is read by {reads}. So, by the chain rule, "
        rf"$\frac{{\partial L}}{{\partial {name}}} = {grad}$ (see the Input gradient page)."
    )


def formula_notes(formula: Formula) -> str:
    """What the mask did to a gradient cell, in words."""
    if formula.dropped:
        return "This cell is on the zero-padded ring: the mask drops its gradient."
    if formula.groups:
        copies = len(formula.groups) - 1
        return (
            f"This cell has {_count(copies, 'padded copy', 'padded copies')} on the "
            "ring: their gradients fold back onto it, so its ∂L/∂x is its own ∂L/∂x̃ plus theirs."
        )
    return ""


def layer_summary(spec: ConvSpec, n: int) -> str:
    """One line: the input's channels, the filters and the output, e.g. for the Channels page."""
    (H, W), (kH, kW), (oH, oW) = spec.in_size, spec.kernel_size, spec.out_size
    C, K = spec.in_channels, spec.out_channels
    return (
        f"**Input {slice_name('x', n=n)}**: {_count(C, 'channel')} of {H}×{W}; "
        f"**{_count(K, 'filter')}** of {C}×{kH}×{kW}; **output** {K}×{oH}×{oW}."
    )


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
        dropped_mask=cut(panel.dropped_mask),
        taps=cut(panel.taps),
        highlight=cut(panel.highlight),
        selected=(sel[0] - r0, sel[1] - c0) if inside else None,
        origin=(oy + r0, ox + c0),
        subtitle=f"rows {oy + r0}…{oy + r1 - 1}, columns {ox + c0}…{ox + c1 - 1}: {note}",
    )


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
    out = replace(output, selected=tuple(cell), highlight=_cell_mask(output.shape, cell))
    (kh, kw), (oh, ow), (H, W) = kernel.shape, output.shape, operand.shape
    panels = [
        crop(
            op, _span(rows[0], rows[-1], H, most), _span(cols[0], cols[-1], W, most), "the window"
        ),
        kernel
        if max(kernel.shape) <= most
        else crop(kernel, (0, min(kh, most)), (0, min(kw, most)), "its top-left corner"),
        crop(out, _span(cell[0], cell[0], oh, most), _span(cell[1], cell[1], ow, most), "the cell"),
    ]
    return panels

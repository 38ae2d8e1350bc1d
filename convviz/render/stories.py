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


@dataclass(frozen=True)
class Step:
    """One step of a storyboard: what it shows, one or two sentences, and its grids."""

    title: str  # short, for the step buttons
    caption: str
    panels: list[Panel] = field(default_factory=list)

    @property
    def heading(self) -> str:
        return _HEADINGS.get(self.title.split(" · ")[-1], self.title)


_HEADINGS = {
    "∂L/∂y": "∂L/∂y, the gradient from the next layer",
    "dilate": "Dilate ∂L/∂y by the stride",
    "pad": "Pad it for the full correlation",
    "rotate 180°": "Rotate the kernel 180°",
    "correlate": "Full correlation at stride 1",
    "mask": "Mask the padded ring, crop to ∂L/∂x",
}


def _shape(a: np.ndarray) -> str:
    return "×".join(str(s) for s in a.shape)


def _count(n: int, word: str, plural: str = "") -> str:
    """'1 row', '2 rows', '0 rows': a count with its noun in the right number."""
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


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
    label = f" (n={n}, c={c})" if spec.batch > 1 or spec.in_channels > 1 else ""
    return [
        Panel(
            st.x_padded[n, c],
            f"input x, padded{label}",
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
            f"kernel w[{k}, {c}]",
            "w",
            taps=tap_grid(*spec.kernel_size),
            subtitle=f"{_shape(st.w[k, c])}, dilation {spec.dilation[0]}×{spec.dilation[1]}",
        ),
        Panel(
            st.y[n, k],
            f"output y[{n}, {k}]",
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
    spec = st.spec
    eh, ew = spec.span
    (gt, gb), (gl, gr) = spec.full_padding
    rH, rW = spec.remainder
    kH, kW = spec.kernel_size
    (pt, _), (pl, _) = spec.padding
    mode = spec.padding_mode
    return [
        Step(
            "1 · ∂L/∂y",
            f"∂L/∂y arrives from the next layer: {_shape(st.grad_out[n, k])}.",
            [Panel(st.grad_out[n, k], f"∂L/∂y[{n}, {k}]", "grad_out", highlight=feeding)],
        ),
        Step(
            "2 · dilate",
            _dilate_caption(spec.stride, st.dilated[n, k]),
            [
                Panel(
                    st.dilated[n, k],
                    "dilated ∂L/∂y",
                    "dilated",
                    dilation_mask=st.dilation_mask,
                    subtitle=_shape(st.dilated[n, k]),
                )
            ],
        ),
        Step(
            "3 · pad",
            f"Pad with zeros: dil·(k − 1) = {_count(eh - 1, 'row')} / "
            f"{_count(ew - 1, 'column')} per side"
            + (
                f", plus the remainder ({_count(rH, 'row')}, {_count(rW, 'column')}) at the "
                "bottom/right"
                if rH or rW
                else ""
            )
            + f": ({gt}, {gb}) × ({gl}, {gr}) → {_shape(st.padded[n, k])}.",
            [
                Panel(
                    st.padded[n, k],
                    "padded, dilated ∂L/∂y",
                    "padded",
                    pad_mask=st.padded_ring,
                    dilation_mask=st.padded_dilation_mask,
                    origin=(-gt, -gl),
                    subtitle=_shape(st.padded[n, k]),
                )
            ],
        ),
        Step(
            "4 · rotate 180°",
            "Flip up-down, then left-right; every tap keeps its colour, so you can follow it. "
            "Channels swap: the filter for output k becomes a filter for input c.",
            [
                Panel(
                    st.w[k, c],
                    f"w[{k}, {c}]",
                    "w",
                    taps=tap_grid(kH, kW),
                ),
                Panel(
                    st.w_rot[c, k],
                    f"rot180 w[{k}, {c}]",
                    "w_rot",
                    taps=tap_grid(kH, kW, rotated=True),
                ),
            ],
        ),
        Step(
            "5 · correlate",
            f"Slide the rotated kernel (dilation {spec.dilation[0]}×{spec.dilation[1]}) over "
            f"the padded grid one cell at a time: the gradient of every padded-input cell, "
            f"ring included: {_shape(st.grad_x_padded[n, c])}.",
            [],
        ),
        Step(
            "6 · mask",
            _mask_caption(spec.padding, mode),
            [
                Panel(
                    st.grad_x_padded[n, c],
                    "∂L/∂x̃ (padded input)",
                    "grad_x_padded",
                    pad_mask=st.pad_mask,
                    dropped_mask=st.pad_mask if mode == "zeros" else None,
                    origin=(-pt, -pl),
                    subtitle=_shape(st.grad_x_padded[n, c]),
                    selected=_in("grad_x_padded", selected),
                    highlight=_copies(st, _in("grad_x", selected)),
                ),
                Panel(
                    st.grad_x[n, c],
                    f"∂L/∂x[{n}, {c}]",
                    "grad_x",
                    subtitle=_shape(st.grad_x[n, c]),
                    selected=_in("grad_x", selected),
                ),
            ],
        ),
    ]


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


def _dilate_caption(stride: tuple[int, int], dilated: np.ndarray) -> str:
    sh, sw = stride
    if sh == sw == 1:
        return f"Stride 1: there are no zeros to insert, ∂L/∂y stays {_shape(dilated)}."
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
            f"input x[{n}, {c}], padded",
            "x",
            pad_mask=st.pad_mask[:rH, :rW],
            taps=taps,
            highlight=highlight,
            origin=(-pt, -pl),
            subtitle=_shape(operand),
        ),
        Panel(
            st.grad_out[n, k],
            f"∂L/∂y[{n}, {k}]",
            "grad_out",
            taps=tap_grid(*spec.out_size),
            subtitle=f"{_shape(st.grad_out[n, k])}, "
            f"spread by the stride {spec.stride[0]}×{spec.stride[1]}",
        ),
        Panel(
            st.grad_w[k, c],
            f"∂L/∂w[{k}, {c}]",
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
            f"x[{n}, {c}] padded",
            "x",
            pad_mask=fw.pad_mask,
            remainder_mask=fw.remainder_mask,
            origin=(-pt, -pl),
            subtitle=_padded_note(fw.x[n, c], fw.x_padded[n, c]),
        ),
        Panel(
            fw.w[k, c],
            f"w[{k}, {c}]",
            "w",
            taps=tap_grid(*fw.spec.kernel_size),
            subtitle=_shape(fw.w[k, c]),
        ),
        Panel(fw.y[n, k], f"y[{n}, {k}]", "y", subtitle=_shape(fw.y[n, k])),
    ]
    backward = [
        Panel(ig.grad_out[n, k], f"∂L/∂y[{n}, {k}]", "grad_out", subtitle="given"),
        Panel(ig.grad_x[n, c], f"∂L/∂x[{n}, {c}]", "grad_x", subtitle=_shape(ig.grad_x[n, c])),
        Panel(wg.grad_w[k, c], f"∂L/∂w[{k}, {c}]", "grad_w", subtitle=_shape(wg.grad_w[k, c])),
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
            f"padded, dilated ∂L/∂y[{n}, {k}]",
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
            f"rot180 w[{k}, {c}]",
            "w_rot",
            taps=tap_grid(*spec.kernel_size, rotated=True),
            subtitle="rotated 180°",
        ),
        Panel(
            st.grad_x_padded[n, c],
            f"∂L/∂x̃[{n}, {c}]",
            "grad_x_padded",
            pad_mask=st.pad_mask,
            selected=selected,
            origin=(-pt, -pl),
            subtitle="padded input, ring included",
        ),
    ]


def scatter_panels(lay: Layer, n: int, k: int, c: int) -> list[Panel]:
    """Kernel, grad_out and the padded-input gradient for the scatter route of (n, c)."""
    fw, ig = lay.forward, lay.input_grad
    (pt, _), (pl, _) = fw.spec.padding
    many = " (Σ over filters k)" if fw.spec.out_channels > 1 else ""
    return [
        Panel(fw.w[k, c], f"w[{k}, {c}]{many}", "w", taps=tap_grid(*fw.spec.kernel_size)),
        Panel(ig.grad_out[n, k], f"∂L/∂y[{n}, {k}]", "grad_out"),
        Panel(
            ig.grad_x_padded[n, c],
            f"∂L/∂x̃[{n}, {c}]",
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
        f"∂L/∂y[{n}, {k}] dilated by the stride",
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


def channel_grids(lay: Layer, n: int, c: int, contributions: np.ndarray) -> list[Grid]:
    """x[n] by channel, grad_w as filters × channels, grad_x[n, c] as a sum over filters.

    contributions : (C_out, H, W), each filter's share of grad_x[n, c] (engine data).
    """
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    K, C = fw.spec.out_channels, fw.spec.in_channels
    chans = [f"c={i}" for i in range(C)]
    return [
        Grid("x", f"input x[{n}]: {_count(C, 'channel')}", fw.x[n][None], [""], chans),
        Grid(
            "grad_w",
            f"∂L/∂w: {_count(K, 'filter')} × {_count(C, 'channel')}, each a small correlation",
            wg.grad_w,
            [f"k={i}" for i in range(K)],
            chans,
            "Row k, column c is x̃[:, c] ⋆ dilate(∂L/∂y[:, k]), summed over the batch.",
        ),
        Grid(
            "sum_k",
            f"∂L/∂x[{n}, {c}] = Σ over {'the ' + _count(K, 'filter') if K > 1 else 'its 1 filter'}",
            np.concatenate([contributions, ig.grad_x[n, c][None]])[None],
            [""],
            [*(f"from k={i}" for i in range(K)), "Σ = ∂L/∂x"],
            "Each filter sends back its own full correlation; the channel's gradient is their sum.",
        ),
        Grid("grad_x", f"∂L/∂x[{n}]: every channel", ig.grad_x[n][None], [""], chans),
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
        f"**Input x[{n}]**: {_count(C, 'channel')} of {H}×{W}; **{_count(K, 'filter')}** of "
        f"{C}×{kH}×{kW}; **output** {K}×{oH}×{oW}."
    )

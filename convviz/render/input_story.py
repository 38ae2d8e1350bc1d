"""The input gradient's story: the textbook route as six Steps (∂L/∂y → dilate → pad → rotate
→ correlate → mask), their motions, the full correlation's panels and the scatter route's, with
captions that fit the layer (no ring to mask on an unpadded layer, sums over filters named).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from convviz.formulas import Formula
from convviz.render.motion import Motion
from convviz.render.motion_stages import (
    backward_motion,
    dilate_motion,
    mask_motion,
    pad_motion,
    rotate_motion,
)
from convviz.render.panel import Panel, SweepPanels
from convviz.render.selection import (
    adds_cells,
    cell_mask,
    copies_of,
    grad_x_marks,
    in_panel,
    step_of,
    tap_grid,
    window_mask,
)
from convviz.spec import ConvSpec
from convviz.stages import InputGradStages, Layer, remainder_mask
from convviz.sweeps import Sweep
from convviz.text import RECITATION_NOTE, count, shape_text, slice_name


@dataclass(frozen=True)
class Step:
    """One step of a storyboard: what it shows, one or two sentences, and its grids."""

    title: str  # short, for the step buttons
    heading: str  # a sentence, above the step's figure and on its exports
    caption: str
    panels: list[Panel] = field(default_factory=list)


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
        f"∂L/∂y arrives from the next layer: {shape_text(g.shape)}.",
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
                subtitle=shape_text(st.dilated[n, k].shape),
            )
        ],
    )


def _dilate_caption(stride: tuple[int, int], dilated: np.ndarray, spread: bool) -> str:
    sh, sw = stride
    if sh == sw == 1:
        return f"Stride 1: there are no zeros to insert, ∂L/∂y stays {shape_text(dilated.shape)}."
    if not spread:
        return (
            f"Stride {sh}×{sw}, but ∂L/∂y has no two neighbouring cells along a strided axis: "
            f"there are no zeros to insert, it stays {shape_text(dilated.shape)}."
        )
    return (
        f"Insert stride − 1 = {sh - 1}×{sw - 1} zeros between neighbouring cells, so each "
        f"gradient sits where its window started: {shape_text(dilated.shape)}."
    )


def _pad_caption(spec: ConvSpec, padded: np.ndarray) -> str:
    eh, ew = spec.span
    (gt, gb), (gl, gr) = spec.full_padding
    rH, rW = spec.remainder
    if not adds_cells(spec.full_padding):  # a 1×1 kernel, no remainder
        return (
            f"A 1×1 kernel reaches no further than its cell: nothing to pad, "
            f"the grid stays {shape_text(padded.shape)}."
        )
    rest = (
        f", plus the remainder ({count(rH, 'row')}, {count(rW, 'column')}) at the bottom/right"
        if rH or rW
        else ""
    )
    return (
        f"Pad with zeros: dilation·(kernel − 1) = {count(eh - 1, 'row')} / "
        f"{count(ew - 1, 'column')} "
        f"per side{rest}: ({gt}, {gb}) × ({gl}, {gr}) → {shape_text(padded.shape)}."
    )


def _grad_operand_title(st: InputGradStages, n: int, k: int) -> str:
    """∂L/∂y[n=…, k=…] with the words that fit, in the order they happen: dilated and/or padded,
    or neither."""
    words = [
        word
        for word, mask in (("dilated", st.padded_dilation_mask), ("padded", st.padded_ring))
        if mask.any()
    ]
    return slice_name("∂L/∂y", n=n, k=k) + (f", {' and '.join(words)}" if words else "")


def _padded_panel(st: InputGradStages, n: int, k: int, **marks) -> Panel:
    """∂L/∂y[n, k] dilated and padded for the full correlation (its ring and inserted zeros)."""
    (gt, _), (gl, _) = st.spec.full_padding
    return Panel(
        st.padded[n, k],
        _grad_operand_title(st, n, k),
        "padded",
        pad_mask=st.padded_ring,
        dilation_mask=st.padded_dilation_mask,
        origin=(-gt, -gl),
        subtitle=shape_text(st.padded[n, k].shape),
        **marks,
    )


def _pad_step(st: InputGradStages, n: int, k: int) -> Step:
    return Step(
        "3 · pad",
        "Pad it for the full correlation",
        _pad_caption(st.spec, st.padded[n, k]),
        [_padded_panel(st, n, k)],
    )


def _rotate_step(st: InputGradStages, k: int, c: int) -> Step:
    kH, kW = st.spec.kernel_size
    return Step(
        "4 · rotate 180°",
        "Rotate the kernel 180°",
        "Flip up-down, then left-right; every tap keeps its colour, so you can follow it."
        + (
            f" Channels swap: the kernel of filter k={k} on channel c={c} now carries the "
            f"gradient from output channel {k} back to input channel {c}."
            if st.spec.in_channels > 1 or st.spec.out_channels > 1
            else ""
        ),
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
    cells = (
        "every padded-input cell, ring included"
        if adds_cells(spec.padding)
        else "every input cell (no padding, so no ring)"
    )
    text = (
        f"Slide the rotated kernel (dilation {spec.dilation[0]}×{spec.dilation[1]}) over the "
        f"padded grid one cell at a time: the gradient of {cells}: {shape_text(shape)}."
    )
    if K > 1:
        text += (
            f" With {count(K, 'filter')}, {slice_name('∂L/∂x̃', n=n, c=c)} is the sum over "
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
    mode, padded = spec.padding_mode, adds_cells(spec.padding)
    if not padded:
        heading, ring = "No ring to mask: ∂L/∂x̃ is ∂L/∂x", "no padding: the same cells as ∂L/∂x"
    elif mode == "zeros":
        heading, ring = "Mask the padded ring, crop to ∂L/∂x", "padded input"
    else:  # the ring copied cells of x: its gradient goes back to them (what the numbers show)
        heading = f"Fold the ring's gradient back ({mode}), crop to ∂L/∂x"
        ring = "its ring folds back onto x"
    return Step(
        "6 · mask",
        heading,
        _mask_caption(spec.padding, mode),
        [
            Panel(
                st.grad_x_padded[n, c],
                slice_name("∂L/∂x̃", n=n, c=c),
                "grad_x_padded",
                pad_mask=st.pad_mask,
                remainder_mask=remainder_mask(spec),  # no forward window read it: gradient 0
                unread_mask=st.unread_mask,  # … nor these, between the windows
                dropped_mask=st.pad_mask if mode == "zeros" else None,
                origin=(-pt, -pl),
                subtitle=f"{shape_text(st.grad_x_padded[n, c].shape)}, {ring}",
                selected=in_panel("grad_x_padded", selected),
                highlight=copies_of(st, in_panel("grad_x", selected)),
            ),
            Panel(
                st.grad_x[n, c],
                slice_name("∂L/∂x", n=n, c=c),
                "grad_x",
                subtitle=shape_text(st.grad_x[n, c].shape),
                selected=in_panel("grad_x", selected),
                **grad_x_marks(st),
            ),
        ],
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
        return mask_motion(st, n, c, selected=_outlined(st, selected))
    motions = {
        1: lambda: dilate_motion(st, n, k),
        2: lambda: pad_motion(st, n, k),
        3: lambda: rotate_motion(st, k, c),
    }
    return motions[stage]() if stage in motions else None


def whole_pass(
    st: InputGradStages,
    sweep: Sweep,
    n: int,
    k: int,
    c: int,
    selected: tuple[str, int, int] | None = None,
) -> Motion:
    """∂L/∂y → dilate → pad → rotate → full correlation → mask → ∂L/∂x as one motion; a selected
    cell (as in `stage_motion`) is outlined from the moment ∂L/∂x̃ is complete."""
    return backward_motion(st, sweep, n, k, c, selected=_outlined(st, selected))


def _outlined(st: InputGradStages, selected) -> np.ndarray | None:
    """(Hp, Wp) bool: a selected ∂L/∂x cell and its padded copies, or a selected ∂L/∂x̃ cell."""
    copies = copies_of(st, in_panel("grad_x", selected))
    if copies is None:
        copies = cell_mask(st.spec.padded_size, in_panel("grad_x_padded", selected))
    return copies


WHOLE_PASS = "The whole backward pass: ∂L/∂y → dilate → pad → rotate → correlate → mask → ∂L/∂x"


def input_grad_animation(
    st: InputGradStages,
    sweep: Sweep,
    n: int,
    k: int,
    c: int,
    selected: tuple[int, int] | None = None,
) -> SweepPanels:
    """Operand, kernel and output of the full correlation (the sweep's channel is filter k)."""
    spec = st.spec
    (pt, _), (pl, _) = spec.padding
    highlight = taps = None
    if selected is not None:
        highlight, taps = window_mask(
            st.padded.shape[-2:],
            sweep,
            step_of(sweep, selected),
            tap_grid(*spec.kernel_size, rotated=True),
        )
    return SweepPanels(
        _padded_panel(st, n, k, taps=taps, highlight=highlight),
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
            remainder_mask=remainder_mask(spec),  # its windows meet only zeros: 0
            unread_mask=st.unread_mask,
            selected=selected,
            origin=(-pt, -pl),
            subtitle="padded input, ring included" if adds_cells(spec.padding) else "no padding",
        ),
    )


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
            unread_mask=fw.unread_mask,
            origin=(-pt, -pl),
        ),
    ]


def formula_notes(formula: Formula) -> str:
    """What the mask did to a gradient cell, in words."""
    if formula.dropped:
        return "This cell is on the zero-padded ring: the mask drops its gradient."
    if formula.groups:
        copies = len(formula.groups) - 1
        return (
            f"This cell has {count(copies, 'padded copy', 'padded copies')} on the "
            "ring: their gradients fold back onto it, so its ∂L/∂x is its own ∂L/∂x̃ plus theirs."
        )
    return ""

"""What the input gradient's stages draw: each stage's grids and motion (by the lecture's stage
keys, `convviz.lecture`, which owns their titles and words), the full correlation's panels and
the scatter route's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convviz.formulas import Formula
from convviz.lecture import INPUT_PAGE, LECTURE, Seen, Stage
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
    tap_names,
    window_mask,
)
from convviz.stages import InputGradStages, Layer, remainder_mask
from convviz.sweeps import Sweep
from convviz.text import count, shape_text, slice_name


@dataclass(frozen=True)
class Focus:
    """The slice a stage draws and the cell it follows.

    selected : (panel key, row, col) of the followed grad_x or grad_x_padded cell;
    feeding : bool mask over grad_out[n, k] of the cells that reach it.
    """

    n: int = 0
    k: int = 0
    c: int = 0
    selected: tuple[str, int, int] | None = None
    feeding: np.ndarray | None = None


def grad_out_panels(st: InputGradStages, f: Focus) -> list[Panel]:
    g = st.grad_out[f.n, f.k]
    return [Panel(g, slice_name("∂L/∂y", n=f.n, k=f.k), "grad_out", highlight=f.feeding)]


def dilate_panels(st: InputGradStages, f: Focus) -> list[Panel]:
    spread = st.dilation_mask.any()  # a stride > 1 with at least two cells along it
    title = f"{slice_name('∂L/∂y', n=f.n, k=f.k)}{', dilated' if spread else ''}"
    shape = shape_text(st.dilated[f.n, f.k].shape)
    return [
        Panel(
            st.dilated[f.n, f.k], title, "dilated", dilation_mask=st.dilation_mask, subtitle=shape
        )
    ]


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


def pad_panels(st: InputGradStages, f: Focus) -> list[Panel]:
    return [_padded_panel(st, f.n, f.k)]


def rotate_panels(st: InputGradStages, f: Focus) -> list[Panel]:
    kH, kW = st.spec.kernel_size
    name = slice_name("w", k=f.k, c=f.c)
    names = tap_names(kH, kW)  # each tap's index travels with it: w₂₂ lands top-left
    return [
        Panel(st.w[f.k, f.c], name, "w", taps=tap_grid(kH, kW), tap_names=names),
        Panel(
            st.w_rot[f.c, f.k], f"rot180 {name}", "w_rot",
            taps=tap_grid(kH, kW, rotated=True), tap_names=names,
        ),
    ]  # fmt: skip


def mask_panels(st: InputGradStages, f: Focus) -> list[Panel]:
    spec, (n, c), selected = st.spec, (f.n, f.c), f.selected
    (pt, _), (pl, _) = spec.padding
    mode = spec.padding_mode
    if not adds_cells(spec.padding):
        ring = "no padding: the same cells as ∂L/∂x"
    elif mode == "zeros":
        ring = "padded input"
    else:
        ring = "its ring folds back onto x"
    return [
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
    ]


# The grids of each stage of the input gradient that draws still grids (its PNG / SVG, and the
# app's picture of a stage that does not move), by the lecture's stage key
PANELS = {
    "grad-out": grad_out_panels,
    "dilate": dilate_panels,
    "pad": pad_panels,
    "rotate": rotate_panels,
    "mask": mask_panels,
}


@dataclass(frozen=True)
class Step:
    """One stage of the input gradient as a layer draws it: the lecture's label, heading and
    caption for its slice, and its grids (none for the full correlation: a sliding window)."""

    stage: Stage
    title: str
    heading: str
    caption: str
    panels: list[Panel]


def input_grad_story(
    st: InputGradStages,
    n: int,
    k: int,
    c: int,
    feeding: np.ndarray | None = None,
    selected: tuple[str, int, int] | None = None,
) -> list[Step]:
    """The input gradient's stages (the lecture's, a motion through them left out) for
    grad_out[n, k] and input channel c, each with its grids."""
    focus, seen = Focus(n, k, c, selected, feeding), Seen(st.spec, n, k, c)
    return [
        Step(
            s,
            LECTURE.label(s),
            s.heading_for(seen),
            s.caption_for(seen),
            PANELS[s.key](st, focus) if s.key in PANELS else [],
        )
        for s in LECTURE.on_page(INPUT_PAGE)
        if not s.covers
    ]


# The motion of each stage of the input gradient that moves, by the lecture's stage key:
# (stages, the full correlation's sweep, focus) → Motion. The mask outlines a selected cell (and
# its padded copies, which travel back onto it); the whole pass (∂L/∂y → dilate → pad → rotate →
# full correlation → mask → ∂L/∂x as one motion) from the moment ∂L/∂x̃ is complete.
MOTIONS = {
    "dilate": lambda st, sweep, f: dilate_motion(st, f.n, f.k),
    "pad": lambda st, sweep, f: pad_motion(st, f.n, f.k),
    "rotate": lambda st, sweep, f: rotate_motion(st, f.k, f.c),
    "mask": lambda st, sweep, f: mask_motion(st, f.n, f.c, selected=_outlined(st, f.selected)),
    "whole": lambda st, sweep, f: backward_motion(
        st, sweep, f.n, f.k, f.c, selected=_outlined(st, f.selected)
    ),
}


def stage_motion(key: str, st: InputGradStages, sweep: Sweep | None, focus: Focus) -> Motion:
    """The motion of the input-gradient stage `key` (a key of MOTIONS)."""
    return MOTIONS[key](st, sweep, focus)


def _outlined(st: InputGradStages, selected) -> np.ndarray | None:
    """(Hp, Wp) bool: a selected ∂L/∂x cell and its padded copies, or a selected ∂L/∂x̃ cell."""
    copies = copies_of(st, in_panel("grad_x", selected))
    if copies is None:
        copies = cell_mask(st.spec.padded_size, in_panel("grad_x_padded", selected))
    return copies


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
    names = tap_names(*spec.kernel_size)
    if selected is not None:
        highlight, taps = window_mask(
            st.padded.shape[-2:],
            sweep,
            step_of(sweep, selected),
            tap_grid(*spec.kernel_size, rotated=True),
        )
    return SweepPanels(
        _padded_panel(st, n, k, taps=taps, highlight=highlight, tap_names=names),
        Panel(
            st.w_rot[c, k],
            f"rot180 {slice_name('w', k=k, c=c)}",
            "w_rot",
            taps=tap_grid(*spec.kernel_size, rotated=True),
            tap_names=names,
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
        Panel(
            fw.w[k, c],
            slice_name("w", k=k, c=c),
            "w",
            taps=tap_grid(*fw.spec.kernel_size),
            tap_names=tap_names(*fw.spec.kernel_size),
        ),
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

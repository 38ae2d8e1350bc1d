"""What the input gradient's stages draw: each stage's grids and motion (by the lecture's stage
keys, `convviz.model.lecture`, which owns their titles and words), the full correlation's panels and
the scatter route's; and a gradient cell in words: what the mask did to it, the windows that read
it (the terms of its gradient), or why none does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convviz.engine.arrays import (
    InputGradArrays,
    Layer,
    read_lines,
    remainder_mask,
    unread_input_mask,
    unread_mask,
)
from convviz.engine.formulas import Formula
from convviz.engine.spec import ConvSpec
from convviz.engine.sweeps import Sweep
from convviz.engine.text import cell_name, count, number, shape_text, slice_name
from convviz.model.lecture import INPUT_PAGE, LECTURE, Seen, Stage
from convviz.render.motion.model import Motion
from convviz.render.motion.motions import (
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
    reads,
    step_of,
    tap_grid,
    tap_names,
    window_mask,
)


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


def grad_out_panels(ig: InputGradArrays, f: Focus) -> list[Panel]:
    g = ig.grad_out[f.n, f.k]
    return [Panel(g, slice_name("∂L/∂y", n=f.n, k=f.k), "grad_out", highlight=f.feeding)]


def dilate_panels(ig: InputGradArrays, f: Focus) -> list[Panel]:
    spread = ig.dilation_mask.any()  # a stride > 1 with at least two cells along it
    title = f"{slice_name('∂L/∂y', n=f.n, k=f.k)}{', dilated' if spread else ''}"
    shape = shape_text(ig.dilated[f.n, f.k].shape)
    return [
        Panel(
            ig.dilated[f.n, f.k], title, "dilated", dilation_mask=ig.dilation_mask, subtitle=shape
        )
    ]


def _grad_operand_title(ig: InputGradArrays, n: int, k: int) -> str:
    """∂L/∂y[n=…, k=…] with the words that fit, in the order they happen: dilated and/or padded,
    or neither."""
    words = [
        word
        for word, mask in (("dilated", ig.padded_dilation_mask), ("padded", ig.padded_ring))
        if mask.any()
    ]
    return slice_name("∂L/∂y", n=n, k=k) + (f", {' and '.join(words)}" if words else "")


def _padded_panel(ig: InputGradArrays, n: int, k: int, **marks) -> Panel:
    """∂L/∂y[n, k] dilated and padded for the full correlation (its ring and inserted zeros)."""
    (gt, _), (gl, _) = ig.spec.full_padding
    return Panel(
        ig.padded[n, k],
        _grad_operand_title(ig, n, k),
        "padded",
        pad_mask=ig.padded_ring,
        dilation_mask=ig.padded_dilation_mask,
        origin=(-gt, -gl),
        subtitle=shape_text(ig.padded[n, k].shape),
        **marks,
    )


def pad_panels(ig: InputGradArrays, f: Focus) -> list[Panel]:
    return [_padded_panel(ig, f.n, f.k)]


def rotate_panels(ig: InputGradArrays, f: Focus) -> list[Panel]:
    kH, kW = ig.spec.kernel_size
    name = slice_name("w", k=f.k, c=f.c)
    names = tap_names(kH, kW)  # each tap's index travels with it: w₂₂ lands top-left
    return [
        Panel(ig.w[f.k, f.c], name, "w", taps=tap_grid(kH, kW), tap_names=names),
        Panel(
            ig.w_rot[f.c, f.k], f"rot180 {name}", "w_rot",
            taps=tap_grid(kH, kW, rotated=True), tap_names=names,
        ),
    ]  # fmt: skip


def mask_panels(ig: InputGradArrays, f: Focus) -> list[Panel]:
    spec, (n, c), selected = ig.spec, (f.n, f.c), f.selected
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
            ig.grad_x_padded[n, c],
            slice_name("∂L/∂x̃", n=n, c=c),
            "grad_x_padded",
            pad_mask=ig.pad_mask,
            remainder_mask=remainder_mask(spec),  # no forward window read it: gradient 0
            unread_mask=ig.unread_mask,  # … nor these, between the windows
            dropped_mask=ig.pad_mask if mode == "zeros" else None,
            origin=(-pt, -pl),
            subtitle=f"{shape_text(ig.grad_x_padded[n, c].shape)}, {ring}",
            selected=in_panel("grad_x_padded", selected),
            highlight=copies_of(ig, in_panel("grad_x", selected)),
        ),
        Panel(
            ig.grad_x[n, c],
            slice_name("∂L/∂x", n=n, c=c),
            "grad_x",
            subtitle=shape_text(ig.grad_x[n, c].shape),
            selected=in_panel("grad_x", selected),
            **grad_x_marks(ig),
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
    ig: InputGradArrays,
    n: int,
    k: int,
    c: int,
    feeding: np.ndarray | None = None,
    selected: tuple[str, int, int] | None = None,
) -> list[Step]:
    """The input gradient's stages (the lecture's, a motion through them left out) for
    grad_out[n, k] and input channel c, each with its grids."""
    focus, seen = Focus(n, k, c, selected, feeding), Seen(ig.spec, n, k, c)
    return [
        Step(
            s,
            LECTURE.label(s),
            s.heading_for(seen),
            s.caption_for(seen),
            PANELS[s.key](ig, focus) if s.key in PANELS else [],
        )
        for s in LECTURE.on_page(INPUT_PAGE)
        if not s.covers
    ]


# The motion of each stage of the input gradient that moves, by the lecture's stage key:
# (arrays, the full correlation's sweep, focus) → Motion. The mask outlines a selected cell (and
# its padded copies, which travel back onto it); the whole pass (∂L/∂y → dilate → pad → rotate →
# full correlation → mask → ∂L/∂x as one motion) from the moment ∂L/∂x̃ is complete.
MOTIONS = {
    "dilate": lambda ig, sweep, f: dilate_motion(ig, f.n, f.k),
    "pad": lambda ig, sweep, f: pad_motion(ig, f.n, f.k),
    "rotate": lambda ig, sweep, f: rotate_motion(ig, f.k, f.c),
    "mask": lambda ig, sweep, f: mask_motion(ig, f.n, f.c, selected=outlined(ig, f.selected)),
}


def stage_motion(key: str, ig: InputGradArrays, sweep: Sweep | None, focus: Focus) -> Motion:
    """The motion of the input-gradient stage `key` (a key of MOTIONS)."""
    return MOTIONS[key](ig, sweep, focus)


def outlined(ig: InputGradArrays, selected) -> np.ndarray | None:
    """(Hp, Wp) bool: a selected ∂L/∂x cell and its padded copies, or a selected ∂L/∂x̃ cell."""
    copies = copies_of(ig, in_panel("grad_x", selected))
    if copies is None:
        copies = cell_mask(ig.spec.padded_size, in_panel("grad_x_padded", selected))
    return copies


def input_grad_animation(
    ig: InputGradArrays,
    sweep: Sweep,
    n: int,
    k: int,
    c: int,
    selected: tuple[int, int] | None = None,
) -> SweepPanels:
    """Operand, kernel and output of the full correlation (the sweep's channel is filter k)."""
    spec = ig.spec
    (pt, _), (pl, _) = spec.padding
    highlight = taps = None
    names = tap_names(*spec.kernel_size)
    if selected is not None:
        highlight, taps = window_mask(
            ig.padded.shape[-2:],
            sweep,
            step_of(sweep, selected),
            tap_grid(*spec.kernel_size, rotated=True),
        )
    return SweepPanels(
        _padded_panel(ig, n, k, taps=taps, highlight=highlight, tap_names=names),
        Panel(
            ig.w_rot[c, k],
            f"rot180 {slice_name('w', k=k, c=c)}",
            "w_rot",
            taps=tap_grid(*spec.kernel_size, rotated=True),
            tap_names=names,
            subtitle="rotated 180°",
        ),
        Panel(
            ig.grad_x_padded[n, c],
            f"{slice_name('∂L/∂x̃', n=n, c=c)} from filter k={k}"
            if spec.out_channels > 1
            else slice_name("∂L/∂x̃", n=n, c=c),
            "grad_x_padded",
            pad_mask=ig.pad_mask,
            remainder_mask=remainder_mask(spec),  # its windows meet only zeros: 0
            unread_mask=ig.unread_mask,
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


# --- a gradient cell in words: what the mask did, the windows that read it, or why none does -----


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


def _sub(r: int, c: int) -> str:
    return f"{r},{c}" if max(abs(r), abs(c)) > 9 or min(r, c) < 0 else f"{r}{c}"


def feeds_text(sweep: Sweep, cell: tuple[int, int], spec: ConvSpec) -> str:
    """Which output cells read padded-input cell `cell` (array indices), through which tap: the
    forward pass seen from one input, which is exactly the list of terms of its gradient."""
    (pt, _), (pl, _) = spec.padding
    origin = (-pt, -pl)
    r, q = cell
    hit_r, hit_c = sweep.rows == r, sweep.cols == q  # (T, kh), (T, kw): the taps
    steps = np.flatnonzero(reads(sweep, cell))
    label = (r + origin[0], q + origin[1])
    padding = not all(0 <= v < n for v, n in zip(label, spec.in_size))  # not a cell of x
    name = ("\\tilde{x}" if padding else "x") + f"_{{{_sub(*label)}}}"
    if steps.size == 0:
        return f"${name}$ is read by no window: its gradient is 0. {unread_reasons(spec, cell)}"
    pairs = [(sweep.targets[t], hit_r[t].argmax(), hit_c[t].argmax()) for t in steps]
    read_by = ", ".join(f"$y_{{{_sub(*o)}}}$ through $w_{{{a}{b}}}$" for o, a, b in pairs)
    grad = " + ".join(
        rf"\frac{{\partial L}}{{\partial y_{{{_sub(*o)}}}}} w_{{{a}{b}}}" for o, a, b in pairs
    )
    rule = rf"$\frac{{\partial L}}{{\partial {name}}} = {grad}$"
    if not padding:
        chain = f"${name}$ is read by {read_by}. So, by the chain rule, {rule}"
        return f"{chain} (see the Input gradient page)."
    fate = (
        "which the mask drops: the padding is a constant"
        if spec.padding_mode == "zeros"
        else f"which the mask adds to the cell of x it copies ({spec.padding_mode} padding)"
    )
    return (
        f"${name}$ is padding, not a cell of x. It is read by {read_by}, so {rule} lands on the "
        f"padded ring, {fate} ({LECTURE.named(LECTURE.stage('mask'))} of the Input gradient page)."
    )


def _listed(labels: list[int], most: int = 6) -> str:
    """'0, 3, 6' or '0, 3, 6, 9, 12, …, 96' for a long list."""
    shown = labels if len(labels) <= most else [*labels[: most - 1], "…", labels[-1]]
    return ", ".join(x if x == "…" else number(x) for x in shown)


def unread_reasons(spec: ConvSpec, cell: tuple[int, int]) -> str:
    """Why no window reads padded-input cell `cell` (array indices), axis by axis: it lies
    between the windows, or in the remainder past the last one ("" when some window reads it)."""
    reasons = []
    for axis, (line, p, (lo, _), s) in enumerate(
        zip(read_lines(spec), cell, spec.padding, spec.stride)
    ):
        if line[p]:
            continue
        word = ("row", "column")[axis]
        read = (np.flatnonzero(line) - lo).tolist()  # labelled as the grid's axes (x̃: −pad)
        at = number(p - lo)
        if p >= spec.reach[axis]:
            reasons.append(
                f"{word} {at} is in the remainder: the last window ends at {word} "
                f"{number(read[-1])}"
            )
        else:
            reasons.append(
                f"{word} {at} lies between the windows: they start every "
                f"{count(s, word)} and read {word}s {_listed(read)} only"
            )
    return "; ".join(reasons)[:1].upper() + "; ".join(reasons)[1:] + "." if reasons else ""


def unread_text(spec: ConvSpec, cell: tuple[int, int], padded: bool = False) -> str:
    """The formula box's words for a gradient cell no window reads: "No window reads x[1, 0]:
    its gradient is 0." and why; "" for a cell some window reads.

    cell : (row, col) of x, or with `padded` the array indices of x̃.
    """
    if padded:
        if not unread_mask(spec)[cell]:
            return ""
        name, at = cell_name("x̃", *map(number, spec.padded_label(cell))), cell
    else:
        if not unread_input_mask(spec)[cell]:
            return ""
        name, at = cell_name("x", *cell), spec.padded_index(cell)
    copies = "" if padded or spec.padding_mode == "zeros" else ", nor any padded copy of it"
    return f"No window reads {name}{copies}: its gradient is 0. {unread_reasons(spec, at)}"

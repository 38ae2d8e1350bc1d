"""The questions on the forward pass and the input gradient: a forward cell, a dilated and a
padded ∂L/∂y cell, a flipped tap, a ∂L/∂x cell by the full correlation."""

from __future__ import annotations

import math

import numpy as np

from convviz.engine.arrays import Layer
from convviz.engine.formulas import Formula, forward_formula, input_grad_formula
from convviz.engine.text import count
from convviz.model.quiz.model import (
    ENOUGH,
    MAX_HAND_TERMS,
    Lit,
    Question,
    Trap,
    _cross,
    _input_stage,
    _mask,
    _padded_as_zero,
    _readable,
    _sized,
    _slice,
    close,
    formula_lits,
    padding_words,
    partial_formula,
)

# --- the forward pass ----------------------------------------------------------------------------


def _flipped_forward(f: Formula, w: np.ndarray) -> float:
    """y as a student gets it who rotates the kernel in the forward pass (a true convolution)."""
    kH, kW = w.shape[2:]
    total = f.constant
    for t in f.terms:
        tags = dict(t.right.tags)
        a, b = t.right.index
        total += t.left_value * float(w[tags["k"], tags["c"], kH - 1 - a, kW - 1 - b])
    return total


def _copies_lit(f: Formula) -> tuple[Lit, ...]:
    """The cells of x whose padded copies a forward window reads (non-zero padding modes)."""
    copies = [t for t in f.terms if t.padding and t.left.name == "x"]
    if not copies:
        return ()
    tags = copies[0].left.tags
    shape = tuple(np.max([t.left.index for t in copies], axis=0) + 1)
    return (Lit("x", _mask(shape, [t.left.index for t in copies]), tags),)


def _y_question(lay: Layer, n: int, k: int, rng, worked) -> Question | None:
    """An output cell, preferring one whose window covers padding (none left unworked: None)."""
    fw, spec = lay.forward, lay.forward.spec
    oH, oW = spec.out_size
    corners = [(0, 0), (oH - 1, oW - 1), (0, oW - 1), (oH - 1, 0)]
    edge = [c for c in dict.fromkeys(corners) if ("y", *c) not in worked]
    if not edge:
        return None
    start = int(rng.integers(len(edge)))
    f = None
    for i, j in edge[start:] + edge[:start]:  # the first corner (from the seed's) over padding
        f = forward_formula(fw, n, k, i, j)
        if any(t.padding for t in f.terms):
            break
    if len(f.terms) > MAX_HAND_TERMS:
        return None
    traps, notes = [], []
    pads = sum(t.padding for t in f.terms)
    if pads and spec.padding_mode != "zeros":
        traps.append(
            Trap(
                _padded_as_zero(f),
                f"With {spec.padding_mode} padding the ring is not "
                "zeros: it holds copies of real cells.",
                "the padded copies taken as zeros",
                _sized(_copies_lit(f), spec),
            )
        )
    traps.append(
        Trap(
            _flipped_forward(f, fw.w),
            "That is the kernel rotated 180°: the forward pass is a cross-correlation, each "
            "tap meets the cell under it as the kernel stands. The flip belongs to the backward "
            "pass.",
            "a flip where there is none",
            _mirrored(formula_lits(f, spec)),
        )
    )
    if pads:
        notes.append(
            f"{pads} of the window's taps sit on the padding "
            f"({'zeros' if spec.padding_mode == 'zeros' else spec.padding_mode + ' copies'})."
        )
    i, j = f.target.index
    (sh, sw), (pt, _), (pl, _) = spec.stride, *spec.padding
    return Question(
        "y",
        f"What is **y[{i}, {j}]**{_slice(lay, n=n, k=k)} (no bias)?",
        f.value,
        f,
        tuple(t for t in traps if not close(t.value, f.value)),
        tuple(notes),
        stage="Forward",
        pointer=(
            f"The window of y[{i}, {j}] starts at row {sh}·{i} and column {sw}·{j} of the "
            f"padded input (row {sh * i - pt}, column {sw * j - pl} of x, counting the padding "
            "as negative): multiply each cell under it by the tap that covers it, as the "
            "kernel stands, and add. Outlined: the cells of x under the window and the taps "
            "that meet them (taps over the padding meet zeros"
            + ("" if spec.padding_mode == "zeros" else " only in zero padding")
            + ")."
        ),
        lit=formula_lits(f, spec),
        partial=partial_formula(f),
    )


# --- the backward pass: dilate, pad, rotate ------------------------------------------------------


def _dilated_question(lay: Layer, n: int, k: int) -> Question | None:
    """A value of ∂L/∂y after the stride dilated it: it moved to (s·i, s·j)."""
    ig, spec = lay.input_grad, lay.forward.spec
    (sh, sw), (oH, oW) = spec.stride, spec.out_size
    if not ig.dilation_mask.any() or not _readable(spec.out_size):
        return None
    g = ig.grad_out[n, k]
    i, j = oH - 1, oW - 1  # the far corner moves the most
    R, C = sh * i, sw * j
    tags = (("n", n), ("k", k))
    traps = []
    if max(R - oH, C - oW) < 0:  # the cell the mistake reads is in ∂L/∂y
        traps.append(
            Trap(
                float(g[R, C]),
                f"That is ∂L/∂y[{R}, {C}] as it arrived: the stride spreads ∂L/∂y out first, so "
                f"row {R} of the dilated grid holds row {R} / {sh} of ∂L/∂y (or an inserted "
                "zero).",
                "the stride not dilated",
                (Lit("g", _mask(spec.out_size, [(R, C)]), tags),),
            )
        )
    return Question(
        "dilated",
        f"∂L/∂y{_slice(lay, n=n, k=k)} is dilated by the stride ({sh}×{sw}): stride − 1 zeros go "
        f"between neighbouring cells. **What is the value at row {R}, column {C} of the dilated "
        "∂L/∂y?**",
        float(g[i, j]),
        None,
        tuple(t for t in traps if not close(t.value, float(g[i, j]))),
        (f"∂L/∂y[{i}, {j}] moves to [{sh}·{i}, {sw}·{j}] = [{R}, {C}], where its window started.",),
        stage=_input_stage("dilate"),
        pointer=(
            f"Cell [i, j] of ∂L/∂y moves to [{sh}·i, {sw}·j], the place its forward window "
            "started; the inserted zeros fill the cells between. Outlined: the row and the "
            f"column of ∂L/∂y that land on row {R} and on column {C}."
        ),
        lit=(Lit("g", _cross(spec.out_size, i, j), tags),),
        partial=(f"dilated[{R}, {C}] = ∂L/∂y[{R} / {sh}, {C} / {sw}]",),
    )


def _padded_question(lay: Layer, n: int, k: int) -> Question | None:
    """A value of ∂L/∂y dilated and padded for the full correlation: moved by d·(k−1)."""
    ig, spec = lay.input_grad, lay.forward.spec
    (gt, _), (gl, _) = spec.full_padding
    (sh, sw), (dh, dw), (kH, kW) = spec.stride, spec.dilation, spec.kernel_size
    oW, (dH, dW) = spec.out_size[1], spec.dilated_out_size
    if not (gt or gl) or not _readable(spec.out_size):
        return None
    # the top row, second column: not the corner (its place is easy to guess), and not the
    # dilate question's cell
    i, j = 0, min(1, oW - 1)
    R, C = gt + sh * i, gl + sw * j
    answer = float(ig.padded[n, k, R, C])
    dilated = ig.dilated[n, k]
    tags = (("n", n), ("k", k))

    def at(r: int, c: int, why: str, name: str) -> Trap | None:
        if not (0 <= r < dH and 0 <= c < dW):
            return None
        lit = (Lit("g", _mask(spec.out_size, [(r // sh, c // sw)]), tags),)
        return Trap(float(dilated[r, c]), why, name, lit if r % sh == c % sw == 0 else ())

    traps = [
        at(R - sh, C - sw,
           f"You padded by the stride ({sh}×{sw}): the full correlation's padding is "
           f"dilation·(kernel − 1) = {gt}×{gl} per side, what the kernel reaches past the "
           "edge, whatever the stride.", "padding by the stride"),
        at(R, C, "You left the padding out: the full correlation slides over ∂L/∂y padded by "
           f"dilation·(kernel − 1) = {gt}×{gl} zeros per side.", "the padding left out"),
        at(R - (kH - 1), C - (kW - 1), f"The dilation ({dh}×{dw}) widens the kernel, and the "
           f"padding with it: d·(k − 1), not k − 1.", "the dilation left out of the padding")
        if (dh, dw) != (1, 1) else None,
    ]  # fmt: skip
    seen = {answer}
    kept = []
    for t in traps:
        if t is not None and not any(close(t.value, v) for v in seen):
            seen.add(t.value)
            kept.append(t)
    return Question(
        "padded",
        f"∂L/∂y{_slice(lay, n=n, k=k)} is dilated by the stride ({sh}×{sw}), then padded with "
        "zeros for the full correlation. **What is the value at row "
        f"{R}, column {C} of the dilated, padded grid?** (rows and columns count from 0 at its "
        "top-left corner, padding included)",
        answer,
        None,
        tuple(kept),
        (
            f"The padding is dilation·(kernel − 1): {dh}·({kH} − 1) = {count(gt, 'row')} on top, "
            f"{dw}·({kW} − 1) = {count(gl, 'column')} on the left; ∂L/∂y[{i}, {j}] sits at "
            f"[{gt} + {sh}·{i}, {gl} + {sw}·{j}] = [{R}, {C}].",
        ),
        stage=_input_stage("pad"),
        pointer=(
            "The full correlation needs the rotated kernel to hang over every edge: ∂L/∂y, "
            "dilated, gets dilation·(kernel − 1) zero rows on top and as many columns on the "
            "left (and at the bottom/right, plus the remainder), so every cell moves down and "
            "right by that much. Outlined: the row and the column of ∂L/∂y that land on row "
            f"{R} and on column {C}."
        ),
        lit=(Lit("g", _cross(spec.out_size, i, j), tags),),
        partial=(
            f"top padding = {dh}·({kH} − 1) = {gt}, left padding = {dw}·({kW} − 1) = {gl}",
            f"padded[{R}, {C}] = dilated[{R} − {gt}, {C} − {gl}]",
        ),
    )


def _flip_question(lay: Layer, k: int, c: int, rng) -> Question | None:
    """A tap of the kernel rotated 180°: it comes from the opposite corner."""
    spec, w = lay.forward.spec, lay.forward.w[k, c]
    kH, kW = spec.kernel_size
    if kH * kW == 1:
        return None
    taps = [divmod(int(t), kW) for t in rng.permutation(kH * kW)]
    # a tap whose value the mistakes change (a symmetric kernel may have none)
    a, b = next(((a, b) for a, b in taps if not close(w[a, b], w[kH - 1 - a, kW - 1 - b])), taps[0])
    ra, rb = kH - 1 - a, kW - 1 - b
    tags = (("k", k), ("c", c))

    def tap(r: int, q: int) -> tuple[Lit, ...]:
        return (Lit("w", _mask(spec.kernel_size, [(r, q)]), tags),)

    answer = float(w[ra, rb])
    traps = [
        Trap(float(w[a, b]), f"That is w[{a}, {b}] where it stood: rotated 180°, the kernel "
             f"brings the opposite tap w[{kH} − 1 − {a}, {kW} − 1 − {b}] to [{a}, {b}].",
             "the flip forgotten", tap(a, b)),
        Trap(float(w[ra, b]), "Flipped up-down only: a 180° turn also flips left-right.",
             "half the flip", tap(ra, b)),
        Trap(float(w[a, rb]), "Flipped left-right only: a 180° turn also flips up-down.",
             "half the flip", tap(a, rb)),
    ]  # fmt: skip
    seen, kept = [answer], []
    for t in traps:
        if not any(close(t.value, v) for v in seen):
            seen.append(t.value)
            kept.append(t)
    return Question(
        "flip",
        f"For the full correlation the kernel w{_slice(lay, k=k, c=c)} is rotated 180°. **What "
        f"is rot180(w)[{a}, {b}]?**",
        answer,
        None,
        tuple(kept),
        (f"rot180(w)[{a}, {b}] = w[{kH} − 1 − {a}, {kW} − 1 − {b}] = w[{ra}, {rb}].",),
        stage=_input_stage("rotate"),
        pointer=(
            "Rotating by 180° flips the kernel up-down and left-right: tap [r, c] goes to "
            f"[{kH} − 1 − r, {kW} − 1 − c]. Outlined: tap [{a}, {b}] of w, which leaves its "
            "place; the tap that comes to it stands opposite, across the centre."
        ),
        lit=tap(a, b),
        partial=(f"rot180(w)[{a}, {b}] = w[{kH} − 1 − {a}, {kW} − 1 − {b}]",),
    )


# --- the full correlation ------------------------------------------------------------------------


def _unflipped(f: Formula, w: np.ndarray, c: int) -> float:
    """∂L/∂x as a student gets it without rotating the kernel: each ∂L/∂y term meets the tap
    opposite the right one."""
    kH, kW = w.shape[2:]
    total = 0.0
    for t in f.terms:
        if t.right.name != "w":
            continue
        k = dict(t.right.tags)["k"]
        a, b = t.right.index
        total += t.left_value * float(w[k, c, kH - 1 - a, kW - 1 - b])
    return total


def _mirrored(lits: tuple[Lit, ...]) -> tuple[Lit, ...]:
    """The kernel's lit taps as an unrotated kernel would use them: mirrored through the centre."""
    return tuple(Lit(x.grid, x.mask[::-1, ::-1], x.tags) for x in lits if x.grid == "w")


def _kernel_row(padded_row: int, stride: int, dilation: int) -> str:
    """Which kernel row a meets ∂L/∂y row i at this padded input row: forward, y row i reads
    x̃ row stride·i + dilation·a, so a = (padded_row − stride·i) / dilation, written plainly."""
    i = "i" if stride == 1 else f"{stride}·i"
    rule = f"{padded_row} − {i}" if padded_row else f"−{i}"
    return rule if dilation == 1 else f"({rule}) / {dilation}"


def _grad_x_notes(f: Formula, spec) -> tuple[str, ...]:
    (pt, _), (dh, sh) = spec.padding[0], (spec.dilation[0], spec.stride[0])
    a = _kernel_row(f.target.index[0] + pt, sh, dh)
    notes = [
        f"The flip: here row i of ∂L/∂y is multiplied by kernel row a = {a}: the further down "
        "∂L/∂y, the further up the kernel, so the taps meet ∂L/∂y in reverse order. That is the "
        "kernel rotated 180°."
    ]
    spread = sum(t.dilation for t in f.terms)
    ring = sum(t.padding and t.left.name == "0" for t in f.terms)
    if spread:
        notes.append(
            f"Stride-spread: {spread} of the rotated kernel's taps "
            f"{'falls' if spread == 1 else 'fall'} on zeros the stride inserted into ∂L/∂y: "
            f"{'it adds' if spread == 1 else 'they add'} nothing."
        )
    if ring:
        notes.append(
            f"{count(ring, 'tap')} {'falls' if ring == 1 else 'fall'} on ∂L/∂y's zero padding "
            "(windows hanging over the edge)."
        )
    if f.groups:
        notes.append(
            f"Folding: with {spec.padding_mode} padding this cell also sits in the ring "
            f"{len(f.groups) - 1} more time(s); those copies' gradient is added back onto it."
        )
    return tuple(notes)


def _grad_x_question(lay: Layer, n: int, c: int, cells: list) -> Question | None:
    """A cell of ∂L/∂x where forgetting the flip gives a different number."""
    ig, w, spec = lay.input_grad, lay.forward.w, lay.forward.spec
    telling = []
    for r, q in cells:  # in the seed's order; a few telling cells are enough
        f = input_grad_formula(ig, n, c, r, q)
        wrong = _unflipped(f, w, c)
        if not math.isclose(wrong, f.value, abs_tol=1e-9):
            telling.append((f, wrong, (r, q)))
        if len(telling) >= ENOUGH:
            break
    if not telling:
        return None
    # a folded cell first (reflect/replicate/circular), then a non-zero one
    telling.sort(key=lambda t: (not t[0].groups, math.isclose(t[0].value, 0.0, abs_tol=1e-9)))
    f, wrong, (r, q) = telling[0]
    if len(f.terms) > MAX_HAND_TERMS:
        return None
    lit = formula_lits(f, spec)
    kH, kW = spec.kernel_size
    t = next(t for t in f.terms if not t.vanishes)  # a pairing, named in the hint
    (gi, gj), (a, b) = t.left.index, t.right.index
    traps = [
        Trap(
            wrong,
            "That is the sum with the kernel as it is: the gradient meets the "
            "taps in the opposite order, so rotate the kernel 180° first. Outlined: "
            f"∂L/∂y[{gi}, {gj}] meets w[{a}, {b}], not w[{kH - 1 - a}, {kW - 1 - b}] across "
            "the centre.",
            "the flip forgotten",
            _mirrored(lit),
        )
    ]
    if f.groups:
        own = f.groups[0].value
        traps.append(
            Trap(
                own,
                f"That is only the cell's own ∂L/∂x̃: with {spec.padding_mode} "
                "padding its copies in the ring send gradient back too (fold).",
                "the fold forgotten",
            )
        )
    return Question(
        "grad_x",
        f"What is **∂L/∂x[{r}, {q}]**{_slice(lay, n=n, c=c)}? The grids below give w and ∂L/∂y"
        + (
            f" of every filter; x is {spec.in_size[0]}×{spec.in_size[1]} with "
            f"{padding_words(spec)}."  # no grid of x: its size and padding said
            if spec.out_channels > 1
            else ", and x its size and padding."
        ),
        f.value,
        f,
        tuple(traps),
        _grad_x_notes(f, spec),
        stage=_input_stage("correlate"),
        pointer=(
            "The rotated kernel slides over ∂L/∂y, dilated and padded, at stride 1: the cell's "
            "gradient adds every ∂L/∂y whose forward window read x"
            f"[{r}, {q}], each times the tap that met it. Outlined: those cells of ∂L/∂y and "
            "the taps they meet; mind the order: the rotation pairs the first ∂L/∂y with the "
            "last tap."
        ),
        lit=lit,
        partial=partial_formula(f),
    )

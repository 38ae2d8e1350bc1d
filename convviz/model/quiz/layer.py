"""The questions on the mask, the weight and bias gradients and the layer's shape."""

from __future__ import annotations

import math

import numpy as np

from convviz.engine.arrays import Layer
from convviz.engine.formulas import input_grad_formula, weight_grad_formula
from convviz.engine.spec import PADDING_WORDS
from convviz.engine.text import count
from convviz.model.lecture import LECTURE
from convviz.model.quiz.model import (
    MAX_HAND_TERMS,
    Lit,
    Question,
    Trap,
    _input_stage,
    _label,
    _mask,
    _padded_as_zero,
    _readable,
    _slice,
    close,
    formula_lits,
    partial_formula,
    shown,
)

MASK_STAGE = LECTURE.named(LECTURE.stage("mask")).capitalize()  # 'Stage 6 (mask)'

# --- the mask ------------------------------------------------------------------------------------


def _masked_question(lay: Layer, n: int, c: int, rng) -> Question | None:
    """The mask's stage: the ring's gradient dropped (zero padding) or folded back (the other
    modes); a layer without padding asks about a cell no window reads instead."""
    spec, ig = lay.forward.spec, lay.input_grad
    if not ig.pad_mask.any():
        return _remainder_question(lay, n, c)
    if spec.padding_mode != "zeros":
        return _folded_question(lay, n, c)
    ring = ig.pad_mask & ~ig.unread_mask & (ig.grad_x_padded[n, c] != 0)
    cells = list(zip(*np.nonzero(ring)))
    if not cells:
        return None
    cell = tuple(int(v) for v in cells[int(rng.integers(len(cells)))])
    f = input_grad_formula(ig, n, c, *cell, padded=True)
    name = _label(spec, cell)
    return Question(
        "masked",
        f"The full correlation gives the padded cell {name}{_slice(lay, n=n, c=c)} a gradient "
        f"too: ∂L/∂{name} = {shown(f.value)}. **How much of it does ∂L/∂x receive?**",
        0.0,
        f,
        (
            Trap(
                f.value,
                f"{name} is a padded zero, a constant: no cell of x stands behind it, so the "
                "mask drops its gradient.",
                "the mask forgotten",
            ),
        ),
        (f"{name} is padding (zeros): its gradient, {shown(f.value)}, is dropped by the mask.",),
        stage=_input_stage("mask"),
        pointer=(
            f"{MASK_STAGE} keeps only the gradient of cells of x: the padded ring held constants. "
            f"Outlined: the cells of ∂L/∂y and the taps whose products land on {name}."
        ),
        lit=formula_lits(f, spec),
        partial=(f"{name} is on the padded ring (zero padding): is there a cell of x behind it?",),
    )


def _folded_question(lay: Layer, n: int, c: int) -> Question | None:
    """An edge cell of x with copies in a reflect/replicate/circular ring: their gradients fold
    back onto it."""
    spec, ig = lay.forward.spec, lay.input_grad
    H, W = spec.in_size
    for r, q in ((0, 0), (H - 1, W - 1), (0, W // 2), (H // 2, 0)):
        f = input_grad_formula(ig, n, c, r, q)
        if len(f.groups) > 1 and not close(f.groups[0].value, f.value):
            break
    else:
        return None
    (own, *copies) = f.groups
    (pt, _), (pl, _) = spec.padding
    names = [_label(spec, (g.target.index[0] + pt, g.target.index[1] + pl)) for g in copies]
    given = ", ".join(f"∂L/∂{m} = {shown(g.value)}" for m, g in zip(names, copies))
    tags = (("n", n), ("c", c))
    return Question(
        "masked",
        f"With {spec.padding_mode} padding, x[{r}, {q}]{_slice(lay, n=n, c=c)} is copied into "
        f"the ring: {', '.join(names)}. The full correlation gives ∂L/∂x̃[{r}, {q}] = "
        f"{shown(own.value)} and {given}. **What is ∂L/∂x[{r}, {q}]?**",
        f.value,
        f,
        (
            Trap(
                own.value,
                "That is only the cell's own ∂L/∂x̃: each copy in the ring fed the windows that "
                "read it, so its gradient goes back to the cell it copies (fold).",
                "the fold forgotten",
                (Lit("x", _mask(spec.in_size, [(r, q)]), tags),),
            ),
        ),
        (f"∂L/∂x[{r}, {q}] = its own ∂L/∂x̃ plus each copy's: the mask folds the ring back.",),
        stage=_input_stage("mask"),
        pointer=(
            f"{MASK_STAGE} with {spec.padding_mode} padding: a ring cell is a copy of a cell of x, "
            "so its gradient is added back onto that cell. Outlined: x"
            f"[{r}, {q}], whose copies sit in the ring."
        ),
        lit=(Lit("x", _mask(spec.in_size, [(r, q)]), tags),),
        partial=(f"∂L/∂x[{r}, {q}] = ∂L/∂x̃[{r}, {q}] + " + " + ".join(f"∂L/∂{m}" for m in names),),
    )


def _remainder_question(lay: Layer, n: int, c: int) -> Question | None:
    """An input cell no window reads (between the windows, or the remainder): its gradient is 0."""
    spec, ig = lay.forward.spec, lay.input_grad
    unread = ig.unread_x_mask
    if not unread.any():
        return None
    cells = list(zip(*np.nonzero(unread)))
    # the bottom/right remainder first (the classic slip), then a cell between windows
    r, q = max(cells, key=lambda rc: (rc[0] + rc[1], rc))
    r, q = int(r), int(q)
    f = input_grad_formula(ig, n, c, r, q)
    (rH, rW) = spec.reach
    tags = (("n", n), ("c", c))
    return Question(
        "remainder",
        f"What is **∂L/∂x[{r}, {q}]**{_slice(lay, n=n, c=c)}? Look at which cells the windows "
        f"read (stride {spec.stride[0]}×{spec.stride[1]}).",
        f.value,
        f,
        (),
        (
            f"No window reads x[{r}, {q}]: the windows reach only {count(rH, 'row')} and "
            f"{count(rW, 'column')} of "
            "the padded input and step by the stride, so every term of its gradient is zero.",
        ),
        stage=_input_stage("mask"),
        pointer=(
            "A cell's gradient adds the ∂L/∂y of every window that read it. Outlined: the "
            f"cells of x some window reads; is x[{r}, {q}] among them?"
        ),
        lit=(Lit("x", ~unread, tags),),
        partial=(f"∂L/∂x[{r}, {q}] = Σ over the windows that read x[{r}, {q}] of ∂L/∂y · w",),
    )


# --- the weight gradient -------------------------------------------------------------------------


def _stride_undilated(lay: Layer, k: int, c: int, a: int, b: int) -> float | None:
    """∂L/∂w[a, b] as a student gets it who slides ∂L/∂y over x̃ at step 1 (not spread by the
    stride): None where that window would leave x̃."""
    spec, wg = lay.forward.spec, lay.weight_grad
    (oH, oW), (dh, dw) = spec.out_size, spec.dilation
    Hp, Wp = spec.padded_size
    if spec.stride == (1, 1) or oH + a * dh > Hp or oW + b * dw > Wp:
        return None
    window = wg.x_padded[:, c, a * dh : a * dh + oH, b * dw : b * dw + oW]  # (N, oH, oW)
    return float((window * wg.grad_out[:, k]).sum())


def _grad_w_question(lay: Layer, k: int, c: int, rng) -> Question | None:
    """A tap of ∂L/∂w: x's cells under that tap in every window, times ∂L/∂y."""
    wg, spec = lay.weight_grad, lay.forward.spec
    kH, kW = spec.kernel_size
    a, b = int(rng.integers(kH)), int(rng.integers(kW))
    if spec.batch * spec.out_size[0] * spec.out_size[1] > MAX_HAND_TERMS:
        return None  # (its formula is not even built)
    f = weight_grad_formula(wg, k, c, a, b)
    traps = []
    if spec.padding_mode != "zeros" and any(t.padding for t in f.terms):
        traps.append(
            Trap(
                _padded_as_zero(f),
                "The padded cells under this tap are copies of real cells, not zeros.",
                "the padded copies taken as zeros",
            )
        )
    undilated = _stride_undilated(lay, k, c, a, b)
    if undilated is not None:
        traps.append(
            Trap(
                undilated,
                f"You slid ∂L/∂y over x̃ one cell at a time: its cells sit a stride "
                f"({spec.stride[0]}×{spec.stride[1]}) apart, where their windows were, so the "
                "tap meets every stride-th cell of x̃.",
                "the stride not dilated",
            )
        )
    notes = [
        f"Tap w[{a}, {b}] sees x̃[i·s + {a}·d, j·s + {b}·d] in every window: the stride "
        f"({spec.stride[0]}) steps through x̃, and the kernel's dilation becomes the offset."
    ]
    if spec.batch > 1:
        notes.append(f"Summed over all {spec.batch} samples of the batch.")
    (sh, sw), (dh, dw) = spec.stride, spec.dilation
    return Question(
        "grad_w",
        f"What is **∂L/∂w[{a}, {b}]**{_slice(lay, k=k, c=c)}?",
        f.value,
        f,
        tuple(t for t in traps if not close(t.value, f.value)),
        tuple(notes),
        stage="Weight gradient",
        pointer=(
            f"In the forward pass tap [{a}, {b}] met one input cell in every window: x̃["
            f"{sh}·i + {dh}·{a}, {sw}·j + {dw}·{b}] in window [i, j]. Its gradient adds each "
            "of those cells times that window's ∂L/∂y"
            + (", over every sample" if spec.batch > 1 else "")
            + ". Outlined: those cells of x, and ∂L/∂y."
        ),
        lit=formula_lits(f, spec),
        partial=partial_formula(f),
    )


def _bias_question(lay: Layer, k: int) -> Question | None:
    """The bias gradient: ∂L/∂y of the filter summed over the batch and every output cell."""
    spec, g = lay.forward.spec, lay.input_grad.grad_out[:, k]
    N, (oH, oW) = spec.batch, spec.out_size
    if N * oH * oW > MAX_HAND_TERMS or not _readable(spec.out_size):
        return None
    answer = float(lay.weight_grad.grad_b[k])
    traps = []
    if N * oH * oW > 1:
        traps.append(
            Trap(
                answer / (N * oH * oW),
                "That is the mean: the bias is added to every output cell, so its gradient "
                "adds all their ∂L/∂y (the loss decides any averaging, not the layer).",
                "the mean, not the sum",
            )
        )
    if N > 1:
        traps.append(
            Trap(
                float(g[0].sum()),
                f"One sample only: the same bias serves all {N} samples, so their ∂L/∂y add.",
                "the batch left out",
            )
        )
    values = g.ravel().tolist()
    half = max(1, len(values) // 2)
    written = " + ".join(shown(v) if v >= 0 else f"({shown(v)})" for v in values[:half])
    rest = len(values) - half
    return Question(
        "bias",
        f"What is **∂L/∂b[{k}]**, the gradient of filter {k}'s bias?",
        answer,
        None,
        tuple(t for t in traps if not close(t.value, answer)),
        (f"∂L/∂b[{k}] = Σ over n, i, j of ∂L/∂y[n, {k}, i, j] = {shown(answer)}.",),
        stage="Weight gradient · the bias",
        pointer=(
            f"b[{k}] is added to every output cell of filter {k}"
            + (" in every sample" if N > 1 else "")
            + ", each time with weight 1. Outlined: the cells of ∂L/∂y it meets."
        ),
        lit=(Lit("g", np.ones(spec.out_size, dtype=bool), (("k", k),)),),
        partial=(
            f"∂L/∂b[{k}] = Σ over n, i, j of ∂L/∂y[n, {k}, i, j]",
            f"= {written}" + (f" + … ({count(rest, 'more cell')})" if rest else ""),
        ),
    )


# --- the layer's shape ---------------------------------------------------------------------------


def _zeros_question(lay: Layer, n: int, k: int) -> Question:
    """How many zeros the dilation and the padding put into ∂L/∂y before the full correlation."""
    ig, spec = lay.input_grad, lay.forward.spec
    answer = int((ig.padded_ring | ig.padded_dilation_mask).sum())
    dH, dW = spec.dilated_out_size
    (sh, sw), (rH, rW) = spec.stride, spec.remainder
    ring_only = int(ig.padded_ring.sum())
    Hg, Wg = ig.padded.shape[2:]
    no_rem = (Hg - rH) * (Wg - rW) - spec.out_size[0] * spec.out_size[1]
    traps = [
        Trap(
            ring_only,
            "You counted the padding only: the stride also inserts zeros "
            "between the cells of ∂L/∂y (dilation).",
            "the stride not dilated",
        )
    ]
    if rH or rW:
        traps.append(
            Trap(
                no_rem,
                "You left out the remainder: the padding gets extra zero "
                "rows/columns at the bottom/right for the input rows no "
                "window reached.",
                "the remainder missed",
            )
        )
    (gt, gb), (gl, gr) = spec.full_padding
    notes = (
        f"Dilated: [({spec.out_size[0]}−1)·{sh} + 1] × [({spec.out_size[1]}−1)·{sw} + 1] = "
        f"{dH}×{dW}, with {int(ig.dilation_mask.sum())} inserted zeros.",
        f"Padded by d·(k−1) per side plus the remainder at the bottom/right: top {gt}, "
        f"bottom {gb}, left {gl}, right {gr}, giving {Hg}×{Wg}.",
        f"{Hg}·{Wg} cells − {spec.out_size[0] * spec.out_size[1]} values of ∂L/∂y = "
        f"{answer} zeros.",
    )
    return Question(
        "zeros",
        f"Before the full correlation, the {spec.out_size[0]}×{spec.out_size[1]} "
        f"∂L/∂y{_slice(lay, n=n, k=k)} is dilated by the stride ({sh}×{sw}) and "
        f"padded. **How many of the cells of the dilated, padded ∂L/∂y are zeros that the "
        f"dilation or the padding put there?**",
        float(answer),
        None,
        tuple(t for t in traps if t.value != answer),
        notes,
        stage=_input_stage("dilate", "pad"),
        pointer=(
            "Count the grid the full correlation slides over: ∂L/∂y spread by the stride "
            "(stride − 1 zeros between neighbours), then padded by dilation·(kernel − 1) per "
            "side, plus the remainder rows/columns at the bottom/right. Every cell that is not "
            "a value of ∂L/∂y is a zero."
        ),
        partial=notes[:2],
    )


def _rows_question(lay: Layer, word: str | None) -> Question:
    """The output's height from the formula (floor, dilation and padding included).

    word : the word the padding was given as ('valid', 'same', 'full'), or None when it was
        given as amounts (the question then states them).
    """
    spec = lay.forward.spec
    H, (pt, pb), k, s, d = (
        spec.in_size[0],
        spec.padding[0],
        spec.kernel_size[0],
        spec.stride[0],
        spec.dilation[0],
    )
    answer = spec.out_size[0]
    traps = [
        Trap(
            (H + pt + pb - k) // s + 1,
            "The dilation spreads the kernel: it spans d·(k−1)+1 rows, not k.",
            "the dilation left out",
        ),
        Trap(
            (H + pt + pb - d * (k - 1) - 1) / s + 1,
            "Round down: a window that would hang over the end does not exist (floor).",
            "not rounded down",
        ),
        Trap(
            math.ceil((H + pt + pb - d * (k - 1) - 1) / s) + 1,
            "Round down, not up: the "
            "last partial step leaves a remainder, it does not make a window.",
            "the remainder counted as a window",
        ),
        Trap((H - d * (k - 1) - 1) // s + 1, "You left out the padding.", "the padding left out"),
    ]
    pad = f"'{word}' padding" if word in PADDING_WORDS else f"padding {pt} top and {pb} bottom"
    return Question(
        "rows",
        f"The input has **{H} rows**, the kernel **{k}**, stride **{s}**, dilation **{d}**, "
        f"{pad}. **How many rows does the output y have?**",
        float(answer),
        None,
        tuple(t for t in traps if not close(t.value, answer)),
        (spec.describe().splitlines()[0],),
        stage="Forward · the output's size",
        pointer=(
            "A window needs dilation·(kernel − 1) + 1 rows of the padded input; count the "
            "places it can start, a stride apart, without hanging over the end."
        ),
        partial=(
            "out = floor((H + pad_top + pad_bottom − d·(k − 1) − 1) / stride) + 1 = "
            f"floor(({H} + {pt} + {pb} − {d}·({k} − 1) − 1) / {s}) + 1",
        ),
    )


def _same_question(lay: Layer) -> Question | None:
    """'same' padding split with an even kernel: the odd extra goes to the bottom."""
    spec = lay.forward.spec
    (pt, pb), k, s, d = spec.padding[0], spec.kernel_size[0], spec.stride[0], spec.dilation[0]
    if pt == pb:
        return None
    return Question(
        "same",
        f"'same' padding, {spec.in_size[0]} input rows, kernel {k}, stride {s}, dilation {d}: "
        f"it pads {count(pt + pb, 'row')} in all. **How many of them go at the top?**",
        float(pt),
        None,
        (
            Trap(
                pb,
                "The other side: when the total is odd, the extra row goes at the bottom "
                "(TensorFlow/Keras and PyTorch's 'same' agree).",
                "'same' asymmetry",
            ),
            Trap(
                (pt + pb) / 2,
                "An even kernel has no centre: the total is odd here, and "
                "padding comes in whole rows.",
                "half a row",
            ),
        ),
        (
            f"Total = (out−1)·s + d·(k−1) + 1 − H = {pt + pb}; top = total // 2 = {pt}, "
            f"bottom = the rest = {pb}.",
        ),
        stage="Forward · 'same' padding",
        pointer=(
            "'same' pads what the windows need in all, then splits it: half at the top, "
            "rounded down; the odd row, if any, goes to one side only."
        ),
        partial=(f"total = {pt + pb}; top = total // 2",),
    )

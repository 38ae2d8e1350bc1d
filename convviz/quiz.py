"""Predict, then reveal: questions about one layer, their answers, and the mistakes they catch.

Every question is made from the layer's own arrays and formulas (`convviz.formulas`), so its
answer is the engine's number. A question carries the values that the common mistakes give
(the unrotated kernel, a padded copy treated as zero, a forgotten remainder, the wrong side for
'same' with an even kernel), each with the hint that explains it. Questions follow from the layer
and a seed: the same seed asks the same questions.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from convviz.formulas import Formula, forward_formula, input_grad_formula, weight_grad_formula
from convviz.spec import PADDING_WORDS
from convviz.stages import Layer
from convviz.text import MINUS, count

MAX_CANDIDATES = 48  # cells whose formulas are built when looking for a telling question
ENOUGH = 6  # telling cells (where the flip matters) to choose from
MAX_HAND_TERMS = 100  # a sum of more products is not asked: nobody works it out by hand
SUMS = ("grad_x", "y", "grad_w")  # the kinds that ask for a sum of products


@dataclass(frozen=True)
class Trap:
    """A wrong answer a known mistake gives, and the hint that names the mistake."""

    value: float
    hint: str


@dataclass(frozen=True)
class Question:
    kind: str  # "grad_x", "remainder", "zeros", "rows", "same", "y", "grad_w"
    prompt: str  # markdown
    answer: float
    formula: Formula | None = None  # revealed after an answer
    traps: tuple[Trap, ...] = ()
    notes: tuple[str, ...] = ()  # what the reveal points at: the terms easy to miss


@dataclass(frozen=True)
class Verdict:
    right: bool
    hint: str  # the named mistake when the answer matches one, else ""


def close(a: float, b: float) -> bool:
    """An answer typed from the page's numbers (shown to 2 decimals) counts as right."""
    return abs(a - b) <= max(0.006, 1e-6 * abs(b))


def grade(q: Question, answer: float) -> Verdict:
    """Right or wrong; a wrong answer that a known mistake gives gets that mistake's hint."""
    if close(answer, q.answer):
        return Verdict(True, "")
    for trap in q.traps:
        if close(answer, trap.value):
            return Verdict(False, trap.hint)
    return Verdict(False, "")


def shown(v: float) -> str:
    """A number as a student types it back: four significant digits, not the two decimals a
    cell shows (text.number), so that typing what the page says is right is right; its minus
    is the page's "−" (the answer field takes either)."""
    s = str(round(v)) if abs(v - round(v)) < 1e-9 else f"{v:.4g}"
    return s.replace("-", MINUS)


# --- the flip ------------------------------------------------------------------------------------


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
    ig, w = lay.input_grad, lay.forward.w
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
    traps = [
        Trap(
            wrong,
            "That is the sum with the kernel as it is: the gradient meets the "
            "taps in the opposite order, so rotate the kernel 180° first.",
        )
    ]
    if f.groups:
        own = f.groups[0].value
        traps.append(
            Trap(
                own,
                f"That is only the cell's own ∂L/∂x̃: with {ig.spec.padding_mode} "
                "padding its copies in the ring send gradient back too (fold).",
            )
        )
    return Question(
        "grad_x",
        f"What is **∂L/∂x[{r}, {q}]**{_slice(lay, n=n, c=c)}? The grids below give w and ∂L/∂y"
        + (
            f" of every filter; x is {ig.spec.in_size[0]}×{ig.spec.in_size[1]} with "
            f"{padding_words(ig.spec)}."  # no grid of x: its size and padding said
            if ig.spec.out_channels > 1
            else ", and x its size and padding."
        ),
        f.value,
        f,
        tuple(traps),
        _grad_x_notes(f, ig.spec),
    )


def padding_words(spec) -> str:
    """The layer's padding as the quiz's grids and prompts state it: 'padding 1 (zeros)'."""
    (pt, pb), (pl, pr) = spec.padding
    if len({pt, pb, pl, pr}) == 1:
        return f"padding {pt} ({spec.padding_mode})" if pt else "no padding"
    return f"padding top {pt}, bottom {pb}, left {pl}, right {pr} ({spec.padding_mode})"


def _slice(lay: Layer, **axes: int) -> str:
    spec = lay.forward.spec
    sizes = {"n": spec.batch, "c": spec.in_channels, "k": spec.out_channels}
    shown = [f"{a} = {v}" for a, v in axes.items() if sizes[a] > 1]
    return f" (for {', '.join(shown)})" if shown else ""


# --- the remainder -------------------------------------------------------------------------------


def _remainder_question(lay: Layer, n: int, c: int) -> Question | None:
    """An input cell no window reaches: its gradient is 0 (if such a real cell exists)."""
    spec = lay.forward.spec
    (pt, _), (pl, _) = spec.padding
    (H, W), (rH, rW) = spec.in_size, spec.reach
    rows = [r for r in range(H) if r + pt >= rH]
    cols = [q for q in range(W) if q + pl >= rW]
    if not rows and not cols:
        return None
    r, q = (rows[-1], W // 2) if rows else (H // 2, cols[-1])
    if spec.padding_mode != "zeros":  # a ring copy might still carry gradient here
        return None
    f = input_grad_formula(lay.input_grad, n, c, r, q)
    return Question(
        "remainder",
        f"What is **∂L/∂x[{r}, {q}]**{_slice(lay, n=n, c=c)}? Look at where the last window "
        f"ends (stride {spec.stride[0]}×{spec.stride[1]}).",
        f.value,
        f,
        (),
        (
            f"The remainder: the windows reach only {rH} rows and {rW} columns of the padded "
            f"input; a cell past them is read by no window, so every term of its gradient "
            f"is zero.",
        ),
    )


# --- stages and shapes ---------------------------------------------------------------------------


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
        )
    ]
    if rH or rW:
        traps.append(
            Trap(
                no_rem,
                "You left out the remainder: the padding gets extra zero "
                "rows/columns at the bottom/right for the input rows no "
                "window reached.",
            )
        )
    (gt, gb), (gl, gr) = spec.full_padding
    return Question(
        "zeros",
        f"Before the full correlation, the {spec.out_size[0]}×{spec.out_size[1]} "
        f"∂L/∂y{_slice(lay, n=n, k=k)} is dilated by the stride ({sh}×{sw}) and "
        f"padded. **How many of the cells of the dilated, padded ∂L/∂y are zeros that the "
        f"dilation or the padding put there?**",
        float(answer),
        None,
        tuple(t for t in traps if t.value != answer),
        (
            f"Dilated: [({spec.out_size[0]}−1)·{sh} + 1] × [({spec.out_size[1]}−1)·{sw} + 1] = "
            f"{dH}×{dW}, with {int(ig.dilation_mask.sum())} inserted zeros.",
            f"Padded by d·(k−1) per side plus the remainder at the bottom/right: top {gt}, "
            f"bottom {gb}, left {gl}, right {gr}, giving {Hg}×{Wg}.",
            f"{Hg}·{Wg} cells − {spec.out_size[0] * spec.out_size[1]} values of ∂L/∂y = "
            f"{answer} zeros.",
        ),
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
        ),
        Trap(
            (H + pt + pb - d * (k - 1) - 1) / s + 1,
            "Round down: a window that would hang over the end does not exist (floor).",
        ),
        Trap(
            math.ceil((H + pt + pb - d * (k - 1) - 1) / s) + 1,
            "Round down, not up: the "
            "last partial step leaves a remainder, it does not make a window.",
        ),
        Trap((H - d * (k - 1) - 1) // s + 1, "You left out the padding."),
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
        f"it pads {pt + pb} rows in all. **How many of them go at the top?**",
        float(pt),
        None,
        (
            Trap(
                pb,
                "The other side: when the total is odd, the extra row goes at the bottom "
                "(TensorFlow/Keras and PyTorch's 'same' agree).",
            ),
            Trap(
                (pt + pb) / 2,
                "An even kernel has no centre: the total is odd here, and "
                "padding comes in whole rows.",
            ),
        ),
        (
            f"Total = (out−1)·s + d·(k−1) + 1 − H = {pt + pb}; top = total // 2 = {pt}, "
            f"bottom = the rest = {pb}.",
        ),
    )


# --- forward and weight gradient -----------------------------------------------------------------


def _padded_as_zero(f: Formula) -> float:
    """The sum with every padded copy treated as 0 (right for zero padding only)."""
    return sum(t.value for t in f.terms if not t.padding) + f.constant


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
    traps, notes = [], []
    pads = sum(t.padding for t in f.terms)
    if pads and spec.padding_mode != "zeros":
        traps.append(
            Trap(
                _padded_as_zero(f),
                f"With {spec.padding_mode} padding the ring is not "
                "zeros: it holds copies of real cells.",
            )
        )
    if pads:
        notes.append(
            f"{pads} of the window's taps sit on the padding "
            f"({'zeros' if spec.padding_mode == 'zeros' else spec.padding_mode + ' copies'})."
        )
    if len(f.terms) > MAX_HAND_TERMS:
        return None
    i, j = f.target.index
    return Question(
        "y",
        f"What is **y[{i}, {j}]**{_slice(lay, n=n, k=k)} (no bias)?",
        f.value,
        f,
        tuple(t for t in traps if not close(t.value, f.value)),
        tuple(notes),
    )


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
            )
        )
    notes = [
        f"Tap w[{a}, {b}] sees x̃[i·s + {a}·d, j·s + {b}·d] in every window: the stride "
        f"({spec.stride[0]}) steps through x̃, and the kernel's dilation becomes the offset."
    ]
    if spec.batch > 1:
        notes.append(f"Summed over all {spec.batch} samples of the batch.")
    return Question(
        "grad_w",
        f"What is **∂L/∂w[{a}, {b}]**{_slice(lay, k=k, c=c)}?",
        f.value,
        f,
        tuple(t for t in traps if not close(t.value, f.value)),
        tuple(notes),
    )


# --- the set -------------------------------------------------------------------------------------


def questions(
    lay: Layer,
    n: int,
    k: int,
    c: int,
    seed: int,
    padding_word: str | None,
    worked: Collection[tuple[str, int, int]] = (),
) -> list[Question]:
    """The questions for this layer and seed, the mistakes students make most first.

    padding_word : the word the padding was given as ('valid', 'same', 'full'), or None when it
        was given as amounts.
    worked : (grid, row, col) of the cells whose sums the app works out for the reader (a
        preset's note): not asked.
    """
    rng = np.random.default_rng(seed)
    H, W = lay.forward.spec.in_size
    flat = rng.permutation(H * W)[:MAX_CANDIDATES]
    cells = [cell for i in flat if ("grad_x", *(cell := divmod(int(i), W))) not in worked]
    found = [
        _grad_x_question(lay, n, c, cells),
        _zeros_question(lay, n, k),
        _remainder_question(lay, n, c),
        _same_question(lay) if padding_word == "same" else None,
        _rows_question(lay, padding_word),
        _y_question(lay, n, k, rng, worked),
        _grad_w_question(lay, k, c, rng),
    ]
    return [q for q in found if q is not None]


def by_hand(lay: Layer, asked: list[Question]) -> str:
    """Why the questions ask no sum, if they ask none: this layer's are too long ("" else)."""
    if any(q.kind in SUMS for q in asked):
        return ""
    spec = lay.forward.spec
    kH, kW = spec.kernel_size
    longest = max(
        spec.out_channels * kH * kW,  # a ∂L/∂x cell (at most: every filter, every tap)
        spec.in_channels * kH * kW,  # an output cell
        spec.batch * spec.out_size[0] * spec.out_size[1],  # a ∂L/∂w cell
    )
    return (
        f"This layer's sums are too long to work out by hand (up to {longest} products), so "
        "these questions are about its shape. Pick a small preset, such as a Recitation, to "
        "predict sums."
    )


def answer_text(q: Question) -> str:
    return shown(q.answer)

"""Predict, then reveal: questions about one layer, their answers, and the mistakes they catch.

Every question is made from the layer's own arrays and formulas (`convviz.formulas`), so its
answer is the engine's number. The questions walk the story of the layer in order (a forward
cell, a dilated ∂L/∂y cell, a padded cell, a flipped tap, a ∂L/∂x cell by the full correlation,
a masked or folded cell, a ∂L/∂w cell, a bias gradient), then ask about its shape. A question
carries the values the common mistakes give (the flip forgotten, the stride not dilated, padding
by the stride, the remainder missed, the wrong side for 'same'), each named with the hint that
explains it and the cells that show it; and the help a wrong answer earns, one step at a time
(`feedback`): first the stage and the cells that matter, then the working started, then the
answer. Questions follow from the layer and a seed: the same seed asks the same questions.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from convviz.formulas import Formula, forward_formula, input_grad_formula, weight_grad_formula
from convviz.lecture import LECTURE
from convviz.spec import PADDING_WORDS
from convviz.stages import Layer
from convviz.text import MINUS, count, number


def _input_stage(*keys: str) -> str:
    """Where a question stands in the input gradient, as its stage bar names the stages (the
    lecture numbers them): 'Input gradient · 2 and 3 · dilate and pad'."""
    stages = [LECTURE.stage(key) for key in keys]
    numbers = " and ".join(LECTURE.number(s) for s in stages)
    return f"Input gradient · {numbers} · {' and '.join(s.title for s in stages)}"


MAX_CANDIDATES = 48  # cells whose formulas are built when looking for a telling question
ENOUGH = 6  # telling cells (where the flip matters) to choose from
MAX_HAND_TERMS = 100  # a sum of more products is not asked: nobody works it out by hand
READABLE_SIDE = 24  # a grid wider than this is drawn without numbers (`Theme.max_text_cells`)
SUMS = ("grad_x", "y", "grad_w", "bias")  # the kinds that ask for a sum of products
MAX_TRIES = 3  # answers before the answer is shown: a hint after each of the first two
GRIDS = {"x": "x", "xp": "x", "w": "w", "dy": "g"}  # a formula's symbols → the given grids
# the story's questions, in the order it tells them (then come the layer's shape questions)
STORY = ("y", "dilated", "padded", "flip", "grad_x", "masked", "grad_w", "bias")


@dataclass(frozen=True, eq=False)
class Lit:
    """Cells that matter in one of the grids a question gives: 'x' (the input, unpadded), 'w'
    or 'g' (∂L/∂y), in the slice whose axes agree with `tags` (e.g. (("k", 1),)); no tags:
    in every slice drawn."""

    grid: str
    mask: np.ndarray  # bool, the grid's shape
    tags: tuple[tuple[str, int], ...] = ()

    def applies(self, grid: str, slice_: dict[str, int]) -> bool:
        return grid == self.grid and all(slice_.get(a) == v for a, v in self.tags)


@dataclass(frozen=True)
class Trap:
    """A wrong answer a known mistake gives, the hint that names the mistake, and the cells
    that show it."""

    value: float
    hint: str
    name: str = ""  # the mistake in a few words, e.g. "the flip forgotten"
    lit: tuple[Lit, ...] = ()


@dataclass(frozen=True)
class Question:
    kind: str  # "y", "dilated", "padded", "flip", "grad_x", "masked", "grad_w", "bias", …
    prompt: str  # markdown
    answer: float
    formula: Formula | None = None  # revealed with the answer
    traps: tuple[Trap, ...] = ()
    notes: tuple[str, ...] = ()  # what the reveal points at: the terms easy to miss
    stage: str = ""  # where in the story, as the pages name it: the page, the stage (_input_stage)
    pointer: str = ""  # the first hint: the stage's rule, and what the lit cells are
    lit: tuple[Lit, ...] = ()  # the cells the first hint lights
    partial: tuple[str, ...] = ()  # the second hint, a line each: the working started, the
    # answer left out


@dataclass(frozen=True)
class Verdict:
    right: bool
    hint: str  # the named mistake when the answer matches one, else ""
    trap: Trap | None = None


def close(a: float, b: float) -> bool:
    """An answer typed from the page's numbers (shown to 2 decimals) counts as right."""
    return abs(a - b) <= max(0.006, 1e-6 * abs(b))


def grade(q: Question, answer: float) -> Verdict:
    """Right or wrong; a wrong answer that a known mistake gives gets that mistake's hint."""
    if close(answer, q.answer):
        return Verdict(True, "")
    for trap in q.traps:
        if close(answer, trap.value):
            return Verdict(False, trap.hint, trap)
    return Verdict(False, "")


@dataclass(frozen=True)
class Feedback:
    """What a question shows after the answers given so far."""

    right: bool  # the last answer was right
    wrong: int  # wrong answers so far
    revealed: bool  # the answer and its formula are shown (right, tries spent, or asked for)
    hints: int  # hints shown: 1 the stage and the lit cells, 2 also the working started
    mistake: Trap | None  # the named mistake of the last wrong answer, if it is a known one

    @property
    def tries_left(self) -> int:
        return max(0, MAX_TRIES - self.wrong)

    def lit(self, q: Question) -> tuple[Lit, ...]:
        """The cells lit in the given grids: none before a wrong answer; then the question's,
        and those of the mistake the last answer made."""
        if not self.hints:
            return ()
        return q.lit + (self.mistake.lit if self.mistake else ())


def feedback(q: Question, answers: Sequence[float], gave_up: bool = False) -> Feedback:
    """The help earned by `answers` (in the order given; none after a right one): a hint after
    each of the first two wrong answers, the answer after the third (or when asked for)."""
    verdicts = [grade(q, a) for a in answers]
    right = bool(verdicts) and verdicts[-1].right
    wrong = sum(not v.right for v in verdicts)
    revealed = right or wrong >= MAX_TRIES or gave_up
    mistake = verdicts[-1].trap if verdicts and not right else None
    return Feedback(right, wrong, revealed, min(wrong, 2), mistake)


def score_points(answers: Sequence[float], q: Question) -> bool:
    """Whether a question counts as right in the score: answered right before it was shown."""
    return any(grade(q, a).right for a in answers[:MAX_TRIES])


def shown(v: float) -> str:
    """A number as a student types it back: four significant digits, not the two decimals a
    cell shows (text.number), so that typing what the page says is right is right; its minus
    is the page's "−" (the answer field takes either)."""
    s = str(round(v)) if abs(v - round(v)) < 1e-9 else f"{v:.4g}"
    return s.replace("-", MINUS)


def grid_shapes(spec) -> dict[str, tuple[int, int]]:
    """The shapes of the grids a question gives: x (unpadded), w, g (∂L/∂y)."""
    return {"x": spec.in_size, "w": spec.kernel_size, "g": spec.out_size}


def formula_lits(f: Formula, spec) -> tuple[Lit, ...]:
    """The given grids' cells the formula's terms read (vanishing terms left out): a Lit per
    grid and slice."""
    shapes = grid_shapes(spec)
    masks: dict[tuple[str, tuple], np.ndarray] = {}
    for t in f.terms:
        if t.vanishes:
            continue
        for sym in (t.left, t.right):
            if sym.name in GRIDS:
                grid = GRIDS[sym.name]
                key = (grid, sym.tags)
                if key not in masks:
                    masks[key] = np.zeros(shapes[grid], dtype=bool)
                masks[key][sym.index] = True
    return tuple(Lit(grid, mask, tuple(tags)) for (grid, tags), mask in masks.items())


def partial_formula(f: Formula) -> tuple[str, str]:
    """The second hint of a sum, two lines: its terms in symbols, then the first half of them
    in numbers and the rest left to the reader (never the total)."""
    symbolic = f.text(numeric=False, max_terms=MAX_HAND_TERMS).rsplit(" = ", 1)[0]
    numeric = f.text(numeric=True, max_terms=MAX_HAND_TERMS).rsplit(" = ", 1)[0]
    name, body = numeric.split(" = ", 1)
    parts = body.split(" + ")
    kept = max(1, len(parts) // 2)
    rest = len(parts) - kept
    what = ("more copy", "more copies") if f.groups else ("more product", "more products")
    more = f" + … ({count(rest, *what)})" if rest else ""
    return symbolic, f"{name} = {' + '.join(parts[:kept])}{more}"


def _mask(shape, cells) -> np.ndarray:
    m = np.zeros(shape, dtype=bool)
    for cell in cells:
        m[cell] = True
    return m


# --- the forward pass ----------------------------------------------------------------------------


def _padded_as_zero(f: Formula) -> float:
    """The sum with every padded copy treated as 0 (right for zero padding only)."""
    return sum(t.value for t in f.terms if not t.padding) + f.constant


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


def _readable(*shapes) -> bool:
    """Whether the grids of these shapes are drawn with their numbers."""
    return max(max(s) for s in shapes) <= READABLE_SIDE


def _cross(shape, i: int, j: int) -> np.ndarray:
    """Row i and column j of a grid."""
    m = np.zeros(shape, dtype=bool)
    m[i, :] = True
    m[:, j] = True
    return m


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
            f"The padding is dilation·(kernel − 1): {dh}·({kH} − 1) = {gt} rows on top, "
            f"{dw}·({kW} − 1) = {gl} columns on the left; ∂L/∂y[{i}, {j}] sits at "
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


def _sized(lits: tuple[Lit, ...], spec) -> tuple[Lit, ...]:
    """The Lits with masks grown to their grids' shapes (made from the cells they hold)."""
    shapes = grid_shapes(spec)
    out = []
    for lit in lits:
        mask = np.zeros(shapes[lit.grid], dtype=bool)
        h, w = lit.mask.shape
        mask[:h, :w] = lit.mask
        out.append(Lit(lit.grid, mask, lit.tags))
    return tuple(out)


# --- the mask ------------------------------------------------------------------------------------


def _label(spec, cell) -> str:
    """A padded-input cell by its label (the ring negative), e.g. 'x̃[−1, 2]'."""
    r, c = spec.padded_label(cell)
    return f"x̃[{number(r)}, {number(c)}]"


def _masked_question(lay: Layer, n: int, c: int, rng) -> Question | None:
    """Stage 6: the ring's gradient dropped (zero padding) or folded back (the other modes); a
    layer without padding asks about a cell no window reads instead."""
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
            "Stage 6 keeps only the gradient of cells of x: the padded ring held constants. "
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
            f"Stage 6 with {spec.padding_mode} padding: a ring cell is a copy of a cell of x, "
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
            f"No window reads x[{r}, {q}]: the windows reach only {rH} rows and {rW} columns of "
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
        f"it pads {pt + pb} rows in all. **How many of them go at the top?**",
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
    """The questions for this layer and seed: the story in order (forward, dilate, pad, rotate,
    correlate, mask, weight and bias gradients), then the layer's shape.

    padding_word : the word the padding was given as ('valid', 'same', 'full'), or None when it
        was given as amounts.
    worked : (grid, row, col) of the cells whose sums the app works out for the reader (a
        preset's note): not asked.
    """
    rng = np.random.default_rng(seed)
    H, W = lay.forward.spec.in_size
    flat = rng.permutation(H * W)[:MAX_CANDIDATES]
    cells = [cell for i in flat if ("grad_x", *(cell := divmod(int(i), W))) not in worked]
    masked = _masked_question(lay, n, c, rng)
    found = [
        _y_question(lay, n, k, rng, worked),
        _dilated_question(lay, n, k),
        _padded_question(lay, n, k),
        _flip_question(lay, k, c, rng),
        _grad_x_question(lay, n, c, cells),
        masked,
        _grad_w_question(lay, k, c, rng),
        _bias_question(lay, k),
        _zeros_question(lay, n, k),
        None
        if masked is not None and masked.kind == "remainder"
        else _remainder_question(lay, n, c),
        _same_question(lay) if padding_word == "same" else None,
        _rows_question(lay, padding_word),
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
        "these questions are about its stages and its shape. Pick a small preset, such as a "
        "Recitation, to predict sums."
    )


def answer_text(q: Question) -> str:
    return shown(q.answer)

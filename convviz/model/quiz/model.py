"""The quiz's question model and its grading: what a question holds (its answer, the mistakes
it catches, the cells it lights), how an answer is graded and what help it earns; and the helpers
the question makers share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from convviz.engine.arrays import Layer
from convviz.engine.formulas import Formula
from convviz.engine.text import MINUS, count, number
from convviz.model.lecture import LECTURE


def _input_stage(*keys: str) -> str:
    """Where a question stands in the input gradient, as its stage bar names the stages (the
    lecture numbers them): 'Input gradient · 2 and 3 · dilate and pad'."""
    stages = [LECTURE.stage(key) for key in keys]
    numbers = " and ".join(LECTURE.number(s) for s in stages)
    return f"Input gradient · {numbers} · {' and '.join(s.title for s in stages)}"


def story_order(kinds, lecture=LECTURE, stages=None) -> tuple[str, ...]:
    """The question kinds in the order the lecture tells their stages (`stages`: kind → the
    stage it asks about, `KIND_STAGES` by default)."""
    stages = stages or KIND_STAGES
    place = {s.key: i for i, s in enumerate(lecture.stages)}
    return tuple(sorted(kinds, key=lambda kind: place[stages[kind]]))


MAX_CANDIDATES = 48  # cells whose formulas are built when looking for a telling question
ENOUGH = 6  # telling cells (where the flip matters) to choose from
MAX_HAND_TERMS = 100  # a sum of more products is not asked: nobody works it out by hand
READABLE_SIDE = 24  # a grid wider than this is drawn without numbers (`Theme.max_text_cells`)
SUMS = ("grad_x", "y", "grad_w", "bias")  # the kinds that ask for a sum of products
MAX_TRIES = 3  # answers before the answer is shown: a hint after each of the first two
GRIDS = {"x": "x", "xp": "x", "w": "w", "dy": "g"}  # a formula's symbols → the given grids
# the stage of the lecture each of the story's questions asks about
KIND_STAGES = {
    "y": "forward",
    "dilated": "dilate",
    "padded": "pad",
    "flip": "rotate",
    "grad_x": "correlate",
    "masked": "mask",
    "grad_w": "weight-grad",
    "bias": "weight-grad",
}
# the story's questions, in the order it tells them (then come the layer's shape questions)
STORY = story_order(KIND_STAGES)


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


# --- helpers the question makers share ----------------------------------------------------------


def _readable(*shapes) -> bool:
    """Whether the grids of these shapes are drawn with their numbers."""
    return max(max(s) for s in shapes) <= READABLE_SIDE


def _cross(shape, i: int, j: int) -> np.ndarray:
    """Row i and column j of a grid."""
    m = np.zeros(shape, dtype=bool)
    m[i, :] = True
    m[:, j] = True
    return m


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


def _label(spec, cell) -> str:
    """A padded-input cell by its label (the ring negative), e.g. 'x̃[−1, 2]'."""
    r, c = spec.padded_label(cell)
    return f"x̃[{number(r)}, {number(c)}]"


def _padded_as_zero(f: Formula) -> float:
    """The sum with every padded copy treated as 0 (right for zero padding only)."""
    return sum(t.value for t in f.terms if not t.padding) + f.constant

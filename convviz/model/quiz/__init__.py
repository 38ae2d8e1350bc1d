"""Predict, then reveal: questions about one layer, their answers, and the mistakes they catch.

Every question is made from the layer's own arrays and formulas (`convviz.engine.formulas`), so its
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

from collections.abc import Collection

import numpy as np

from convviz.engine.arrays import Layer
from convviz.model.quiz.layer import (
    _bias_question,
    _grad_w_question,
    _masked_question,
    _remainder_question,
    _rows_question,
    _same_question,
    _zeros_question,
)
from convviz.model.quiz.model import (
    MAX_CANDIDATES,
    MAX_HAND_TERMS,
    MAX_TRIES,
    STORY,
    SUMS,
    Feedback,
    Lit,
    Question,
    Trap,
    Verdict,
    close,
    feedback,
    grade,
    grid_shapes,
    padding_words,
    score_points,
    shown,
)
from convviz.model.quiz.passes import (
    _dilated_question,
    _flip_question,
    _grad_x_question,
    _padded_question,
    _y_question,
)

__all__ = [
    "MAX_HAND_TERMS",
    "MAX_TRIES",
    "STORY",
    "SUMS",
    "Feedback",
    "Lit",
    "Question",
    "Trap",
    "Verdict",
    "answer_text",
    "by_hand",
    "close",
    "feedback",
    "grade",
    "grid_shapes",
    "padding_words",
    "questions",
    "score_points",
    "shown",
]


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

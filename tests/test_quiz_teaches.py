"""A quiz that teaches: a wrong answer earns a hint that names the stage and lights the cells
that matter, then the working started, then the answer; the questions walk the story of the
layer; the mistakes it knows are named with the cells that show them; the score lives in the
session and in the link.
"""

from __future__ import annotations

import numpy as np
import pytest

from convviz.model import quiz
from convviz.model.fields import preset_state
from convviz.model.presets import PRESETS, PRESETS_BY_KEY
from convviz.render.story.quiz import given_rows
from convviz.ui.compute import compute_layer, value_key

FAST = [p for p in PRESETS if p.key != "qa-channels"]


def layer_of(p):
    return compute_layer(value_key(preset_state(p)))


def asked(p, seed: int = 0) -> list[quiz.Question]:
    return quiz.questions(layer_of(p), 0, 0, 0, seed, preset_state(p)["pad"], p.worked)


def recitation() -> list[quiz.Question]:
    return asked(PRESETS_BY_KEY["recitation-s2"])


# --- the help a wrong answer earns ---------------------------------------------------------------
def test_hints_come_one_at_a_time_then_the_answer():
    q = next(q for q in recitation() if q.kind == "grad_x")
    wrong, slip = q.answer + 1, q.traps[0]
    steps = [
        ([], (False, False, 0, None)),
        ([wrong], (False, False, 1, None)),
        ([slip.value], (False, False, 1, slip)),
        ([wrong, wrong], (False, False, 2, None)),
        ([wrong, wrong, wrong], (False, True, 2, None)),
        ([wrong, q.answer], (True, True, 1, None)),
    ]
    for answers, want in steps:
        fb = quiz.feedback(q, answers)
        assert (fb.right, fb.revealed, fb.hints, fb.mistake) == want, answers
    assert quiz.feedback(q, [], gave_up=True).revealed
    assert quiz.feedback(q, [wrong]).tries_left == quiz.MAX_TRIES - 1
    # lit: nothing before a wrong answer, the question's cells after, the mistake's with them
    assert quiz.feedback(q, []).lit(q) == ()
    assert quiz.feedback(q, [wrong]).lit(q) == q.lit
    assert quiz.feedback(q, [slip.value]).lit(q) == q.lit + slip.lit
    assert quiz.score_points([wrong, q.answer], q)
    assert not quiz.score_points([wrong] * 3 + [q.answer], q), "right after the answer: no point"


def test_the_recitations_cells_are_lit_as_worked_by_hand():
    """recitation-s2, seed 0 asks ∂L/∂x[3, 4]: only ∂L/∂y[1, 1] reads it, through tap w[1, 2]
    (x[3, 4] = x̃ row 2·1 + 1, column 2·1 + 2); forgetting the flip uses w[1, 0] instead."""
    q = next(q for q in recitation() if q.kind == "grad_x")
    assert "∂L/∂x[3, 4]" in q.prompt
    lit = {x.grid: np.argwhere(x.mask).tolist() for x in q.lit}
    assert lit == {"g": [[1, 1]], "w": [[1, 2]]}
    (flip,) = [t for t in q.traps if t.name == "the flip forgotten"]
    assert [np.argwhere(x.mask).tolist() for x in flip.lit] == [[[1, 0]]]
    d = next(q for q in recitation() if q.kind == "dilated")
    assert "row 2, column 2" in d.prompt and d.answer == 4  # ∂L/∂y[1, 1] moved to [2, 2]
    assert np.argwhere(d.lit[0].mask).tolist() == [[0, 1], [1, 0], [1, 1]]  # its row, column


@pytest.mark.parametrize("p", FAST, ids=lambda p: p.key)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_question_has_its_stage_its_pointer_and_its_working(p, seed):
    lay = layer_of(p)
    for q in asked(p, seed):
        assert q.stage and q.pointer and q.partial, q.kind
        if q.formula is not None:  # its working stops short of the total
            assert not q.partial[-1].endswith(f"= {quiz.answer_text(q)}"), q.kind
        lits = q.lit + tuple(x for t in q.traps for x in t.lit)
        if not lits:
            continue
        rows = given_rows(lay, 0, 0, 0, q.kind, lits)  # every lit cell is in a grid drawn
        drawn = sum(int(panel.mask("highlight").sum()) for row in rows for panel in row)
        assert drawn > 0, q.kind
        for lit in lits:
            assert lit.mask.any() and lit.mask.shape == quiz.grid_shapes(lay.forward.spec)[lit.grid]


def test_the_questions_walk_the_story():
    """classroom (padding 1, stride 2) asks every stage of the story, in its order."""
    kinds = [q.kind for q in asked(PRESETS_BY_KEY["classroom"])]
    assert kinds[: len(quiz.STORY)] == list(quiz.STORY)


def test_the_mistakes_it_diagnoses_are_named_with_their_cells():
    names = {t.name for p in FAST for seed in range(3) for q in asked(p, seed) for t in q.traps}
    for mistake in ("the flip forgotten", "the stride not dilated", "padding by the stride",
                    "the remainder missed", "'same' asymmetry"):  # fmt: skip
        assert mistake in names
    shown = [t for p in FAST for q in asked(p) for t in q.traps if t.lit]
    assert {t.name for t in shown} >= {"the flip forgotten", "padding by the stride"}

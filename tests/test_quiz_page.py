"""The quiz page that teaches, through AppTest: two hints then the answer, a given-up question,
the score a link brings along (its fields read by the state's one parser)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_quiz_teaches import recitation

pytestmark = pytest.mark.apptest
APP = str(Path(__file__).resolve().parents[1] / "app.py")
QUIZ = "pages/9_Quiz.py"


# --- the page ------------------------------------------------------------------------------------
def open_quiz(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update(preset="recitation-s2", **query)
    at.switch_page(QUIZ).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def submit(at: AppTest, value: str) -> None:
    at.text_input[0].set_value(value)
    next(b for b in at.button if b.label == "Check my answer").click().run()
    assert not at.exception, [e.value for e in at.exception]


def test_a_link_brings_its_score_and_a_given_up_question_scores_none():
    at = open_quiz(quiz="0", qr="3", qd="5")
    assert "score: **3 / 5**" in at.markdown[0].value
    next(b for b in at.button if b.label == "Show the answer").click().run()
    assert "The answer is" in at.info[0].value and at.latex
    assert "score: **3 / 6**" in at.markdown[0].value
    assert (at.query_params["qr"], at.query_params["qd"]) == ("3", "6")
    at = open_quiz(quiz="0", qr="9", qd="2")  # a link cannot score more than it did
    assert "score: **2 / 2**" in at.markdown[0].value


def test_two_hints_then_the_answer_on_the_page():
    q = recitation()[0]
    at = open_quiz(quiz="0")
    submit(at, f"{q.answer + 1:g}")
    assert "Not yet" in at.warning[0].value and not at.latex
    assert any(f"Hint 1 · {q.stage}." in i.value for i in at.info)
    assert not at.code
    submit(at, f"{q.answer + 2:g}")
    assert at.code[0].value == "\n".join(q.partial)
    submit(at, f"{q.answer + 3:g}")
    assert "Not quite" in at.warning[0].value and at.latex  # the answer, with its formula
    assert "score: **0 / 1**" in at.markdown[0].value

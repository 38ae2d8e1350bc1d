"""A real browser on the 'why it works' pages: the quiz answered right and wrong, and a click on
an entry of M lighting the cells it links (what AppTest cannot simulate)."""

from __future__ import annotations

import pytest
from browser_helpers import assert_no_traceback, click_cell, goto
from live import rerun, settled
from playwright.sync_api import Page, expect

from convviz.model import quiz
from convviz.model.fields import preset_state
from convviz.model.presets import PRESETS_BY_KEY
from convviz.ui.compute import compute_layer, value_key

pytestmark = pytest.mark.browser
PRESET = "recitation-s2"  # 5×5 ⋆ 3×3, stride 2: the flip and the stride-spread both show


def questions(seed: int = 0) -> list[quiz.Question]:
    state = preset_state(PRESETS_BY_KEY[PRESET])
    return quiz.questions(compute_layer(value_key(state)), 0, 0, 0, seed, state["pad"])


def answer(tab: Page, text: str) -> None:
    """Type into the (one) answer field and submit; wait for the runs the answer asks for (it
    reruns the page twice: st.rerun shows the score)."""
    field = tab.get_by_label("Your answer (a number)")
    expect(field).to_have_value("")  # the new question's own, empty field
    field.fill(text)
    expect(field).to_have_value(text)
    with rerun(tab):
        field.press("Enter")  # submits the form


# The cells a hint outlines in the given grids: plotly shapes named 'highlight', per figure.
LIT = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(
  gd => (gd.layout.shapes || []).filter(s => s.name === 'highlight').length)"""


def test_quiz_one_right_one_wrong(tab: Page, app_url, artifacts):
    first, second = questions()[:2]
    goto(tab, f"{app_url}/Quiz?preset={PRESET}&quiz=0")  # waits for the screen-size rerun
    expect(tab.get_by_text("Question 1 of")).to_be_visible()

    answer(tab, quiz.answer_text(first))
    right = f"Right: {quiz.answer_text(first)}."
    expect(tab.get_by_test_id("stAlert").get_by_text(right)).to_be_visible()
    expect(tab.get_by_test_id("stToast").get_by_text(right)).to_be_visible()  # said aloud too
    expect(tab.get_by_text("How it is computed")).to_be_visible()
    expect(tab.locator(".katex-display").first).to_be_visible()  # the formula, revealed
    expect(tab.get_by_text("1 / 1")).to_be_visible()
    tab.screenshot(path=str(artifacts / "quiz-right.png"))

    # a click into the second run's redraw can land on a button being replaced and be lost
    # (seen in a clean-clone CI run): `rerun` clicks at rest
    with rerun(tab):
        tab.get_by_role("button", name="Next question ▶").click()
    expect(tab.get_by_text("Question 2 of")).to_be_visible()
    assert "qn=1" in tab.url
    wrong = second.answer + 1
    answer(tab, f"{wrong:g}")
    said = f"Not yet: you said {quiz.shown(wrong)}"  # its minus is "−": a hint, not the answer
    expect(tab.get_by_test_id("stAlert").get_by_text(said)).to_be_visible()
    expect(tab.get_by_text(f"Hint 1 · {second.stage}.")).to_be_visible()
    assert_no_traceback(tab)


def test_quiz_hints_twice_then_right(tab: Page, app_url, artifacts):
    """Wrong twice: the first hint names the stage and the mistake and lights the cells that
    matter in the given grids; the second starts the working; then the right answer."""
    asked = questions()
    index = next(i for i, q in enumerate(asked) if q.kind == "grad_x")
    q = asked[index]
    slip = q.traps[0]  # the flip forgotten
    goto(tab, f"{app_url}/Quiz?preset={PRESET}&quiz=0&qn={index}")
    expect(tab.get_by_text(f"Question {index + 1} of")).to_be_visible()
    assert sum(tab.evaluate(LIT)) == 0, "nothing is lit before an answer"

    answer(tab, f"{slip.value:g}")
    said = f"Not yet: you said {quiz.shown(slip.value)}"
    expect(tab.get_by_test_id("stAlert").get_by_text(said)).to_be_visible()
    expect(tab.get_by_text(f"Hint 1 · {q.stage}.")).to_be_visible()
    expect(tab.get_by_text(f"A common slip: {slip.name}.")).to_be_visible()
    assert sum(tab.evaluate(LIT)) > 0, "the cells that matter are outlined"
    expect(tab.get_by_text("the cells that matter (hint)")).to_be_visible()
    tab.screenshot(path=str(artifacts / "quiz-hint-1.png"))

    wrong = q.answer + 1
    answer(tab, f"{wrong:g}")
    alert = tab.get_by_test_id("stAlert").get_by_text(f"you said {quiz.shown(wrong)}")
    expect(alert).to_be_visible()
    expect(tab.get_by_text("Hint 2 · the working, started")).to_be_visible()
    expect(tab.get_by_text(q.partial[0][:20])).to_be_visible()
    expect(tab.locator(".katex-display")).to_have_count(0)  # no formula yet: no answer
    tab.screenshot(path=str(artifacts / "quiz-hint-2.png"))

    answer(tab, quiz.answer_text(q).replace("−", "-"))
    right = f"Right: {quiz.answer_text(q)}, at the third try."
    expect(tab.get_by_test_id("stAlert").get_by_text(right)).to_be_visible()
    expect(tab.get_by_text("How it is computed")).to_be_visible()
    expect(tab.get_by_text("1 / 1")).to_be_visible()
    settled(tab)
    assert "qr=1" in tab.url and "qd=1" in tab.url  # the score travels in the link
    assert_no_traceback(tab)


def test_clicking_an_entry_of_m_links_its_cells(tab: Page, app_url):
    goto(tab, f"{app_url}/Matrix?preset={PRESET}", charts=2)  # the first tab: M and the grids
    expect(tab.get_by_text("output y[1, 1]")).to_be_visible()  # the default: the middle output
    # M's row 2 is y[1, 0]; its column 16 is x[3, 1], which that window meets with tap w[1, 1]
    with rerun(tab):
        click_cell(tab, "xaxis", "yaxis", 2, 16)
    expect(tab.get_by_text("output y[1, 0], input x[3, 1], tap w[1, 1]")).to_be_visible()
    assert_no_traceback(tab)

"""A real browser on the 'why it works' pages: the quiz answered right and wrong, and a click on
an entry of M lighting the cells it links (what AppTest cannot simulate)."""

from __future__ import annotations

import pytest
from live import rerun
from playwright.sync_api import Page, expect
from test_browser import assert_no_traceback, click_cell, goto

from convviz import quiz
from convviz.presets import PRESETS_BY_KEY
from convviz.state import preset_state
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


def test_quiz_one_right_one_wrong(tab: Page, app_url, artifacts):
    first, second = questions()[:2]
    assert second.traps, "the second question should have a named mistake"
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
    wrong = f"{second.traps[0].value:g}"
    answer(tab, wrong)
    said = f"Not quite: you said {quiz.shown(second.traps[0].value)}"  # its minus is "−"
    expect(tab.get_by_test_id("stAlert").get_by_text(said)).to_be_visible()
    expect(tab.get_by_text(second.traps[0].hint[:40])).to_be_visible()  # the named mistake
    expect(tab.get_by_text("1 / 2")).to_be_visible()
    tab.screenshot(path=str(artifacts / "quiz-wrong.png"))
    assert_no_traceback(tab)


def test_clicking_an_entry_of_m_links_its_cells(tab: Page, app_url):
    goto(tab, f"{app_url}/Matrix?preset={PRESET}", charts=2)  # the first tab: M and the grids
    expect(tab.get_by_text("output y[1, 1]")).to_be_visible()  # the default: the middle output
    # M's row 2 is y[1, 0]; its column 16 is x[3, 1], which that window meets with tap w[1, 1]
    with rerun(tab):
        click_cell(tab, "xaxis", "yaxis", 2, 16)
    expect(tab.get_by_text("output y[1, 0], input x[3, 1], tap w[1, 1]")).to_be_visible()
    assert_no_traceback(tab)

"""No input makes a session run its script again and again: a number typed in another spelling
is the number the state holds, and the app stops any run of its own reruns after a few.

A grid of typed-in values compared the text typed ('2.0') with the text it showed ('2'); the
state got the same number, the grid kept its key and asked for a rerun again: ~30 runs a second
until the tab was closed. Runs are counted at `page_config`, which every page calls first.
"""

from __future__ import annotations

import pytest
from apptest_pages import assert_clean, open_page, query
from streamlit.testing.v1 import AppTest

from convviz.model.fields import number_text, typed_number
from convviz.ui import controls
from convviz.ui.editors import EDITORS

pytestmark = pytest.mark.apptest  # the pages' reruns, counted in AppTest

# Spelled otherwise than the grid writes them; each is a number (a minus sign, a decimal comma)
SPELLINGS = ["2.0", "2.", "+2", "2e0", " 2 ", "1e+3", "0.10", "−2", "1,5", "1e-320"]


@pytest.fixture
def runs(monkeypatch) -> list[str]:
    """The pages' script runs so far (each starts with `page_config`)."""
    seen: list[str] = []
    config = controls.page_config

    def counted(page: str) -> None:
        seen.append(page)
        config(page)

    monkeypatch.setattr(controls, "page_config", counted)
    return seen


def _type_into_x(at: AppTest, text: str) -> AppTest:
    """What typing `text` over x[0, 1] in the Overview's grid sends (the editor's edited rows)."""
    grid = at.get("dataframe")[0]
    key = grid.proto.id.split("-", 2)[2]  # '$$ID-<hash>-<the editor's key>'
    at.session_state[key] = {"edited_rows": {0: {"1": text}}, "added_rows": [], "deleted_rows": []}
    return at.run()


@pytest.mark.parametrize("typed", SPELLINGS)
def test_a_number_typed_in_another_spelling_costs_at_most_two_runs(typed, runs):
    at = open_page(preset="recitation-s2")
    at.session_state[EDITORS] = True  # the expander opened
    at.run()
    value = typed_number(typed, "x")
    for attempt in ("a new number", "the same number again"):
        runs.clear()
        _type_into_x(at, typed)
        assert_clean(at)
        assert len(runs) <= 2, (typed, attempt, len(runs))
        assert query(at)["x"].split(",")[1] == number_text(value), (typed, attempt)
        # the grid shows the number as the state holds it, not as it was typed
        assert at.get("dataframe")[0].value.iloc[0, 1] == number_text(value), (typed, attempt)
    assert not at.toast, [t.value for t in at.toast]  # the guard was never needed


def test_a_tiny_number_is_shown_as_held():
    """'1e-320' showed as '9.99989e-321' (the grid wrote f'{v:g}'): a number written by the grid
    reads back as itself."""
    for value in (1e-320, 1e16, 0.1, -2.5, 123456789.0, 1 / 3):
        assert float(number_text(value)) == value


def _loops():
    """A page whose every run asks for another (what the grid did)."""
    import streamlit as st

    from convviz.ui.controls import _count_self_reruns, self_rerun

    _count_self_reruns()  # as page_config does
    st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    st.write("drawn")
    self_rerun()


def test_the_app_stops_its_own_reruns_after_a_few():
    at = AppTest.from_function(_loops, default_timeout=30).run()
    assert not at.exception
    assert at.session_state["runs"] == controls.MAX_SELF_RERUNS + 1
    assert "stopped redrawing itself" in at.toast[0].value
    assert at.markdown[0].value == "drawn"  # the run finished: its view stays
    at.run()  # the reader's next event starts the count again
    assert at.session_state["runs"] == 2 * (controls.MAX_SELF_RERUNS + 1)


def test_a_quiz_answer_reruns_once(runs):
    at = open_page("pages/9_Quiz.py", preset="recitation-s2")
    runs.clear()
    at.text_input[0].input("2.0")
    at.button[0].click().run()
    assert_clean(at)
    assert len(runs) <= 2

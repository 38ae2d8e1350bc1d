"""The whole backward pass on the Input-gradient page, through AppTest (no browser): a stage of
the lecture (step=7, an older link's whole=1), reached by Next after the mask and left by Next
for the Weight gradient, the stage bar told what to light up, and the formula under the player
following the frames (the engine's formulas)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from convviz.engine.arrays import forward_arrays, layer
from convviz.engine.formulas import input_grad_formula, weight_grad_formula
from convviz.model.fields import FIELDS
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import from_query, to_query

pytestmark = pytest.mark.apptest  # the Input-gradient page in AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/2_Input_gradient.py"
STAGES = ["1 · ∂L/∂y", "2 · dilate", "3 · pad", "4 · rotate 180°", "5 · correlate", "6 · mask"]


def open_page(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for name, value in query.items():
        at.query_params[name] = value
    at.switch_page(PAGE)
    return at.run()


def query(at: AppTest) -> dict[str, str]:
    return {k: at.query_params[k] for k in at.query_params}


def meta(at: AppTest) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["meta"]["player"]


def player_data(at: AppTest, key: str) -> dict:
    """What the page sent to the player of chart `key` (the component's data)."""
    for el in at.get("bidi_component"):
        data = json.loads(el.proto.bytes) if el.proto.bytes else {}  # the player's JSON bytes
        if data.get("chart") == f"chart_{key}":
            return data
    raise AssertionError(f"no player for {key}")


def recitation():
    p = PRESETS_BY_KEY["recitation-s2"]
    spec = p.spec()
    x, w = p.values()
    return layer(spec, x, w, p.grad_out_for(forward_arrays(spec, x, w).y)).input_grad


WHOLE = str(len(STAGES) + 1)  # the whole pass: the stage after the six (step=7)


def test_an_older_links_whole_is_read_as_the_whole_pass_stage():
    assert FIELDS["whole"].kind == "bool"
    state, problems = from_query({"preset": "recitation-s2", "whole": "1"})
    assert state["step"] == int(WHOLE) and not problems
    assert "whole" not in to_query(state) and to_query(state)["step"] == WHOLE
    state, problems = from_query({"preset": "recitation-s2", "whole": "yes"})
    assert state["step"] == 1
    assert problems == ["`whole=yes` must be 0 or 1; kept off"]


def test_a_link_with_whole_opens_the_whole_pass():
    for at in (open_page(preset="recitation-s2", whole="1"),
               open_page(preset="recitation-s2", step=WHOLE)):  # fmt: skip
        assert not at.exception, [e.value for e in at.exception]
        assert at.session_state["ctl_step"] == "1–6 · whole pass"  # its button in the stage bar
        labels = meta(at)["labels"]
        assert labels[0] == "1 · ∂L/∂y" and labels[-1] == "6 · mask"
        assert meta(at)["stages"] == STAGES


def test_the_whole_pass_is_a_stage_of_the_bar_and_of_the_url():
    at = open_page(preset="recitation-s2")
    at.button_group(key="ctl_step").set_value("1–6 · whole pass").run()
    assert query(at)["step"] == WHOLE and "whole" not in query(at)
    assert meta(at)["labels"][-1] == "6 · mask" and len(set(meta(at)["labels"])) == 6
    at.button_group(key="ctl_step").set_value("3 · pad").run()  # a stage alone
    assert query(at)["step"] == "3"
    assert set(meta(at)["labels"]) == {"3 · pad"}


def test_next_walks_the_stages_then_the_whole_pass_then_the_weight_gradient():
    """The clicker's sequence: … → 6 · mask → the whole pass → Weight gradient (its first
    stage); back from the Weight gradient's first stage to the whole pass."""
    at = open_page(preset="recitation-s2", step="6")
    at.button(key="nav_next").click().run()
    assert query(at)["step"] == WHOLE
    assert player_data(at, "stage_whole")["stage"].endswith("#whole")
    at.button(key="nav_next_page").click().run()  # to the Weight gradient page
    assert query(at)["step"] == "1"
    assert at.session_state["ctl_step"] == "1 · ∂L/∂w"
    # (AppTest runs its own page again after an in-app switch: a fresh one for the way back)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["preset"] = "recitation-s2"
    at.switch_page("pages/3_Weight_gradient.py").run()
    at.button(key="nav_back_page").click().run()
    assert query(at)["step"] == WHOLE


def test_the_player_follows_the_stage_bar_and_writes_the_frames_sums():
    at = open_page(preset="recitation-s2", step=WHOLE, sel="grad_x:2:2")
    data = player_data(at, "stage_whole")
    # every stage of the motion lights its own button of the bar
    assert data["follow"] == {s: i for i, s in enumerate(STAGES)}
    assert data["buttons"]["bar"] == ".st-key-ctl_step button"
    assert data["buttons"]["next"] == ".st-key-nav_next button, .st-key-nav_next_page button"
    assert data["whole"] == {"toggle": 0}  # back to the stage it was entered from (none: the 1st)
    ig = recitation()
    labels, cells, captions = data["labels"], data["cells"], data["captions"]
    assert len(captions) == len(labels) == len(cells)
    correlating = [i for i, s in enumerate(labels) if s == "5 · correlate" and cells[i]]
    assert correlating, "the full correlation's frames name their cell"
    for i in correlating:
        _, r, c = cells[i]
        f = input_grad_formula(ig, 0, 0, r, c, padded=True)
        assert captions[i][:2] == [f.text(numeric=n, max_terms=27) for n in (False, True)]
        assert captions[i][1].endswith(f"= {ig.grad_x_padded[0, 0, r, c]:g}")
        assert captions[i][2].startswith("Computing ∂L/∂x̃")  # then the stage's words
    # the mask's frames and the end: the followed ∂L/∂x cell, [2, 2] = 36 in the recitation
    end = captions[-1]
    assert end[1].startswith("∂L/∂x₂₂") and end[1].endswith("= 36")
    assert any(s == "6 · mask" and cells[i] == ["grad_x"] for i, s in enumerate(labels))
    # frames with no one cell (dilate, pad, rotate) keep their words
    first = labels.index("2 · dilate")
    assert cells[first] == [] and len(captions[first]) == 1


def test_the_weight_gradient_motion_writes_each_windows_sum():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["preset"] = "recitation-s2"
    at.query_params["step"] = "2"  # the weight gradient's second stage: the window
    at.switch_page("pages/3_Weight_gradient.py").run()
    assert not at.exception
    data = player_data(at, "stage_weight-window")
    p = PRESETS_BY_KEY["recitation-s2"]
    spec = p.spec()
    x, w = p.values()
    wg = layer(spec, x, w, p.grad_out_for(forward_arrays(spec, x, w).y)).weight_grad
    labels, cells, captions = data["labels"], data["cells"], data["captions"]
    sweeping = [i for i, s in enumerate(labels) if s == "sweep"]
    assert sweeping and all(cells[i][0] == "grad_w" for i in sweeping)
    seen = set()
    for i in sweeping:
        _, a, b = cells[i]
        seen.add((a, b))
        f = weight_grad_formula(wg, 0, 0, a, b)
        assert captions[i][:2] == [f.text(numeric=n, max_terms=27) for n in (False, True)]
        assert captions[i][1].endswith(f"= {wg.grad_w[0, 0, a, b]:g}")  # the engine's number
        assert captions[i][2].startswith(f"Computing ∂L/∂w[{a}, {b}] = Σ x̃·∂L/∂y: the window steps")
    assert seen == {(a, b) for a in range(3) for b in range(3)}  # every tap's window
    assert all(len(captions[i]) == 1 for i, s in enumerate(labels) if s != "sweep")

"""The whole backward pass on the Input-gradient page, through AppTest (no browser): in the link
(`whole=1`), switched on and off by the toggle and by picking a stage, the stage bar told what
to light up, and the formula under the player following the frames (the engine's formulas)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from convviz.formulas import input_grad_formula, weight_grad_formula
from convviz.presets import PRESETS_BY_KEY
from convviz.stages import forward_stages, layer
from convviz.state import FIELDS, from_query, preset_state, to_query

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
    return layer(spec, x, w, p.grad_out_for(forward_stages(spec, x, w).y)).input_grad


def test_whole_is_a_strict_url_field():
    assert FIELDS["whole"].kind == "bool"
    assert preset_state(PRESETS_BY_KEY["recitation-s2"])["whole"] is False
    state, problems = from_query({"preset": "recitation-s2", "whole": "1"})
    assert state["whole"] is True and not problems
    assert to_query(state)["whole"] == "1"
    state, problems = from_query({"preset": "recitation-s2", "whole": "yes"})
    assert state["whole"] is False
    assert problems == ["`whole=yes` must be 0 or 1; kept off"]


def test_a_link_with_whole_opens_the_whole_pass():
    at = open_page(preset="recitation-s2", whole="1")
    assert not at.exception, [e.value for e in at.exception]
    assert at.toggle(key="whole_pass").value is True
    labels = meta(at)["labels"]
    assert labels[0] == "1 · ∂L/∂y" and labels[-1] == "6 · ∂L/∂x"
    assert meta(at)["stages"] == [*STAGES, "6 · ∂L/∂x"]
    assert at.session_state["w_step"] is None  # no stage selected: the player lights them up


def test_the_toggle_and_a_picked_stage_write_the_url():
    at = open_page(preset="recitation-s2")
    assert query(at).get("whole") == "0"
    at.toggle(key="whole_pass").set_value(True).run()
    assert query(at)["whole"] == "1"
    assert meta(at)["labels"][-1] == "6 · ∂L/∂x"
    at.button_group(key="w_step").set_value("3 · pad").run()  # a stage alone, whole pass off
    assert query(at)["whole"] == "0" and query(at)["step"] == "3"
    assert set(meta(at)["labels"]) == {"3 · pad"}


def test_the_whole_pass_bars_buttons_reach_the_server_past_its_ends_only():
    """While the whole pass plays, player.js makes the bar's Back / Next its previous / next
    stage (a browser test clicks them); a click the server gets is past the motion's ends: the
    pages around. Before, Next left the whole pass for the storyboard's next stage alone."""
    at = open_page(preset="recitation-s2", whole="1")
    assert at.button(key="nav_next").help.endswith("the weight gradient page")
    at.button(key="nav_next").click().run()
    assert at.button(key="nav_next_page").label == "next: channels ▶"  # the Weight gradient page
    at = open_page(preset="recitation-s2", whole="1")
    at.button(key="nav_back").click().run()
    assert at.button(key="nav_next_page").label == "next: input gradient ▶"  # Forward


def test_the_player_follows_the_stage_bar_and_writes_the_frames_sums():
    at = open_page(preset="recitation-s2", whole="1", sel="grad_x:2:2")
    data = player_data(at, "whole_pass")
    # every stage of the motion has a button of the bar; ∂L/∂x (the mask's result) is 6 · mask's
    assert data["follow"] == {
        "key": "w_step",
        "buttons": {**{s: i for i, s in enumerate(STAGES)}, "6 · ∂L/∂x": 5},
    }
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
    at.switch_page("pages/3_Weight_gradient.py").run()
    assert not at.exception
    data = player_data(at, "dilated_grad")
    p = PRESETS_BY_KEY["recitation-s2"]
    spec = p.spec()
    x, w = p.values()
    wg = layer(spec, x, w, p.grad_out_for(forward_stages(spec, x, w).y)).weight_grad
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

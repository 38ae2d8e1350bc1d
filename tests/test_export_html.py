"""Standalone HTML: one file, no network, the app's player driving every animation."""

from __future__ import annotations

import json
import re

import pytest

from convviz.export import html
from convviz.export.story import Story

PLAYER_DATA = re.compile(
    r"data-convviz-player><script type=\"application/json\">(.*?)</script>", re.S
)


@pytest.fixture(scope="module")
def story():
    return Story.of("recitation-s1")


@pytest.fixture(scope="module")
def lecture(story):
    return html.lecture_html(story)


def _offline(page: str) -> None:
    """Nothing is fetched: no external script, stylesheet, image or frame."""
    assert not re.search(r"<(script|img|iframe)[^>]+src=", page)
    assert not re.search(r"<link[^>]+href=", page)
    assert "window.convvizPlayer = function (component)" in page
    assert page.count("Plotly.newPlot") >= 1


def _players(page: str) -> list[dict]:
    return [json.loads(m) for m in PLAYER_DATA.findall(page)]


def test_one_animation_is_offline_and_its_player_knows_every_frame(story):
    anim = story.animations()[0]
    page = html.animation_html(story, anim)
    _offline(page)
    (data,) = _players(page)
    fig, _ = html.animation_figure(anim)
    assert data["names"] == [f.name for f in fig.frames]
    assert data["chart"] == "chart_forward" and 'class="st-key-chart_forward"' in page
    assert len(data["captions"]) == len(data["names"]) == anim.sweep.steps
    # each frame's lines are the formula of the cell it computes, with the engine's value
    y = story.layer.forward.y[0, 0]
    for (r, c), lines in zip(anim.sweep.targets, data["captions"]):
        assert lines[1].endswith(f"= {y[r, c]:g}")


def test_lecture_has_every_stage_in_order_and_the_backward_motion(story, lecture):
    _offline(lecture)
    order = ["1. Forward pass", "2. Input gradient", "3. Weight gradient"]
    assert [lecture.index(h) for h in order] == sorted(lecture.index(h) for h in order)
    charts = [d["chart"] for d in _players(lecture)]
    assert charts == [
        "chart_forward",
        "chart_input_grad_step2",
        "chart_input_grad_step3",
        "chart_input_grad_step4",
        "chart_input_grad_step5",
        "chart_input_grad_step6",
        "chart_backward_pass",
        "chart_weight_grad",
        "chart_weight_window",
    ]
    assert lecture.count("Plotly.newPlot") == len(charts) + 1  # + the still of ∂L/∂y
    whole = _players(lecture)[charts.index("chart_backward_pass")]
    assert {"dilate", "rotate", "mask"} <= {w for label in whole["labels"] for w in label.split()}
    assert [d["primary"] for d in _players(lecture)].count(True) == 1


@pytest.mark.browser
def test_lecture_plays_and_steps_offline_in_chromium(lecture, tmp_path, page):
    path = tmp_path / "lecture.html"
    path.write_text(lecture)
    fetched = []
    page.on("request", lambda r: fetched.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_selector(".js-plotly-plot")
    players = page.locator("[data-testid=player]")
    assert players.count() == 9
    first = players.nth(0)
    label = first.locator("[data-testid=player-label]")
    first.locator("button", has_text="|◀").click()
    assert label.inner_text().startswith("step 1/")
    pending = (  # the output cells not computed yet: the frames redraw them
        "JSON.stringify(document.querySelector('.st-key-chart_forward .js-plotly-plot').data"
        ".filter(t => t.name === 'pending'))"
    )
    at_first = page.evaluate(pending)
    first.locator("button[title^='Next']").click()
    assert label.inner_text().startswith("step 2/")
    page.keyboard.press("ArrowRight")
    assert label.inner_text().startswith("step 3/")
    # the frame drawn (the player's `shown`: plotly's animate has finished), its pending cells
    page.wait_for_function(
        "() => { const p = window.__convviz.players.get('chart_forward');"
        " return p.shown() === p.current(); }"
    )
    assert page.evaluate(pending) != at_first
    formula = first.locator("[data-testid=player-formula]").inner_text()
    assert formula.startswith("y₁₀")
    assert [u for u in fetched if not u.startswith("file:")] == []


def test_the_whole_pass_and_the_windows_write_each_frames_sum_as_the_pages_do():
    """The exported whole backward pass said only "Computing ∂L/∂x̃[0, 2]: rot180 w over the
    padded grid" where the app writes that cell's sum, and "∂L/∂x[n=0, c=0]: the engine's input
    gradient" where the app writes the followed cell's. Every frame that computes a cell now
    writes its sum, symbolic and numeric, the engine's value at the end (recitation-s2)."""
    story = Story.of("recitation-s2")
    ig, wg = story.layer.input_grad, story.layer.weight_grad
    for name in ("backward-pass", "weight-window"):
        anim = next(a for a in story.animations() if a.name == name)
        (data,) = _players(html.animation_html(story, anim))
        summed = [(cell, lines) for cell, lines in zip(data["cells"], data["captions"]) if cell]
        assert summed, name
        for cell, (symbols, numbers, *_) in summed:
            if cell[0] == "grad_x_padded":
                want = ig.grad_x_padded[0, 0, cell[1], cell[2]]
            elif cell[0] == "grad_w":
                want = wg.grad_w[0, 0, cell[1], cell[2]]
            else:  # the followed ∂L/∂x cell: the centre, [2, 2] = 36 (the recitation's sum)
                assert symbols.startswith("∂L/∂x₂₂")
                want = ig.grad_x[0, 0, 2, 2]
            assert numbers.endswith(f"= {want:g}"), (name, cell, numbers)

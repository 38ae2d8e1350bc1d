"""Standalone HTML: one file, no network, the app's player driving every animation."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from convviz.export import html
from convviz.export.story import Story
from convviz.model.lecture import LECTURE

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"

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
    assert data["chart"] == "chart_forward" and 'class="figure st-key-chart_forward"' in page
    assert data["find"] == ".st-key-chart_forward" and data["pres"] and data["play"] == "auto"
    assert len(data["captions"]) == len(data["names"]) == anim.sweep.steps
    # each frame's lines are the formula of the cell it computes, with the engine's value
    y = story.layer.forward.y[0, 0]
    for (r, c), lines in zip(anim.sweep.targets, data["captions"]):
        assert lines[1].endswith(f"= {y[r, c]:g}")


def test_the_lecture_is_the_models_stages_one_per_screen(story, lecture):
    _offline(lecture)
    stages = html.deck_stages(story)
    keys = re.findall(r'<section class="stage" data-stage="\d+" data-chart="[^"]*" '
                      r'data-key="([^"]+)"', lecture)  # fmt: skip
    assert keys == [s.key for s in stages] == [s.key for s in LECTURE.of(story.spec)][: len(keys)]
    bar = re.findall(r'class="stage-button" data-stage="\d+">([^<]+)</button>', lecture)
    assert bar == [html_text(LECTURE.label(s)) for s in stages]
    charts = [d["chart"] for d in _players(lecture)]
    assert charts == [f"chart_{s.key.replace('-', '_')}" for s in stages if s.animated]
    assert lecture.count("Plotly.newPlot") == len(stages)  # ∂L/∂y: a still
    whole = _players(lecture)[charts.index("chart_whole")]
    assert {"dilate", "rotate", "mask"} <= {w for label in whole["labels"] for w in label.split()}
    assert not any(d["primary"] for d in _players(lecture))  # the deck says which one is shown
    assert all(d["buttons"]["next"] == "#deck-next" for d in _players(lecture))


def html_text(text: str) -> str:
    import html as std

    return std.escape(text)


SHOWN = """() => {
  const s = document.querySelector('section.stage.shown'), r = s.getBoundingClientRect();
  const figs = [...s.querySelectorAll('.js-plotly-plot, .player')]
    .map(e => e.getBoundingClientRect());
  return {key: s.dataset.key, top: r.top, left: r.left,
          bottom: Math.max(...figs.map(f => f.bottom)), right: Math.max(...figs.map(f => f.right)),
          count: document.querySelectorAll('section.stage.shown').length,
          counter: document.getElementById('deck-counter').textContent};
}"""


@pytest.mark.browser
def test_lecture_shows_one_whole_stage_per_screen_offline_in_chromium(
    story, lecture, tmp_path, browser
):
    """Network off, 1280×720: each stage whole on the screen (its figure and player inside it,
    the others hidden), PageDown the next one whole, which opens on its first frame and plays;
    b blanks the screen; the app's keys step the player."""
    path = tmp_path / "lecture.html"
    path.write_text(lecture)
    context = browser.new_context(viewport={"width": 1280, "height": 720}, offline=True)
    page = context.new_page()
    fetched = []
    page.on("request", lambda r: fetched.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_function("() => document.body.dataset.stage === '0' && window.__convviz")
    stages = html.deck_stages(story)
    for i, stage in enumerate(stages):
        if i:
            page.keyboard.press("PageDown")
            page.wait_for_function(f"() => document.body.dataset.stage === '{i}'")
        shown = page.evaluate(SHOWN)
        assert shown["key"] == stage.key and shown["count"] == 1
        assert shown["counter"] == f"{i + 1} / {len(stages)}"
        assert shown["top"] >= 0 and shown["bottom"] <= 720 and shown["right"] <= 1280, shown
        if stage.animated:  # arrived: from its first frame, playing (presentation: once)
            chart = "chart_" + stage.key.replace("-", "_")
            page.wait_for_function(
                f"() => {{ const p = window.__convviz.players.get('{chart}');"
                " return p && p.playing() && p.current() > 0; }"
            )
        page.screenshot(path=str(ARTIFACTS / f"lecture-{i + 1}-{stage.key}.png"))
    page.keyboard.press("PageUp")
    page.wait_for_function(f"() => document.body.dataset.stage === '{len(stages) - 2}'")
    page.keyboard.press("b")
    assert page.locator("#cv-blank").is_visible()
    page.keyboard.press("PageDown")  # behind a blank screen nothing moves
    assert page.evaluate("() => document.body.dataset.stage") == str(len(stages) - 2)
    page.keyboard.press("b")
    assert page.locator("#cv-blank").count() == 0
    page.keyboard.press("End")
    label = page.locator("section.stage.shown [data-testid=player-label]")
    assert re.match(r"(\d+)/\1 · ", label.inner_text())  # a projector's label: "4/4 · …"
    assert [u for u in fetched if not u.startswith("file:")] == []
    context.close()


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

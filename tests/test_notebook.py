"""convviz in a notebook, without a kernel or a browser: `show()`'s output is a self-contained page
(plotly.js, the player, the frames and their formulas; nothing fetched), shows a PNG and says to
run the cell where no script runs, draws every stage from the storyboard, and refuses hostile
arguments with ConvSpecError; `Widget` redraws when Python changes it and reads a click's cell.
"""

from __future__ import annotations

import base64
import io
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import convviz
from convviz.engine.spec import ConvSpecError
from convviz.export.story import Story, state_of
from convviz.model.lecture import LECTURE, Lecture
from convviz.notebook import page
from convviz.notebook.arguments import story_of
from convviz.notebook.view import View
from convviz.render.story.board import BOARD, Drawing, FigureDrawing
from convviz.render.story.learning_frames import STEP_FRAMES, step_motion

ROOT = Path(__file__).resolve().parents[1]
STAGES = [s.key for s in LECTURE.stages if s.view != "grids"]  # the channels' tiles: the app's
VIEW = re.compile(r'<script type="application/json" class="cv-view">(.*?)</script>', re.S)


def offline(html: str) -> None:
    """Nothing is fetched: no external script, stylesheet, image, frame or import; the still is
    inside (a data: URI)."""
    assert not re.search(r"<(script|img|iframe)[^>]+src=\"(?!data:)", html)
    assert not re.search(r"<link[^>]+href=", html)
    assert not re.search(r"@import|url\((?!data:)", page.style())
    assert "import(" not in page.player_script()


def view_of(html: str) -> dict:
    (data,) = VIEW.findall(html)
    return json.loads(data)


@pytest.fixture(autouse=True)
def fresh_page(monkeypatch):
    """Each test starts as a new notebook: its first output carries the scripts."""
    monkeypatch.setattr(page.Sent, "done", False)


def test_import_convviz_loads_numpy_alone_and_has_show_and_widget():
    probe = (
        "import sys, json, convviz\n"
        "before = sorted(m for m in ('plotly', 'streamlit', 'matplotlib', 'anywidget', "
        "'traitlets') if m in sys.modules)\n"
        "ok = callable(convviz.show) and 'Widget' in dir(convviz)\n"
        "convviz.show('recitation-s2', stage='dilate')\n"
        "shown = 'streamlit' in sys.modules\n"
        "widget = convviz.Widget.__name__\n"
        "print(json.dumps([before, ok, shown, widget, 'streamlit' in sys.modules]))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    before, ok, shown, widget, after = json.loads(run.stdout.strip().splitlines()[-1])
    assert before == [] and ok and widget == "Widget"
    assert not shown and not after  # show and Widget load their renderers, never streamlit


@pytest.mark.parametrize("stage", STAGES)
def test_every_stage_is_a_self_contained_output_drawn_from_the_board(stage):
    out = convviz.show("recitation-s2", stage=stage)
    bundle = out._repr_mimebundle_()
    html = bundle["text/html"]
    offline(html)
    assert page.plotly_script() in html and page.player_script() in html  # the first output
    data, view = view_of(html), out.view
    assert data["figure"]["data"] and data["figure"]["layout"]["width"] > 0
    stage_ = LECTURE.stage(stage)
    drawn = BOARD[stage]
    if stage_.animated:
        assert view.kind == ("sweep" if drawn.sweep else "motion" if drawn.motion else "figure")
        player = data["player"]
        assert len(player["names"]) == len(player["captions"]) == view.frames > 1
        assert player["within"] == "[data-convviz-keys]"  # the notebook's keys stay its own
    else:  # a still: its sum under it; where the app animates it, the notebook says so
        assert view.kind == "still" and data["player"] is None
        assert bool(view.note) == (stage_.view in ("motion", "run", "sweep"))
    png = Image.open(io.BytesIO(base64.b64decode(bundle["image/png"])))
    assert png.format == "PNG" and min(png.size) > 100
    assert "run the cell" in bundle["text/plain"]


@pytest.mark.parametrize("stage", ["forward", "dilate", "correlate", "weight-grad"])
def test_an_output_says_its_stage_as_the_app_and_the_deck_do(stage):
    """The stage's two descriptions (the figure's name, the long one under it, tied to it), its
    cells' sums for the keyboard grid, its arrival and each step's words for the announcer."""
    from html import escape, unescape

    from convviz.render.story.describe import describe

    out = convviz.show("recitation-s2", stage=stage)
    html, view = out.html(), out.view
    told = describe(view.story, LECTURE.stage(stage))
    figure = re.search(
        r'class="cv-chart" role="figure" aria-label="([^"]*)" aria-describedby="([^"]*)"', html
    )
    assert figure and unescape(figure[1]) == told.short
    assert re.search(rf'<p id="{figure[2]}">([^<]*)</p>', html)[1] == escape(told.long)
    data = view_of(html)
    said = [t["meta"]["grid"] for t in data["figure"]["data"] if (t.get("meta") or {}).get("grid")]
    assert said, "no grid says its cells"
    if data["player"] is not None:
        assert data["player"]["arrived"] == told.arrived
        said = data["player"]["says"]  # per frame ('' on the way); a keyframe's words
        assert len(said) == view.frames and sum(bool(w) for w in said) >= 2
    assert "convvizGrids" in page.player_script()  # the keyboard grids, once a page


def test_a_sliding_windows_frames_write_the_engines_sums():
    out = convviz.show("recitation-s2", stage="forward")
    player = view_of(out.html())["player"]
    y = out.view.story.layer.forward.y[0, 0]
    sweep = out.view.story.sweeps["forward"]
    assert len(player["captions"]) == sweep.steps
    for (r, c), lines in zip(sweep.targets, player["captions"]):
        assert lines[1].endswith(f"= {y[r, c]:g}"), lines


def test_the_scripts_travel_once_per_notebook_and_with_every_output_in_colab(monkeypatch):
    first = convviz.show("recitation-s2")._repr_mimebundle_()["text/html"]
    second = convviz.show("recitation-s2", stage="pad")._repr_mimebundle_()["text/html"]
    plotly = page.plotly_script()
    assert plotly in first and plotly not in second and page.player_script() not in second
    assert len(second) < 200_000  # the stage alone: its figure, frames and still
    monkeypatch.setitem(sys.modules, "google.colab", object())
    assert plotly in convviz.show("recitation-s2")._repr_mimebundle_()["text/html"]


def test_without_scripts_the_output_shows_its_png_and_says_to_run_the_cell():
    """What an untrusted notebook's sanitiser leaves (no script, no style) still shows."""
    html = convviz.show("recitation-s2", stage="correlate").html()
    bare = re.sub(r"<(script|style)[^>]*>.*?</\1>", "", html, flags=re.S)
    fallback = re.search(r'<div class="cv-fallback">(.*?)</div>', bare, re.S).group(1)
    assert "run the cell" in fallback
    src = re.search(r'<img alt="[^"]+" src="data:image/png;base64,([^"]+)"', fallback).group(1)
    assert Image.open(io.BytesIO(base64.b64decode(src))).format == "PNG"


def test_save_writes_the_same_as_a_page_that_plays_offline(tmp_path):
    out = convviz.show("recitation-s2", stage="whole")
    path = out.save(tmp_path / "x.html")
    saved = path.read_text()
    assert saved.startswith("<!DOCTYPE html>") and out.html(with_assets=True) in saved
    offline(saved)


def test_a_still_stage_of_learning_plays_once_the_board_animates_it():
    """The Learning page's step as the board will draw it (learning_frames.step_motion): the
    notebook picks it up from the board and plays it with the same player."""
    lecture = Lecture(tuple(replace(s, animated=True) if s.key == "step" else s
                            for s in LECTURE.stages))  # fmt: skip
    animated = {**BOARD, "step": Drawing(still=BOARD["step"].still, figure=lambda s: FigureDrawing(
        lambda theme: step_motion(s.experiment.step, theme, s.k, s.c)))}  # fmt: skip
    story = Story(state_of("recitation-s2"), lecture=lecture, board=animated)
    view = View(story, lecture.stage("step"))
    assert view.kind == "figure" and view.frames == STEP_FRAMES + 1 and not view.note


def test_keywords_and_arrays_make_the_layer_the_engine_computes():
    x, w = np.arange(25.0).reshape(5, 5), np.array([[1.0, 0.0], [0.0, -1.0]])
    story = story_of(x=x, kernel=w, stride=2, padding=1)
    want = convviz.conv2d(x[None, None], w[None, None], stride=2, padding=1)
    assert np.array_equal(story.layer.forward.y, want)
    assert story_of("recitation-s2", stride=1).spec.stride == (1, 1)
    link = "https://example.org/Input_gradient?preset=recitation-s2&sh=1"
    assert story_of(link=link).spec.stride == (1, 1)


X = np.ones((4, 4))
HOSTILE = {
    "stride 2.0": dict(stride=2.0),
    "stride '2'": dict(stride="2"),
    "stride True": dict(stride=True),
    "stride of three": dict(stride=(1, 2, 3)),
    "stride 400 digits": dict(stride=int("1" * 400)),
    "padding 'Same'": dict(padding="Same"),
    "padding_mode 'zero'": dict(padding_mode="zero"),
    "input_size 200": dict(input_size=200),
    "kernel 'sobel'": dict(kernel="sobel"),
    "x with nan": dict(x=np.full((3, 3), np.nan)),
    "x of text": dict(x=[["a", "b"], ["c", "d"]]),
    "x too big a value": dict(x=np.full((3, 3), 1e12)),
    "grad_out of another shape": dict(x=X, kernel=np.ones((2, 2)), grad_out=np.ones((3, 3))),
    "an unknown keyword": dict(strides=2),
    "stage 'Forward'": dict(stage="Forward"),
    "stage 3": dict(stage=3),
    "stage channels of one channel": dict(stage="channels"),
    "step -1": dict(step=-1),
    "step 2.0": dict(step=2.0),
    "step past the last frame": dict(step=10_000),
    "width '800'": dict(width="800"),
    "n 1 of a batch of 1": dict(n=1),
    "selected of no grid": dict(selected=("z", 0, 0)),
    "selected outside": dict(selected=("y", 9, 0)),
    "lr 0": dict(lr=0),
    "kH2 99": dict(kH2=99),
}


@pytest.mark.parametrize("args", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_arguments_raise_conv_spec_error_naming_them(args):
    with pytest.raises(ConvSpecError) as refused:
        convviz.show("recitation-s2", **args)
    message = str(refused.value)
    assert len(message) < 400
    named = next(iter(args))
    assert named in message or "channels" in message or "grad_out" in message, message


@pytest.mark.parametrize("where", ["nope", "ftp://x/?preset=d2l", "?preset=d2l&H=٣", 5])
def test_a_bad_preset_or_link_raises_conv_spec_error(where):
    with pytest.raises(ConvSpecError):
        convviz.show(where)


def test_the_widget_redraws_when_python_changes_it_and_reads_a_click():
    from convviz.render.story.describe import describe

    widget = convviz.Widget("recitation-s2", stage="correlate")
    first = widget._view
    told = describe(widget.view.story, LECTURE.stage("correlate"))  # said as show() says it
    assert (first["short"], first["long"]) == (told.short, told.long)
    assert widget.step == widget.view.frames - 1  # opened on the result, as show()
    widget.stride = 1
    assert widget.view.story.spec.stride == (1, 1) and widget._view != first
    assert len(widget._view["player"]["names"]) == widget.view.frames
    with pytest.raises(ConvSpecError, match="stride"):
        widget.stride = 2.0
    assert widget.stride == 1 and widget.view.story.spec.stride == (1, 1)  # the last view kept
    widget.padding = "same"
    assert widget.view.story.spec.padding == ((1, 1), (1, 1))
    assert widget._view["long"] == describe(widget.view.story, LECTURE.stage("correlate")).long
    widget.stage = "whole"
    assert widget.view.kind == "motion" and widget._view["player"]["stage"] == "whole"
    with pytest.raises(ConvSpecError):
        widget.step = widget.view.frames
    widget.selected = ["grad_x", 1, 1]  # as the browser sends a click
    formula = widget.view.story.formula("grad_x", (1, 1))
    assert widget.formula.splitlines() == [formula.text(numeric=False), formula.text(numeric=True)]
    assert widget.formula.endswith(f"= {widget.view.story.layer.input_grad.grad_x[0, 0, 1, 1]:g}")

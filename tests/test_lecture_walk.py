"""The lecture's walk (convviz.model.lecture.Lecture.walk) and the clicker's way along it
(convviz.ui.clicker.way): the stages this layer has, in the lecture's order, then Matrix → Checks
→ Quiz; never a page without a stage for the layer. Chromium walks it with PageDown
(tests/test_browser_walk.py)."""

from __future__ import annotations

import re
from itertools import pairwise
from types import SimpleNamespace

import pytest

from convviz.model.lecture import CHAIN_PAGE, CHANNELS_PAGE, CODA, LECTURE, QUIZ_PAGE
from convviz.model.pages import PAGES
from convviz.model.presets import PRESETS
from convviz.ui.clicker import way


def ctx_at(spec, step: int = 1):
    """What `way` reads of a page's context: the layer and the URL's step."""
    return SimpleNamespace(spec=spec, state={"step": step})


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_the_walk_is_the_layers_stages_then_the_coda(preset):
    spec = preset.spec()
    walk = LECTURE.walk(spec)
    assert [s.stage for s in walk[: -len(CODA)]] == list(LECTURE.of(spec))
    assert [(s.page, s.step, s.stage) for s in walk[-len(CODA) :]] == [(p, 1, None) for p in CODA]
    several = spec.in_channels > 1 or spec.out_channels > 1 or spec.batch > 1
    assert (CHANNELS_PAGE in {s.page for s in walk}) == several
    for stop in walk[: -len(CODA)]:
        assert LECTURE.at(stop.page, stop.step, spec) == stop.stage


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_next_and_back_follow_the_walk_from_end_to_end(preset):
    spec = preset.spec()
    walk = LECTURE.walk(spec)
    for before, after in pairwise(walk):
        on = way(before.page, ctx_at(spec, before.step), 1)
        assert (on.path, on.step) == (after.page, after.step), before
        assert on.same_page == (before.page == after.page)
        back = way(after.page, ctx_at(spec, after.step), -1)
        assert (back.path, back.step) == (before.page, before.step), after
    assert way(walk[0].page, ctx_at(spec), -1).path == "app.py"  # the Overview opens it
    assert way(QUIZ_PAGE, ctx_at(spec), 1) is None


def test_a_page_off_the_walk_leads_to_the_nearest_stops():
    """The Overview leads into the lecture; Channels of a one-channel layer (a page the sidebar
    shows, with no stage for it) leads on to Matrix and back to the last stage."""
    spec = next(p for p in PRESETS if p.key == "recitation-s2").spec()
    walk = LECTURE.walk(spec)
    first = way("app.py", ctx_at(spec), 1)
    assert (first.path, first.step) == (walk[0].page, walk[0].step)
    assert way("app.py", ctx_at(spec), -1) is None
    on, back = way(CHANNELS_PAGE, ctx_at(spec), 1), way(CHANNELS_PAGE, ctx_at(spec), -1)
    assert (on.path, on.step) == (CODA[0], 1)
    last = walk[-len(CODA) - 1]
    assert (back.path, back.step) == (last.page, last.step) and last.stage.key == "chain-weights"
    assert {p for p, _, _ in PAGES} >= {s.page for s in walk}  # every stop is a page of the app


def test_the_readmes_walk_lengths_are_the_lectures():
    """The README's table of walk lengths (PageDowns to the end of Two layers and to the Quiz,
    the offline deck's stages) is the model's, so it stays true when a stage is added."""
    from pathlib import Path

    from convviz.export.html import deck_stages
    from convviz.export.story import Story

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    rows = re.findall(r"^\| ([\w-]+)[^|]* \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", readme, re.M)
    assert {key for key, *_ in rows} >= {"recitation-s1", "recitation-s2", "classroom"}
    for key, stages, two_layers, quiz, deck in rows:
        spec = next(p for p in PRESETS if p.key == key).spec()
        walk = LECTURE.walk(spec)
        end = max(i for i, s in enumerate(walk) if s.stage and s.stage.page == CHAIN_PAGE)
        shown = (sum(1 for s in walk if s.stage), end, len(walk) - 1)
        assert tuple(map(int, (stages, two_layers, quiz))) == shown, key
        assert int(deck) == len(deck_stages(Story.of(key))), key

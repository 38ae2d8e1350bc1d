"""A lecture a lecturer would give, walked in Chromium at 1280×720 in presentation mode: from the
Forward page PageDown goes through the stages this layer has (the lecture model's walk,
`Lecture.walk`: no page without a stage for it, no Channels for one channel), then Matrix →
Checks → Quiz, and stops there. The offline deck (`export/html.py`) is walked the same way: its
stages are the walk's that it draws, in the walk's order (the storyboard issue adds the Learning
and Two layers stages to the deck: `deck_stages` grows, and this test with it). The README states
each preset's walk length; a quick test holds it to `Lecture.walk` (tests/test_lecture_walk.py).
"""

from __future__ import annotations

import re

import pytest
from live import goto, open_tab, settled

from convviz.export.html import deck_stages, lecture_html
from convviz.export.story import Story
from convviz.model.lecture import LECTURE
from convviz.model.presets import PRESETS_BY_KEY

pytestmark = pytest.mark.browser

SCREEN = {"width": 1280, "height": 720}
WALKED = ["recitation-s1", "recitation-s2", "keras-same", "d2l", "classroom", "channels-small"]
CASES = [*WALKED, pytest.param("qa-channels", marks=pytest.mark.full)]


@pytest.fixture(scope="module")
def projector(browser):
    page = open_tab(browser, viewport=SCREEN)
    yield page
    page.context.close()


def address(page_file: str) -> str:
    """A page file's URL path: pages/2_Input_gradient.py → Input_gradient."""
    return page_file.split("_", 1)[1].removesuffix(".py")


def at_stop(url: str) -> tuple[str, int]:
    """(page path, step) a URL shows."""
    path = re.search(r"/(\w+)\?", url).group(1)
    return path, int(re.search(r"[?&]step=(\d+)", url).group(1))


@pytest.mark.parametrize("preset", CASES)
def test_pagedown_walks_the_layers_stages_then_matrix_checks_quiz(app_url, projector, preset):
    page = projector
    walk = LECTURE.walk(PRESETS_BY_KEY[preset].spec())
    goto(page, f"{app_url}/{address(walk[0].page)}?preset={preset}&pres=1&play=stills")
    seen = [at_stop(page.url)]
    for stop in walk[1:]:
        page.keyboard.press("PageDown")
        page.wait_for_url(re.compile(rf"/{address(stop.page)}\?(.*&)?step={stop.step}(&|$)"))
        settled(page)
        seen.append(at_stop(page.url))
    assert seen == [(address(s.page), s.step) for s in walk]
    assert seen[-3:] == [("Matrix", 1), ("Checks", 1), ("Quiz", 1)]
    # the Quiz ends it: no way on for PageDown to press
    assert page.locator("[class*='st-key-nav_next'] button").count() == 0


@pytest.mark.parametrize("preset", CASES)
def test_the_offline_deck_walks_the_stages_it_draws_in_the_lectures_order(
    preset, browser, tmp_path
):
    story = Story.of(preset)
    stages = deck_stages(story)
    walk = [s.stage for s in LECTURE.walk(story.spec) if s.stage]
    assert [s for s in walk if s in stages] == stages  # the walk's stages, in its order
    path = tmp_path / "lecture.html"
    path.write_text(lecture_html(story))
    context = browser.new_context(viewport=SCREEN, offline=True)
    page = context.new_page()
    try:
        page.goto(path.as_uri())
        page.wait_for_function("() => document.body.dataset.stage === '0' && window.__convviz")
        key = "() => document.querySelector('section.shown').dataset.key"
        shown = [page.evaluate(key)]
        for i in range(1, len(stages)):
            page.keyboard.press("PageDown")
            page.wait_for_function(f"() => document.body.dataset.stage === '{i}'")
            shown.append(page.evaluate(key))
        assert shown == [s.key for s in stages]
        page.keyboard.press("PageDown")  # past the last stage: nothing moves
        assert page.evaluate("() => document.body.dataset.stage") == str(len(stages) - 1)
    finally:
        context.close()

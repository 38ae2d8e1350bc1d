"""The Learning page in Chromium at 1280×720: in presentation mode the run's grids, its loss curve
and its player are on one screen, and a clicker (PageDown) walks the loss, the step and the run.
Each screen is kept as a screenshot in artifacts/ (a lecturer's view, to look at)."""

from __future__ import annotations

import re

import pytest
from conftest import ARTIFACTS
from live import goto, open_tab, settled

from convviz.model.lecture import LEARN_PAGE, LECTURE

pytestmark = pytest.mark.browser

SCREEN = {"width": 1280, "height": 720}
STAGES = LECTURE.on_page(LEARN_PAGE)


@pytest.fixture
def projector(browser):
    page = open_tab(browser, viewport=SCREEN)
    yield page
    page.context.close()


def _box(page, key: str) -> dict:
    box = page.locator(f".st-key-{key} .js-plotly-plot").first.bounding_box()
    assert box is not None, key
    return box


def test_the_run_its_loss_curve_and_its_player_fit_one_projector_screen(app_url, projector):
    page = projector
    step = LECTURE.step_of(LECTURE.stage("train"))
    goto(page, f"{app_url}/Learning?preset=recitation-s2&pres=1&step={step}", charts=1)
    run = _box(page, "chart_stage_train")  # its grids, and the loss curve under them
    player = page.locator("[data-testid=player]").first.bounding_box()
    for box in (run, player):
        assert box["y"] >= 0 and box["y"] + box["height"] <= SCREEN["height"], box
        assert box["x"] >= 0 and box["x"] + box["width"] <= SCREEN["width"], box
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "learning-presentation-train.png")


def test_a_clicker_walks_the_loss_the_step_and_the_run(app_url, projector):
    """From the weight gradient's last stage PageDown enters the Learning page's first."""
    page = projector
    window = LECTURE.stage("weight-window")
    goto(
        page,
        f"{app_url}/Weight_gradient?preset=recitation-s2&pres=1&step={LECTURE.step_of(window)}",
    )
    page.keyboard.press("PageDown")
    page.wait_for_url(re.compile(r"/Learning\?.*\bstep=1\b"))
    ARTIFACTS.mkdir(exist_ok=True)
    for i, stage in enumerate(STAGES):
        if i:
            page.keyboard.press("PageDown")
            page.wait_for_url(re.compile(rf"/Learning\?.*\bstep={i + 1}\b"))
        page.locator(f".st-key-chart_stage_{stage.key} .js-plotly-plot").wait_for()
        settled(page)
        box = _box(page, f"chart_stage_{stage.key}")
        assert box["y"] + box["height"] <= SCREEN["height"], (stage.key, box)
        page.screenshot(path=ARTIFACTS / f"learning-presentation-{stage.key}.png")


@pytest.mark.parametrize("height", [720, 1800], ids=["screen", "whole-page"])
def test_the_page_at_1280_wide_without_presentation_mode(app_url, browser, height):
    """Each stage on a laptop's screen (1280×720), and whole (a tall window: Streamlit scrolls
    inside its own container, so a screenshot holds what the window shows)."""
    page = open_tab(browser, viewport={"width": 1280, "height": height})
    ARTIFACTS.mkdir(exist_ok=True)
    for stage in STAGES:
        url = f"{app_url}/Learning?preset=classroom&step={LECTURE.step_of(stage)}"
        goto(page, url)
        box = _box(page, f"chart_stage_{stage.key}")
        assert box["x"] + box["width"] <= 1280, (stage.key, box)  # no sideways scroll
        page.screenshot(path=ARTIFACTS / f"learning-normal-{height}-{stage.key}.png")
    page.context.close()

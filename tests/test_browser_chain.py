"""The Two layers page in Chromium at 1280×720, on a laptop and on a projector: every stage draws
without an error, the handover's player plays to its result on the first screen, a clicker's
PageDown walks the page's stages. Screenshots go to artifacts/chain/ (look at them)."""

from __future__ import annotations

import re

import pytest
from live import goto, open_tab, settled
from playwright.sync_api import expect

from convviz.model.lecture import CHAIN_PAGE, LECTURE

pytestmark = pytest.mark.browser

URL = "/Two_layers?preset=recitation-s2&b1=-200"  # a bias that shuts one ReLU gate
PLAYER = "[...window.__convviz.players.values()].find(p => p.primary)"
AT_END = f"() => {{ const p = {PLAYER}; return p && p.current() === p.count - 1; }}"
STAGES = LECTURE.on_page(CHAIN_PAGE)


@pytest.fixture(scope="module")
def screen(browser):
    page = open_tab(browser, viewport={"width": 1280, "height": 720})
    yield page
    page.context.close()


def no_error(page) -> None:
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    expect(page.locator("[data-testid='stAlertContentError']")).to_have_count(0)


@pytest.mark.parametrize("pres", ["0", "1"])
def test_every_stage_draws_and_the_handover_plays_to_its_result(screen, app_url, artifacts, pres):
    folder = artifacts / "chain"
    folder.mkdir(exist_ok=True)
    for stage in STAGES:
        step = LECTURE.step_of(stage)
        goto(screen, f"{app_url}{URL}&pres={pres}&play=stills&step={step}")
        no_error(screen)
        assert screen.locator(".js-plotly-plot .main-svg").count() > 0, stage.key
        if stage.view in ("motion", "sweep"):
            screen.wait_for_function(AT_END)  # opened on its result (play=stills)
            player = screen.locator("[data-testid=player]").first
            box = player.bounding_box()
            if pres == "1":  # the figure and its player on the projector's one screen
                assert box["y"] + box["height"] <= 720, (stage.key, box)
        screen.mouse.move(0, 719)
        screen.screenshot(path=folder / f"1280x720-pres{pres}-{step}-{stage.key}.png")
        if stage.key == "handover" and pres == "0":  # the gate cell by cell, below the player
            gate = screen.locator(".st-key-chart_gate")
            gate.scroll_into_view_if_needed()
            gate.screenshot(path=folder / "1280x720-pres0-3-gate.png")


def test_the_handover_plays_from_layer_2_to_layer_1(screen, app_url):
    step = LECTURE.step_of(LECTURE.stage("handover"))
    goto(screen, f"{app_url}{URL}&pres=1&play=auto&step={step}")
    no_error(screen)
    # a projector's arrival plays the stage once, from its first frame to its result
    screen.wait_for_function(AT_END, timeout=30_000)
    assert "ReLU gate shut" in screen.locator(".js-plotly-plot").first.inner_text()


def test_a_clicker_walks_the_pages_stages(screen, app_url):
    goto(screen, f"{app_url}{URL}&pres=1&play=stills&step=1")
    for stage in STAGES[1:]:
        screen.keyboard.press("PageDown")
        screen.wait_for_url(re.compile(rf"Two_layers.*step={LECTURE.step_of(stage)}\b"))
        settled(screen)
        no_error(screen)
    # the fields of the page stay in its link all the way
    assert "b1=-200" in screen.url and "kH2=2" in screen.url


@pytest.mark.parametrize("pres", ["0", "1"])
def test_axe_finds_nothing_serious_on_the_handover(screen, app_url, pres):
    """axe-core on the page's busiest stage (the motion, the gate's grids, layer 2's fields)."""
    from a11y_helpers import serious_violations

    step = LECTURE.step_of(LECTURE.stage("handover"))
    goto(screen, f"{app_url}{URL}&pres={pres}&play=stills&step={step}")
    assert not serious_violations(screen)

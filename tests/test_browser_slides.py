"""Learning and Two layers as slides, in Chromium at 1280×720 in presentation mode: the clicker's
keys play the step and the training run through the page's player (not plotly's ▶), whose scrub
moves the run's steps in the browser (no rerun); a click selects a cell on every stage of both
pages, during a motion too (the cell lands in the link's sel=); each stage is the first screen
(nothing of the settings, the share link or the exports on it). Screenshots of every stage at
1280×720 and 1920×1080 (presentation) and 1280×720 (normal) go to artifacts/slides/."""

from __future__ import annotations

import re

import pytest
from live import CELL_XY, asks_for_a_run, goto, open_tab, settled

from convviz.model.lecture import CHAIN_PAGE, LEARN_PAGE, LECTURE

pytestmark = pytest.mark.browser

PLAYER = "[...window.__convviz.players.values()].find(p => p.primary)"
STATE = f"() => {{ const p = {PLAYER}; return [p.current(), p.count, p.playing()]; }}"
STAGES = [*LECTURE.on_page(LEARN_PAGE), *LECTURE.on_page(CHAIN_PAGE)]
SCREENS = {"1280x720": (1280, 720), "1920x1080": (1920, 1080)}


@pytest.fixture(scope="module")
def projector(browser):
    page = open_tab(browser, viewport={"width": 1280, "height": 720})
    yield page
    page.context.close()


def url(app_url: str, stage, pres: str = "1", preset: str = "recitation-s2") -> str:
    name = stage.page.split("_", 1)[1].removesuffix(".py")
    step = LECTURE.step_of(stage)
    return f"{app_url}/{name}?preset={preset}&pres={pres}&play=stills&step={step}"


@pytest.mark.parametrize("key", ["step", "train"])
def test_the_clicker_plays_the_step_and_the_run_through_the_players_keys(app_url, projector, key):
    page = projector
    goto(page, url(app_url, LECTURE.stage(key)))
    assert page.locator(".updatemenu-container, .slider-container").count() == 0  # no plotly ▶
    page.keyboard.press("Home")
    page.wait_for_function(f"() => ({STATE})()[0] === 0")
    page.keyboard.press(" ")
    page.wait_for_function(f"() => ({STATE})()[2]")  # playing
    page.wait_for_function(
        f"() => {{ const [f, n, on] = ({STATE})(); return !on && f === n - 1; }}"
    )
    page.keyboard.press("ArrowLeft")  # a step back (the run: its last shown step but one)
    page.wait_for_function(f"() => ({STATE})()[0] < ({STATE})()[1] - 1")
    settled(page)


def test_the_runs_scrub_moves_its_steps_in_the_browser(app_url, projector):
    page = projector
    goto(page, url(app_url, LECTURE.stage("train")))
    asked = []
    socket = page._cv_sockets[-1]
    socket.on("framesent", lambda payload: asked.append(asks_for_a_run(payload)))
    scrub = page.locator("[data-testid=player] input.scrub").first
    scrub.focus()
    for _ in range(5):
        page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"() => ({STATE})()[0] === ({STATE})()[1] - 6")
    settled(page)
    label = page.locator("[data-testid=player-label]").first.inner_text()
    assert re.search(r"step \d+", label)
    assert not any(asked), "a step of the run asked the server for a run"


def cell_of(page, axis: int, row: int, col: int) -> tuple[float, float]:
    s = "" if axis == 1 else str(axis)
    return page.evaluate(CELL_XY, [f"xaxis{s}", f"yaxis{s}", row, col])


# per stage: (axis, row, col) of the cell clicked (labels as its axes number them), what sel= it
# makes, whether the stage is played while it is clicked
CLICKS = {
    "loss": (2, 1, 0, "target:1:0"),
    "step": (1, 0, 1, "w_before:0:1"),
    "train": (5, 1, 2, "grad_w:1:2"),
    "chain-forward": (3, 0, 1, "h:0:1"),
    "chain-grad-h": (3, 1, 1, "grad_h:1:1"),
    "handover": (1, 1, 0, "grad_pre:1:0"),
    "chain-dilate": (1, 2, 2, "dilated:2:2"),
    "chain-pad": (1, 0, 0, "padded:2:2"),
    "chain-rotate": (2, 0, 0, "w_rot:0:0"),
    "chain-correlate": (3, 1, 1, "grad_x_padded:1:1"),
    "chain-mask": (1, 1, 1, "grad_x:1:1"),
    "chain-weights": (4, 1, 1, "grad_w2:1:1"),
}


@pytest.mark.parametrize("stage", STAGES, ids=[s.key for s in STAGES])
def test_a_click_selects_a_cell_on_every_stage_during_a_motion_too(app_url, projector, stage):
    assert set(CLICKS) == {s.key for s in STAGES}
    page = projector
    axis, row, col, selected = CLICKS[stage.key]
    goto(page, url(app_url, stage))
    x, y = cell_of(page, axis, row, col)
    if stage.view != "still":  # played while it is clicked
        page.evaluate(f"() => {{ const p = {PLAYER}; p.show(0, false); p.toggle(); }}")
        page.wait_for_function(f"() => ({STATE})()[2]")
    page.mouse.click(x, y)
    page.wait_for_url(re.compile(rf"[?&]sel={re.escape(selected).replace(':', '(:|%3A)')}(&|$)"))
    settled(page)


@pytest.mark.parametrize("stage", STAGES, ids=[s.key for s in STAGES])
def test_each_stage_is_the_first_screen(app_url, projector, stage):
    """Nothing but the stage on a projector's first screen: the settings, the share link and the
    exports start below it."""
    page = projector
    goto(page, url(app_url, stage))
    below = [
        "[data-testid=stExpander]",
        "[data-testid=stDownloadButton]",
        "[data-testid=stCaptionContainer]:has-text('Share this view')",
    ]
    for selector in below:
        for box in [e.bounding_box() for e in page.locator(selector).all()]:
            assert box is None or box["y"] >= 720, (stage.key, selector, box)


@pytest.mark.full  # 36 screens to look at (make ci); the stages' checks above run in make test
@pytest.mark.parametrize("screen", ["pres-1280x720", "pres-1920x1080", "normal-1280x720"])
def test_screenshots_of_every_stage(app_url, browser, artifacts, screen):
    mode, size = screen.split("-")
    w, h = SCREENS[size]
    page = open_tab(browser, viewport={"width": w, "height": h})
    folder = artifacts / "slides"
    folder.mkdir(exist_ok=True)
    try:
        for stage in STAGES:
            goto(page, url(app_url, stage, pres="1" if mode == "pres" else "0"))
            box = page.locator(".js-plotly-plot").first.bounding_box()
            assert box["x"] + box["width"] <= w, (stage.key, box)  # no sideways scroll
            if mode == "pres":  # the figure (and its player) on the screen
                player = page.locator("[data-testid=player]")
                bottom = player.first.bounding_box() if player.count() else box
                assert bottom["y"] + bottom["height"] <= h, (stage.key, bottom)
            page.mouse.move(0, h - 1)
            page.screenshot(path=folder / f"{screen}-{LECTURE.step_of(stage)}-{stage.key}.png")
    finally:
        page.context.close()

"""The lecture in Chromium, presentation mode at 1280×720: a clicker walks every stage (PageDown),
each stage opens on its first frame and plays once, the whole pass is a step of the sequence and
on its key, the blank key blanks; a reader's reduced motion wins; and every rule of the stylesheet
that reaches into Streamlit's page still finds its elements.
"""

from __future__ import annotations

import re

import pytest
from live import settled

from convviz.model.lecture import LECTURE
from convviz.model.presets import PRESETS_BY_KEY
from convviz.ui import assets
from convviz.ui.viewport import STREAMLIT

pytestmark = pytest.mark.browser

LOAD_MS = 60_000  # a cold first chart on two busy cores
PLAYER = "[...window.__convviz.players.values()].find(p => p.primary)"
STATE = f"""() => {{ const r = window.__convviz; if (!r) return null; const p = {PLAYER};
  return p ? {{shown: r.shown, frame: p.current(), count: p.count, playing: p.playing()}}
           : {{shown: r.shown}}; }}"""


def settle(page) -> None:
    """The page sized to the screen and its run finished."""
    page.wait_for_function("() => document.body.dataset.cvViewport === 'fitted'", timeout=LOAD_MS)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=LOAD_MS
    )


@pytest.fixture
def projector(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def arrived(page, stage) -> None:
    """The stage is on screen (the primary player says so), or a page without a player."""
    shown = f"{stage.page}#{stage.key}"
    if stage.animated:
        page.wait_for_function(
            f"() => {{ const s = ({STATE})(); return s && s.shown === {shown!r}; }}",
            timeout=LOAD_MS,
        )


def test_a_clicker_walks_the_lecture_each_stage_opening_on_its_first_frame_and_playing(
    app_url, projector
):
    page = projector
    spec = PRESETS_BY_KEY["recitation-s2"].spec()
    order = list(LECTURE.of(spec))
    last_played = max(i for i, s in enumerate(order) if s.animated)
    page.goto(f"{app_url}/Forward?preset=recitation-s2&pres=1")
    settle(page)
    for i, stage in enumerate(order):
        if i:
            page.keyboard.press("PageDown")
        page.wait_for_url(
            re.compile(rf"{stage.page.split('_', 1)[1][:-3]}.*step={LECTURE.step_of(stage)}\b")
        )
        arrived(page, stage)
        settle(page)
        if stage.animated:
            # entered: from its first frame, playing once (a projector's default playback)
            page.wait_for_function(
                f"() => {{ const s = ({STATE})(); return s.playing || s.frame === s.count - 1; }}"
            )
            box = page.locator("[data-testid=player]").first.bounding_box()
            assert box["y"] + box["height"] <= 720, (stage.key, box)  # no scroll, at 1280×720
        if i == last_played:  # the lecture's last animation: End shows its result (the stages
            page.keyboard.press("End")  # after it, the Learning and Two layers pages', have none)
            page.wait_for_function(
                f"() => {{ const s = ({STATE})(); return s.frame === s.count - 1; }}"
            )


def test_the_whole_pass_is_on_its_key_and_leaving_it_returns_to_the_stage(app_url, projector):
    page = projector
    page.goto(f"{app_url}/Input_gradient?preset=recitation-s2&pres=1&step=3")
    settle(page)
    assert "a whole pass" in page.locator("[data-testid=player] .hint").first.inner_text()
    page.keyboard.press("a")
    page.wait_for_url(re.compile(r"step=7"))
    settle(page)
    arrived(page, LECTURE.stage("whole"))
    # the bar lights the stage the frame is in
    page.wait_for_function(
        "() => [...document.querySelectorAll('.st-key-ctl_step button')]"
        ".some(b => b.dataset.cvStage === 'now')"
    )
    page.keyboard.press("a")
    page.wait_for_url(re.compile(r"step=3"))


def test_the_blank_key_blanks_the_screen_and_brings_it_back(app_url, projector):
    page = projector
    page.goto(f"{app_url}/Forward?preset=recitation-s1&pres=1")
    settle(page)
    page.wait_for_function(f"() => ({STATE})() && ({STATE})().frame !== undefined")
    for key in ("b", "."):
        page.keyboard.press(key)
        assert page.locator("#cv-blank").is_visible()
        color = page.evaluate("() => getComputedStyle(document.getElementById('cv-blank'))"
                              ".backgroundColor")  # fmt: skip
        assert color == "rgb(0, 0, 0)"
        page.keyboard.press(key)
        assert page.locator("#cv-blank").count() == 0


def test_a_readers_reduced_motion_wins_no_autoplay_the_result(app_url, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720}, reduced_motion="reduce")
    page = context.new_page()
    try:
        page.goto(f"{app_url}/Input_gradient?preset=recitation-s2&pres=1&step=2")
        settle(page)
        arrived(page, LECTURE.stage("dilate"))
        page.wait_for_function(f"() => ({STATE})().frame === ({STATE})().count - 1")
        # an autoplay starts as the stage arrives (player.js), in the same task that shows the
        # frame: at rest, a player that played would be playing or past the result
        settled(page)
        state = page.evaluate(STATE)
        assert not state["playing"] and state["frame"] == state["count"] - 1
    finally:
        context.close()


# --- the stylesheet that reaches into Streamlit's page ---------------------------------------


def rules(mode: str) -> list[str]:
    """The selectors of a mode's rules, but those marked '@only' (their elements come and go)."""
    css = assets.sections()[mode]
    out = []
    for comment, selectors in re.findall(r"/\*(.*?)\*/\s*([^{/]+)\{", css, re.S):
        if "@only" in comment:
            continue
        out += [s.strip() for s in selectors.split(",") if s.strip()]
    # rules after the first under the same comment share its '@only' (none do today)
    return out


@pytest.mark.parametrize("mode", ["normal", "presentation"])
def test_every_selector_of_the_stylesheet_still_finds_its_elements(app_url, browser, mode):
    """A Streamlit upgrade that renames what a rule reaches into fails here, loudly, instead of
    silently mis-styling a projector."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        pres = int(mode == "presentation")
        page.goto(f"{app_url}/Forward?preset=recitation-s2&pres={pres}")
        settle(page)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=LOAD_MS)
        selectors = rules("all") + rules(mode) + [STREAMLIT["main"], STREAMLIT["leaves"]]
        assert len(selectors) >= (1 if mode == "normal" else 12)
        missing = page.evaluate(
            "(sels) => sels.filter(s => !document.querySelector(s.replace(/:hover$/, '')))",
            selectors,
        )
        assert not missing, f"no element matches {missing}: update convviz/ui/streamlit.css"
    finally:
        context.close()

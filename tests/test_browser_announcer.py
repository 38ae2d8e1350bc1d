"""One announcer (issue 41), in Chromium: a polite live region says each step of an animation once
(never a frame on the way), naming the step and the cell it computes with the engine's value; a
10-step autoplay at 1× changes it exactly 10 times (the first with what the stage did); at 4× at
most once each 0.5 s, the last step always; under reduced motion nothing plays by itself and a
step still speaks; and nothing moves at all (no transition, no animation) on the page.
"""

from __future__ import annotations

import itertools

import pytest
from keygrid import record, said, subject, written
from live import goto, open_tab, settled
from playwright.sync_api import Browser, Page, expect

from convviz.model.descriptions import arrived
from convviz.model.lecture import LECTURE, Seen

pytestmark = pytest.mark.browser

# A layer whose forward pass is 10 steps: a 4×7 input, a 3×3 kernel at stride 1, no padding
TEN = {"H": "4", "W": "7", "kH": "3", "kW": "3", "sh": "1", "sw": "1", "same_axes": "1",
       "pad": "explicit", "pt": "0", "pb": "0", "pl": "0", "pr": "0"}  # fmt: skip
QUERY = "&".join(f"{k}={v}" for k, v in TEN.items())
PLAYER = "[...window.__convviz.players.values()].find(p => p.primary)"


def _steps(s) -> list[tuple[int, int, str]]:
    """(row, col, value as written) of each of the layer's 10 forward steps, from the engine."""
    y = s.layer.forward.y
    oh, ow = s.spec.out_size
    assert oh * ow == 10
    return [(r, c, written(y[0, 0, r, c])) for r in range(oh) for c in range(ow)]


def _played(page: Page) -> None:
    """Wait until the page's animation has played to its end and stopped."""
    done = "return p && !p.playing() && p.current() === p.count - 1; }"
    page.wait_for_function(f"() => {{ const p = {PLAYER}; {done}")
    settled(page)


@pytest.fixture
def projector(browser: Browser):
    page = open_tab(browser, viewport={"width": 1280, "height": 720})
    yield page
    page.context.close()


def test_a_ten_step_autoplay_at_1x_says_each_step_once_naming_it_and_its_cell(projector, app_url):
    record(projector)
    goto(projector, f"{app_url}/Forward?{QUERY}&pres=1")  # a projector plays an arriving stage
    _played(projector)
    texts = [t["text"] for t in said(projector)]
    s = subject(TEN)
    assert len(texts) == 10, texts
    stage = LECTURE.stage("forward")
    assert texts[0].startswith(arrived(stage, Seen(s.spec)))  # what the stage does, then step 1
    for i, ((r, c, value), text) in enumerate(zip(_steps(s), texts)):
        assert f"step {i + 1} of 10: the window over rows {r}–{r + 2}, columns {c}–{c + 2} " \
               f"computes y[{r}, {c}] = {value}" in text, text  # fmt: skip


def test_at_4x_it_says_at_most_one_step_each_half_second_and_the_last(tab: Page, app_url):
    record(tab)
    goto(tab, f"{app_url}/Forward?{QUERY}")
    tab.keyboard.press("Home")
    tab.wait_for_function("() => (window.__said || []).some(t => t.text.startsWith('step 1 of'))")
    bar = tab.locator("[data-testid='player']").first
    bar.locator("button", has_text="4×").click()
    start = len(said(tab))
    bar.locator("button.play").click()
    _played(tab)
    during = said(tab)[start:]
    gaps = [b["at"] - a["at"] for a, b in itertools.pairwise(during)]
    assert 2 <= len(during) < 9, during  # 9 steps in ~1.6 s: some are left unsaid
    assert all(gap >= 495 for gap in gaps[:-1]), gaps  # the last may follow sooner
    assert during[-1]["text"].startswith("step 10 of 10: "), during[-1]


def test_under_reduced_motion_nothing_plays_nothing_moves_and_a_step_speaks(browser, app_url):
    page = open_tab(browser, viewport={"width": 1280, "height": 720}, reduced_motion="reduce")
    try:
        record(page)
        goto(page, f"{app_url}/Forward?{QUERY}&pres=1")
        state = page.evaluate(f"() => {{ const p = {PLAYER}; return [p.playing(), p.current()]; }}")
        assert state == [False, 9], "under reduced motion a stage opens on its result, still"
        texts = [t["text"] for t in said(page)]
        assert len(texts) == 1 and "step 10 of 10: " in texts[0], texts
        page.keyboard.press("ArrowLeft")
        r, c, value = _steps(subject(TEN))[8]
        page.wait_for_function("() => (window.__said || []).length === 2")
        assert said(page)[-1]["text"] == (
            f"step 9 of 10: the window over rows {r}–{r + 2}, columns {c}–{c + 2} computes "
            f"y[{r}, {c}] = {value}"
        )
        # no transition or animation anywhere on the page (the player's, Streamlit's own)
        moving = page.evaluate("""() => [...document.querySelectorAll('body *')].filter(e => {
            const s = getComputedStyle(e);
            const long = (v) => v.split(',').some(t => parseFloat(t) > 0);
            const animated = s.animationName !== 'none' && long(s.animationDuration);
            return long(s.transitionDuration) || animated;
          }).map(e => e.tagName + '.' + e.className).slice(0, 5)""")
        assert not moving, moving
        expect(page.locator("#cv-announcer")).to_have_attribute("aria-live", "polite")
    finally:
        page.context.close()

"""The page's main animation in a real browser (Chromium against `streamlit run`): its player
plays, steps, scrubs and pauses in the page without a rerun, and the formula under it follows the
frame shown (wrapping between its terms only); the keys step and play it on every animated page
and a clicker's keys walk the storyboard and the pages, and stay the lecturer's after a toggle or
the scrub is clicked; play and pause are one width and no toolbar covers a title on a projector;
hovering a cell lights its linked cells. Every step waits for the state it acts on (tests/live.py).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from browser_helpers import ANIMATION, animation, assert_no_traceback, at_frame, goto, hover_cell
from live import CELL_XY, rerun, settled
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


# --- the forward animation -----------------------------------------------------------------------


def player(page: Page, text: str):
    """A button of the main animation's player, by its exact label."""
    bar = page.locator("[data-testid='player']").first
    return bar.locator("button", has_text=re.compile(rf"^{re.escape(text)}$"))


def player_label(page: Page):
    return page.get_by_test_id("player-label").first


def play_button(page: Page, chart: str | None = None):
    """The play / pause button of a player (the page's main one if no chart is named)."""
    chart = chart or page.evaluate(
        "() => [...window.__convviz.players.values()].find(p => p.primary).chart"
    )
    return page.locator(f"[data-testid='player'][data-chart='{chart}'] button.play")


def assert_paused(page: Page, chart: str | None = None) -> None:
    """The player is paused (its timer is off: its button offers to play) with its frame drawn:
    nothing moves it on until a key or a button does."""
    expect(play_button(page, chart)).to_have_text("▶ Play")
    settled(page)


def test_forward_animation_plays_and_steps(tab: Page, app_url):
    goto(tab, f"{app_url}/Forward")
    assert animation(tab) == (15, 16)  # classroom: 4×4 outputs; it opens on the full result
    player(tab, "|◀").click()
    at_frame(tab, 0)
    expect(player_label(tab)).to_have_text("step 1/16 → y[0, 0]")
    player(tab, "4×").click()  # the speed for the next play: 175 ms per step
    player(tab, "▶ Play").click()
    at_frame(tab, 15)
    expect(player_label(tab)).to_have_text("step 16/16 → y[3, 3]")
    tab.get_by_test_id("player").first.locator("input[type='range']").fill("9")  # scrub
    at_frame(tab, 9)
    expect(player_label(tab)).to_contain_text("y[2, 1]")
    # playing and scrubbing happen in the browser: no rerun, the formula below is unchanged
    expect(tab.get_by_text("Output cell y[3, 3]")).to_be_visible()
    player(tab, "▶").click()  # one step on
    at_frame(tab, 10)
    player(tab, "0.5×").click()
    player(tab, "▶ Play").click()  # on from there at 1.4 s per step, then pause: it stays put
    tab.wait_for_function(f"() => ({ANIMATION})()[0] >= 11")
    player(tab, "❚❚ Pause").click()
    assert_paused(tab)
    paused = animation(tab)[0]
    assert paused < 15
    settled(tab)
    assert animation(tab)[0] == paused


WINDOW_CORNER = """() => { const gd = document.querySelector('.js-plotly-plot');
  const t = gd.data.find(d => d.name === 'window outline');
  return [Math.min(...t.x), Math.min(...t.y)]; }"""


def test_the_formula_follows_the_frame_shown(tab: Page, app_url):
    """Stepping, scrubbing and playing: the window drawn and the formula under it agree."""
    from convviz.engine.arrays import layer
    from convviz.engine.formulas import forward_formula
    from convviz.model.presets import PRESETS_BY_KEY

    p = PRESETS_BY_KEY["classroom"]
    spec, (x, w) = p.spec(), p.values()
    fw = layer(spec, x, w, np.ones(spec.output_shape)).forward
    goto(tab, f"{app_url}/Forward")
    formula = tab.get_by_test_id("player-formula").first
    for keys, (r, c) in (([], (3, 3)), (["Home"], (0, 0)), (["ArrowRight"] * 6, (1, 2))):
        for key in keys:
            tab.keyboard.press(key)
        at_frame(tab, r * 4 + c)
        settled(tab)  # the frame drawn, not on its way
        expect(formula).to_have_text(
            "".join(forward_formula(fw, 0, 0, r, c).text(numeric=n, max_terms=27) for n in (0, 1))
        )
        # the chart shows that frame: the window's corner sits at stride × (r, c), less the pad
        assert tab.evaluate(WINDOW_CORNER) == [2 * c - 1 - 0.5, 2 * r - 1 - 0.5]


def test_a_long_formula_wraps_between_its_terms_only(tab: Page, app_url):
    """channels-small's weight-gradient sum takes several lines under the player on a laptop; they
    broke mid-symbol ('∂L/' | '∂y', 'x[n=0,' | 'c=0]'). Each term now stays on one line, and the
    text reads as the engine's formula."""
    goto(tab, f"{app_url}/Weight_gradient?preset=channels-small", charts=1)
    formula = tab.get_by_test_id("player-formula").first
    lines = formula.evaluate("""f => [...f.children].map(line => [line.textContent,
        line.getBoundingClientRect().height,
        [...line.children].map(term => term.getClientRects().length)])""")
    symbolic, height, pieces = lines[0]
    assert symbolic.startswith("∂L/∂w") and " + x[n=0, c=0]" in symbolic
    assert height > 60, "the sum wraps onto several lines here"
    assert len(pieces) > 5 and set(pieces) == {1}, "a term broken across two lines"


def test_keys_step_play_and_jump_on_every_animated_page(tab: Page, app_url):
    # (page, frames): classroom: y 4×4, ∂L/∂x̃ 9×9 (the full correlation, stage 5), ∂L/∂w 3×3
    for path, count in (("Forward", 16), ("Input_gradient?step=5", 81), ("Weight_gradient", 9)):
        goto(tab, f"{app_url}/{path}", charts=2 if path.startswith("Input") else 1)
        assert animation(tab) == (count - 1, count), path
        for key, frame in (("ArrowLeft", count - 2), ("Home", 0), ("ArrowRight", 1)):
            tab.keyboard.press(key)
            at_frame(tab, frame)
        tab.keyboard.press("End")
        at_frame(tab, count - 1)
        tab.keyboard.press(" ")  # plays from the start when the result is on screen
        tab.wait_for_function(f"() => ({ANIMATION})()[0] >= 1")
        tab.keyboard.press(" ")
        assert_paused(tab)  # space paused it
        paused = animation(tab)[0]
        settled(tab)
        assert animation(tab)[0] == paused, f"{path}: space did not pause"
    # typing in a field: the keys belong to the field, not to the animation (the player takes
    # a key in its keydown handler: had it taken one, the frame would have moved by now)
    field = tab.locator("[data-testid='stSidebar'] input[aria-label='Seed']")
    field.focus()
    before = animation(tab)
    for key in ("ArrowLeft", "Home", "n", " "):
        field.press(key)
    assert animation(tab) == before
    assert_paused(tab)
    assert "Weight_gradient" in tab.url


def test_clicker_keys_walk_the_storyboard_and_the_pages(tab: Page, app_url):
    goto(tab, f"{app_url}/Input_gradient", charts=2)
    # each key is pressed at rest and waits for the run it asks for (a key pressed into a
    # half-redrawn page went past stage 1 to the page before in one CI run; another, pressed
    # while the page's buttons were being replaced, was lost)
    for key, step in (("PageDown", 2), ("n", 3), ("p", 2), ("PageUp", 1)):
        with rerun(tab):
            tab.keyboard.press(key)
        assert re.search(rf"step={step}\b", tab.url), (key, tab.url)
        stage = tab.locator(
            ".st-key-ctl_step button[aria-checked='true']", has_text=re.compile(rf"^{step} ·")
        )
        expect(stage).to_be_visible()  # the stage bar lights the stage
    with rerun(tab):
        tab.keyboard.press("PageUp")  # before the first stage: the page before
    tab.wait_for_url(re.compile(r"/Forward\?"))
    with rerun(tab):
        tab.keyboard.press("PageDown")  # Forward → the input gradient
    tab.wait_for_url(re.compile(r"/Input_gradient\?"))
    assert_no_traceback(tab)


def test_a_screen_size_report_does_not_undo_a_page_switch(tab: Page, app_url):
    """A clicker's PageDown went unanswered in a CI run: the screen-size reporter, about to
    report a resize (there, presentation mode's bigger type), reported it after the Next button
    had switched pages, carrying the page left, whose run undid the switch. The reporter now
    goes silent when a button to another page is clicked."""
    goto(tab, f"{app_url}/Forward?preset=recitation-s1")
    tab.set_viewport_size({"width": 1180, "height": 720})  # reported in 250 ms
    tab.keyboard.press("PageDown")
    tab.wait_for_url(re.compile(r"/Input_gradient\?"))
    settled(tab)
    assert "/Input_gradient?" in tab.url
    assert_no_traceback(tab)


def test_keys_stay_the_lecturers_after_a_toggle_or_the_scrub_is_clicked(tab: Page, app_url):
    """A clicked button or scrub kept the keyboard: after the whole pass's button was clicked,
    space pressed it again; after the presentation toggle, ← and
    PageDown did nothing and space left presentation mode; after a click on the scrub, PageDown
    stepped the frames backwards. The keys are now the player's and the page's."""
    goto(tab, f"{app_url}/Input_gradient?preset=recitation-s2&step=3", charts=2)
    whole = tab.locator(".st-key-ctl_step button", has_text="1–6 · whole pass")
    with rerun(tab):
        whole.click()  # the whole pass: a stage of the bar
    expect(tab.locator(".st-key-chart_stage_whole .js-plotly-plot")).to_have_count(1)
    assert "step=7" in tab.url
    tab.locator(
        ".st-key-ctl_step button", has_text="1–6 · whole pass"
    ).focus()  # as the click left it
    # space plays (the player takes it in its keydown handler) and does not press the bar's
    # button again
    tab.keyboard.press(" ")
    expect(play_button(tab, "chart_stage_whole")).to_have_text("❚❚ Pause")
    tab.keyboard.press(" ")
    assert_paused(tab, "chart_stage_whole")
    assert "step=7" in tab.url
    # the storyboard's stage 3: a click on the scrub, then the clicker goes on to stage 4
    goto(tab, f"{app_url}/Input_gradient?preset=recitation-s2&step=3", charts=2)
    tab.locator(".st-key-player_stage_pad input.scrub").click()  # into the player's shadow root
    settled(tab)  # the scrub's frame drawn
    with rerun(tab):
        tab.keyboard.press("PageDown")
    assert re.search(r"step=4\b", tab.url), tab.url
    # Forward: presentation mode switched on in the sidebar, then ← and PageDown
    goto(tab, f"{app_url}/Forward?preset=recitation-s2&pres=0")
    with rerun(tab):
        tab.locator("[data-testid='stSidebar'] label[for='cv-side-pres']").click()
    assert "pres=1" in tab.url
    tab.locator("[data-f='pres']").focus()
    count = animation(tab)[1]
    tab.keyboard.press("ArrowLeft")
    at_frame(tab, count - 2)
    with rerun(tab):
        tab.keyboard.press("PageDown")
    tab.wait_for_url(re.compile(r"/Input_gradient\?"))
    assert "pres=1" in tab.url


PLAY_WIDTH = """() => { const host = [...document.querySelectorAll('.st-key-player_forward *')]
  .find(e => e.shadowRoot); const b = host.shadowRoot.querySelector('button.play');
  return [b.textContent, b.getBoundingClientRect().width]; }"""


def test_play_and_pause_are_one_width_on_a_projector(tab: Page, app_url):
    """On a projector '❚❚ Pause' was 16 px wider than '▶ Play' (at 1280×720): pressing play
    shifted the slider and the label beside it."""
    tab.set_viewport_size({"width": 1280, "height": 720})
    goto(tab, f"{app_url}/Forward?preset=recitation-s2&pres=1&play=stills")  # no autoplay
    play, wide = tab.evaluate(PLAY_WIDTH)
    tab.keyboard.press(" ")
    tab.wait_for_function(f"() => ({PLAY_WIDTH})()[0].includes('Pause')")
    _, paused = tab.evaluate(PLAY_WIDTH)
    tab.keyboard.press(" ")
    assert "Play" in play and paused == wide


def test_hover_lights_the_linked_cells(tab: Page, app_url):
    goto(tab, f"{app_url}/Forward")
    hover = """() => document.querySelector('.js-plotly-plot').data
      .filter(d => d.name === 'hover').map(d => (d.x || []).filter(v => v !== null).length)"""
    x, y = tab.evaluate(CELL_XY, ["xaxis3", "yaxis3", 2, 1])
    tab.mouse.move(x, y)  # y[2, 1]: its window on x̃, the kernel, the cell itself
    tab.wait_for_function(f"() => ({hover})()[0] > 0")
    assert tab.evaluate(hover) == [5, 5, 5]
    x, y = tab.evaluate(CELL_XY, ["xaxis", "yaxis", 3, 3])
    tab.mouse.move(x, y)  # x̃[3, 3] (stride 2, 3×3 kernel): read by y[1..2, 1..2], 4 outputs
    tab.wait_for_function(f"() => ({hover})()[2] === 20")
    assert tab.evaluate(hover) == [5, 20, 20]  # the cell; 4 taps; 4 outputs (5 corners each)
    assert animation(tab) == (15, 16), "hovering is not a step"


def test_on_a_projector_no_toolbar_covers_the_titles_and_figures_are_centred(tab: Page, app_url):
    """Hovering a chart shows plotly's and Streamlit's toolbars over its top-right corner, where
    the last panel's title is: in normal mode (the camera exports a frame), not on a projector."""
    shown = """() => [...document.querySelectorAll(
        '.modebar, [data-testid="stElementToolbar"]')]
      .filter(e => e.getBoundingClientRect().height > 0 && getComputedStyle(e).display !== 'none')
      .length"""
    for pres, visible in (("0", True), ("1", False)):
        goto(tab, f"{app_url}/Forward?preset=recitation-s2&pres={pres}")
        hover_cell(tab, "xaxis3", "yaxis3", 0, 0)
        # plotly's toolbar is drawn with its chart (shown on hover, or hidden by the projector's
        # stylesheet whatever the pointer does)
        expect(tab.locator(".modebar").first).to_be_attached()
        if visible:
            tab.wait_for_function(f"() => ({shown})() > 0")
        assert bool(tab.evaluate(shown)) == visible, pres
    # and a figure narrower than the projector stands in its middle, as on a slide (the rule
    # had been written on an element as wide as its figure, which left it on the left)
    goto(tab, f"{app_url}/Input_gradient?preset=classroom&pres=1&step=6", charts=2)
    chart, column = tab.evaluate("""() => [document.querySelector('.js-plotly-plot'),
        document.querySelector('[data-testid="stMainBlockContainer"]')].map(e => {
          const r = e.getBoundingClientRect(); return [r.left, r.right]; })""")
    assert column[1] - column[0] - (chart[1] - chart[0]) > 200  # room to the side
    assert abs((chart[0] - column[0]) - (column[1] - chart[1])) < 40  # padding aside

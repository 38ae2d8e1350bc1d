"""Accessibility in Chromium: axe-core finds no serious or critical violation (and headings in
order) on every page × mode × size × preset; every number drawn in a chart's SVG reads on the
cell under it; reduced motion (the browser's or the app's still=1) stops the gliding; high
contrast (hc=1) holds every text to 7:1. The everyday run checks a sample that covers every
page, both modes and both sizes; `-m full` runs the whole matrix (make ci)."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from a11y_helpers import LOAD_MS, PAGES, PRESETS, SIZES, open_page, serious_violations, settle
from PIL import Image
from playwright.sync_api import Browser, Page

from convviz.render.theme import contrast, needed_contrast

pytestmark = pytest.mark.browser

MATRIX = [
    (page, pres, size, preset)
    for (page, _), pres, size, preset in itertools.product(
        PAGES, (0, 1), SIZES, (*PRESETS, "qa-channels")
    )
]
# every page once, the modes and sizes taking turns, the presets too: 8 views
SAMPLE = [
    (page, i % 2, SIZES[(i // 2) % 2], PRESETS[i % len(PRESETS)])
    for i, (page, _) in enumerate(PAGES)
]
PATHS = dict(PAGES)


@pytest.fixture(scope="module", params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def screen(request, browser: Browser):
    context = browser.new_context(viewport={"width": request.param[0], "height": request.param[1]})
    page = context.new_page()
    page.set_default_timeout(LOAD_MS)
    yield page, request.param
    context.close()


def _check(screen, app_url, page_name, pres, size, preset, hc=0):
    page, at = screen
    if at != size:
        pytest.skip("another screen's view")
    query = f"preset={preset}&pres={pres}" + ("&hc=1" if hc else "")
    open_page(page, app_url, PATHS[page_name], query)
    found = serious_violations(page, high=bool(hc))
    assert not found, found


@pytest.mark.parametrize(("page_name", "pres", "size", "preset"), SAMPLE)
def test_axe_finds_nothing_serious(screen, app_url, page_name, pres, size, preset):
    _check(screen, app_url, page_name, pres, size, preset)


@pytest.mark.full
@pytest.mark.parametrize(("page_name", "pres", "size", "preset"), MATRIX)
def test_axe_finds_nothing_serious_anywhere(screen, app_url, page_name, pres, size, preset):
    _check(screen, app_url, page_name, pres, size, preset)


@pytest.mark.parametrize("page_name", ["forward", "input_gradient", "quiz"])
def test_high_contrast_holds_every_text_to_7_to_1(screen, app_url, page_name):
    _check(screen, app_url, page_name, 0, screen[1], "recitation-s2", hc=1)


# --- the numbers drawn in the charts' SVG, on the cells under them ------------------------------

# every number a chart draws in a cell: its box and its ink (a span's colour, else the text's)
TEXTS = """() => [...document.querySelectorAll('.js-plotly-plot text')].filter(t => {
    const s = t.textContent.trim();
    return /^[+−-]?[0-9][0-9.]*$/.test(s)
      && (t.closest('.heatmaplayer') || t.closest('.textpoint'));
  }).map(t => {
    const r = t.getBoundingClientRect(), inner = t.querySelector('tspan') || t;
    const px = parseFloat(getComputedStyle(t).fontSize);
    const ink = getComputedStyle(inner).fill;
    return {x: r.left, y: r.top, w: r.width, h: r.height, ink, px,
            bold: parseInt(getComputedStyle(t).fontWeight) >= 700,
            visible: r.width > 0 && getComputedStyle(t).opacity !== '0'};
  })"""


def _hex(css: str) -> str:
    r, g, b = (int(v) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def drawn_numbers(page: Page) -> list[tuple[str, str, float, bool]]:
    """(ink, fill under it, px, bold) of every number seen in a chart's cells: the fill is the
    most common colour of the text's box with the texts hidden (a screenshot of the page)."""
    # a number under a later trace's cell (the operand's own, under the window) is covered by
    # it: the last text drawn at a place is the one seen
    seen = {
        (round(t["x"] + t["w"] / 2), round(t["y"] + t["h"] / 2)): t for t in page.evaluate(TEXTS)
    }
    texts = [t for t in seen.values() if t["visible"]]
    page.add_style_tag(content=".js-plotly-plot text { visibility: hidden !important; }")
    shot = np.asarray(Image.open(io.BytesIO(page.screenshot())).convert("RGB"))
    out = []
    for t in texts:
        y0, x0 = int(t["y"]) + 1, int(t["x"]) + 1
        box = shot[y0 : int(t["y"] + t["h"]) - 1, x0 : int(t["x"] + t["w"]) - 1].reshape(-1, 3)
        if not box.size:
            continue
        colours, counts = np.unique(box, axis=0, return_counts=True)
        fill = "#{:02x}{:02x}{:02x}".format(*colours[counts.argmax()])
        out.append((_hex(t["ink"]), fill, t["px"], t["bold"]))
    return out


AT_REST = "() => [...(window.__convviz?.players.values() ?? [])].every((p) => !p.playing())"
VIEWS = [  # the seeds' Forward page and the storyboard's stages, where taps carry numbers
    ("Forward", "preset=recitation-s2"),
    ("Forward", "preset=recitation-s1&pres=1"),
    ("Input_gradient", "preset=recitation-s2&pres=1&step=4"),  # rotate 180°
    ("Input_gradient", "preset=recitation-s2&step=5"),  # the full correlation
    ("Input_gradient", "preset=keras-same&pres=1&step=6"),  # the mask
]


@pytest.mark.parametrize(("path", "query"), VIEWS, ids=[f"{p}?{q}" for p, q in VIEWS])
def test_every_drawn_number_reads_on_its_cell(screen, app_url, artifacts, path, query):
    page, _ = screen
    open_page(page, app_url, path, query)
    # a stage that opens playing (presentation mode) is read once it has played to its end: the
    # texts and the screenshot of the fills must show the same frame
    page.wait_for_function(AT_REST)
    settle(page)
    numbers = drawn_numbers(page)
    assert len(numbers) >= 9, "no numbers found in the charts"
    short = [
        (ink, fill, px, round(contrast(ink, fill), 2))
        for ink, fill, px, bold in numbers
        if contrast(ink, fill) < needed_contrast(px, bold)
    ]
    assert not short, f"{len(short)} of {len(numbers)} numbers below the bar: {short[:8]}"


# --- motion on the reader's terms ---------------------------------------------------------------

SPY = """() => { const seen = window.__cvAnimate = [];
  const animate = window.Plotly.animate;
  window.Plotly.animate = function (gd, frames, opts) {
    seen.push(opts);
    return animate.apply(this, arguments);
  };
}"""
ROTATE = "preset=recitation-s2&pres=1&step=4"


@pytest.mark.parametrize("how", ["media", "still=1", "neither"])
def test_reduced_motion_steps_without_gliding(browser: Browser, app_url, how):
    context = browser.new_context(
        viewport={"width": 1280, "height": 720},
        reduced_motion="reduce" if how == "media" else "no-preference",
    )
    page = context.new_page()
    page.set_default_timeout(LOAD_MS)
    query = ROTATE + ("&still=1" if how == "still=1" else "")
    open_page(page, app_url, "Input_gradient", query)
    page.wait_for_function("() => window.__convviz && window.__convviz.players.size > 0")
    page.evaluate(SPY)
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => window.__cvAnimate.length >= 2")
    reduced = page.evaluate("() => [...window.__convviz.players.values()][0].reduced()")
    durations = page.evaluate("() => window.__cvAnimate.map(o => o.transition.duration)")
    if how == "neither":
        assert not reduced and max(durations) > 0, "a motion glides by default"
    else:
        assert reduced and max(durations) == 0, durations
        if how == "still=1":
            assert page.evaluate("document.documentElement.dataset.cvMotion") == "none"
    context.close()


# --- the keyboard -------------------------------------------------------------------------------


def test_the_keyboard_reaches_the_player_and_the_picker_with_a_visible_focus(screen, app_url):
    page, (w, _) = screen
    if w != 1280:
        pytest.skip("one screen is enough")
    open_page(page, app_url, "Forward", "preset=recitation-s2")
    reached, rings = set(), []
    for _ in range(120):
        page.keyboard.press("Tab")
        focus = page.evaluate("""() => { let e = document.activeElement;
            while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
            const cs = getComputedStyle(e);
            return {label: (e.getAttribute('title') || e.getAttribute('aria-label') ||
                            e.textContent || '').trim().slice(0, 80), body: e === document.body,
                    ring: cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2
                          || cs.boxShadow !== 'none'}; }""")
        if focus["body"]:
            continue
        reached.add(focus["label"])
        rings.append(focus["ring"])
        if "Select a cell" in focus["label"]:
            break
    assert {"First step (Home)", "Play / pause (space)", "step"} <= reached, reached
    assert any("Select a cell" in r for r in reached), reached
    assert all(rings), "a control took the focus without showing it"

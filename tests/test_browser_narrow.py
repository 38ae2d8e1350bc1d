"""Narrow screens in a real Chromium: a phone (390×844) and a tablet (820×1180). Every page
loads with no sideways scroll of the page (what is wider than the screen scrolls in its own box:
a formula, a wide grid), the sidebar's controls are reachable, and what a finger taps (the
player's buttons, the page's buttons, the choices of a bar) is at least 44 px. Screenshots of
every page at both sizes land in artifacts/ (narrow-phone-forward.png, …)."""

from __future__ import annotations

import pytest
from browser_helpers import assert_no_traceback
from live import SETTLE_MS, goto, open_tab, rerun
from playwright.sync_api import Browser, Page, expect

from convviz.model.pages import PAGES as APP_PAGES
from convviz.model.pages import url_path

pytestmark = pytest.mark.browser

SCREENS = {"phone": (390, 844), "tablet": (820, 1180)}
# every page of the sidebar, by its URL path ("" the overview; pages/4_Learning.py: "Learning")
PAGES = tuple(url_path(p) for p, _, _ in APP_PAGES)
TAP_PX = 44

# Elements of the page that reach past the screen's right edge, but those inside a box that
# scrolls sideways on its own (overflow-x auto or scroll): [tag, test id, right edge] each.
STICKING_OUT = """() => {
  const vw = document.documentElement.clientWidth;
  const scrolls = el => { for (let p = el.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      const boxed = p.getBoundingClientRect().right <= vw + 1;
      if ((o === 'auto' || o === 'scroll') && boxed) return true;
    } return false; };
  return Array.from(document.querySelectorAll('[data-testid="stMain"] *'))
    .filter(el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.right > vw + 1; })
    .filter(el => !scrolls(el))
    .slice(0, 5).map(el => [el.tagName, el.getAttribute('data-testid'),
                            Math.round(el.getBoundingClientRect().right)]);
}"""
PAGE_WIDTH = """() => { const d = document.documentElement;
  const m = document.querySelector('[data-testid="stMain"]');
  return [d.scrollWidth, d.clientWidth, m.scrollWidth, m.clientWidth]; }"""


@pytest.fixture(scope="module", params=list(SCREENS))
def screen(request, browser: Browser, browser_context_args):
    """A tab of the screen's size, touch on (as a phone or a tablet has it)."""
    w, h = SCREENS[request.param]
    page = open_tab(
        browser,
        **{**browser_context_args, "viewport": {"width": w, "height": h}, "has_touch": True},
    )
    yield request.param, page
    page.context.close()


def load(page: Page, url: str) -> None:
    goto(page, url)  # settled: sized to this screen, every chart and player drawn


def small_taps(page: Page, selector: str) -> list[tuple[str, int, int]]:
    """(label, width, height) of the visible elements of `selector` under TAP_PX either way."""
    out = []
    for el in page.locator(selector).all():
        box = el.bounding_box() if el.is_visible() else None
        if box and (box["width"] < TAP_PX - 0.5 or box["height"] < TAP_PX - 0.5):
            out.append((el.inner_text()[:20], round(box["width"]), round(box["height"])))
    return out


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p or "Overview")
def test_every_page_fits_a_narrow_screen(screen, app_url, artifacts, path):
    name, page = screen
    load(page, f"{app_url}/{path}?preset=classroom")
    assert_no_traceback(page)
    doc_w, view_w, main_w, main_view = page.evaluate(PAGE_WIDTH)
    assert doc_w <= view_w and main_w <= main_view, "the page scrolls sideways"
    assert page.evaluate(STICKING_OUT) == [], "cut off at the screen's edge, not in a box"
    # a finger's targets: the player's buttons (in its shadow root), the page's buttons, the
    # choices of a segmented bar
    assert small_taps(page, ".player .bar button") == []
    assert small_taps(page, "[data-testid='stMain'] [data-testid^='stBaseButton']") == []
    assert small_taps(page, "[data-testid='stMain'] [data-testid='stButtonGroup'] button") == []
    page.screenshot(path=str(artifacts / f"narrow-{name}-{(path or 'overview').lower()}.png"))


def test_the_sidebar_controls_are_reachable(screen, app_url):
    """A phone starts with the page, its sidebar folded: one tap opens it, its controls usable;
    a tablet shows it."""
    name, page = screen
    load(page, f"{app_url}/Forward?preset=classroom")
    sidebar = page.get_by_test_id("stSidebar")
    if name == "phone":
        expect(sidebar).not_to_be_in_viewport()
        page.get_by_test_id("stExpandSidebarButton").click()
    expect(sidebar.get_by_role("combobox").first).to_be_in_viewport()  # the preset box
    stride = sidebar.locator("input[type='range'][aria-label='Stride']")
    stride.scroll_into_view_if_needed()
    expect(stride).to_be_in_viewport()
    stride.focus()
    with rerun(page):
        stride.press("ArrowRight")  # a control that works: the stride changes the layer
    expect(stride).to_have_value("3", timeout=SETTLE_MS)


@pytest.mark.parametrize("size", [(768, 1024), (1024, 768)], ids=["portrait", "landscape"])
def test_on_a_tablet_no_plotly_toolbar_covers_a_title(browser: Browser, app_url, size):
    """A tap on a chart left plotly's toolbar over the figure's top right, on the last panel's
    title (narrow.css: none up to a tablet's 1024 px; each stage's PNG/SVG buttons export it)."""
    w, h = size
    page = open_tab(browser, viewport={"width": w, "height": h}, has_touch=True)
    try:
        goto(page, f"{app_url}/Two_layers?preset=recitation-s2&step=1")
        chart = page.locator(".js-plotly-plot").first
        box = chart.bounding_box()
        page.mouse.move(box["x"] + box["width"] - 20, box["y"] + 40)  # by the last title
        expect(page.locator(".modebar").first).to_be_attached()
        shown = page.evaluate("""() => [...document.querySelectorAll('.modebar-container')]
            .filter(e => getComputedStyle(e).display !== 'none').length""")
        assert shown == 0
    finally:
        page.context.close()

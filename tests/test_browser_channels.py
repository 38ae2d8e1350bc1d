"""A real browser on the Channels page: a click on a tile selects the filter k and the channel c
it is, in one rerun (sidebar, URL, outline and the tile's operands follow)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import assert_no_traceback, goto
from live import hover, rerun, settled
from playwright.sync_api import Page, expect

from convviz.render.plotly.adapter import probing

pytestmark = pytest.mark.browser
SHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "channels"  # screenshots
# A grid's chart (its key holds the slice; a replaced one lingers marked stale for a moment).
GRID = "[class*='st-key-tiles_{}_']:not([data-stale='true'])"

# Page pixels of cell (row, col) of tile (tr, tc) in the grid chart whose key starts with `grid`.
TILE_XY = probing("""([grid, tr, tc, row, col]) => {
  const gd = document.querySelector(
    `[class*='st-key-tiles_${grid}_']:not([data-stale='true']) .js-plotly-plot`);
  const across = cvPlotly.annotations(gd).filter(a => a.xanchor === 'center').length;
  const i = tr * across + tc + 1, s = i === 1 ? '' : String(i);
  return cvPlotly.pagePoint(gd, 'xaxis' + s, 'yaxis' + s, col, row);
}""")

# The paper x of the selected-tile outline of a grid, and the domain of tile (tr, tc).
OUTLINE = probing("""([grid, i]) => {
  const gd = document.querySelector(
    `[class*='st-key-tiles_${grid}_']:not([data-stale='true']) .js-plotly-plot`);
  const box = gd.layout.shapes[0], d = cvPlotly.axis(gd, 'xaxis' + (i === 1 ? '' : i)).domain;
  return box.x0 < d[0] && d[1] < box.x1;
}""")


# Scrolls the block that holds the chart (Streamlit scrolls its main block, not the page) by dy
# px, at once (no smooth scrolling: the next look reads where the tile is).
SCROLL_BY = """([grid, dy]) => {
  let el = document.querySelector(`[class*='st-key-tiles_${grid}_']:not([data-stale='true'])`);
  while (el && !(el.scrollHeight > el.clientHeight
                 && /(auto|scroll)/.test(getComputedStyle(el).overflowY))) el = el.parentElement;
  (el || document.scrollingElement).scrollBy({top: dy, behavior: 'instant'});
}"""


def tile_point(page: Page, grid: str, tr: int, tc: int, row: int = 0, col: int = 0):
    """Page pixels of a cell of a tile, scrolled into the middle of the screen."""
    settled(page)
    expect(page.locator(GRID.format(grid))).to_have_count(1)
    height = page.viewport_size["height"]
    x, y = page.evaluate(TILE_XY, [grid, tr, tc, row, col])
    if not 80 < y < height - 40:  # a tall grid: scroll to the tile
        page.evaluate(SCROLL_BY, [grid, y - height / 2])
        x, y = page.evaluate(TILE_XY, [grid, tr, tc, row, col])
    assert 80 < y < height - 40, (grid, tr, tc, y)
    return x, y


def click_tile(page: Page, grid: str, tr: int, tc: int, row: int = 0, col: int = 0) -> None:
    """Click a cell of a tile and wait for the run its selection asks for."""
    x, y = tile_point(page, grid, tr, tc, row, col)
    with rerun(page):
        hover(page, x, y)  # plotly picks the point on hover, then the click selects it
        page.mouse.click(x, y)


def side(page: Page, label: str):
    return page.locator("[data-testid='stSidebar']").get_by_label(label)


def test_clicking_a_weight_gradient_tile_selects_its_filter_and_channel(tab: Page, app_url):
    tab.set_viewport_size({"width": 1280, "height": 720})
    goto(tab, f"{app_url}/Channels?preset=channels-small", charts=5)
    expect(side(tab, "filter k")).to_have_value("0")
    tab.locator(GRID.format("grad_w")).scroll_into_view_if_needed()
    tab.screenshot(path=SHOTS / "channels_before.png")

    click_tile(tab, "grad_w", 2, 1, 1, 1)  # ∂L/∂w[k=2, c=1], its middle cell
    expect(side(tab, "filter k")).to_have_value("2")
    expect(side(tab, "channel c")).to_have_value("1")
    assert "k=2" in tab.url and "c=1" in tab.url
    assert tab.evaluate(OUTLINE, ["grad_w", 2 * 2 + 1 + 1])  # 3 filters × 2 channels
    tile = tab.locator(".st-key-chart_tile")
    expect(tile).to_contain_text("∂L/∂y[n=0, k=2]")  # the tile's operands
    expect(tile).to_contain_text("x[n=0, c=1]")
    expect(tile).to_contain_text("∂L/∂w[k=2, c=1]")
    tile.screenshot(path=SHOTS / "channels_operands_after.png")
    tab.locator(GRID.format("grad_w")).scroll_into_view_if_needed()
    tab.screenshot(path=SHOTS / "channels_after.png")

    # the same tile once more after the sidebar moved away: it selects again
    k = side(tab, "filter k")
    k.fill("0")
    with rerun(tab):
        k.press("Enter")
    assert "k=0" in tab.url
    click_tile(tab, "grad_w", 2, 1)
    expect(side(tab, "filter k")).to_have_value("2")
    assert_no_traceback(tab)


def test_the_channel_and_filter_rows_select_what_their_tiles_are(tab: Page, app_url):
    tab.set_viewport_size({"width": 1280, "height": 720})
    goto(tab, f"{app_url}/Channels?preset=channels-small", charts=5)
    x, y = tile_point(tab, "grad_w", 1, 0, 2, 1)
    hover(tab, x, y)  # a cell of ∂L/∂w[k=1, c=0]: its value, and what a click does
    label = tab.locator(GRID.format("grad_w")).locator(".hoverlayer")
    expect(label).to_contain_text("click: show k=1 c=0")
    expect(label).to_contain_text("[2, 1] = ")
    tab.screenshot(path=SHOTS / "channels_hover.png")
    click_tile(tab, "x", 0, 1)  # input x[n=0, c=1]
    expect(side(tab, "channel c")).to_have_value("1")
    click_tile(tab, "sum_k", 0, 2)  # filter 2's share of ∂L/∂x[n, c]
    expect(side(tab, "filter k")).to_have_value("2")
    click_tile(tab, "grad_x", 0, 0)  # ∂L/∂x[n=0, c=0]
    expect(side(tab, "channel c")).to_have_value("0")
    assert "k=2" in tab.url and "c=0" in tab.url
    assert_no_traceback(tab)


def test_a_big_layers_tiles_take_clicks_too(tab: Page, app_url):
    """5 channels of 100×100 and 10 filters: a click target spans a block of a big tile."""
    tab.set_viewport_size({"width": 1280, "height": 720})
    # x, ∂L/∂w, the outlined tile and its close-up, ∂L/∂x and its close-up (∂L/∂x by filter
    # waits in its expander)
    goto(tab, f"{app_url}/Channels?preset=qa-channels", charts=6)
    # ∂L/∂w's 10 filters run across (it fits the screen): row c=3, column k=7
    click_tile(tab, "grad_w", 3, 7, 4, 4)  # ∂L/∂w[k=7, c=3], its bottom-right cell
    expect(side(tab, "filter k")).to_have_value("7")
    expect(side(tab, "channel c")).to_have_value("3")
    click_tile(tab, "x", 0, 4, 99, 0)  # x[n=0, c=4], its bottom-left cell
    expect(side(tab, "channel c")).to_have_value("4")
    tab.locator(GRID.format("x")).scroll_into_view_if_needed()
    tab.screenshot(path=SHOTS / "channels_big_after.png")
    assert_no_traceback(tab)

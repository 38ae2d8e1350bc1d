"""What the Chromium tests of the app's pages share: `goto` (open a page and wait until it is
settled, timed: `LOADS` keeps every time, test_browser.py's test_timings prints them), the page's
main animation as its player holds it (`animation`, `at_frame`), a click on a cell of the first
chart (`hover_cell`, `click_cell`) and `assert_no_traceback`. Every wait is on a state
(tests/live.py), never on a time.
"""

from __future__ import annotations

import time

from live import CELL_XY, SETTLE_MS, hover
from live import goto as goto_settled
from playwright.sync_api import Page, expect

# The page's main animation, as its player (convviz/player/player.js) holds it: (frame, frames).
ANIMATION = """() => {
  const r = window.__convviz;
  const p = r && [...r.players.values()].find(p => p.primary);
  return p ? [p.current(), p.count] : null;
}"""


LOADS: list[float] = []  # goto → first chart of every goto of the session, in order


def goto(page: Page, url: str, charts: int = 1) -> float:
    """Open url; wait until the page is settled with `charts` plotly figures, drawn for this
    screen (it reruns once to size them); seconds from goto to settled."""
    t0 = time.perf_counter()
    goto_settled(page, url, charts)
    first = time.perf_counter() - t0
    LOADS.append(first)
    return first


def animation(page: Page, steps: int | None = None, timeout: float = SETTLE_MS) -> tuple[int, int]:
    """(active, steps) of the first figure, waiting for `steps` steps if given."""
    if steps is not None:
        page.wait_for_function(
            f"() => {{ const a = ({ANIMATION})(); return a && a[1] === {steps}; }}",
            timeout=timeout,
        )
    return tuple(page.evaluate(ANIMATION))


def at_frame(page: Page, frame: int, timeout: float = SETTLE_MS) -> None:
    page.wait_for_function(f"() => ({ANIMATION})()[0] === {frame}", timeout=timeout)


def assert_no_traceback(page: Page) -> None:
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert "Traceback" not in page.inner_text("body")


def hover_cell(page: Page, xaxis: str, yaxis: str, row: int, col: int) -> tuple[float, float]:
    """Move the pointer onto a cell of the first chart; once plotly has picked it, its page
    pixels."""
    x, y = page.evaluate(CELL_XY, [xaxis, yaxis, row, col])
    hover(page, x, y)
    return x, y


def click_cell(page: Page, xaxis: str, yaxis: str, row: int, col: int) -> None:
    """Click a cell of the first chart once plotly has picked it under the pointer (a click
    selects the point the last hover picked)."""
    page.mouse.click(*hover_cell(page, xaxis, yaxis, row, col))

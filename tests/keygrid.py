"""What the browser tests of the keyboard grids and the announcer share (issue 41): the cell the
keyboard is on, a Tab into a figure, a walk over a grid's cells, the announcer's record, and the
engine's words for a cell (the oracle: the layer computed here, not the page's)."""

from __future__ import annotations

from live import settled
from playwright.sync_api import Page

from convviz.engine.text import MINUS, number
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import from_query, values_of
from convviz.render.story.subject import Subject

# The cell the keyboard is on: its role, its name, its cell ("key:row:col", the click's)
FOCUSED = """() => { const e = document.activeElement;
  return e ? {role: e.getAttribute('role'), name: e.getAttribute('aria-label') || '',
              cell: e.dataset.cell || ''} : null; }"""

# Focus the element just before a chart in the page (the navigation's starting point), so that
# the next Tab is the first one into the figure
BEFORE = """(chart) => { const fig = document.querySelector(`.st-key-${chart} [role=figure]`);
  fig.setAttribute('tabindex', '-1'); fig.focus(); fig.removeAttribute('tabindex'); }"""

# Every text the announcer said, and when (recorded from before the page's scripts run)
RECORD = """(() => { window.__said = [];
  new MutationObserver(() => {
    const region = document.getElementById('cv-announcer');
    const text = region ? region.textContent : '';
    const last = window.__said[window.__said.length - 1];
    if (text && (!last || last.text !== text)) window.__said.push({text, at: performance.now()});
  }).observe(document, {childList: true, subtree: true, characterData: true}); })();"""


def focused(page: Page) -> dict:
    return page.evaluate(FOCUSED)


def tab_into(page: Page, chart: str) -> dict:
    """Press Tab once from just before the figure drawn as `chart` (its key): the cell it lands
    on."""
    page.evaluate(BEFORE, chart)
    page.keyboard.press("Tab")
    return focused(page)


def walk_last_grid(page: Page, shape: tuple[int, int]) -> list[dict]:
    """From a figure's keyboard grid, every cell of its last grid (shape (h, w)), row by row from
    the bottom, with the arrow keys: the cells the keyboard was on, in order."""
    h, w = shape
    seen = []
    page.keyboard.press("Control+End")
    seen.append(focused(page))
    for r in range(h):
        page.keyboard.press("End")
        seen.append(focused(page))
        for _ in range(w - 1):
            page.keyboard.press("ArrowLeft")
            seen.append(focused(page))
        if r < h - 1:
            page.keyboard.press("ArrowUp")
    return seen


def said(page: Page) -> list[dict]:
    """What the announcer said since the page was opened (after `record`): [{text, at}]."""
    return page.evaluate("() => window.__said || []")


def record(page: Page) -> None:
    """Record the announcer from the next page opened in this tab on."""
    page.add_init_script(RECORD)


def subject(query: dict) -> Subject:
    """The layer a link stands for, computed here (the engine, not the page)."""
    state, problems = from_query(query)
    assert not [p for p in problems if "custom layer" not in p], problems
    from convviz.engine.arrays import layer

    return Subject(layer(*values_of(state)), state=state)


def preset_subject(key: str) -> Subject:
    assert key in PRESETS_BY_KEY
    return subject({"preset": key})


def written(v: float) -> str:
    """A number as the grids write it."""
    return number(v)


def index(i: int) -> str:
    """A row or column as a sentence says it (a negative one with the grids' minus)."""
    return f"{MINUS}{-i}" if i < 0 else str(i)


def at_rest(page: Page) -> None:
    settled(page)

"""What the accessibility tests share: the pages, the settled page, axe-core's serious findings."""

from __future__ import annotations

from axe_playwright_python.sync_playwright import Axe
from live import settled
from playwright.sync_api import Page, expect

# (name, url path) of every page: app.py and pages/*.py
PAGES = (
    ("overview", ""),
    ("forward", "Forward"),
    ("input_gradient", "Input_gradient"),
    ("weight_gradient", "Weight_gradient"),
    ("channels", "Channels"),
    ("matrix", "Matrix"),
    ("checks", "Checks"),
    ("quiz", "Quiz"),
    ("learning", "Learning"),
    ("two_layers", "Two_layers"),
)
SIZES = ((1280, 720), (1920, 1080))
# the seeds' small layers and the default (qa-channels, the third seed's 5×100×100 layer, is in
# the full matrix only: one of its pages takes seconds to compute cold)
PRESETS = ("recitation-s1", "recitation-s2", "keras-same", "classroom")
SERIOUS = ("serious", "critical")
LOAD_MS = 60_000


def settle(page: Page) -> None:
    """Wait until the page has settled (tests/live.py: its run ended, nothing stale, sized to
    the screen, every chart and player frame drawn, fonts loaded); no exception on it."""
    settled(page, LOAD_MS)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)


def open_page(page: Page, base: str, path: str, query: str) -> None:
    page.goto(f"{base}/{path}?{query}")
    settle(page)


_AXE = Axe()


def serious_violations(page: Page, also: tuple[str, ...] = ("heading-order",), high=False):
    """axe-core's serious and critical findings on the page as drawn (and those of the rules
    `also`, whatever their impact: headings in order): rule, impact, nodes. high: with the
    high-contrast rule (text at 7:1, WCAG's AAA `color-contrast-enhanced`)."""
    options = {"resultTypes": ["violations"]}
    if high:
        options["rules"] = {"color-contrast-enhanced": {"enabled": True}}
        also = (*also, "color-contrast-enhanced")
    found = _AXE.run(page, options=options).response["violations"]
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "nodes": [
                (n["target"], n.get("failureSummary", "").split("\n")[-1].strip())
                for n in v["nodes"]
            ],
        }
        for v in found
        if v["impact"] in SERIOUS or v["id"] in also
    ]

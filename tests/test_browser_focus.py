"""Keyboard focus survives Streamlit's rerun (issue 31, item 5): a reader with the keyboard alone
Tabs to a sidebar control, changes it, and keeps working from where they were: the control keeps
the focus after the page has rerun and redrawn (the sidebar's component keeps its controls and
updates their values, or draws them anew and gives the focus back), and a second change needs
no Tab again. A checkbox Tabbed to takes its own space (the player's space, play/pause, took it
and let go of the focus)."""

from __future__ import annotations

import pytest
from live import goto, rerun
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

# What holds the keyboard focus: a sidebar control's field ("field:sh": its controls are in a
# component's shadow root), else the st-key-… class of the widget (None: the page's body)
FOCUSED = """() => {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  if (!a || a === document.body) return null;
  if (a.dataset && a.dataset.f) return `field:${a.dataset.f}`;
  const box = a.closest('[class*="st-key-"]');
  return box ? [...box.classList].find(c => c.startsWith('st-key-')) : null;
}"""
MOST_TABS = 60  # the sidebar's controls down to the padding; a bound, not a count


def tab_to(page: Page, field: str) -> None:
    """Press Tab from the top of the page until the sidebar's control of `field` holds the focus,
    as a reader with the keyboard alone reaches it."""
    page.locator("body").focus()
    for _ in range(MOST_TABS):
        page.keyboard.press("Tab")
        if page.evaluate(FOCUSED) == f"field:{field}":
            return
    pytest.fail(f"{field} not reached in {MOST_TABS} Tabs")


def test_stride_slider_keeps_the_focus_across_reruns(tab: Page, app_url):
    goto(tab, f"{app_url}/Forward?preset=recitation-s2")
    tab_to(tab, "sh")
    slider = tab.locator("[data-f='sh']")  # a native range
    expect(slider).to_have_value("2")
    with rerun(tab):
        tab.keyboard.press("ArrowRight")
    expect(slider).to_have_value("3")
    assert tab.evaluate(FOCUSED) == "field:sh", "the rerun lost the focus"
    with rerun(tab):  # again, without a Tab: the focus is where the reader left it
        tab.keyboard.press("ArrowLeft")
    expect(slider).to_have_value("2")
    assert tab.evaluate(FOCUSED) == "field:sh"


def test_number_input_keeps_the_focus_across_reruns(tab: Page, app_url):
    goto(tab, f"{app_url}/Forward?preset=recitation-s2")
    tab_to(tab, "H")
    field = tab.locator("[data-f='H']")
    expect(field).to_have_value("5")
    tab.keyboard.press("Control+A")
    tab.keyboard.type("6")
    with rerun(tab):
        tab.keyboard.press("Enter")
    expect(field).to_have_value("6")
    assert tab.evaluate(FOCUSED) == "field:H", "the rerun lost the focus"
    with rerun(tab):
        tab.keyboard.press("ArrowDown")  # a step down, from the keyboard, where it still is
    expect(field).to_have_value("5")
    assert tab.evaluate(FOCUSED) == "field:H"


def test_space_toggles_a_checkbox_reached_with_the_keyboard(tab: Page, app_url):
    """Space on a checkbox Tabbed to is the checkbox's (the player's keys take it only from a
    control just clicked: `player_core.focusOf`, "toggle"); the rerun that redraws the sidebar
    with a stride per axis keeps the focus on it, and Space again undoes it."""
    goto(tab, f"{app_url}/Forward?preset=recitation-s2")
    tab_to(tab, "same_axes")
    box = tab.locator("[data-f='same_axes']")
    expect(box).to_be_checked()
    with rerun(tab):
        tab.keyboard.press("Space")
    expect(box).not_to_be_checked()
    expect(tab.locator("[data-f='sw']")).to_have_count(1)  # a stride per axis: a new row
    assert tab.evaluate(FOCUSED) == "field:same_axes", "the rerun lost the focus"
    with rerun(tab):
        tab.keyboard.press("Space")
    expect(box).to_be_checked()
    assert tab.evaluate(FOCUSED) == "field:same_axes"

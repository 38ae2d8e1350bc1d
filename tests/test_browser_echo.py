"""What a reader sent is shown as literal text, in the DOM Chromium draws: a URL value or a typed
answer quoted in a message never becomes a heading, a code block, a link, bold text, an image
or maths (`convviz.engine.text.echo` quotes them all; the page's Markdown renders the rest)."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from browser_helpers import assert_no_traceback
from live import goto, rerun
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

# Markdown, HTML and links as a link can spell them: a heading under a line, a code block after
# a blank line, a bare address, emphasis, a link, an image, maths and Streamlit's own colours
MARKUP = [
    "x\n===\ny",
    "x\n\n    code block",
    "http://example.com/",
    "**b** _i_ [l](http://example.com) <b>h</b>",
    "![i](http://127.0.0.1/t.png) $x^2$ :red[r] :material/home:",
]
# Elements no message of the app draws by itself (its own bold, in the error banner, is <strong>)
FOREIGN = "a, h1, h2, h3, h4, h5, h6, pre, img, em, b, .katex, table, ul, ol, script"
PAGES = ["", "Forward", "Input_gradient", "Weight_gradient", "Channels", "Matrix", "Checks", "Quiz"]


def open_link(page: Page, url: str) -> None:
    """Open a link and wait until the page has settled (sized for the screen, its run ended)."""
    goto(page, url)


def messages(page: Page):
    return page.locator("[data-testid='stAlert'], [data-testid='stToast']")


@pytest.mark.parametrize("path", PAGES)
def test_url_values_in_messages_stay_text(tab: Page, app_url, path):
    """Every page, each parameter kind (a selection, a whole number, a choice, a bool, typed
    values, the Quiz's own) holding markup: the message quotes it, nothing renders."""
    markup = MARKUP[PAGES.index(path) % len(MARKUP)]
    query = {"preset": "recitation-s2", "sel": markup, "H": markup, "mode": markup,
             "pres": markup, "x": markup, "quiz": markup, "qn": markup}  # fmt: skip
    open_link(tab, f"{app_url}/{path}?{urlencode(query)}")
    assert_no_traceback(tab)
    said = messages(tab)
    expect(said.first).to_be_visible()
    text = " ".join(said.all_inner_texts())
    for name in ("sel", "H", "mode", "pres", *(("quiz", "qn") if path == "Quiz" else ())):
        assert f"{name}=" in text, (name, text)
    expect(said.locator(FOREIGN)).to_have_count(0)
    assert "example.com" not in " ".join(
        a.get_attribute("href") or "" for a in tab.locator("[data-testid='stMain'] a").all()
    )


def test_a_typed_answer_in_a_message_stays_text(tab: Page, app_url):
    """The Quiz's answer field: '**b** http://example.com/x' rendered bold and a link in its
    refusal."""
    open_link(tab, f"{app_url}/Quiz?preset=recitation-s2")
    field = tab.get_by_label("Your answer (a number)")
    field.fill("**b** http://example.com/x\n# h")
    with rerun(tab):
        tab.get_by_role("button", name="Check my answer").click()
    said = messages(tab).filter(has_text="is not a number")
    expect(said).to_have_count(1)
    assert "**b** http://example.com/x" in said.inner_text()
    expect(said.locator(FOREIGN)).to_have_count(0)

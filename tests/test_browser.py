"""A real browser: Debian's Chromium driven by Playwright against `streamlit run` on 127.0.0.1.

What only a browser shows: plotly.js draws every page, a click on a heatmap cell selects it, a
control change costs one run and survives a page switch, a refused value is said, a link
reproduces a view, the exports download, bad links are explained. Also measures (and prints) the
first-chart time and the control → chart latency. See BROWSER.md for the recipes used here. Every
step waits for the state it acts on (tests/live.py: the page settled, the run an action asked
for), never for a time. The main animation's player and its keys: test_browser_player.py.
"""

from __future__ import annotations

import os
import re
import statistics
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from browser_helpers import LOADS, animation, assert_no_traceback, at_frame, click_cell, goto
from live import SETTLE_MS, asks_for_a_run, is_settled, rerun, settled
from PIL import Image
from playwright.sync_api import Page, expect

from convviz.render.plotly.adapter import probing
from convviz.render.theme import GREY_TERM

pytestmark = pytest.mark.browser

# sidebar link → (screenshot name, url path, a heading the page draws, number of plotly charts)
WALK = (
    ("Overview", "overview", "", "Output size", 2),
    ("Forward", "forward", "Forward", "Output cell y[3, 3]", 1),  # classroom: where it opens
    ("Input gradient", "input_gradient", "Input_gradient", "Scatter route", 2),
    ("Weight gradient", "weight_gradient", "Weight_gradient", "Weight cell [2, 2] of filter", 1),
    ("Channels", "channels", "Channels", "Channels, filters and the batch", 5),
    ("Matrix view", "matrix", "Matrix", "1. The forward pass: y = M · vec(x)", 2),  # its first tab
    ("Checks", "checks", "Checks", "Why trust the numbers", 0),
    ("Quiz", "quiz", "Quiz", "Predict, then reveal", 2),  # y first: x, w of 2 channels
)

# The text of the grey (vanishing) terms of each displayed formula, as KaTeX drew it (in the
# theme's colour for them, GREY_TERM).
GREY_TEXT = """() => Array.from(document.querySelectorAll('.katex-display .katex-html')).map(
  html => Array.from(html.querySelectorAll('*'))
    .filter(el => el.children.length === 0 && el.textContent.trim()
                  && getComputedStyle(el).color === 'GREY_RGB')
    .map(el => el.textContent).join(''))""".replace(
    "GREY_RGB", "rgb({}, {}, {})".format(*(int(GREY_TERM[i : i + 2], 16) for i in (1, 3, 5)))
)


def stride_input(page: Page):
    return page.locator("[data-testid='stSidebar'] input[type='range'][aria-label='Stride']")


CLIPPED_BUTTONS = """() => Array.from(document.querySelectorAll('button'))
  .filter(b => b.offsetParent && Array.from(b.querySelectorAll('*'))
    .some(e => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1))
  .map(b => b.innerText)"""


# For each figure of panels in a row (traces named '<panel>:values'), how far apart (px) the tops
# of its grids are drawn. The renderer top-aligns them; more than ~0 means the figure was
# squeezed into a narrower column and plotly shrank each square-celled grid about its own
# centre (misaligned panels, blank bands). The channel grids (several rows) are left out.
GRID_TOP_SPREAD = probing("""() => Array.from(document.querySelectorAll('.js-plotly-plot'))
  .filter(gd => gd.data.some(d => /:values$/.test(d.name || '')))
  .map(gd => {
    const tops = cvPlotly.axisNames(gd, 'y').map(k => cvPlotly.axis(gd, k).start);
    return Math.round(Math.max(...tops) - Math.min(...tops));
  })""")


def layout_at_rest(page: Page) -> tuple[list, list]:
    """(clipped button labels, grid-top spreads) of the page at rest: sized for this screen, its
    run ended, every chart drawn (mid-redraw, a layout is not the one a reader sees)."""
    settled(page)
    clipped, spread = page.evaluate(CLIPPED_BUTTONS), page.evaluate(GRID_TOP_SPREAD)
    assert is_settled(page), "the page moved while it was measured"
    return clipped, spread


# --- every page ----------------------------------------------------------------------------------


def test_every_page_loads_draws_and_is_screenshot(tab: Page, app_url, artifacts):
    """Walk the pages through the sidebar links (one session), screenshot each one."""
    goto(tab, app_url, charts=2)
    sidebar = tab.locator("[data-testid='stSidebar']")
    clipped, spread = {}, {}
    for link, name, path, heading, charts in WALK:
        if name == "channels":  # several channels make the better picture: pick that preset
            with rerun(tab):
                sidebar.get_by_label("Preset").select_option(label="Channels: 2 in, 3 out, batch 2")
            expect(sidebar.get_by_label("C in")).to_have_value("2")
            assert "preset=channels-small" in tab.url
        if path:
            # a link clicked mid-run, under load, once left the next page half drawn (2 of 5
            # charts): `rerun` clicks it at rest and waits for the page it opens to settle
            with rerun(tab):
                sidebar.get_by_role("link", name=link).click()
            # the page's path (its query is not always written back after a page switch: the
            # page's share link, checked below, always holds it)
            assert re.search(rf"/{path}\b", tab.url), tab.url
            # the sidebar's links (one component, convviz/ui/nav.js) mark the page shown
            expect(sidebar.locator("a[aria-current=page]")).to_contain_text(link)
        expect(tab.get_by_text(heading).first).to_be_visible()
        try:
            expect(tab.locator(".js-plotly-plot")).to_have_count(charts)
        except AssertionError:
            tab.screenshot(path=artifacts / f"failed_walk_{name}.png", full_page=True)
            raise
        # every figure draws its cells (an svg with cells: heatmaps, or a motion's markers)
        assert tab.evaluate(
            "() => Array.from(document.querySelectorAll('.js-plotly-plot')).every(gd =>"
            " gd.querySelector('.heatmaplayer, .scatterlayer .trace'))"
        )
        assert_no_traceback(tab)
        tab.mouse.move(1270, 1390)  # no hover effects (the sidebar's collapse arrow) in the picture
        tab.screenshot(path=artifacts / f"{name}.png")
        assert (artifacts / f"{name}.png").stat().st_size > 20_000
        if name == "channels":
            expect(tab.get_by_text(re.compile(r"2 channels of 5×5"))).to_be_visible()
        clipped[name], spread[name] = layout_at_rest(tab)
    link = share_link(tab)
    assert "/Quiz?" in link and "preset=channels-small" in link
    problems = [f"{page}: labels cut off: {labels}" for page, labels in clipped.items() if labels]
    problems += [
        f"{page}: grid tops {px} px apart per figure (squeezed into their columns)"
        for page, px in spread.items()
        if max(px, default=0) > 2
    ]
    assert not problems, "\n".join(problems)


# --- a click selects a cell ----------------------------------------------------------------------


def test_clicking_an_output_cell_selects_it(tab: Page, app_url):
    goto(tab, f"{app_url}/Forward")
    formula = tab.get_by_test_id("player-formula").first
    with rerun(tab):
        click_cell(tab, "xaxis3", "yaxis3", 2, 3)  # the output y is the third panel
        # the player jumps to the cell's frame in the browser, in the click's own handler: its
        # sum is shown at once, not after the server's rerun
        assert "y₂₃ = " in formula.inner_text()
    expect(tab.get_by_text("Output cell y[2, 3]")).to_be_visible()
    assert "sel=y%3A2%3A3" in tab.url
    at_frame(tab, 2 * 4 + 3)
    # a cell of the padding ring selects too; the URL holds its array index (row 0, col 4)
    with rerun(tab):
        click_cell(tab, "xaxis", "yaxis", -1, 3)  # labelled indices: the top padding row is -1
    tab.wait_for_url(re.compile(r"sel=x%3A0%3A4"))
    assert_no_traceback(tab)


def test_only_vanishing_terms_are_grey(tab: Page, app_url):
    """y[2, 3] of the classroom preset: 0·1, 0·(−2), 0·(−1) read the padding; 8·2, 4·2 do not."""
    goto(tab, f"{app_url}/Forward?sel=y:2:3")
    expect(tab.get_by_text("Output cell y[2, 3]")).to_be_visible()
    tab.wait_for_function("() => document.querySelectorAll('.katex-display').length >= 2")
    symbolic, numeric = tab.evaluate(GREY_TEXT)[:2]
    assert symbolic and numeric, "no grey terms drawn"
    assert "x" not in symbolic, f"real input cells drawn grey: {symbolic!r}"
    assert "8" not in numeric and "4" not in numeric, f"real products drawn grey: {numeric!r}"


# --- controls ------------------------------------------------------------------------------------


def test_a_control_change_costs_one_run(tab: Page, app_url):
    """One stride change, one run of the page: nothing on it asks for another (the screen-size
    reporter once went on comparing with the size of its first call and re-sent the size after
    every resize: a second full run after nearly every change, here at 1280×1400). Counted once
    the page has settled again: the reporter has measured the redrawn page and found it fitted."""
    reruns = []

    def on_socket(ws):
        ws.on("framesent", lambda frame: reruns.append(frame) if asks_for_a_run(frame) else None)

    tab.on("websocket", on_socket)
    try:
        goto(tab, f"{app_url}/Forward")
        before = len(reruns)
        stride = stride_input(tab)
        stride.focus()
        with rerun(tab):
            stride.press("ArrowLeft")
        animation(tab, steps=49)
        settled(tab)
        assert len(reruns) - before == 1
    finally:
        tab.remove_listener("websocket", on_socket)


def test_stride_change_redraws_and_survives_a_page_switch(tab: Page, app_url):
    goto(tab, f"{app_url}/Forward")
    assert animation(tab)[1] == 16
    stride = stride_input(tab)
    stride.focus()
    with rerun(tab):
        stride.press("ArrowLeft")  # stride 2 → 1: a 7×7 output, 49 steps
    expect(stride).to_have_value("1")
    assert animation(tab) == (48, 49)  # opens on the full result
    assert "sh=1" in tab.url
    expect(tab.get_by_text(re.compile(r"7×7, stride 1×1"))).to_have_count(1)
    link = tab.locator("[data-testid='stSidebar'] a", has_text="Input gradient")
    # the link carries the view (a click taken as a plain navigation opens what it says): it
    # says stride 1 once the run has redrawn the sidebar (one run clicked an older link and
    # opened the preset's stride 2)
    expect(link).to_have_attribute("href", re.compile(r"[?&]sh=1\b"))
    with rerun(tab):
        link.click()
    tab.wait_for_url(re.compile(r"/Input_gradient\?"))  # a page switch: its URL with its run
    expect(tab.locator(".js-plotly-plot")).to_have_count(2)
    expect(stride_input(tab)).to_have_value("1")
    assert "sh=1" in tab.url
    expect(tab.get_by_text("∂L/∂y arrives from the next layer: 7×7").first).to_be_visible()


def test_number_fields_show_their_numbers_and_refuse_empty_or_out_of_range(tab: Page, app_url):
    """Every sidebar number field has room for its number (a clear button covered the narrow
    padding fields'); emptied or typed past its range, a field is refused with a toast and shows
    the layer's number again (emptied, it became its minimum; past the range, it kept 500)."""
    goto(tab, f"{app_url}/Forward?preset=classroom")
    room = tab.locator("[data-testid='stSidebar'] input[type='number']").evaluate_all(
        """inputs => inputs.filter(i => i.offsetParent).map(i => {
            const css = getComputedStyle(i);
            return i.clientWidth - parseFloat(css.paddingLeft) - parseFloat(css.paddingRight);
          })"""
    )
    assert len(room) >= 8 and min(room) >= 16, room  # two digits of the sidebar's font
    field = tab.get_by_label("Input height")
    for typed, says in (("", "needs a number"), ("500", "takes 1 to")):
        field.fill(typed)
        with rerun(tab):
            field.press("Enter")
        expect(tab.get_by_text(f"Input height {says}")).to_be_visible()
        expect(field).to_have_value("7")
    assert "H=7" in tab.url


def test_a_refused_value_is_said_at_the_projectors_size(tab: Page, app_url):
    """Presentation mode: a refused field's toast was 14 px text beside 21.6 px page text, and at
    the page's size it wrapped into a box cut to "view more"; now one line at the page's size."""
    tab.set_viewport_size({"width": 1280, "height": 720})  # the projector's
    goto(tab, f"{app_url}/Forward?preset=recitation-s2&pres=1")
    tab.get_by_test_id("stExpandSidebarButton").click()
    field = tab.get_by_label("Input height")
    field.fill("500")
    with rerun(tab):
        field.press("Enter")
    toast = tab.get_by_test_id("stToastText").filter(has_text="Input height takes 1 to")
    expect(toast).to_be_visible()
    size, lines = toast.evaluate(
        """t => { const p = t.querySelector('p'), s = parseFloat(getComputedStyle(p).fontSize);
          return [s, p.getBoundingClientRect().height / s]; }"""
    )
    page_text = tab.evaluate(
        "() => parseFloat(getComputedStyle(document.documentElement).fontSize) * 1.35"
    )
    assert size >= page_text - 0.5 and lines < 2, (size, lines)
    expect(tab.get_by_test_id("stToastViewButton")).to_have_count(0)


def test_a_copied_link_reproduces_the_view(tab: Page, app_url):
    goto(tab, f"{app_url}/Forward")
    stride = stride_input(tab)
    stride.focus()
    # a click into a run still going, under CI load, once left stride 2 and no selection (see
    # the closing note of 2026-11-23): each action waits for its run
    with rerun(tab):
        stride.press("ArrowRight")  # stride 3: 3×3 outputs
    assert animation(tab)[1] == 9
    expect(stride_input(tab)).to_have_value("3")
    with rerun(tab):
        click_cell(tab, "xaxis3", "yaxis3", 1, 2)
    expect(tab.get_by_text("Output cell y[1, 2]")).to_be_visible()
    link = share_link(tab)
    assert link.startswith(app_url) and "sh=3" in link and "sel=y%3A1%3A2" in link
    view, shown = figure_fingerprint(tab), formulas(tab)

    goto(tab, link)  # a new session that knows only the link
    expect(tab.get_by_text("Output cell y[1, 2]")).to_be_visible()
    expect(stride_input(tab)).to_have_value("3")
    assert figure_fingerprint(tab) == view
    assert formulas(tab) == shown


def share_link(page: Page) -> str:
    """The address of the page's "Share this view" link."""
    box = page.get_by_test_id("stCaptionContainer").filter(has_text="Share this view")
    return box.get_by_role("link").get_attribute("href")


def figure_fingerprint(page: Page) -> dict:
    """What the figure shows: its traces' values, the animation's steps and position."""
    return page.evaluate(
        probing(
            """() => { const gd = document.querySelector('.js-plotly-plot');
            return {data: JSON.stringify(gd.data.map(d => [d.name, d.z, d.text])),
                    frames: cvPlotly.frameCount(gd), meta: JSON.stringify(gd.layout.meta)}; }"""
        )
    )


def formulas(page: Page) -> list[str]:
    return page.locator(".katex-display annotation").all_inner_texts()


# --- exports -------------------------------------------------------------------------------------


def test_png_svg_and_gif_exports_download(tab: Page, app_url):
    goto(tab, f"{app_url}/Forward")  # at rest: one clicked in a screen-fitting rerun was lost
    with tab.expect_download(timeout=SETTLE_MS) as png:
        tab.get_by_role("button", name="PNG for slides").click()
    assert re.fullmatch(r"convviz-[\w-]*forward\.png", png.value.suggested_filename)
    data = Path(png.value.path()).read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000

    with tab.expect_download(timeout=SETTLE_MS) as svg:
        tab.get_by_role("button", name="SVG").click()
    assert re.fullmatch(r"convviz-[\w-]*forward\.svg", svg.value.suggested_filename)
    root = ET.parse(svg.value.path()).getroot()
    assert root.tag in ("svg", "{http://www.w3.org/2000/svg}svg")

    with tab.expect_download(timeout=SETTLE_MS) as gif:
        tab.get_by_role("button", name="GIF animation").click()
    assert re.fullmatch(r"convviz-[\w-]*forward\.gif", gif.value.suggested_filename)
    with Image.open(gif.value.path()) as im:
        assert im.format == "GIF" and im.n_frames == 16  # one frame per window position
    assert_no_traceback(tab)


# --- bad input -----------------------------------------------------------------------------------


def test_bad_links_are_explained_not_crashed(tab: Page, app_url):
    # two malformed values (ignored, with a warning each) and a kernel wider than the input
    goto(tab, f"{app_url}/?H=abc&kH=99&W=2&kW=5&pad=valid", charts=2)
    alerts = tab.locator("[data-testid='stAlert']")
    expect(alerts.filter(has_text="H=abc is not a whole number")).to_have_count(1)
    too_large = "kH=99 is too large: kH must be a whole number in 1…11"
    expect(alerts.filter(has_text=too_large)).to_have_count(1)
    expect(alerts.filter(has_text="spans 5 columns")).to_have_count(1)
    expect(alerts.filter(has_text="padded input has only 2")).to_have_count(1)
    # the last valid (here: the default) view is still drawn, and nothing crashed
    expect(tab.get_by_text("out_H = floor((7 + 1 + 1 - 1·(3-1) - 1) / 2) + 1 = 4")).to_be_visible()
    assert_no_traceback(tab)


# --- timings (printed and written to artifacts; only a very loose bound is asserted) ------------


def test_timings(tab: Page, app_url, artifacts):
    """Print (and write to artifacts) the load and rerun times; each stride change must redraw
    the animation with its new step count (no timed assertion: shared, noisy machines)."""
    first_chart = goto(tab, f"{app_url}/Forward")
    stride = stride_input(tab)
    stride.focus()
    latencies = []
    for i in range(10):  # stride 2 ⇄ 1 at the default size: 16 ⇄ 49 animation steps
        key, steps, value = ("ArrowLeft", 49, "1") if i % 2 == 0 else ("ArrowRight", 16, "2")
        # each key pressed at rest (one pressed while the run still redrew the slider once went
        # to the page instead, the player's ← →: the stride never changed)
        with rerun(tab):
            t0 = time.perf_counter()
            stride.press(key)
            animation(tab, steps=steps)  # slow under load is a figure, not a fault
            latencies.append(time.perf_counter() - t0)
        expect(stride).to_have_value(value)
    median = statistics.median(latencies)
    lines = [
        f"first goto of the module → page settled (cold browser context): {LOADS[0]:.2f} s",
        f"goto → page settled, Forward, in a tab that has loaded the app: {first_chart:.2f} s",
        f"goto → page settled, median of this module's {len(LOADS)} gotos: "
        f"{statistics.median(LOADS):.2f} s",
        f"stride change → updated chart, median of {len(latencies)}: {median * 1000:.0f} ms",
        "  each: " + ", ".join(f"{t * 1000:.0f}" for t in latencies) + " ms",
        "load average (1, 5, 15 min) at the end: "
        + ", ".join(f"{x:.1f}" for x in os.getloadavg())
        + f" on {os.cpu_count()} cores",
    ]
    (artifacts / "browser_timings.txt").write_text("\n".join(lines) + "\n")
    print("\n" + "\n".join(lines))  # figures, not assertions: these machines are shared

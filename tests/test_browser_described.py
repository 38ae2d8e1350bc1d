"""Every view said and every view as data (issue 41), in Chromium: each page's accessibility tree
(`aria_snapshot`, presentation and normal) holds its figures' short text alternatives and their
long descriptions (a stage's: the ones `describe` writes for the layer computed here), each tied
to its figure; a grid's CSV download parses to the grid's numbers; the offline deck says its
stages the same way, pauses and starts over without hover, and walks its grids by keyboard; and
on the Weight gradient page a keyboard finds ∂L/∂w[0, 0] and its products in no more than twice
the actions a mouse takes.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from browser_helpers import click_cell
from keygrid import focused, preset_subject, written
from live import goto, rerun
from playwright.sync_api import Page, expect

import convviz
from convviz.export.html import deck_stages, lecture_html
from convviz.export.story import Story
from convviz.model.lecture import LECTURE
from convviz.render.story.describe import describe

pytestmark = pytest.mark.browser

# (page path, preset, the stage it shows or None); the stages the stage view draws name their
# figure by the stage's short description, the others (Learning, Two layers) by what it shows
PAGES = [
    ("", "recitation-s2", None),
    ("Forward", "recitation-s2", "forward"),
    ("Input_gradient?step=3", "keras-same", "pad"),
    ("Weight_gradient", "recitation-s2", "weight-grad"),
    ("Learning?step=1", "recitation-s2", "loss"),
    ("Two_layers?step=3", "recitation-s2", "handover"),
    ("Channels", "channels-small", None),
    ("Matrix", "recitation-s2", None),
    ("Quiz", "recitation-s2", None),
]
STAGE_VIEW = ("forward", "pad", "weight-grad")
SAMPLE = [(*page, i % 2) for i, page in enumerate(PAGES)]
REST = [(*page, 1 - i % 2) for i, page in enumerate(PAGES)]

# every figure's name and the long description tied to it (aria-describedby)
FIGURES = """() => [...document.querySelectorAll('[role=figure]')].map(f => {
  const long = document.getElementById(f.getAttribute('aria-describedby') || '');
  return {name: f.getAttribute('aria-label') || '', long: long ? long.textContent : null}; })"""


def _plain(snapshot: str) -> str:
    """The snapshot's text with YAML's quoting undone (its strings hold no quote of ours)."""
    return snapshot.replace("''", "'")


def _check(tab: Page, app_url: str, path: str, preset: str, stage: str | None, pres: int):
    sep = "&" if "?" in path else "?"
    goto(tab, f"{app_url}/{path}{sep}preset={preset}&pres={pres}")
    snapshot = _plain(tab.locator("body").aria_snapshot())
    figures = tab.evaluate(FIGURES)
    described = [f for f in figures if f["long"]]
    assert described, f"no figure of {path} is described"
    for fig in figures:
        assert fig["name"] and f'figure "{fig["name"]}"' in snapshot, fig["name"]
    for fig in described:
        long = fig["long"].removeprefix("In words. ")
        assert long in snapshot, long
    if stage is not None:  # a stage's: the words written here for the layer computed here
        told = describe(preset_subject(preset), LECTURE.stage(stage))
        if stage in STAGE_VIEW:
            assert any(f["name"].startswith(told.short) for f in figures), told.short
        assert told.long in [f["long"].removeprefix("In words. ") for f in described]


@pytest.mark.parametrize(("path", "preset", "stage", "pres"), SAMPLE)
def test_every_page_holds_its_figures_short_and_long_descriptions(
    tab, app_url, path, preset, stage, pres
):
    _check(tab, app_url, path, preset, stage, pres)


@pytest.mark.full
@pytest.mark.parametrize(("path", "preset", "stage", "pres"), REST)
def test_every_page_holds_its_descriptions_in_the_other_mode(
    tab, app_url, path, preset, stage, pres
):
    _check(tab, app_url, path, preset, stage, pres)


def test_a_grids_csv_download_parses_to_its_numbers(tab: Page, app_url):
    goto(tab, f"{app_url}/Forward?preset=keras-same")
    with rerun(tab):
        tab.get_by_text("The grids' numbers as tables").click()
    tables = tab.locator(".cv-table table")
    expect(tables).to_have_count(3)
    expect(tables.first.locator("caption")).to_contain_text("cells marked: grey, 16 padding")
    s = preset_subject("keras-same")
    for i, want in ((0, s.layer.forward.x_padded[0, 0]), (2, s.layer.forward.y[0, 0])):
        with tab.expect_download() as download:
            tab.locator(".cv-table button[data-cv-csv]").nth(i).click()
        with open(download.value.path(), encoding="utf-8") as file:
            rows = list(csv.reader(io.StringIO(file.read())))
        assert download.value.suggested_filename.endswith(".csv")
        numbers = np.array([[float(v) for v in row[1:]] for row in rows[1:]])
        assert np.array_equal(numbers, want), (rows, want)
        (oy, ox) = (-1, -1) if i == 0 else (0, 0)  # x̃'s ring is row and column −1
        assert rows[0][1:] == [str(ox + c) for c in range(want.shape[1])]
        assert [row[0] for row in rows[1:]] == [str(oy + r) for r in range(want.shape[0])]


# --- the offline deck ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    story = Story.of("recitation-s2")
    path = tmp_path_factory.mktemp("deck") / "lecture.html"
    path.write_text(lecture_html(story), encoding="utf-8")
    return story, path


DECK_PLAYER = """() => { const p = window.__convviz.players.get('chart_dilate');
  return [p.playing(), p.current()]; }"""


def test_the_deck_says_its_stages_pauses_starts_over_and_walks_its_grids(tab: Page, deck):
    story, path = deck
    stages = deck_stages(story)
    dilate = [s.key for s in stages].index("dilate")
    tab.goto(f"{path.as_uri()}#{dilate + 1}")
    tab.wait_for_function("() => window.__convviz && window.__convviz.players.get('chart_dilate')")
    told = describe(story, LECTURE.stage("dilate"))
    shown = tab.locator("section.stage.shown")
    expect(shown.get_by_role("figure", name=told.short)).to_have_count(1)
    assert told.long in _plain(shown.aria_snapshot())
    # its grids by keyboard: the page's first Tab stop, the skip link, then the shown stage's grid
    tab.keyboard.press("Tab")
    expect(tab.locator("#cv-skip")).to_be_focused()
    tab.keyboard.press("Enter")
    cell = focused(tab)
    assert cell["role"] == "gridcell" and cell["name"].startswith("∂L/∂y[n=0, k=0] → dilated row 0")
    # it plays as it arrives (a projector): its pause is on screen, no hover or focus needed
    pause = shown.locator("[data-testid='player'] button.play")
    expect(pause).to_have_text("❚❚ Pause")
    expect(pause).to_be_visible()
    pause.click()
    expect(pause).to_have_text("▶ Play")
    assert tab.evaluate(DECK_PLAYER)[0] is False
    shown.locator("[data-testid='player'] button", has_text="|◀").click()  # starts over
    assert tab.evaluate(DECK_PLAYER) == [False, 0]


# --- measured: the keyboard's path against the mouse's ----------------------------------------


def test_a_keyboard_finds_a_weights_gradient_and_its_products_in_at_most_twice_the_mouses_actions(
    tab: Page, app_url
):
    url = f"{app_url}/Weight_gradient?preset=recitation-s2"
    s = preset_subject("recitation-s2")
    formula = s.formula("grad_w", (0, 0))
    x, w, g = s.layer.forward.x, s.layer.forward.w, s.layer.input_grad.grad_out
    value = convviz.conv2d_weight(x, w.shape, g, **s.spec.kwargs())[0, 0, 0, 0]  # the oracle
    assert value == formula.value
    # the mouse: a click on the cell, and its sum is written under the figure
    goto(tab, url)
    clicks = 0
    with rerun(tab):
        click_cell(tab, "xaxis3", "yaxis3", 0, 0)
        clicks += 1
    expect(
        tab.get_by_role("heading", name="Weight cell [0, 0] of filter k=0, channel c=0")
    ).to_be_visible()
    # the keyboard: from the page's top, the skip link to the figure's grid
    goto(tab, url)
    presses = 0
    for key in ("Tab", "Enter"):
        tab.keyboard.press(key)
        presses += 1
    cell = tab.locator(":focus")
    expect(cell).to_have_role("gridcell")
    expect(cell).to_have_accessible_name(
        f"∂L/∂w[k=0, c=0] row 0, column 0: {written(value)}, {formula.words()}"
    )
    assert presses <= 2 * clicks, (presses, clicks)

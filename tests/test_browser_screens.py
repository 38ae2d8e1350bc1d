"""Presentation mode on a projector, checked on the drawn page: every preset × page at 1280×720
and at 1920×1080 (sidebar folded). The animation and its player fit the screen; small layers
get big cells with big numbers; no text overlaps other text or leaves its figure. Screenshots
go to artifacts/screens/ (look at them).

The whole matrix takes ~10 minutes of Chromium: `make test` draws a sample of it (`SAMPLE`: every
page, both sizes, four presets), `make ci` all of it (the other cases are marked `full`). Every
cell of the matrix is also checked as the figures the pages send (tests/test_screens_figures.py).
"""

from __future__ import annotations

import itertools
import time

import pytest
from live import goto, open_tab
from playwright.sync_api import Browser, Page, expect

from convviz.model.lecture import LECTURE
from convviz.model.presets import PRESETS
from convviz.render.plotly.adapter import probing

pytestmark = pytest.mark.browser

SIZES = ((1280, 720), (1920, 1080))
# The presets `make test` draws at each size: the lecture's example and the biggest layer (100×100,
# 10 filters) on the laptop-sized projector; the default and a multi-channel layer on the big one.
SAMPLE = {
    (1280, 720): ("recitation-s2",),
    (1920, 1080): ("classroom",),
}


def size_id(size) -> str:
    return f"{size[0]}x{size[1]}"


def matrix(sizes, presets, sample) -> list:
    """(size, preset) cases; those not in sample[size] are marked `full` (`make ci` only)."""
    return [
        pytest.param(
            size,
            key,
            id=f"{size_id(size)}-{key}",
            marks=() if key in sample.get(size, ()) else pytest.mark.full,
        )
        for size in sizes
        for key in presets
    ]


# (name, url path, whether its main figure is an animation with a player)
PAGES = (
    ("overview", "", False),
    ("forward", "Forward", True),
    ("input_gradient", "Input_gradient", True),  # stage 5: the full correlation, animated
    ("weight_gradient", "Weight_gradient", True),
    ("channels", "Channels", False),
)
# the pages drawn under a stage bar (the lecture gives them several stages): 36 / 16 px
STAGED = {
    name
    for name, path, _ in PAGES
    if path
    and len(LECTURE.on_page(next(p for p in LECTURE.pages() if p.endswith(f"_{path}.py")))) > 1
}

# Geometry of the drawn page: every chart's box, its panels' cell size, its annotations' boxes,
# the heatmaps' number sizes, the first player's box and the first export row's.
MEASURE = probing("""() => {
  const box = el => { const r = el.getBoundingClientRect();
                      return [r.left, r.top, r.right, r.bottom]; };
  const charts = Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => {
    const cells = cvPlotly.axisNames(gd, 'x').map(k => {
      const ax = cvPlotly.axis(gd, k), cols = Math.abs(ax.range[1] - ax.range[0]);
      const ya = cvPlotly.axis(gd, k.replace('x', 'y')), rows = Math.abs(ya.range[1] - ya.range[0]);
      return [ax.length / cols, cols, rows];
    });
    const fonts = gd.data.filter(d => d.type === 'heatmap' && d.text)
      .map(d => d.textfont && d.textfont.size);
    return {box: box(gd), cells, fonts,
            notes: Array.from(gd.querySelectorAll('g.annotation')).map(box)};
  });
  const player = document.querySelector('[class*="st-key-player_"]');
  const host = player && [...player.querySelectorAll('*')].find(e => e.shadowRoot);
  const formula = host && host.shadowRoot.querySelector('[data-testid=player-formula]');
  const exports = document.querySelector('[class*="st-key-cv_exports"]');
  const px = el => parseFloat(getComputedStyle(el).fontSize);
  return {charts, player: player ? box(player) : null, exports: exports ? box(exports) : null,
          height: window.innerHeight, width: window.innerWidth,
          rem: px(document.documentElement), formula: formula ? px(formula) : null};
}""")


def _overlap(a, b) -> bool:
    return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


def problems_of(
    view: dict,
    animated: bool,
    storyboard: bool = False,
    one_view: bool = False,
    cells: bool = True,
) -> list[str]:
    """What breaks the screen rule on one drawn page (an empty list when it holds).

    Small grids (up to 9 rows and 9 columns) keep 48 px cells with 20 px numbers; the
    storyboard's stage bar takes the room of 10 px a cell: 36 / 16 px. A bigger screen grows the
    page, figures, player and formula alike (its rem: 16 px at 1280×720, 24 px at 1920×1080), and
    these sizes with it.
    one_view : the page shows one figure sized to the screen (Channels): it ends on the screen.
    cells : check the cells' size (the rule is for 1280 px and wider screens).
    """
    out = []
    main = view["charts"][0]
    grown = max(16, min(view["width"] / 80, view["height"] / 45, 32))  # as presentation.css
    if abs(view["rem"] - grown) > 0.5:
        out.append(f"the page's rem is {view['rem']} px, not {grown:.1f}")
    scale = view["rem"] / 16
    if one_view and main["box"][3] > view["height"]:
        out.append(f"figure bottom {main['box'][3]:.0f} below the screen")
    for chart in view["charts"]:
        for a, b in itertools.combinations(chart["notes"], 2):
            if _overlap(a, b):
                out.append(f"text overlaps text at {a} / {b}")
        for note in chart["notes"]:
            if note[0] < chart["box"][0] - 1 or note[2] > chart["box"][2] + 1:
                out.append(f"text leaves its figure at {note}")
        if chart["box"][2] > view["width"]:
            out.append("a figure is wider than the screen")
    if animated:
        if main["box"][3] > view["height"] or view["player"][3] > view["height"]:
            out.append(f"figure / player bottom {main['box'][3]:.0f} / {view['player'][3]:.0f}")
        top, bottom = view["exports"][1], view["exports"][3]
        if top < view["height"] < bottom:
            out.append(f"the export row is cut by the screen's edge ({top:.0f}-{bottom:.0f} px)")
        small = 9  # rows 48 px cells can fit, with the player
        rows = max(r for _, _, r in main["cells"])
        cols = max(c for _, c, _ in main["cells"])
        least, font = (36, 16) if storyboard else (47.5, 20)
        least, font = least * scale, font * scale
        if view["formula"] is not None and view["formula"] < 20 * scale:
            out.append(f"the player's formula is {view['formula']} px")
        if cells and rows <= small and cols <= 9:
            cell = min(px for px, _, _ in main["cells"])
            if cell < least:
                out.append(f"{cell:.1f} px cells")
            if min(main["fonts"]) < font:
                out.append(f"{min(main['fonts'])} px numbers")
    return out


@pytest.fixture(scope="module", params=SIZES, ids=size_id)
def screen(request, browser: Browser):
    """A tab of this size for the module (one per size: pytest groups the cases by it)."""
    width, height = request.param
    page = open_tab(browser, viewport={"width": width, "height": height})
    yield page, f"{width}x{height}"
    page.context.close()


def open_view(page: Page, url: str) -> dict:
    """Open a page, let it size itself to the screen (one rerun) and settle, and measure it."""
    goto(page, url)
    assert page.locator(".js-plotly-plot .main-svg").count() > 0
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    return page.evaluate(MEASURE)


@pytest.mark.parametrize(
    ("screen", "preset"), matrix(SIZES, [p.key for p in PRESETS], SAMPLE), indirect=["screen"]
)
def test_presentation_mode_holds_on_every_page(screen, app_url, artifacts, preset):
    page, size = screen
    folder = artifacts / "screens"
    folder.mkdir(exist_ok=True)
    problems = []
    for name, path, animated in PAGES:
        step = "&step=5" if name == "input_gradient" else ""
        t0 = time.perf_counter()
        view = open_view(page, f"{app_url}/{path}?preset={preset}&pres=1{step}")
        print(f"{size} {preset} {name}: {time.perf_counter() - t0:.1f} s")
        page.mouse.move(0, view["height"] - 1)
        page.screenshot(path=folder / f"{size}-{preset}-{name}.png")
        storyboard = name in STAGED
        one_view = name == "channels"
        problems += [f"{name}: {p}" for p in problems_of(view, animated, storyboard, one_view)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("preset", ["recitation-s2", "classroom", "dilation-2"])
def test_the_storyboards_still_shows_its_sum_on_the_first_screen(screen, app_url, preset):
    """Stage 1 (∂L/∂y: a still, no player) on a projector: under its figure, the sum the
    storyboard builds, in the two lines a player writes; both end on the first screen. Before,
    that screen held the grid alone and the formula began below its edge."""
    page, _ = screen
    view = open_view(page, f"{app_url}/Input_gradient?preset={preset}&pres=1&step=1")
    lines = page.locator(".st-key-cv_screen_still .cv-formula")
    expect(lines).to_contain_text("∂L/∂x")
    box = lines.bounding_box()
    assert view["charts"][0]["box"][3] <= box["y"] + 1
    assert box["y"] + box["height"] <= view["height"]
    assert not problems_of(view, animated=False)


@pytest.mark.parametrize("preset", ["recitation-s2", "classroom"])
def test_the_matrix_pages_first_figure_takes_the_first_screen(screen, app_url, preset):
    """The Matrix page on a projector: M ends the first screen and the grids under it start below
    its edge. Before, their top rows showed under M, cut in half by the screen's edge."""
    page, _ = screen
    view = open_view(page, f"{app_url}/Matrix?preset={preset}&pres=1")
    first, second = (chart["box"] for chart in view["charts"][:2])
    assert first[3] <= view["height"], "M ends on the first screen"
    assert second[1] >= view["height"], "the grids start below the screen's edge"


@pytest.mark.parametrize("preset", ["channels-small", "qa-channels", "recitation-s2"])
def test_the_quizs_grids_fill_the_first_screen(screen, app_url, preset):
    """The Quiz on a projector: every grid its question gives ends on the first screen, below the
    question (and its note). channels-small's ∂L/∂x question gives w and ∂L/∂y of 3 filters:
    before, a row each, sized for a whole screen, so the second was cut by the screen's edge and
    the third below it; they now stand two to a line, cells alike (≥ 32 px at 1280×720).
    qa-channels' note pushed its grids below the edge."""
    page, _ = screen
    view = open_view(page, f"{app_url}/Quiz?preset={preset}&pres=1&quiz=0&qn=0")
    assert not problems_of(view, animated=False)
    for chart in view["charts"]:
        assert chart["box"][3] <= view["height"], f"a figure ends at {chart['box'][3]:.0f} px"
    numbered = [px for chart in view["charts"] for px, cols, rows in chart["cells"] if rows <= 9]
    assert min(numbered) >= 32 * view["rem"] / 16


OTHER_SIZES = ((1024, 768), (1366, 768))


@pytest.mark.parametrize(
    ("screen", "preset"),
    matrix(
        OTHER_SIZES,
        ("recitation-s2", "classroom", "channels-small"),
        {size: ("recitation-s2",) for size in OTHER_SIZES},
    ),
    indirect=["screen"],
)
def test_other_projectors_keep_the_figure_and_player_on_the_screen(screen, app_url, preset):
    """A 4:3 projector's 1024×768 (the player's bar and the storyboard's stage bar each take two
    rows there) and a 1366×768 laptop: the main figure and its player end on the screen, nothing
    overlaps, no export row is cut. Before, both bars' second rows pushed the formula off it."""
    page, _ = screen
    problems = []
    for name, path, animated in PAGES[1:4]:  # Forward, the storyboard, Weight gradient
        step = "&step=5" if name == "input_gradient" else ""
        view = open_view(page, f"{app_url}/{path}?preset={preset}&pres=1{step}")
        storyboard = name in STAGED
        found = problems_of(view, animated, storyboard, cells=False)
        problems += [f"{preset} {name}: {p}" for p in found]
    assert not problems, "\n".join(problems)

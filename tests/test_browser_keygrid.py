"""Every grid a keyboard grid (issue 41), in Chromium against `streamlit run`: one Tab from
before a figure lands in it, the arrow keys reach every cell of its result (y, ∂L/∂x, ∂L/∂w, the
loss's ∂L/∂y, layer 1's ∂L/∂x on the Two layers page), and each cell the keyboard is on is a grid
cell named by a sentence holding its value and its sum in words, both the engine's (computed
here, not read from the page); Enter shows the formula box a click shows; Escape leaves; a click
never moves the focus into a grid; a clicker's PageDown still moves the lecture from a grid.
`make test` walks recitation-s2's Forward and Input gradient; `make ci` five presets × the five
pages of the lecture.
"""

from __future__ import annotations

import itertools
import re

import pytest
from browser_helpers import click_cell
from keygrid import focused, index, preset_subject, tab_into, walk_last_grid, written
from live import goto, rerun
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def _expected(case: str, s) -> dict[str, str]:
    """{"key:row:col": what its sentence says after its row and column} for the cells of the
    case's result grid, from the layer computed here."""
    lay, out = s.layer, {}
    if case == "forward":
        fw = lay.forward
        for r, c in itertools.product(*map(range, fw.spec.out_size)):
            words = s.formula("y", (r, c)).words()
            out[f"y:{r}:{c}"] = f"row {r}, column {c}: {written(fw.y[0, 0, r, c])}, {words}"
    elif case in ("mask", "chain-mask"):
        ig = (s.layer_one.layer if case == "chain-mask" else lay).input_grad
        sums = s.layer_one if case == "chain-mask" else s
        for r, c in itertools.product(*map(range, ig.spec.in_size)):
            words = sums.formula("grad_x", (r, c)).words()
            value = written(ig.grad_x[0, 0, r, c])
            out[f"grad_x:{r}:{c}"] = f"row {index(r)}, column {index(c)}: {value}, {words}"
    elif case == "weight-grad":
        wg = lay.weight_grad
        for r, c in itertools.product(*map(range, wg.spec.kernel_size)):
            words = s.formula("grad_w", (r, c)).words()
            out[f"grad_w:{r}:{c}"] = (
                f"row {r}, column {c}: {written(wg.grad_w[0, 0, r, c])}, {words}"
            )
    elif case == "loss":
        g = s.experiment.step.before.grad_out
        for r, c in itertools.product(*map(range, lay.forward.spec.out_size)):
            out[f"grad_out:{r}:{c}"] = f"row {r}, column {c}: {written(g[0, 0, r, c])}"
    return out


# (case, its page and stage, its chart's key, the last grid's shape from the layer)
CASES = {
    "forward": ("Forward", "chart_forward", lambda spec: spec.out_size),
    "mask": ("Input_gradient?step=6", "chart_stage_mask", lambda spec: spec.padded_size),
    "weight-grad": ("Weight_gradient", "chart_weight-grad", lambda spec: spec.kernel_size),
    "loss": ("Learning?step=1", "chart_stage_loss", lambda spec: spec.out_size),
    "chain-mask": ("Two_layers?step=8", "chart_stage_chain-mask", lambda spec: spec.padded_size),
}


def _check_walk(tab: Page, app_url: str, preset: str, case: str) -> None:
    path, chart, shape_of = CASES[case]
    sep = "&" if "?" in path else "?"
    goto(tab, f"{app_url}/{path}{sep}preset={preset}")
    s = preset_subject(preset)
    first = tab_into(tab, chart)
    assert first["role"] == "gridcell", f"one Tab did not reach the figure's grid: {first}"
    seen = walk_last_grid(tab, shape_of(s.spec))
    expected = _expected(case, s)
    reached = {cell["cell"]: cell for cell in seen}
    assert set(expected) <= set(reached), f"not reached: {set(expected) - set(reached)}"
    for key, words in expected.items():
        cell = reached[key]
        assert cell["role"] == "gridcell"
        assert cell["name"].endswith(words) or f" {words}" in cell["name"], (key, cell["name"])


@pytest.mark.parametrize("case", ["forward", "mask"])
def test_one_tab_and_the_arrows_reach_every_cell_each_named_by_its_value_and_sum(
    tab: Page, app_url, case
):
    _check_walk(tab, app_url, "recitation-s2", case)


@pytest.mark.full
@pytest.mark.parametrize(
    ("preset", "case"),
    itertools.product(("recitation-s1", "recitation-s2", "d2l", "keras-same", "classroom"), CASES),
)
def test_every_grid_is_walked_on_every_page_of_the_lecture(tab: Page, app_url, preset, case):
    _check_walk(tab, app_url, preset, case)


def _formula_box(page: Page) -> tuple[list[str], list[str]]:
    """The page's formula box as it reads: its headings and the LaTeX of its formulas."""
    heads = page.locator("h2").all_inner_texts()
    tex = page.locator("[data-testid='stMarkdownContainer'] annotation").all_text_contents()
    return heads, tex


def test_enter_shows_the_formula_box_a_click_shows_and_the_keyboard_stays(tab: Page, app_url):
    url = f"{app_url}/Forward?preset=recitation-s2"
    goto(tab, url)
    with rerun(tab):
        click_cell(tab, "xaxis3", "yaxis3", 0, 0)  # y[0, 0], the result's first cell
    clicked = _formula_box(tab)
    assert focused(tab)["role"] != "gridcell", "a click moved the focus into the grid"
    goto(tab, url)
    assert tab_into(tab, "chart_forward")["cell"] == "y:0:0"  # nothing selected: the result's first
    with rerun(tab):
        tab.keyboard.press("Enter")
    assert _formula_box(tab) == clicked
    assert "Output cell y[0, 0]" in clicked[0]
    assert focused(tab)["cell"] == "y:0:0", "the keyboard left the grid after its selection"
    tab.keyboard.press("ArrowRight")
    assert focused(tab)["cell"] == "y:0:1"
    tab.keyboard.press("Escape")  # leaves the grid
    assert focused(tab)["role"] != "gridcell"


def test_a_grids_keys_are_its_own_and_a_clickers_move_the_lecture(tab: Page, app_url):
    goto(tab, f"{app_url}/Input_gradient?preset=recitation-s2&step=6")
    tab_into(tab, "chart_stage_mask")
    before = tab.evaluate("() => [...window.__convviz.players.values()][0].current()")
    for key in ("ArrowRight", "Home", "End", "ArrowLeft"):
        tab.keyboard.press(key)
    # the arrows and Home/End moved the grid's cell, not the animation's frame
    assert tab.evaluate("() => [...window.__convviz.players.values()][0].current()") == before
    assert focused(tab)["role"] == "gridcell"
    with rerun(tab):
        tab.keyboard.press("PageDown")  # the clicker's: the next stage, the whole pass
    assert re.search(r"step=7\b", tab.url), tab.url
    # typing in a field: no key of a grid acts (the sidebar's seed keeps the keyboard)
    field = tab.locator("[data-testid='stSidebar'] input[aria-label='Seed']")
    field.focus()
    for key in ("ArrowRight", "Home", "End"):
        field.press(key)
    expect(field).to_be_focused()

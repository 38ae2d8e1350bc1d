"""Every page readable without presentation mode: on the figures each page sends (AppTest, no
browser), at a laptop's 1280 px (the sidebar open: an 820 px column) and on a tablet (768×1024,
1024×768), every stage of every page draws its numbered grids (up to `max_text_cells` a side)
with cells of at least 12 px, and no figure is wider than the column (five grids that cannot stand
side by side wrap into rows: `geometry._wrapped`). Every preset whose grids show numbers (not
qa-channels: 5 × 100×100, read through its close-ups) at 1280 px; two on the tablets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from convviz.model.lecture import LECTURE
from convviz.model.pages import PAGES
from convviz.model.presets import PRESETS
from convviz.render.theme import THEME
from convviz.ui.controls import STATE
from convviz.ui.viewport import VIEWPORT

pytestmark = pytest.mark.apptest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
LEAST_PX = 12
# screen → the main column (the sidebar open, as Chromium measures it: 1024 px leaves 564, under
# the phone's stacking width), the window's height, the rem
SCREENS = {"1280x720": (820, 720, 16.0), "768x1024": (736, 1024, 16.0),
           "1024x768": (564, 768, 16.0)}  # fmt: skip
NUMBERED = [p.key for p in PRESETS if p.key != "qa-channels"]
CASES = [(preset, "1280x720") for preset in NUMBERED] + [
    (preset, screen) for preset in ("recitation-s2", "classroom") for screen in list(SCREENS)[1:]
]


def stops(spec) -> list[tuple[str, int]]:
    """Every page of the sidebar and every stage of it this layer has: (page, step)."""
    out = []
    for page, _, _ in PAGES:
        stages = LECTURE.on_page(page, spec)
        out += [(page, LECTURE.step_of(s)) for s in stages] or [(page, 1)]
    return out


def small_cells(fig: dict, most: int) -> list[str]:
    """The numbered grids of a figure drawn with cells under LEAST_PX: each square-celled panel
    (its y axis anchored to its x) up to `most` cells a side."""
    lay = fig["layout"]
    plot_w = lay["width"] - lay["margin"]["l"] - lay["margin"]["r"]
    out = []
    for name, ax in lay.items():
        ya = lay.get("y" + name[1:], {})
        if not (name.startswith("xaxis") and "range" in ax and ya.get("scaleanchor")):
            continue
        cols = abs(ax["range"][1] - ax["range"][0])
        rows = abs(ya["range"][1] - ya["range"][0])
        cell = (ax["domain"][1] - ax["domain"][0]) * plot_w / cols
        if max(rows, cols) <= most and cell < LEAST_PX:
            out.append(f"{name}: {rows:g}×{cols:g} cells of {cell:.1f} px")
    return out


@pytest.mark.parametrize(("preset", "screen"), CASES, ids=[f"{p}-{s}" for p, s in CASES])
def test_every_stage_of_every_page_draws_readable_grids(preset, screen):
    width, height, rem = SCREENS[screen]
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(preset=preset)
    at.session_state[VIEWPORT] = (width, height, rem)
    at.run()
    spec = next(p for p in PRESETS if p.key == preset).spec()
    problems = []
    for page, step in stops(spec):
        at.session_state[STATE]["step"] = step
        (at.switch_page(page) if page != "app.py" else at).run()
        assert not at.exception, (page, step, [e.value for e in at.exception])
        for i, chart in enumerate(at.get("plotly_chart")):
            fig = json.loads(chart.proto.spec)
            where = f"{page} step {step}, chart {i}"
            if fig["layout"]["width"] > width:
                problems.append(f"{where}: {fig['layout']['width']} px wide in a {width} column")
            problems += [f"{where}: {p}" for p in small_cells(fig, THEME.max_text_cells)]
    assert not problems, "\n".join(problems)


def test_the_check_finds_small_cells():
    """A figure drawn with 8 px cells fails it."""
    fig = {
        "layout": {
            "width": 100, "margin": {"l": 10, "r": 10},
            "xaxis": {"range": [-0.5, 9.5], "domain": [0, 1]},
            "yaxis": {"range": [9.5, -0.5], "domain": [0, 1], "scaleanchor": "x"},
        }
    }  # fmt: skip
    assert small_cells(fig, 24) == ["xaxis: 10×10 cells of 8.0 px"]

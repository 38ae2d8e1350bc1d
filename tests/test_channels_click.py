"""A click on a tile of the Channels page selects the slice the tile is (its k, its c).

The figure side (every clickable point of a tile carries that tile's indices) and the state side
(what those indices select) are checked here; the click itself, in Chromium, is in
tests/test_browser_channels.py (AppTest cannot simulate a plotly selection).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from convviz.engine.sweeps import channel_contributions
from convviz.model.fields import DEFAULTS
from convviz.model.state import picked_slice
from convviz.render.plotly.channels import CLICK_BLOCKS, CLICK_CELLS, heatmap_grid
from convviz.render.story.panels import channel_grids
from convviz.ui import controls
from convviz.ui.compute import compute_layer, value_key

APP = str(Path(__file__).resolve().parents[1] / "app.py")
CHANNELS = "pages/6_Channels.py"
LAYER = DEFAULTS | {"batch": 2, "cout": 3, "cin": 2}  # channels-small's counts


@pytest.mark.parametrize(
    "fields, row, col, picks",
    [
        (("k", "c"), 2, 1, {"k": 2, "c": 1}),  # a ∂L/∂w[k, c] tile
        ((None, "c"), 0, 1, {"c": 1}),  # an x[n, c] or ∂L/∂x[n, c] tile
        ((None, "k"), 0, 2, {"k": 2}),  # a filter's share of ∂L/∂x[n, c]
        ((None, "k"), 0, 3, {}),  # the sum's tile: no filter 3
        (("k", "c"), 3, 1, {"c": 1}),  # a row past C_out picks no filter
        (("n", None), 1, 5, {"n": 1}),
        (("n", None), 2, 0, {}),  # batch 2
        (("sel", "seed"), 0, 1, {}),  # not slice fields
        (("k", "c"), -1, -1, {}),
    ],
    ids=lambda v: str(v),
)
def test_a_tile_picks_the_slice_its_row_and_column_are(fields, row, col, picks):
    assert picked_slice(LAYER, fields, row, col) == picks


def _targets(fig) -> list:
    return [t for t in fig.data if t.type == "scatter"]


@pytest.mark.parametrize("size", [1, 3, CLICK_CELLS, CLICK_CELLS + 1, 100])
def test_every_point_of_a_tile_carries_that_tiles_indices(size):
    arrays = np.arange(3 * 2 * size * size, dtype=float).reshape(3, 2, size, size)
    rows, cols = ["k=0", "k=1", "k=2"], ["c=0", "c=1"]
    fig = heatmap_grid(arrays, rows, cols, click="grad_w")
    targets = _targets(fig)
    assert [t.type for t in fig.data[:6]] == ["heatmap"] * 6  # the heatmaps first, as before
    assert len(targets) == 6
    for t, (r, c) in zip(targets, np.ndindex(3, 2)):
        i = r * 2 + c + 1
        assert (t.xaxis, t.yaxis) == (f"x{'' if i == 1 else i}", f"y{'' if i == 1 else i}")
        assert {tuple(d) for d in t.customdata} == {("grad_w", r, c)}
        hover = t.hovertext if isinstance(t.hovertext, str) else t.hovertext[0]
        assert hover.endswith(f"click: show k={r} c={c}")
        side = size if size <= CLICK_CELLS else CLICK_BLOCKS
        assert len(t.x) == side * side
        # the targets' squares cover the tile's cells and stay inside it
        x, y = np.asarray(t.x), np.asarray(t.y)
        assert x.min() >= -0.5 and x.max() <= size - 0.5 and y.min() >= -0.5
        lo, hi = fig.layout[f"xaxis{'' if i == 1 else i}"].domain
        plot_px = fig.layout.width - fig.layout.margin.l - fig.layout.margin.r
        cell_px = (hi - lo) * plot_px / size
        assert t.marker.size >= (size / side) * cell_px * 0.99  # no gap between targets
    if size <= CLICK_CELLS:  # a target per cell: it answers the hover, with the cell's value
        assert all(h.hoverinfo == "skip" for h in fig.data[:6])
        assert targets[1].hovertext[0].startswith(f"k=0 c=1<br>[0, 0] = {1 * size * size:g}")


def test_no_click_no_targets_and_a_sum_column_is_not_a_filter():
    arrays = np.ones((1, 4, 3, 3))
    labels = ["from k=0", "from k=1", "from k=2", "Σ = ∂L/∂x"]
    assert not _targets(heatmap_grid(arrays, [""], labels))
    targets = _targets(heatmap_grid(arrays, [""], labels, click="sum_k", click_cols=3))
    assert [t.customdata[0][2] for t in targets] == [0, 1, 2]


def _label_slice(row_label: str, col_label: str) -> dict[str, int]:
    """What a tile's labels say it is ('k=1', 'from k=2', 'c=0')."""
    found = re.findall(r"\b([nkc])=(\d+)$", row_label) + re.findall(r"\b([nkc])=(\d+)$", col_label)
    return {field: int(index) for field, index in found}


def _page(view: str | None = None, **query: str) -> AppTest:
    """The Channels page; on a projector showing `view` (else the one it opens on)."""
    at = AppTest.from_file(APP, default_timeout=30)
    for name, value in query.items():
        at.query_params[name] = value
    at.switch_page(CHANNELS).run()
    if view is not None:
        at.segmented_control(key="channels_view").set_value(view)
    return at.run()


def _pick_with(state: dict, key: str, event, fields) -> None:
    """Run the page's click callback against a session of our own."""
    session = {controls.STATE: state, controls.PROBLEMS: ["a link problem"], key: event}
    original = controls.st
    controls.st = SimpleNamespace(session_state=session)
    try:
        controls._pick_slice(key, fields)
    finally:
        controls.st = original
    return session


def _fields(state: dict, projector: bool) -> dict:
    """What the page passes to a click on each grid: the slice fields of its rows and columns
    (on a projector, of the grid with its longer side across)."""
    lay = compute_layer(value_key(state))
    grids = channel_grids(lay, 0, state["c"], channel_contributions(lay.input_grad, 0, 0), 0)
    return {g.key: (g.across() if projector else g).fields for g in grids}


@pytest.mark.apptest
@pytest.mark.parametrize(
    "preset, pres, view, shown",
    [
        ("channels-small", "0", None, ["x", "grad_w", "sum_k", "grad_x"]),
        ("recitation-s1", "0", None, ["x", "grad_w", "sum_k", "grad_x"]),
        ("channels-small", "1", None, ["x"]),  # a projector: one view, opened on the input
        ("channels-small", "1", "grad_w", ["grad_w"]),  # 3 filters × 2 channels across
        ("qa-channels", "1", "grad_w", ["grad_w"]),
        ("qa-channels", "1", "sum_k", ["sum_k"]),
    ],
)
def test_each_grid_on_the_page_selects_what_its_tiles_are_labelled(preset, pres, view, shown):
    at = _page(view, preset=preset, pres=pres)
    assert not at.exception
    charts = {c.proto.id.split("-")[-1]: c for c in at.get("plotly_chart")}
    state = at.session_state["cv_state"]
    picks = _fields(state, pres == "1")
    grids = {key: c for key, c in charts.items() if key.startswith("tiles_")}
    assert [k.removeprefix("tiles_").rsplit("_", 3)[0] for k in grids] == shown
    if pres == "1":  # no title or caption there: one line names the grid and its outline
        outlined = {"x": "c", "grad_w": "k, c", "sum_k": "k"}[shown[0]]
        slice_ = ", ".join(f"{f}={state[f]}" for f in outlined.split(", "))
        (line,) = [c.value for c in at.caption if f"Outlined: {slice_}, the slice" in c.value]
        named = {"x": "input x[n=", "grad_w": "∂L/∂w", "sum_k": "∂L/∂x[n="}[shown[0]]
        assert line.startswith(named), line  # which sample / channel the tiles are of
    for key, chart in grids.items():
        assert list(chart.proto.selection_mode), f"{key} does not take clicks"
        fig = json.loads(chart.proto.spec)
        notes = fig["layout"]["annotations"]  # column labels centred above, row labels right
        heatmaps = [d for d in fig["data"] if d["type"] == "heatmap"]
        targets = [d for d in fig["data"] if d["type"] == "scatter"]
        col_notes = [a["text"] for a in notes if a.get("xanchor") == "center"]
        row_notes = [a["text"] for a in notes if a.get("xanchor") != "center"]
        cols = len(col_notes)
        rows = len(heatmaps) // cols
        for t in targets:
            grid, r, c = t["customdata"][0]
            fields = picks[grid]
            label = _label_slice(row_notes[r] if rows > 1 else "", col_notes[c])
            assert label, f"{grid} tile {r, c} is clickable but names no slice"
            event = {"selection": {"points": [{"customdata": [grid, r, c]}]}}
            after = _pick_with(dict(state), key, event, fields)
            picked = {f: after[controls.STATE][f] for f in label}
            assert picked == label, f"a click on {grid} tile {r, c} should select {label}"
            assert after[controls.PROBLEMS] == []
        clickable = {tuple(t["customdata"][0][1:]) for t in targets}
        labelled = {
            (r, c)
            for r, c in np.ndindex(rows, cols)
            if _label_slice(row_notes[r] if rows > 1 else "", col_notes[c])
        }
        assert clickable == labelled, f"{key}: every labelled tile and only those take clicks"


def test_a_click_that_clears_the_selection_changes_nothing():
    state = dict(LAYER, k=1, c=1)
    after = _pick_with(state, "tiles_grad_w", {"selection": {"points": []}}, ("k", "c"))
    assert (after[controls.STATE]["k"], after[controls.STATE]["c"]) == (1, 1)
    assert after[controls.PROBLEMS] == ["a link problem"]


@pytest.mark.parametrize("shape", [(1, 3, 5, 5), (3, 2, 3, 3), (2, 4, 40, 40)])
def test_a_column_title_stands_clear_of_the_selected_tiles_outline(shape):
    """The title "c=0" sat on the top edge of the red box around the selected tile, and a row's
    title "k=2" under its right edge."""
    R, C = shape[:2]
    arrays = np.arange(np.prod(shape), dtype=float).reshape(shape)
    rows, cols = [f"k={r}" for r in range(R)], [f"c={c}" for c in range(C)]
    fig = heatmap_grid(arrays, rows, cols, selected=(0, 0))
    (box,) = fig.layout.shapes
    title = next(a for a in fig.layout.annotations if a.text == "c=0")
    plot_h = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    box_top_px = (box.y1 - title.y) * plot_h + box.line.width / 2  # above the title's anchor
    assert title.yanchor == "bottom" and (title.yshift or 0) >= box_top_px + 1
    if R > 1:  # the row title right of the last column: the box around tile (R − 1, C − 1)
        fig = heatmap_grid(arrays, rows, cols, selected=(R - 1, C - 1))
        (box,) = fig.layout.shapes
        label = next(a for a in fig.layout.annotations if a.text == f"k={R - 1}")
        plot_w = fig.layout.width - fig.layout.margin.l - fig.layout.margin.r
        box_right_px = (box.x1 - label.x) * plot_w + box.line.width / 2
        assert label.xanchor == "left" and (label.xshift or 0) >= box_right_px + 1


def test_many_big_tiles_stay_square_within_the_figure_their_titles_apart():
    """16 tiles of 128 × 128 (cells under a pixel): a whole-pixel floor made the row 2 000 px
    wide, squeezed into slivers 35 × 110 px, and their titles ('from k=10') ran together."""
    from convviz.render.theme import THEME

    arrays = np.zeros((1, 17, 128, 128))
    labels = [*(f"from k={i}" for i in range(16)), "Σ = ∂L/∂x"]
    fig = heatmap_grid(arrays, [""], labels, THEME, title="∂L/∂x[n=0, c=0]")
    layout = fig.layout
    plot_w = layout.width - layout.margin.l - layout.margin.r
    plot_h = layout.height - layout.margin.t - layout.margin.b
    assert layout.width <= THEME.figure_w
    for i in range(1, 18):
        xa, ya = layout[f"xaxis{i if i > 1 else ''}"], layout[f"yaxis{i if i > 1 else ''}"]
        w = (xa.domain[1] - xa.domain[0]) * plot_w
        h = (ya.domain[1] - ya.domain[0]) * plot_h
        assert abs(w - h) < 1.5, (i, w, h)  # square, as the arrays are
    titles = [a for a in layout.annotations if a.yanchor == "bottom" or a.text.startswith("k=")]
    texts = [a.text for a in layout.annotations]
    assert "k=10" in texts and "Σ" in texts  # short titles in narrow columns
    size = layout.annotations[0].font.size
    pitch = (layout.xaxis2.domain[0] - layout.xaxis.domain[0]) * plot_w
    assert max(map(len, texts)) * 0.6 * size <= pitch + 1, titles  # no title wider than its column


def test_tiles_write_their_numbers_where_a_smaller_font_fits_them():
    """8 filters × 4 channels of 3 × 3 ∂L/∂w: 33 px cells wrote no numbers ('−127' asked for
    34 px at one font), while the 30 px input tiles above wrote theirs: the font now shrinks to
    fit a long number, down to 9 px."""
    from convviz.render.theme import THEME

    arrays = np.full((8, 4, 3, 3), -127.0)
    fig = heatmap_grid(arrays, [f"k={k}" for k in range(8)], [f"c={c}" for c in range(4)], THEME)
    tile = fig.data[0]
    assert tile.text is not None and tile.texttemplate
    size = tile.textfont.size
    cell = (
        (fig.layout.xaxis.domain[1] - fig.layout.xaxis.domain[0])
        * (fig.layout.width - fig.layout.margin.l - fig.layout.margin.r)
        / 3
    )
    assert size >= 9 and len("−127") * 0.6 * size <= cell - 4


def _take_with(session: dict) -> dict:
    """Run the pages' click reader (`controls._take_chart_selection`) on a session of our own."""
    original = controls.st
    controls.st = SimpleNamespace(session_state=session)
    try:
        controls._take_chart_selection(session[controls.STATE])
    finally:
        controls.st = original
    return session[controls.STATE]


def test_a_cell_clicked_again_after_its_chart_was_redrawn_is_selected_again():
    """Click a cell, change the preset (a new figure: its click is gone, the selection reset),
    click the same cell again: it was ignored, the click reader remembering the first one."""
    click = {"selection": {"points": [{"customdata": ["y", 1, 1]}]}}
    session = {controls.STATE: dict(LAYER, sel=""), "chart_forward": click}
    session[controls.CHARTS] = {"chart_forward"}  # drawn by views.chart
    assert _take_with(session)["sel"] == "y:1:1"
    session[controls.STATE]["sel"] = ""  # the preset resets the selection
    session["chart_forward"] = {"selection": {"points": []}}  # its chart was drawn anew
    assert _take_with(session)["sel"] == ""
    session["chart_forward"] = click
    assert _take_with(session)["sel"] == "y:1:1"
    session[controls.STATE]["sel"] = "y:0:0"  # chosen with the keyboard since: a click held
    assert _take_with(session)["sel"] == "y:0:0"  # from before does not take it back

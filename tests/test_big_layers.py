"""Big layers readable, the renderers: a close-up of a grid too big to number (its numbers, a
click on it selecting the whole grid's cell), the ∂L/∂w grid of qa-channels (10 filters × 5
channels) in one 1280×720 screen, and its tiles sent compact (1–2 bytes a whole number)."""

from __future__ import annotations

import numpy as np

from convviz.model.fields import preset_state
from convviz.model.presets import PRESETS_BY_KEY
from convviz.render.panel import Panel
from convviz.render.plotly.channels import compact, heatmap_grid, oriented
from convviz.render.plotly.grid_figure import panels_figure, panels_layout
from convviz.render.plotly.grids import click_overlay
from convviz.render.selection import close_up
from convviz.render.story.panels import channel_grids, grad_x_panel
from convviz.render.theme import theme_for
from convviz.ui.compute import compute_layer, contributions_for, value_key

KEY = value_key(preset_state(PRESETS_BY_KEY["qa-channels"]))
LAPTOP = theme_for(False, (820, 720, 16))  # the main column at a 1280×720 window


def test_a_close_up_holds_the_cells_around_the_cell_with_their_numbers():
    values = np.arange(100 * 100, dtype=float).reshape(100, 100)
    big = Panel(values, "∂L/∂x", "grad_x", selected=(50, 98))
    crop = close_up(big, big.selected)
    assert crop.shape == (11, 11) and crop.selected == (5, 9)  # columns 89…99: the last 11
    assert crop.values[5, 9] == values[50, 98] and crop.origin == (45, 89)
    assert "around the selected cell" in crop.subtitle
    centre = close_up(Panel(values, "y", "y"), None)
    assert centre.selected is None and centre.values[5, 5] == values[50, 50]
    # numbered, and a click on its cell [5, 9] selects the whole grid's [50, 98]
    fig = panels_figure([crop], LAPTOP)
    heat = next(t for t in fig.traces if t["name"] == "grad_x:values")
    assert heat["text"][5][9] == "5098"
    _, geo, _ = panels_layout([crop], LAPTOP)
    click = click_overlay(crop, 0, geo)
    assert ["grad_x", 50, 98] in click["customdata"]


def test_a_close_up_keeps_the_unread_marks():
    lay = compute_layer(value_key({**preset_state(PRESETS_BY_KEY["remainder"])}))
    panel = grad_x_panel(lay.input_grad, 0, 0)
    crop = close_up(panel, (panel.shape[0] - 1, 0), most=3)
    assert crop.mask("unread_mask")[-1].all()  # the remainder row, in the crop


def test_qa_channels_weight_gradient_fits_one_laptop_screen():
    lay = compute_layer(KEY)
    grids = channel_grids(lay, 0, 0, contributions_for(KEY, 0, 0), 0)
    grad_w = next(g for g in grids if g.key == "grad_w")
    turned = oriented(grad_w, LAPTOP)
    assert turned.row_labels == [f"c={c}" for c in range(5)], "its longer side across"
    fig = heatmap_grid(turned.arrays, turned.row_labels, turned.col_labels, LAPTOP,
                       title=turned.title, selected=turned.selected)  # fmt: skip
    assert fig.layout_dict["height"] <= 720 - 120 and fig.layout_dict["width"] <= 820


def test_tiles_are_sent_compact():
    whole = np.array([[1.0, -300.0], [2.0, 7.0]])
    assert compact(whole).dtype == np.int64 and (compact(whole) == whole).all()  # → int16 sent
    assert compact(whole / 3).dtype == np.float32
    lay = compute_layer(KEY)
    fig = heatmap_grid(lay.forward.x[0][None], [""], [f"c={c}" for c in range(5)], LAPTOP)
    z = fig.traces[0]["z"]
    assert z.dtype == np.int64 and (z == lay.forward.x[0, 0]).all()

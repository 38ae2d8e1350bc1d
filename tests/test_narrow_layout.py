"""Narrow screens, the geometry: on a phone's column (under NARROW_PX) a figure's panels stand
one under another, each as wide as the column allows, never overlapping; a laptop keeps its row."""

from __future__ import annotations

import numpy as np

from convviz.model.fields import preset_state
from convviz.model.presets import PRESETS_BY_KEY
from convviz.render.geometry import NARROW_PX, grid_layout
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.story.panels import forward_panels
from convviz.render.theme import theme_for
from convviz.ui.compute import compute_layer, sweeps_for, value_key

PHONE = theme_for(False, (358, 844))  # a 390 px phone's main column
LAPTOP = theme_for(False, (820, 720))


def classroom_forward():
    key = value_key(preset_state(PRESETS_BY_KEY["classroom"]))
    return list(
        forward_panels(compute_layer(key).forward, sweeps_for(key, 0, 0, 0)["forward"], 0, 0, 0)
    )


def test_a_phone_stacks_the_panels_with_readable_cells():
    panels = classroom_forward()  # x̃ 9×9, w 3×3, y 4×4
    assert PHONE.figure_w < NARROW_PX <= LAPTOP.figure_w
    geo = grid_layout(panels, PHONE, top=10, bottom=20)
    assert geo.stacked and geo.width <= PHONE.figure_w
    assert min(geo.cells) >= 30  # side by side they had 8 px cells
    tops = [d[1] for d in geo.y_domains]
    bottoms = [d[0] for d in geo.y_domains]
    assert tops == sorted(tops, reverse=True)  # one under another, in order
    for below, above in zip(tops[1:], bottoms[:-1]):  # room between them for a header
        assert (above - below) * geo.plot_h >= geo.header
    row = grid_layout(panels, LAPTOP, top=10, bottom=20)
    assert not row.stacked and len({d[1] for d in row.y_domains}) == 1  # top-aligned in a row


def test_a_stacked_figure_puts_its_legend_under_the_grids():
    fig = panels_figure(classroom_forward(), PHONE)
    layout = fig.layout_dict
    assert layout["width"] <= PHONE.figure_w
    legend = next(a for a in layout["annotations"] if "padding" in a.get("text", ""))
    assert legend["y"] < 0  # below the plot area, not over a grid
    assert np.isfinite(layout["height"])

"""Every preset's animations build in both display modes (plotly validates every value)."""

import numpy as np
import pytest

from convviz.presets import PRESETS
from convviz.render.animate import scatter_figure, sweep_figure
from convviz.render.stories import (
    forward_panels,
    input_grad_animation,
    scatter_panels,
    weight_grad_panels,
)
from convviz.render.theme import PRESENTATION, THEME
from convviz.stages import layer
from convviz.sweeps import forward_sweep, input_grad_sweep, scatter, weight_grad_sweep

SMALL = [p for p in PRESETS if p.spec().out_size[0] * p.spec().out_size[1] <= 1024]


@pytest.mark.parametrize("theme", [THEME, PRESENTATION], ids=["normal", "presentation"])
@pytest.mark.parametrize("preset", SMALL, ids=[p.key for p in SMALL])
def test_animations_build_and_keep_controls_in_range(preset, theme):
    spec = preset.spec()
    x, w = preset.values()
    lay = layer(spec, x, w, np.ones(spec.output_shape))
    fw, wg = forward_sweep(lay.forward), weight_grad_sweep(lay.weight_grad)
    ig = input_grad_sweep(lay.input_grad)
    figures = [
        sweep_figure(fw, *forward_panels(lay.forward, fw, 0, 0, 0), theme),
        sweep_figure(wg, *weight_grad_panels(lay.weight_grad, wg, 0, 0, 0), theme),
        sweep_figure(ig, *input_grad_animation(lay.input_grad, ig, 0, 0, 0), theme),
        scatter_figure(
            scatter(lay.forward, lay.input_grad.grad_out), *scatter_panels(lay, 0, 0, 0), theme
        ),
    ]
    for fig in figures:
        assert len(fig.frames) >= 1
        controls = [*fig.layout.updatemenus, *fig.layout.sliders]
        assert all(-2 <= c.y <= 3 for c in controls), [c.y for c in controls]


@pytest.mark.parametrize("size", [1, 2, 5, 7, 16, 17, 32, 33, 100])
@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (1, 4), (3, 2), (10, 5)])
def test_channel_grids_build_at_every_size(size, rows, cols):
    from convviz.render.channels import heatmap_grid

    arrays = np.arange(rows * cols * size * size, dtype=float).reshape(rows, cols, size, size)
    fig = heatmap_grid(
        arrays, [f"k={r}" for r in range(rows)], [f"c={c}" for c in range(cols)], title="a grid"
    )
    assert len(fig.data) == rows * cols
    names = ["xaxis", *(f"xaxis{i}" for i in range(2, rows * cols + 1))]
    domains = [fig.layout[name].domain for name in names]
    assert all(0 <= lo < hi <= 1 for lo, hi in domains)

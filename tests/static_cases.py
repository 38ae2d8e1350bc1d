"""What the matplotlib export tests share: a module-scoped layer (`classroom`: 7×7 padded by 1,
3×3 kernel, stride 2, with its forward sweep) and its three Panels (`panels`), which a test module
takes as its fixtures by naming them (`classroom = static_cases.classroom`), and two readers
(`cell_of`: the cell a rectangle outlines; `legend_texts`: a figure's legend entries).
Shared by test_render_static.py, test_render_static_figures.py and test_render_static_gif.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from convviz.engine.arrays import layer
from convviz.engine.spec import ConvSpec
from convviz.engine.sweeps import forward_sweep
from convviz.render.panel import Panel


@pytest.fixture(scope="module")
def classroom():
    """7×7 input padded by 1, 3×3 kernel, stride 2: its layer and forward sweep (16 steps)."""
    spec = ConvSpec.create((1, 1, 7, 7), (1, 1, 3, 3), stride=2, padding=1)
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 10, spec.input_shape).astype(float)
    w = rng.integers(-2, 3, spec.weight_shape).astype(float)
    grad_out = rng.integers(-2, 3, spec.output_shape).astype(float)
    lay = layer(spec, x, w, grad_out)
    return lay, forward_sweep(lay.forward)


@pytest.fixture(scope="module")
def panels(classroom):
    """Input (padded, window of output cell (1, 2) highlighted), kernel with taps, output."""
    lay, sweep = classroom
    fw = lay.forward
    t = 1 * sweep.out_size[1] + 2
    window = np.zeros(fw.pad_mask.shape, bool)
    window[np.ix_(sweep.rows[t], sweep.cols[t])] = True
    taps = np.full(fw.pad_mask.shape, -1)
    taps[np.ix_(sweep.rows[t], sweep.cols[t])] = np.arange(9).reshape(3, 3)
    x = Panel(fw.x_padded[0, 0], "input x, padded", "x", pad_mask=fw.pad_mask, taps=taps,
              highlight=window, origin=(-1, -1), subtitle="7×7 → 9×9")  # fmt: skip
    w = Panel(fw.w[0, 0], "kernel w", "w", taps=np.arange(9).reshape(3, 3), subtitle="3×3")
    y = Panel(fw.y[0, 0], "output y", "y", selected=(1, 2), subtitle="4×4")
    return [x, w, y]


def cell_of(rect) -> tuple[int, int]:
    x, y = rect.get_xy()
    return round(y + rect.get_height() / 2), round(x + rect.get_width() / 2)


def legend_texts(fig: Figure) -> list[str]:
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]

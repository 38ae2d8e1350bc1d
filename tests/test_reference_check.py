"""The live oracle check the Overview shows: engine vs plain loops, and when it is skipped."""

import numpy as np

from convviz.engine.arrays import layer
from convviz.engine.reference import largest_difference
from convviz.model.presets import PRESETS_BY_KEY


def _classroom():
    preset = PRESETS_BY_KEY["classroom"]
    spec = preset.spec()
    x, w = preset.values()
    g = np.ones(spec.output_shape)
    lay = layer(spec, x, w, g)
    return spec, x, w, g, lay.forward.y, lay.input_grad.grad_x, lay.weight_grad.grad_w


def test_engine_agrees_with_the_loops():
    assert largest_difference(*_classroom()) == 0.0


def test_a_wrong_cell_is_reported():
    spec, x, w, g, y, grad_x, grad_w = _classroom()
    grad_w = grad_w.copy()
    grad_w[0, 0, 1, 2] += 0.5
    assert largest_difference(spec, x, w, g, y, grad_x, grad_w) == 0.5


def test_too_large_to_loop_live_is_skipped():
    spec = PRESETS_BY_KEY["qa-channels"].spec()
    assert largest_difference(spec, None, None, None, None, None, None) is None

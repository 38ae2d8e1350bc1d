"""What the plotly renderer tests share: layers from the engine and their Panels (the forward
sweep's, the full correlation's), two module-scoped layers (`classroom`, 7×7 ⋆ 3×3 stride 2
padding 1; `remainder_layer`, 8×8 with a remainder row and column) that a test module takes as its
fixtures by naming them (`classroom = plotly_cases.classroom`), and readers of a figure (`trace`:
a trace by name; `hex_at`: a value's colour on a stepwise scale).
Shared by test_render_plotly.py and test_render_plotly_sweeps.py.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from convviz.engine.arrays import layer
from convviz.engine.spec import ConvSpec
from convviz.engine.sweeps import forward_sweep, input_grad_sweep
from convviz.render.panel import Panel

# --- examples from the engine --------------------------------------------------------------------


def make_layer(H=7, stride=2, padding=1, dilation=1, C=1, bias=False, seed=7):
    spec = ConvSpec.create(
        (1, C, H, H), (1, C, 3, 3), stride=stride, padding=padding, dilation=dilation
    )
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 10, spec.input_shape).astype(float)
    w = rng.integers(-2, 3, spec.weight_shape).astype(float)
    grad_out = rng.integers(-2, 3, spec.output_shape).astype(float)
    b = np.array([1.5]) if bias else None
    return layer(spec, x, w, grad_out, bias=b)


def tap_grid(rotated=False):
    taps = np.arange(9).reshape(3, 3)
    return taps[::-1, ::-1] if rotated else taps


def forward_case(lay, channel=0):
    """The forward sweep and its three Panels (operand, kernel, output)."""
    fw, sw = lay.forward, forward_sweep(lay.forward)
    (pt, _), (pl, _) = fw.spec.padding
    operand = Panel(
        fw.x_padded[0, channel],
        "x padded",
        "x",
        pad_mask=fw.pad_mask,
        remainder_mask=fw.remainder_mask,
        origin=(-pt, -pl),
    )
    kernel = Panel(fw.w[0, channel], "w", "w", taps=tap_grid())
    output = Panel(fw.y[0, 0], "y", "y")
    return sw, operand, kernel, output


def input_grad_case(lay):
    """The full correlation (rotated kernel) and its Panels."""
    ig = lay.input_grad
    sw = input_grad_sweep(ig, 0, 0)
    (gt, _), (gl, _) = ig.spec.full_padding
    (pt, _), (pl, _) = ig.spec.padding
    operand = Panel(
        ig.padded[0, 0],
        "padded",
        "padded",
        pad_mask=ig.padded_ring,
        dilation_mask=ig.padded_dilation_mask,
        origin=(-gt, -gl),
    )
    kernel = Panel(ig.w_rot[0, 0], "rot180 w", "w_rot", taps=tap_grid(rotated=True))
    output = Panel(
        ig.grad_x_padded[0, 0], "grad x padded", "gxp", pad_mask=ig.pad_mask, origin=(-pt, -pl)
    )
    return sw, operand, kernel, output


@pytest.fixture(scope="module")
def classroom():
    """7×7 ⋆ 3×3, stride 2, padding 1 (16 steps)."""
    return make_layer()


@pytest.fixture(scope="module")
def remainder_layer():
    """8×8, stride 2, padding 1: one remainder row and column."""
    lay = make_layer(H=8)
    assert lay.forward.remainder_mask.any()
    return lay


# --- figure helpers ------------------------------------------------------------------------------


def trace(fig, name):
    """(index, trace) of the trace with this name."""
    found = [(i, t) for i, t in enumerate(fig.data) if t.name == name]
    assert len(found) == 1, f"{len(found)} traces named {name!r}"
    return found[0]


def hex_at(scale, zmin, zmax, z):
    """Colour of value z on a stepwise colour scale (the colour of the step containing z)."""
    f = (z - zmin) / (zmax - zmin)
    for (a, ca), (b, _) in itertools.pairwise(scale):
        if a <= f <= b and a < b:
            return ca
    raise AssertionError(f"{z} is outside the scale")

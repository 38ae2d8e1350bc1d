"""Values that teach: a random layer never shows a zero where a student needs to see a rule work
(a kernel tap, an input, a ∂L/∂y cell, an output, the ∂L/∂x cell and ∂L/∂w taps the pages open
on), and a link made before draws were named still shows the numbers it showed.

A 1×1 kernel drawn as 0 made y and ∂L/∂x all zeros: a student concluded that stride 3 wipes out
the gradient (`/Input_gradient?H=8&W=8&kH=1&kW=1&sh=3&sw=3&…&step=5`, seed 0).
"""

from __future__ import annotations

import numpy as np
import pytest

from convviz.engine.arrays import input_grad_arrays, layer
from convviz.engine.spec import ConvSpec
from convviz.engine.values import GRAD_OUT_KINDS, NAMED_KERNELS, example_w, layer_values
from convviz.model.fields import DEFAULTS
from convviz.model.state import from_query, to_query, values_of

SEEDS = range(21)
KERNELS = range(1, 12)


def spec_for(k: int, stride: int = 1) -> ConvSpec:
    """A square input big enough for a k×k kernel to slide a few steps."""
    return ConvSpec.create((1, 1, k + 3, k + 3), (1, 1, k, k), stride=stride)


def read_cells(spec: ConvSpec) -> np.ndarray:
    """(N, C, H, W) True on the input cells some window reads (their gradient can be ≠ 0)."""
    ones = input_grad_arrays(spec, np.ones(spec.weight_shape), np.ones(spec.output_shape))
    return ones.grad_x != 0


@pytest.mark.parametrize("gout", GRAD_OUT_KINDS)
@pytest.mark.parametrize("k", KERNELS)
def test_a_random_layer_shows_no_zero_a_student_reads(k, gout):
    spec = spec_for(k)
    centre = (spec.in_size[0] // 2, spec.in_size[1] // 2)
    taps = ((k // 2, k // 2), (k - 1, k - 1))  # where the Weight gradient opens and writes out
    assert read_cells(spec)[(0, 0, *centre)]
    for seed in SEEDS:
        x, w, g = layer_values(spec, seed, "random", gout)
        lay = layer(spec, x, w, g)
        where = f"{k}×{k} kernel, seed {seed}, ∂L/∂y {gout}"
        assert np.all(x != 0) and np.all(w != 0) and np.all(g != 0), where
        assert np.all(lay.forward.y != 0), where
        assert lay.input_grad.grad_x[(0, 0, *centre)] != 0, where
        assert all(lay.weight_grad.grad_w[(0, 0, *t)] != 0 for t in taps), where


@pytest.mark.parametrize("stride", [2, 3])
def test_a_strided_layer_reads_fewer_cells_and_the_rest_are_zero_by_the_rule(stride):
    """Cells no window reads are 0 by the rule (marked on the pages), every read one is not."""
    spec = ConvSpec.create((1, 1, 8, 8), (1, 1, 1, 1), stride=stride)
    read = read_cells(spec)
    for seed in SEEDS:
        lay = layer(spec, *layer_values(spec, seed, "random", "random"))
        assert np.all(lay.input_grad.grad_x[read] != 0) and np.all(
            lay.input_grad.grad_x[~read] == 0
        )


@pytest.mark.parametrize("name", [n for n in NAMED_KERNELS])
def test_named_kernels_keep_their_own_taps(name):
    spec = spec_for(3)
    assert np.array_equal(layer_values(spec, 0, name)[1], example_w(spec, 0, name, draw=1))


LINK = {"H": "8", "W": "8", "kH": "1", "kW": "1", "sh": "3", "sw": "3", "pad": "explicit"}
LINK |= {"pt": "0", "pb": "0", "pl": "0", "pr": "0", "step": "5"}


def test_the_issues_link_shows_a_nonzero_kernel():
    state, problems = from_query(LINK)
    w = values_of(state)[2]
    assert not problems and state["draw"] == 2 and np.all(w != 0)


def test_an_old_share_link_keeps_the_numbers_it_showed():
    """Every share link names its seed; one without a draw was made before draw 2."""
    old, _ = from_query(LINK | {"seed": "0"})
    _, _, w, _ = values_of(old)
    assert old["draw"] == 1 and np.all(w == 0)  # as it showed: seed 0 drew a 0 tap
    again, _ = from_query(to_query(old))  # shared again: the same numbers
    assert again["draw"] == 1 and np.array_equal(values_of(again)[2], w)
    new, _ = from_query(to_query(dict(DEFAULTS)))
    assert new["draw"] == 2 and "draw" in to_query(new)

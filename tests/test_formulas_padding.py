"""Padding in formulas: zero padding's terms are zero symbols flagged padding, a copying mode's
terms name the cell they copy, ring cells are dropped only for zeros, and a ∂L/∂x cell with padded
copies is written as the sum of their ∂L/∂x̃ (the fold-back), checked against the loop reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from formula_cases import keras_same, pairs
from oracles import grid

from convviz import conv2d
from convviz.engine.arrays import forward_arrays, input_grad_arrays
from convviz.engine.formulas import forward_formula, input_grad_formula
from convviz.engine.reference import conv2d_input_loop
from convviz.engine.spec import ConvSpec


# --- term flags ---------------------------------------------------------------------------------
def test_zero_padding_terms_are_zero_symbols_flagged_padding():
    spec, x, w, _ = keras_same()
    f = forward_formula(forward_arrays(spec, x, w), 0, 0, 0, 0)
    padded = [t for t in f.terms if t.padding]
    assert len(padded) == 5 and all(t.left.name == "0" and t.vanishes for t in padded)


def test_reflect_padding_terms_name_their_source_cell():
    """Reflect pad 1: padded (0, 0) copies x₁₁, padded (0, 1) copies x₁₀, (1, 0) copies x₀₁."""
    spec = ConvSpec.create((1, 1, 3, 3), (1, 1, 2, 2), padding=1, padding_mode="reflect")
    x = grid(np.arange(9.0).reshape(3, 3))
    f = forward_formula(forward_arrays(spec, x, np.ones(spec.weight_shape)), 0, 0, 0, 0)
    assert [t.left.text() for t in f.terms] == ["x₁₁", "x₁₀", "x₀₁", "x₀₀"]
    assert [t.padding for t in f.terms] == [True, True, True, False]
    assert not any(t.vanishes for t in f.terms), "reflected copies are real values"
    assert f.total == 4 + 3 + 1 + 0


def test_reflect_gradient_folds_ring_copies_back():
    """1×3 input, reflect pad 1 on the columns, 1×1 kernel: x₀₁ is copied to both ring cells,
    so ∂L/∂x₀₁ has its own term plus two folded ones; the corners have none."""
    spec = ConvSpec.create(
        (1, 1, 1, 3), (1, 1, 1, 1), padding=((0, 0), (1, 1)), padding_mode="reflect"
    )
    g = grid([[1.0, 10.0, 100.0, 1000.0, 10000.0]])
    ig = input_grad_arrays(spec, grid([[2.0]]), g)
    f = input_grad_formula(ig, 0, 0, 0, 1)
    assert [t.folded for t in f.terms] == [False, True, True]
    assert pairs(f) == [("∂L/∂y₀₂", "w₀₀"), ("∂L/∂y₀₀", "w₀₀"), ("∂L/∂y₀₄", "w₀₀")]
    assert f.total == f.value == 2 * (100 + 1 + 10000)
    assert not any(t.folded for t in input_grad_formula(ig, 0, 0, 0, 0).terms)
    zeros = ConvSpec.create((1, 1, 1, 3), (1, 1, 1, 1), padding=((0, 0), (1, 1)))
    fz = input_grad_formula(input_grad_arrays(zeros, grid([[2.0]]), g), 0, 0, 0, 1)
    assert [t.folded for t in fz.terms] == [False] and fz.total == 200, "zeros: ring dropped"


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_padded_ring_cells_are_dropped_only_for_zeros(mode):
    spec = ConvSpec.create((1, 1, 4, 4), (1, 1, 3, 3), padding=1, padding_mode=mode)
    rng = np.random.default_rng(5)
    ig = input_grad_arrays(
        spec, rng.standard_normal(spec.weight_shape), rng.standard_normal(spec.output_shape)
    )
    ring = input_grad_formula(ig, 0, 0, 0, 3, padded=True)
    inside = input_grad_formula(ig, 0, 0, 2, 2, padded=True)
    assert ring.dropped == (mode == "zeros") and not inside.dropped
    assert np.isclose(ring.total, ig.grad_x_padded[0, 0, 0, 3]) and ring.total != 0
    # x₁₀ has a copy on the ring in every copying mode (reflect: row 1; replicate/circular: col 0)
    folded = [t for t in input_grad_formula(ig, 0, 0, 1, 0).terms if t.folded]
    assert (len(folded) > 0) == (mode != "zeros"), "ring copies fold back except for zeros"


# --- fold-back: a ∂L/∂x cell with padded copies is the sum of their ∂L/∂x̃ ---------------------
def reflect_preset_layer():
    from convviz.model.presets import PRESETS_BY_KEY

    preset = PRESETS_BY_KEY["reflect"]
    spec, (x, w) = preset.spec(), preset.values()
    g = preset.grad_out_for(conv2d(x, w, padding=spec.padding, padding_mode="reflect"))
    return spec, input_grad_arrays(spec, w, g), g, w


def test_folded_cell_is_written_as_the_sum_of_its_copies():
    """The issue's cell: reflect preset, ∂L/∂x₁₁ gathers x̃₁₁ and its reflections at the corner
    and on the top and left edges; the copies' values come from the loop reference run on the
    padded input (no padding), and add up to the loop reference's ∂L/∂x₁₁."""
    spec, ig, g, w = reflect_preset_layer()
    oracle_padded = conv2d_input_loop(spec.padded_shape, w, g)[0, 0]  # ∂L/∂x̃, ring included
    oracle = conv2d_input_loop(spec.input_shape, w, g, padding=1, padding_mode="reflect")
    f = input_grad_formula(ig, 0, 0, 1, 1)
    names = [gr.target.text() for gr in f.groups]
    assert names == ["∂L/∂x̃₁₁", "∂L/∂x̃₋₁,₋₁", "∂L/∂x̃₋₁,₁", "∂L/∂x̃₁,₋₁"]
    copies = [oracle_padded[r + 1, q + 1] for r, q in [(1, 1), (-1, -1), (-1, 1), (1, -1)]]
    assert [gr.value for gr in f.groups] == copies
    assert np.isclose(sum(copies), oracle[0, 0, 1, 1]) and f.value == oracle[0, 0, 1, 1]
    nums = " + ".join(f"({v:g})" if v < 0 else f"{v:g}" for v in copies)
    total = f"{oracle[0, 0, 1, 1]:g}"
    assert f.text(numeric=True) == f"∂L/∂x₁₁ = {nums} = {total}".replace("-", "−")
    assert f.text() == f"∂L/∂x₁₁ = {' + '.join(names)} = {total}".replace("-", "−")
    assert r"\tilde{x}_{-1,-1}" in f.latex()
    # each copy expands to its 9 taps; the first is the cell's own, the others fold back
    assert [len(gr.terms) for gr in f.groups] == [9, 9, 9, 9]
    assert not any(t.folded for t in f.groups[0].terms)
    assert all(t.folded for gr in f.groups[1:] for t in gr.terms)
    assert f.terms == tuple(t for gr in f.groups for t in gr.terms), "terms: all taps, in order"
    assert f.adds_up(27) and all(gr.adds_up(4) for gr in f.groups)
    assert f.check(27) == (
        f"✓ the cell's own ∂L/∂x̃ and its 3 padded copies add up to the engine's value "
        f"{total.replace('-', '−')}"
    )


def test_a_formula_that_does_not_add_up_says_so():
    _, ig, _, _ = reflect_preset_layer()
    f = input_grad_formula(ig, 0, 0, 1, 1)
    wrong = dataclasses.replace(f, value=f.value + 1)
    assert not wrong.adds_up(27) and wrong.check(27).startswith("✗")
    broken_copy = dataclasses.replace(f.groups[1], value=f.groups[1].value + 1)
    inner = dataclasses.replace(f, groups=(f.groups[0], broken_copy, *f.groups[2:]))
    assert not inner.adds_up(27), "a copy whose taps do not make its value is caught too"


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_groups_only_where_copies_fold_back(mode):
    spec = ConvSpec.create((1, 1, 4, 5), (1, 1, 3, 2), padding=((1, 2), (2, 1)), padding_mode=mode)
    rng = np.random.default_rng(2)
    w, g = (
        rng.integers(-2, 3, spec.weight_shape) * 1.0,
        rng.integers(-2, 3, spec.output_shape) * 1.0,
    )
    ig = input_grad_arrays(spec, w, g)
    oracle = conv2d_input_loop(spec.input_shape, w, g, padding=spec.padding, padding_mode=mode)
    for r, q in np.ndindex(spec.in_size):
        f = input_grad_formula(ig, 0, 0, r, q)
        copies = int(ig_copies(spec, r, q))
        assert len(f.groups) == (copies if copies > 1 else 0), (mode, r, q)
        assert np.isclose(
            sum(gr.value for gr in f.groups) if f.groups else f.total, oracle[0, 0, r, q]
        )


def ig_copies(spec: ConvSpec, r: int, q: int) -> int:
    from convviz.engine.ops import copies_mask

    return copies_mask(spec.in_size, spec.padding, spec.padding_mode, (r, q)).sum()

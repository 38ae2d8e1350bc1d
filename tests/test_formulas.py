"""Formulas: the terms of every cell add up to the engine's number, each term names the operand
cells it multiplies, and the seeds' symbolic answers (corrected) come out term for term.

Oracles: the public API for each cell's value; the input arrays themselves for each named symbol
(a term's `left`/`right` must index the array it claims to read); hand-worked formulas.
How a formula is written: test_formulas_text.py; padding's terms and the fold-back:
test_formulas_padding.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from formula_cases import pairs
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import conv_cases
from quick import examples

from convviz import conv2d, conv2d_input, conv2d_weight
from convviz.engine.arrays import forward_arrays, input_grad_arrays, weight_grad_arrays
from convviz.engine.formulas import (
    Formula,
    forward_formula,
    forward_words,
    input_grad_formula,
    input_grad_words,
    weight_grad_formula,
    weight_grad_words,
)
from convviz.engine.reference import conv2d_input_loop
from convviz.engine.spec import ConvSpec
from convviz.engine.terms import Symbol

# Formulas loop over terms in Python; keep the cases small (every cell of every array is checked).
SETTINGS = settings(max_examples=examples(100), deadline=None)
small_cases = conv_cases()


# --- oracles -------------------------------------------------------------------------------------
def assert_adds_up(f: Formula, engine_value: float, what: str) -> None:
    """total (Σ terms + constant) == value == the engine's cell; each term is left · right."""
    for t in f.terms:
        assert t.value == t.left_value * t.right_value, f"{what}: term {t} is not left·right"
        if t.vanishes:
            assert t.left_value == 0, f"{what}: vanishing term {t} has a nonzero left value"
    assert np.isclose(f.value, engine_value, atol=1e-9), f"{what}: value {f.value} != engine"
    assert np.isclose(f.total, engine_value, atol=1e-9), f"{what}: terms sum {f.total} != engine"


def tag(sym: Symbol, axis: str) -> int:
    """A symbol's batch/channel tag (every symbol carries its whole slice)."""
    return dict(sym.tags)[axis]


def padded_grad_loop(case) -> np.ndarray:
    """∂L/∂x_pad (ring included): the loop reference on the padded input with no padding."""
    kw = case.kwargs
    return conv2d_input_loop(
        case.spec.padded_shape, case.w, case.grad_out, stride=kw["stride"], dilation=kw["dilation"]
    )


# --- every cell adds up, every symbol names the cell it reads ------------------------------------
@SETTINGS
@given(small_cases)
def test_forward_formula_of_every_cell(case):
    spec = case.spec
    fwd = forward_arrays(spec, case.x, case.w, case.bias)
    y = conv2d(case.x, case.w, case.bias, **case.kwargs)
    for n, k, i, j in np.ndindex(y.shape):
        f = forward_formula(fwd, n, k, i, j)
        what = f"y[{n},{k},{i},{j}] of {case}"
        assert_adds_up(f, y[n, k, i, j], what)
        assert f.constant == case.bias[k], f"{what}: the bias is the constant"
        assert len(f.terms) == spec.in_channels * case.w.shape[2] * case.w.shape[3], what
        for t in f.terms:
            c = tag(t.right, "c")
            assert t.right.name == "w" and t.right_value == case.w[k, c, *t.right.index], what
            if t.left.name == "x":
                assert t.left_value == case.x[n, c, *t.left.index], f"{what}: {t.left} misnamed"
            else:
                assert t.left.name == "0" and t.padding and spec.padding_mode == "zeros", what
        assert not any(t.dilation or t.folded for t in f.terms), f"{what}: forward has no holes"


@SETTINGS
@given(small_cases)
def test_input_grad_formula_of_every_cell_folds_ring_copies_back(case):
    spec = case.spec
    ig = input_grad_arrays(spec, case.w, case.grad_out)
    grad_x = conv2d_input(case.x.shape, case.w, case.grad_out, **case.kwargs)
    for n, c, r, q in np.ndindex(grad_x.shape):
        f = input_grad_formula(ig, n, c, r, q)
        what = f"grad_x[{n},{c},{r},{q}] of {case}"
        assert_adds_up(f, grad_x[n, c, r, q], what)
        assert f.target.name == "dx" and f.target.index == (r, q), what
        assert not f.dropped, f"{what}: a real cell is never dropped"
        assert not any(t.dropped for t in f.terms), f"{what}: no term of a real cell is dropped"
        if spec.padding_mode == "zeros":
            assert not any(t.folded for t in f.terms), f"{what}: zeros mode folds nothing back"
        for t in f.terms:
            assert not (t.padding and t.dilation), f"{what}: {t} is one kind of zero, not both"
            k = tag(t.right, "k")
            assert t.right_value == case.w[k, c, *t.right.index], f"{what}: {t.right} misnamed"
            if t.left.name == "dy":
                assert t.left_value == case.grad_out[n, k, *t.left.index], f"{what}: {t.left}"
            else:
                assert t.left.name == "0" and t.vanishes, f"{what}: {t} is a zero of the route"


@SETTINGS
@given(small_cases)
def test_padded_input_grad_formula_of_every_cell_including_the_ring(case):
    spec = case.spec
    ig = input_grad_arrays(spec, case.w, case.grad_out)
    oracle = padded_grad_loop(case)
    ring = ig.pad_mask
    for n, c, r, q in np.ndindex(oracle.shape):
        f = input_grad_formula(ig, n, c, r, q, padded=True)
        what = f"grad_x_padded[{n},{c},{r},{q}] of {case}"
        assert_adds_up(f, oracle[n, c, r, q], what)
        assert f.target.name == "dxp", what
        assert f.dropped == (bool(ring[r, q]) and spec.padding_mode == "zeros"), (
            f"{what}: dropped exactly on the zero-padded ring"
        )
        assert not any(t.folded for t in f.terms), f"{what}: a padded cell's own terms"
        assert all(t.dropped == f.dropped for t in f.terms), f"{what}: terms share the drop"


@SETTINGS
@given(small_cases)
def test_weight_grad_formula_of_every_cell(case):
    spec = case.spec
    wg = weight_grad_arrays(spec, case.x, case.grad_out)
    grad_w = conv2d_weight(case.x, case.w.shape, case.grad_out, **case.kwargs)
    for k, c, a, b in np.ndindex(grad_w.shape):
        f = weight_grad_formula(wg, k, c, a, b)
        what = f"grad_w[{k},{c},{a},{b}] of {case}"
        assert_adds_up(f, grad_w[k, c, a, b], what)
        assert len(f.terms) == spec.batch * spec.out_size[0] * spec.out_size[1], what
        for t in f.terms:
            n = tag(t.right, "n")
            assert t.right_value == case.grad_out[n, k, *t.right.index], f"{what}: {t.right}"
            if t.left.name == "x":
                assert t.left_value == case.x[n, c, *t.left.index], f"{what}: {t.left} misnamed"


# --- a table of configurations with channels and batch > 1 ---------------------------------------
TABLE = [
    pytest.param((2, 2, 5, 4), (3, 2, 3, 2), {"padding": 1}, id="N2 C2 K3 pad 1"),
    pytest.param(
        (1, 3, 6, 6),
        (2, 3, 3, 3),
        {"stride": 2, "padding": "same", "padding_mode": "reflect"},
        id="C3 K2 s2 same reflect",
    ),
    pytest.param(
        (2, 1, 5, 5),
        (2, 1, 2, 3),
        {"dilation": (2, 1), "padding": ((2, 1), (0, 2)), "padding_mode": "circular"},
        id="N2 K2 d(2,1) per-side circular",
    ),
    pytest.param(
        (1, 2, 4, 7),
        (1, 2, 3, 3),
        {"stride": (1, 3), "padding": 2, "padding_mode": "replicate"},
        id="C2 s(1,3) pad 2 replicate",
    ),
    pytest.param((2, 2, 7, 7), (2, 2, 3, 3), {"stride": 2, "padding": 1}, id="classroom x2"),
]


@pytest.mark.parametrize(("xs", "ws", "kwargs"), TABLE)
def test_table_every_formula_equals_the_engine(xs, ws, kwargs):
    spec = ConvSpec.create(xs, ws, **kwargs)
    rng = np.random.default_rng(3)
    x, w = rng.integers(-3, 4, xs).astype(float), rng.integers(-2, 3, ws).astype(float)
    g = rng.integers(-2, 3, spec.output_shape).astype(float)
    y = conv2d(x, w, **kwargs)
    grad_x, grad_w = conv2d_input(xs, w, g, **kwargs), conv2d_weight(x, ws, g, **kwargs)
    fwd, ig = forward_arrays(spec, x, w), input_grad_arrays(spec, w, g)
    wg = weight_grad_arrays(spec, x, g)
    for idx in np.ndindex(y.shape):
        assert_adds_up(forward_formula(fwd, *idx), y[idx], f"y{idx}")
    for idx in np.ndindex(grad_x.shape):
        assert_adds_up(input_grad_formula(ig, *idx), grad_x[idx], f"grad_x{idx}")
    for idx in np.ndindex(grad_w.shape):
        assert_adds_up(weight_grad_formula(wg, *idx), grad_w[idx], f"grad_w{idx}")
    for idx in np.ndindex(ig.grad_x_padded.shape):
        f = input_grad_formula(ig, *idx, padded=True)
        assert_adds_up(f, ig.grad_x_padded[idx], f"grad_x_padded{idx}")
    # every symbol carries its slice; a formula writes the tags of the axes that vary only
    n = 1 if xs[0] > 1 else 0
    f = forward_formula(fwd, n, 0, 0, 0)
    assert f.target.tags == (("n", n), ("k", 0))
    assert forward_formula(fwd, 0, 0, 0, 0).terms[-1].right.tags == (("k", 0), ("c", ws[1] - 1))
    sizes = {"n": xs[0], "k": ws[0], "c": ws[1]}
    assert f.varying == {a for a, size in sizes.items() if size > 1}
    written = [f"{a}={v}" for a, v in (("n", n), ("k", 0)) if sizes[a] > 1]
    assert f.name() == "y" + (f"[{', '.join(written)}]" if written else "") + "₀₀"


# --- the seeds' symbolic answers -----------------------------------------------------------------
def recitation(stride: int, x_size: int, k_size: int):
    spec = ConvSpec.create((1, 1, x_size, x_size), (1, 1, k_size, k_size), stride=stride)
    rng = np.random.default_rng(0)
    w = rng.integers(-2, 3, spec.weight_shape).astype(float)
    g = rng.integers(-2, 3, spec.output_shape).astype(float)
    x = rng.integers(0, 10, spec.input_shape).astype(float)
    return spec, x, w, g


GRAD_X_ANSWERS = [
    pytest.param(
        2,
        5,
        3,
        (2, 2),
        [("∂L/∂y₀₀", "w₂₂"), ("∂L/∂y₀₁", "w₂₀"), ("∂L/∂y₁₀", "w₀₂"), ("∂L/∂y₁₁", "w₀₀")],
        id="recitation s2: x22 has four terms (the seed lists f20 twice)",
    ),
    pytest.param(2, 5, 3, (0, 0), [("∂L/∂y₀₀", "w₀₀")], id="recitation s2: x00"),
    pytest.param(
        2, 5, 3, (0, 2), [("∂L/∂y₀₀", "w₀₂"), ("∂L/∂y₀₁", "w₀₀")], id="recitation s2: x02"
    ),
    pytest.param(2, 5, 3, (1, 1), [("∂L/∂y₀₀", "w₁₁")], id="recitation s2: x11 one term"),
    pytest.param(
        1,
        3,
        2,
        (1, 1),
        [("∂L/∂y₀₀", "w₁₁"), ("∂L/∂y₀₁", "w₁₀"), ("∂L/∂y₁₀", "w₀₁"), ("∂L/∂y₁₁", "w₀₀")],
        id="recitation s1: x11 (the seed's X22) is the rotated filter",
    ),
    pytest.param(1, 3, 2, (0, 0), [("∂L/∂y₀₀", "w₀₀")], id="recitation s1: corner x00"),
]


@pytest.mark.parametrize(("stride", "xs", "ks", "cell", "expected"), GRAD_X_ANSWERS)
def test_recitation_input_gradient_terms(stride, xs, ks, cell, expected):
    spec, _, w, g = recitation(stride, xs, ks)
    ig = input_grad_arrays(spec, w, g)
    f = input_grad_formula(ig, 0, 0, *cell)
    assert pairs(f) == expected
    assert np.isclose(f.total, conv2d_input(spec.input_shape, w, g, stride=stride)[0, 0, *cell])


def test_recitation_stride1_forward_y00():
    spec, x, w, _ = recitation(1, 3, 2)
    f = forward_formula(forward_arrays(spec, x, w), 0, 0, 0, 0)
    assert f.text().startswith("y₀₀ = x₀₀·w₀₀ + x₀₁·w₀₁ + x₁₀·w₁₀ + x₁₁·w₁₁ = "), f.text()


def test_recitation_stride2_dilation_zeros_are_flagged():
    """x₂₂'s window over the padded, dilated grad_out: 9 taps, 4 real, 5 dilation zeros."""
    spec, _, w, g = recitation(2, 5, 3)
    f = input_grad_formula(input_grad_arrays(spec, w, g), 0, 0, 2, 2)
    assert len(f.terms) == 9
    assert sum(t.dilation for t in f.terms) == 5 and sum(t.padding for t in f.terms) == 0
    f00 = input_grad_formula(input_grad_arrays(spec, w, g), 0, 0, 0, 0)
    assert sum(t.padding for t in f00.terms) == 8, "x₀₀ reads 8 cells of the padding of grad_out"
    assert not any(t.dilation for t in f00.terms), "ring zeros are padding, not dilation zeros"
    assert all(t.vanishes for t in f00.terms if t.padding)


# --- a whole output grid in words at once: each cell as its own Formula says it ----------------
@SETTINGS
@given(small_cases, st.integers(1, 30), st.booleans())
def test_forward_words_say_every_cell_as_its_formula_does(case, most, whole):
    """`forward_words` (the keyboard grid's sums, built for a grid at once) against the oracle of
    one Formula a cell: the same sentence for every cell of every slice, past `most` terms too,
    for whole numbers (each distinct one written once) and for any float."""
    x, w, bias = (np.round(a * 3) if whole else a for a in (case.x, case.w, case.bias))
    stages = forward_arrays(case.spec, x, w, bias)
    oH, oW = case.spec.out_size
    for n in range(case.spec.batch):
        for k in range(case.spec.out_channels):
            got = forward_words(stages, n, k, most)
            assert got.shape == (oH, oW)
            for i, j in np.ndindex(oH, oW):
                assert got[i, j] == forward_formula(stages, n, k, i, j).words(most), (n, k, i, j)


@SETTINGS
@given(small_cases, st.integers(1, 30), st.booleans())
def test_gradient_words_say_every_cell_as_its_formula_does(case, most, whole):
    """`input_grad_words` (∂L/∂x, and ∂L/∂x̃ with its ring) and `weight_grad_words`, built for a
    grid at once, against one Formula a cell: the same sentence for every cell of every slice,
    in every padding mode (a cell with padded copies says the sum of its copies)."""
    x, w, g = (np.round(a * 3) if whole else a for a in (case.x, case.w, case.grad_out))
    spec = case.spec
    ig, wg = input_grad_arrays(spec, w, g), weight_grad_arrays(spec, x, g)
    for n in range(spec.batch):
        for c in range(spec.in_channels):
            for padded in (False, True):
                got = input_grad_words(ig, n, c, most, padded)
                assert got.shape == (ig.pad_mask.shape if padded else spec.in_size)
                for r, q in np.ndindex(got.shape):
                    want = input_grad_formula(ig, n, c, r, q, padded).words(most)
                    assert got[r, q] == want, (n, c, padded, r, q)
    for k in range(spec.out_channels):
        for c in range(spec.in_channels):
            got = weight_grad_words(wg, k, c, most)
            assert got.shape == spec.kernel_size
            for a, b in np.ndindex(got.shape):
                assert got[a, b] == weight_grad_formula(wg, k, c, a, b).words(most), (k, c, a, b)

"""Sweeps: every step of an animation adds up to the engine's array, and each step's cells,
products and sums are the ones the window really covers.

Oracles: the public API (y, grad_x_padded, grad_w), per-step index arithmetic written out here,
and hand-worked sweeps of the seeds' examples.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from oracles import assert_array, conv_cases, grid
from quick import examples

from convviz import conv2d, conv2d_input, conv2d_weight
from convviz.engine.arrays import forward_arrays, input_grad_arrays, weight_grad_arrays
from convviz.engine.ops import pad
from convviz.engine.reference import conv2d_input_loop
from convviz.engine.spec import ConvSpec
from convviz.engine.sweeps import (
    Sweep,
    channel_contributions,
    forward_sweep,
    input_grad_sweep,
    scatter,
    sweep,
    weight_grad_sweep,
)

SETTINGS = settings(max_examples=examples(100), deadline=None)


# --- one oracle per claim a sweep makes ----------------------------------------------------------
def assert_sweep_consistent(sw: Sweep, what: str) -> None:
    """Each step's targets, covered cells, products and sums agree with the operand and kernel."""
    C, kh, kw = sw.kernel.shape
    oh, ow = sw.out_size
    (sh, sw_), (dh, dw) = sw.stride, sw.dilation
    T = oh * ow
    assert sw.steps == T, f"{what}: one step per output cell"
    expected_targets = [(i, j) for i in range(oh) for j in range(ow)]
    assert sw.targets.tolist() == [list(t) for t in expected_targets], f"{what}: row-major targets"
    for t, (i, j) in enumerate(expected_targets):
        assert sw.rows[t].tolist() == [i * sh + a * dh for a in range(kh)], f"{what}: rows[{t}]"
        assert sw.cols[t].tolist() == [j * sw_ + b * dw for b in range(kw)], f"{what}: cols[{t}]"
        covered = sw.operand[:, sw.rows[t]][:, :, sw.cols[t]]  # (C, kh, kw)
        assert_array(sw.products[t], covered * sw.kernel, f"{what}: products[{t}]")
    assert sw.products.shape == (T, C, kh, kw), f"{what}: products shape"
    assert_array(sw.partial, sw.products.sum(axis=(2, 3)), f"{what}: partial = Σ taps per channel")
    assert_array(sw.partial.sum(axis=1) + sw.offset, sw.sums, f"{what}: sums = Σ partial + offset")
    assert sw.result().shape == sw.out_size, f"{what}: result has the output size"


def stamps_oracle(w: np.ndarray, grad_out: np.ndarray, n: int, c: int) -> np.ndarray:
    """(K·T, kH, kW): filter by filter, stamp (k, t) = grad_out[n, k, t] · w[k, c]."""
    return np.stack(
        [
            grad_out[n, k, i, j] * w[k, c]
            for k in range(w.shape[0])
            for i, j in np.ndindex(grad_out.shape[2:])
        ]
    )


def grad_x_padded_loop(case) -> np.ndarray:
    """∂L/∂x_pad by the loop reference: the same layer applied to the padded input, no padding."""
    kw = case.kwargs
    return conv2d_input_loop(
        case.spec.padded_shape, case.w, case.grad_out, stride=kw["stride"], dilation=kw["dilation"]
    )


# --- results equal the engine --------------------------------------------------------------------
@SETTINGS
@given(conv_cases())
def test_forward_sweep_writes_y(case):
    fwd = forward_arrays(case.spec, case.x, case.w, case.bias)
    y = conv2d(case.x, case.w, case.bias, **case.kwargs)
    for n in range(case.spec.batch):
        for k in range(case.spec.out_channels):
            sw = forward_sweep(fwd, n, k)
            assert_array(sw.result(), y[n, k], f"forward sweep (n={n}, k={k}) for {case}")
            assert sw.offset == pytest.approx(case.bias[k]), "the bias is the sweep's offset"
    assert_sweep_consistent(forward_sweep(fwd, case.spec.batch - 1, 0), f"forward {case}")


@SETTINGS
@given(conv_cases())
def test_input_grad_sweep_writes_grad_x_padded(case):
    ig = input_grad_arrays(case.spec, case.w, case.grad_out)
    oracle = grad_x_padded_loop(case)
    for n in range(case.spec.batch):
        for c in range(case.spec.in_channels):
            sw = input_grad_sweep(ig, n, c)
            assert sw.stride == (1, 1), "the full correlation has stride 1"
            assert sw.dilation == case.spec.dilation, "the rotated kernel keeps its dilation"
            assert_array(sw.result(), oracle[n, c], f"input-grad sweep (n={n}, c={c}) for {case}")
    assert_sweep_consistent(input_grad_sweep(ig, 0, case.spec.in_channels - 1), f"input {case}")


@SETTINGS
@given(conv_cases())
def test_weight_grad_sweep_writes_grad_w_and_splits_it_by_sample(case):
    spec = case.spec
    wg = weight_grad_arrays(spec, case.x, case.grad_out)
    grad_w = conv2d_weight(case.x, case.w.shape, case.grad_out, **case.kwargs)
    per_sample = [
        conv2d_weight(case.x[n : n + 1], case.w.shape, case.grad_out[n : n + 1], **case.kwargs)
        for n in range(spec.batch)
    ]
    for k in range(spec.out_channels):
        for c in range(spec.in_channels):
            sw = weight_grad_sweep(wg, k, c)
            assert_array(sw.result(), grad_w[k, c], f"weight sweep (k={k}, c={c}) for {case}")
            for n in range(spec.batch):
                assert_array(
                    sw.partial[:, n], per_sample[n][k, c].ravel(), f"partial[:, {n}] is sample {n}"
                )
    sw = weight_grad_sweep(wg, spec.out_channels - 1, 0)
    assert sw.stride == spec.dilation and sw.dilation == spec.stride, "the roles swap"
    assert_sweep_consistent(sw, f"weight {case}")


@SETTINGS
@given(conv_cases())
def test_scatter_stamps_add_up_to_grad_x_padded(case):
    spec = case.spec
    fwd = forward_arrays(spec, case.x, case.w)
    oracle = grad_x_padded_loop(case)
    (sh, sw_), (dh, dw), (oH, oW) = spec.stride, spec.dilation, spec.out_size
    kH, kW = spec.kernel_size
    for n in range(spec.batch):
        for c in range(spec.in_channels):
            sc = scatter(fwd, case.grad_out, n, c)
            what = f"scatter (n={n}, c={c}) for {case}"
            K, T = spec.out_channels, oH * oW
            assert sc.running.shape == (K * T, *spec.padded_size), f"{what}: running shape"
            assert_array(sc.running[-1], oracle[n, c], f"{what}: the last running sum")
            assert_array(sc.stamps, stamps_oracle(case.w, case.grad_out, n, c), f"{what}: stamps")
            before = np.zeros(spec.padded_size)
            for s, (k, i, j) in enumerate(np.ndindex(K, oH, oW)):
                assert (sc.filters[s], sc.cells[s]) == (k, i * oW + j), f"{what}: step {s}"
                # what the step shows (its filter's cell and kernel) is what it stamps
                assert_array(sc.stamps[s], sc.grad_out[k, i, j] * sc.kernels[k], what)
                assert sc.rows[s].tolist() == [i * sh + a * dh for a in range(kH)], what
                assert sc.cols[s].tolist() == [j * sw_ + b * dw for b in range(kW)], what
                placed = np.zeros(spec.padded_size)
                placed[np.ix_(sc.rows[s], sc.cols[s])] = sc.stamps[s]
                assert_array(sc.running[s] - before, placed, f"{what}: step {s} adds stamp {s}")
                before = sc.running[s]


@SETTINGS
@given(conv_cases())
def test_channel_contributions_split_grad_x_by_filter(case):
    """grad_x[n, c] = Σ_k full(grad_out[n, k], rot180 w[k, c]): part k is filter k's alone."""
    spec = case.spec
    ig = input_grad_arrays(spec, case.w, case.grad_out)
    grad_x = conv2d_input(case.x.shape, case.w, case.grad_out, **case.kwargs)
    alone = [
        conv2d_input(case.x.shape, case.w[k : k + 1], case.grad_out[:, k : k + 1], **case.kwargs)
        for k in range(spec.out_channels)
    ]
    for n in range(spec.batch):
        for c in range(spec.in_channels):
            parts = channel_contributions(ig, n, c)
            what = f"channel_contributions(n={n}, c={c}) of {case}"
            assert parts.shape == (spec.out_channels, *spec.in_size), f"{what}: shape"
            for k in range(spec.out_channels):
                assert_array(parts[k], alone[k][n, c], f"{what}: filter {k} alone")
            assert_array(parts.sum(axis=0), grad_x[n, c], f"{what}: Σ over filters is grad_x")


# --- hand-worked sweeps --------------------------------------------------------------------------
def recitation_s2_forward():
    spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), stride=2)
    x = grid(np.arange(25.0).reshape(5, 5))
    return spec, forward_arrays(spec, x, np.ones(spec.weight_shape))


def test_recitation_stride2_windows_by_hand():
    """5×5 ⋆ 3×3 at stride 2: windows at rows 0–2 then 2–4, cols 0–2 then 2–4."""
    _, fwd = recitation_s2_forward()
    sw = forward_sweep(fwd)
    assert sw.targets.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert sw.rows.tolist() == [[0, 1, 2], [0, 1, 2], [2, 3, 4], [2, 3, 4]]
    assert sw.cols.tolist() == [[0, 1, 2], [2, 3, 4], [0, 1, 2], [2, 3, 4]]
    # box kernel over 0..24: window sum = 9·(its centre) with centres 6, 8, 16, 18
    assert sw.sums.tolist() == [54.0, 72.0, 144.0, 162.0]


def test_recitation_stride2_full_correlation_by_hand():
    """The input-gradient sweep slides over the 7×7 padded, dilated grad_out at stride 1."""
    spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), stride=2)
    w = grid(np.arange(1.0, 10.0).reshape(3, 3))
    ig = input_grad_arrays(spec, w, grid([[1, 2], [3, 4]]))
    sw = input_grad_sweep(ig)
    assert sw.operand.shape == (1, 7, 7) and sw.out_size == (5, 5)
    assert sw.rows[:6].tolist() == [
        [0, 1, 2],
        [0, 1, 2],
        [0, 1, 2],
        [0, 1, 2],
        [0, 1, 2],
        [1, 2, 3],
    ]
    t22 = 2 * 5 + 2  # step of x₂₂: the window sits on dy at its four corners
    assert_array(
        sw.products[t22, 0],
        [[1 * 9, 0, 2 * 7], [0, 0, 0], [3 * 3, 0, 4 * 1]],
        "x₂₂: ∂L/∂y₀₀·w₂₂, ∂L/∂y₀₁·w₂₀, ∂L/∂y₁₀·w₀₂, ∂L/∂y₁₁·w₀₀",
    )
    assert sw.sums[t22] == 9 + 14 + 9 + 4


def test_d2l_sweep_by_hand():
    """[[0,1,2],[3,4,5],[6,7,8]] ⋆ [[0,1],[2,3]]: step 0 multiplies [[0,1],[3,4]] tap by tap."""
    spec = ConvSpec.create((1, 1, 3, 3), (1, 1, 2, 2))
    fwd = forward_arrays(spec, grid([[0, 1, 2], [3, 4, 5], [6, 7, 8]]), grid([[0, 1], [2, 3]]))
    sw = forward_sweep(fwd)
    assert_array(sw.products[0, 0], [[0, 1], [6, 12]], "0·0, 1·1, 3·2, 4·3")
    assert sw.sums.tolist() == [19.0, 25.0, 37.0, 43.0]
    assert_array(sw.result(), [[19, 25], [37, 43]], "d2l's answer")


def test_dilated_window_skips_cells():
    """Dilation 2 on a 2×2 kernel: the taps of step 0 sit on rows/cols 0 and 2."""
    operand = np.arange(25.0).reshape(1, 5, 5)
    sw = sweep(operand, np.ones((1, 2, 2)), stride=(1, 1), dilation=(2, 2))
    assert sw.out_size == (3, 3)
    assert sw.rows[0].tolist() == [0, 2] and sw.cols[4].tolist() == [1, 3]
    assert sw.sums[0] == 0 + 2 + 10 + 12


def test_bias_offsets_every_forward_sum():
    spec, _ = recitation_s2_forward()
    x = grid(np.arange(25.0).reshape(5, 5))
    fwd = forward_arrays(spec, x, np.ones(spec.weight_shape), bias=[10.0])
    sw = forward_sweep(fwd)
    assert sw.offset == 10.0
    assert sw.sums.tolist() == [64.0, 82.0, 154.0, 172.0], "bias 10 added to every step"
    assert_array(sw.partial[:, 0], [54, 72, 144, 162], "partial sums exclude the bias")


MULTI_CHANNEL_ROWS = [
    pytest.param({"padding": 1}, id="padding 1"),
    pytest.param({"stride": (2, 1), "padding": ((0, 1), (1, 0))}, id="stride 2x1 per-side pad"),
    pytest.param({"dilation": 2, "padding": 2, "padding_mode": "reflect"}, id="dilation 2 reflect"),
]


@pytest.mark.parametrize("kwargs", MULTI_CHANNEL_ROWS)
def test_channel_partials_are_per_channel_correlations(kwargs):
    """partial[t, c] of a forward sweep is channel c's correlation alone (the channel sum shown)."""
    spec = ConvSpec.create((1, 3, 6, 5), (2, 3, 3, 2), **kwargs)
    rng = np.random.default_rng(7)
    x, w = rng.integers(-3, 4, spec.input_shape), rng.integers(-2, 3, spec.weight_shape)
    fwd = forward_arrays(spec, x, w)
    sw = forward_sweep(fwd, 0, 1)
    for c in range(3):
        alone = conv2d(x[:, c : c + 1], w[1:2, c : c + 1], **kwargs)[0, 0]
        assert_array(sw.partial[:, c], alone.ravel(), f"channel {c} alone")
    assert_array(sw.operand, pad(x, spec.padding, spec.padding_mode)[0], "operand is x_padded[0]")

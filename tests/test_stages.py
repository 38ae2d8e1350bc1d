"""Stages: every route's final arrays equal the public API, every intermediate array has the
documented shape and mask, inputs are never mutated and float32 stays float32.

Oracles: the public API (`conv2d`, `conv2d_input`, `conv2d_weight`, `conv2d_bias`), the loop
reference, and index arithmetic written out here with `np.indices` (independent of `ops`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from oracles import assert_array, conv_cases, grid, read_only
from quick import examples

from convviz import conv2d, conv2d_bias, conv2d_input, conv2d_weight
from convviz.engine.arrays import (
    ForwardArrays,
    InputGradArrays,
    Layer,
    WeightGradArrays,
    forward_arrays,
    input_grad_arrays,
    layer,
    scatter_grad_x_padded,
    weight_grad_arrays,
)
from convviz.engine.reference import conv2d_input_loop, conv2d_weight_loop
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.engine.sweeps import weight_grad_sweep

SETTINGS = settings(max_examples=examples(100), deadline=None)


# --- oracles -------------------------------------------------------------------------------------
def grad_x_padded_oracle(case) -> np.ndarray:
    """∂L/∂x_pad by the loop reference: the same layer on the padded input with no padding.

    The padded input is an ordinary input of shape `padded_shape`; its gradient covers the ring
    and the remainder, which is exactly what the textbook route computes before masking.
    """
    kw = case.kwargs
    return conv2d_input_loop(
        case.spec.padded_shape,
        case.w,
        case.grad_out,
        stride=kw["stride"],
        padding=0,
        dilation=kw["dilation"],
    )


def stride_zeros_mask(size, stride) -> np.ndarray:
    """(dH, dW) mask of a grid dilated by `stride`: True where the row or column is off-stride."""
    sh, sw = stride
    r, c = np.indices(((size[0] - 1) * sh + 1, (size[1] - 1) * sw + 1))
    return (r % sh != 0) | (c % sw != 0)


def border_mask(shape, sides) -> np.ndarray:
    """(Hp, Wp) mask, True outside the block [top, Hp - bottom) × [left, Wp - right)."""
    (top, bottom), (left, right) = sides
    r, c = np.indices(shape)
    inside = (top <= r) & (r < shape[0] - bottom) & (left <= c) & (c < shape[1] - right)
    return ~inside


# --- final arrays equal the public API -----------------------------------------------------------
@SETTINGS
@given(conv_cases())
def test_forward_y_equals_conv2d_with_bias(case):
    fwd = forward_arrays(case.spec, case.x, case.w, case.bias)
    expected = conv2d(case.x, case.w, case.bias, **case.kwargs)
    assert_array(fwd.y, expected, f"forward_arrays.y vs conv2d for {case}")
    assert_array(fwd.bias, case.bias, "forward_arrays.bias keeps the given bias")


@SETTINGS
@given(conv_cases())
def test_forward_without_bias_has_zero_bias(case):
    fwd = forward_arrays(case.spec, case.x, case.w)
    assert_array(fwd.bias, np.zeros(case.spec.out_channels), "bias=None must read as zeros")
    assert_array(fwd.y, conv2d(case.x, case.w, **case.kwargs), f"y without bias for {case}")


@SETTINGS
@given(conv_cases())
def test_input_grad_route_equals_api_and_loop_reference(case):
    ig = input_grad_arrays(case.spec, case.w, case.grad_out)
    api = conv2d_input(case.x.shape, case.w, case.grad_out, **case.kwargs)
    loop = conv2d_input_loop(case.x.shape, case.w, case.grad_out, **case.kwargs)
    assert_array(ig.grad_x, api, f"textbook grad_x vs conv2d_input for {case}")
    assert_array(ig.grad_x, loop, f"textbook grad_x vs the loop reference for {case}")


@SETTINGS
@given(conv_cases())
def test_grad_x_padded_and_scatter_route_equal_the_padded_loop(case):
    ig = input_grad_arrays(case.spec, case.w, case.grad_out)
    oracle = grad_x_padded_oracle(case)
    assert_array(ig.grad_x_padded, oracle, f"textbook grad_x_padded (ring included) for {case}")
    scattered = scatter_grad_x_padded(case.spec, case.w, case.grad_out)
    assert_array(scattered, ig.grad_x_padded, f"scatter route vs textbook route for {case}")


@SETTINGS
@given(conv_cases())
def test_weight_grad_route_equals_api(case):
    wg = weight_grad_arrays(case.spec, case.x, case.grad_out)
    api = conv2d_weight(case.x, case.w.shape, case.grad_out, **case.kwargs)
    assert_array(wg.grad_w, api, f"weight_grad_arrays.grad_w vs conv2d_weight for {case}")
    # the stage and the API share the GEMM: the textbook correlation (the page's sweep, the
    # dilated ∂L/∂y slid over x̃ stepping by the dilation) is the independent route
    for k, c in np.ndindex(*wg.grad_w.shape[:2]):
        corr = weight_grad_sweep(wg, k, c).result()
        assert_array(wg.grad_w[k, c], corr, f"grad_w[{k}, {c}] vs the correlation for {case}")
    assert_array(wg.grad_b, conv2d_bias(case.grad_out), f"grad_b vs conv2d_bias for {case}")
    assert_array(wg.grad_b, case.grad_out.sum(axis=(0, 2, 3)), "grad_b = Σ grad_out[:, k]")


@settings(max_examples=examples(25), deadline=None)
@given(conv_cases(max_channels=2))
def test_weight_grad_route_equals_loop_reference(case):
    wg = weight_grad_arrays(case.spec, case.x, case.grad_out)
    loop = conv2d_weight_loop(case.x, case.w.shape, case.grad_out, **case.kwargs)
    assert_array(wg.grad_w, loop, f"grad_w vs the loop reference for {case}")


# --- forward intermediates -----------------------------------------------------------------------
@SETTINGS
@given(conv_cases())
def test_forward_intermediate_shapes_and_masks(case):
    spec = case.spec
    fwd = forward_arrays(spec, case.x, case.w, case.bias)
    Hp, Wp = spec.padded_size
    assert fwd.x_padded.shape == spec.padded_shape, "x_padded has the padded shape"
    assert fwd.pad_mask.shape == (Hp, Wp) and fwd.pad_mask.dtype == bool
    assert (fwd.pad_mask == border_mask((Hp, Wp), spec.padding)).all(), (
        f"pad_mask must be True exactly on the ring {spec.padding}"
    )
    interior = fwd.x_padded[..., ~fwd.pad_mask].reshape(case.x.shape)
    assert_array(interior, case.x, "x_padded off the ring is x, in order")
    if spec.padding_mode == "zeros":
        assert (fwd.x_padded[..., fwd.pad_mask] == 0).all(), "zero padding puts zeros on the ring"
    assert fwd.y.shape == spec.output_shape


@SETTINGS
@given(conv_cases())
def test_remainder_mask_marks_exactly_the_unreached_rows_and_cols(case):
    spec = case.spec
    fwd = forward_arrays(spec, case.x, case.w)
    rH, rW = spec.reach
    r, c = np.indices(spec.padded_size)
    assert (fwd.remainder_mask == ((r >= rH) | (c >= rW))).all(), (
        f"remainder_mask must mark rows >= {rH} and cols >= {rW} for {case}"
    )
    assert fwd.remainder_mask[:, 0].sum() == spec.remainder[0], "one marked row per remainder row"
    assert fwd.remainder_mask[0, :].sum() == spec.remainder[1], "one marked col per remainder col"
    wg = weight_grad_arrays(spec, case.x, case.grad_out)
    assert (wg.remainder_mask == fwd.remainder_mask).all(), "both stages share the remainder"


# --- input-gradient intermediates ----------------------------------------------------------------
@SETTINGS
@given(conv_cases())
def test_dilated_grad_out_has_stride_minus_one_zeros(case):
    spec = case.spec
    ig = input_grad_arrays(spec, case.w, case.grad_out)
    N, K = spec.batch, spec.out_channels
    expected_mask = stride_zeros_mask(spec.out_size, spec.stride)
    assert ig.dilated.shape == (N, K, *spec.dilated_out_size), "dilated shape (o-1)*s + 1"
    assert (ig.dilation_mask == expected_mask).all(), "dilation_mask True exactly off-stride"
    assert (ig.dilated[..., ig.dilation_mask] == 0).all(), "inserted cells are zeros"
    kept = ig.dilated[..., ~ig.dilation_mask]
    assert_array(kept, case.grad_out.reshape(N, K, -1), "dilated keeps grad_out, row-major")


@SETTINGS
@given(conv_cases())
def test_padded_grad_out_pads_span_minus_one_plus_the_remainder(case):
    spec = case.spec
    ig = input_grad_arrays(spec, case.w, case.grad_out)
    (eH, eW), (remH, remW) = spec.span, spec.remainder
    sides = ((eH - 1, eH - 1 + remH), (eW - 1, eW - 1 + remW))
    dH, dW = spec.dilated_out_size
    shape = (dH + 2 * (eH - 1) + remH, dW + 2 * (eW - 1) + remW)
    assert ig.padded.shape == (spec.batch, spec.out_channels, *shape), (
        f"padded grad_out shape: dil*(k-1) per side + remainder {spec.remainder} at bottom/right"
    )
    assert (ig.padded_ring == border_mask(shape, sides)).all(), "padded_ring marks that padding"
    assert (ig.padded[..., ig.padded_ring] == 0).all(), "the padding of grad_out is zeros"
    assert_array(
        ig.padded[..., ~ig.padded_ring],
        ig.dilated.reshape(*ig.dilated.shape[:2], -1),
        "padded grad_out off its ring is the dilated grad_out",
    )
    expected_holes = np.zeros(shape, dtype=bool)
    expected_holes[sides[0][0] : sides[0][0] + dH, sides[1][0] : sides[1][0] + dW] = (
        stride_zeros_mask(spec.out_size, spec.stride)
    )
    assert (ig.padded_dilation_mask == expected_holes).all(), (
        "padded_dilation_mask: the dilation zeros in padded coordinates, False on the ring"
    )


@SETTINGS
@given(conv_cases())
def test_rotated_kernel_swaps_channels_and_turns_180_degrees(case):
    ig = input_grad_arrays(case.spec, case.w, case.grad_out)
    K, C = case.w.shape[:2]
    assert ig.w_rot.shape == (C, K, *case.w.shape[2:]), "w_rot is (C_in, C_out, kH, kW)"
    for k in range(K):
        for c in range(C):
            assert_array(ig.w_rot[c, k], np.rot90(case.w[k, c], 2), f"w_rot[{c}, {k}]")


@SETTINGS
@given(conv_cases())
def test_grad_x_padded_ring_and_mask(case):
    spec = case.spec
    ig = input_grad_arrays(spec, case.w, case.grad_out)
    assert ig.grad_x_padded.shape == spec.padded_shape
    rH, rW = spec.reach
    assert (ig.grad_x_padded[..., rH:, :] == 0).all(), "remainder rows get no gradient"
    assert (ig.grad_x_padded[..., :, rW:] == 0).all(), "remainder cols get no gradient"
    assert (ig.pad_mask == border_mask(spec.padded_size, spec.padding)).all(), "pad_mask"
    expected_ring = np.where(ig.pad_mask, ig.grad_x_padded, 0.0)
    assert_array(ig.ring, expected_ring, "ring = grad_x_padded on pad_mask, 0 elsewhere")
    assert ig.grad_x.shape == spec.input_shape


@SETTINGS
@given(conv_cases(modes=("zeros",)))
def test_zero_padding_drops_the_ring_by_cropping(case):
    spec = case.spec
    ig = input_grad_arrays(spec, case.w, case.grad_out)
    (top, _), (left, _) = spec.padding
    H, W = spec.in_size
    cropped = ig.grad_x_padded[..., top : top + H, left : left + W]
    assert_array(ig.grad_x, cropped, "zeros: grad_x is grad_x_padded cropped")
    dropped = ig.grad_x_padded.sum() - ig.ring.sum()
    assert np.isclose(ig.grad_x.sum(), dropped), "zeros: Σ grad_x = Σ grad_x_padded − Σ ring"


@SETTINGS
@given(conv_cases(modes=("reflect", "replicate", "circular")))
def test_copy_padding_folds_the_ring_back_conserving_the_total(case):
    ig = input_grad_arrays(case.spec, case.w, case.grad_out)
    assert np.isclose(ig.grad_x.sum(), ig.grad_x_padded.sum()), (
        f"{case.spec.padding_mode}: folding the ring back must conserve Σ grad for {case}"
    )


def test_reflect_fold_by_hand():
    """1×3 input, reflect pad 1 on the columns, kernel [1]: grad_x_padded = grad_out = [a,b,c,d,e]
    over padded cols (x1, x0, x1, x2, x1), so grad_x = [b, a + c + e, d]."""
    spec = ConvSpec.create(
        (1, 1, 1, 3), (1, 1, 1, 1), padding=((0, 0), (1, 1)), padding_mode="reflect"
    )
    g = grid([[1.0, 10.0, 100.0, 1000.0, 10000.0]])
    ig = input_grad_arrays(spec, grid([[1.0]]), g)
    assert_array(ig.grad_x_padded, g, "a 1×1 identity kernel passes grad_out through")
    assert_array(ig.grad_x, grid([[10.0, 10101.0, 1000.0]]), "reflect folds cols 0 and 4 onto x1")


# --- hand-worked geometry ------------------------------------------------------------------------
F, T = False, True
GEOMETRY_ROWS = [
    # input HW, kernel HW, kwargs, dilation_mask, padded shape, remainder
    pytest.param(
        (5, 5),
        (3, 3),
        {"stride": 2},
        [[F, T, F], [T, T, T], [F, T, F]],
        (7, 7),
        (0, 0),
        id="recitation 5x5 k3 s2: one zero between cells, pad 2 per side",
    ),
    pytest.param(
        (6, 6),
        (3, 3),
        {"stride": 2},
        [[F, T, F], [T, T, T], [F, T, F]],
        (8, 8),
        (1, 1),
        id="6x6 k3 s2: remainder 1 adds a row and col bottom/right",
    ),
    pytest.param(
        (7, 5),
        (3, 2),
        {"stride": (3, 1), "padding": ((0, 1), (2, 0))},
        [[F] * 6, [T] * 6, [T] * 6, [F] * 6],
        (4 + 2 * 2 + 2, 6 + 2 * 1 + 0),
        (2, 0),
        id="7x5 k3x2 s(3,1) pad ((0,1),(2,0)): out 2x6, remainder 2 rows",
    ),
    pytest.param(
        (5, 5),
        (2, 2),
        {"dilation": 2},
        [[F] * 3] * 3,
        (3 + 4, 3 + 4),
        (0, 0),
        id="5x5 k2 d2 s1: no dilation zeros, pad dil*(k-1) = 2 per side",
    ),
]


@pytest.mark.parametrize(("size", "ksize", "kwargs", "mask", "padded", "remainder"), GEOMETRY_ROWS)
def test_geometry_rows(size, ksize, kwargs, mask, padded, remainder):
    spec = ConvSpec.create((1, 1, *size), (1, 1, *ksize), **kwargs)
    rng = np.random.default_rng(0)
    ig = input_grad_arrays(
        spec, rng.standard_normal(spec.weight_shape), rng.standard_normal(spec.output_shape)
    )
    assert spec.remainder == remainder, "remainder arithmetic"
    assert ig.dilation_mask.tolist() == mask, "dilation_mask, written out by hand"
    assert ig.padded.shape[2:] == padded, "padded grad_out shape, worked by hand"
    assert ig.grad_x_padded.shape[2:] == spec.padded_size, "full correlation lands on x_padded"


def test_recitation_stride2_textbook_route_by_hand():
    """5×5 ⋆ 3×3 at stride 2, grad_out [[1,2],[3,4]], w = 1..9: ∂L/∂x₂₂ = 1·9 + 2·7 + 3·3 + 4·1."""
    spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), stride=2)
    w = grid(np.arange(1.0, 10.0).reshape(3, 3))
    ig = input_grad_arrays(spec, w, grid([[1, 2], [3, 4]]))
    expected_padded = np.zeros((7, 7))
    expected_padded[2, 2], expected_padded[2, 4] = 1, 2
    expected_padded[4, 2], expected_padded[4, 4] = 3, 4
    assert_array(ig.padded[0, 0], expected_padded, "dilated grad_out padded by 2 per side")
    assert_array(ig.w_rot[0, 0], [[9, 8, 7], [6, 5, 4], [3, 2, 1]], "1..9 rotated 180°")
    assert ig.grad_x[0, 0, 2, 2] == 1 * 9 + 2 * 7 + 3 * 3 + 4 * 1, "∂L/∂x₂₂ has four terms"
    assert ig.grad_x[0, 0, 0, 0] == 1 * 1, "∂L/∂x₀₀ = ∂L/∂y₀₀·w₀₀"
    assert ig.grad_x[0, 0, 0, 2] == 1 * 3 + 2 * 1, "∂L/∂x₀₂ = ∂L/∂y₀₀·w₀₂ + ∂L/∂y₀₁·w₀₀"


# --- layer(), purity, dtype, bad shapes ----------------------------------------------------------
def _assert_same_stages(a, b, what: str) -> None:
    for f in dataclasses.fields(a):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if isinstance(va, np.ndarray):
            assert_array(va, vb, f"{what}.{f.name}")
        else:
            assert va == vb, f"{what}.{f.name}"


@settings(max_examples=examples(30), deadline=None)
@given(conv_cases())
def test_layer_bundles_the_three_routes(case):
    got = layer(case.spec, case.x, case.w, case.grad_out, case.bias)
    assert isinstance(got, Layer)
    _assert_same_stages(got.forward, forward_arrays(case.spec, case.x, case.w, case.bias), "fwd")
    _assert_same_stages(
        got.input_grad, input_grad_arrays(case.spec, case.w, case.grad_out), "input_grad"
    )
    _assert_same_stages(
        got.weight_grad, weight_grad_arrays(case.spec, case.x, case.grad_out), "weight_grad"
    )


@settings(max_examples=examples(30), deadline=None)
@given(conv_cases())
def test_stages_never_mutate_their_inputs(case):
    x, w, g, b = read_only(case.x, case.w, case.grad_out, case.bias)
    got = layer(case.spec, x, w, g, b)  # a write into a read-only input raises here
    scatter_grad_x_padded(case.spec, w, g)
    for name, arr, orig in (("x", x, case.x), ("w", w, case.w), ("grad_out", g, case.grad_out)):
        assert_array(arr, orig, f"{name} unchanged")
    assert_array(got.forward.x, case.x, "ForwardArrays.x is the given input")


ROUTES = [
    # a float64 bias does not promote a float32 layer (as conv2d)
    pytest.param(lambda s, x, w, g: forward_arrays(s, x, w, np.ones(s.out_channels)), id="forward"),
    pytest.param(lambda s, x, w, g: input_grad_arrays(s, w, g), id="input_grad"),
    pytest.param(lambda s, x, w, g: weight_grad_arrays(s, x, g), id="weight_grad"),
    pytest.param(lambda s, x, w, g: scatter_grad_x_padded(s, w, g), id="scatter"),
]

DTYPE_SPECS = [
    pytest.param({"stride": 2, "padding": 1}, id="zeros s2 p1"),
    pytest.param({"padding": ((1, 2), (0, 1)), "padding_mode": "reflect"}, id="reflect sides"),
    pytest.param({"padding": "same", "dilation": 2, "padding_mode": "circular"}, id="circular"),
    pytest.param({"padding": 2, "padding_mode": "replicate", "stride": (1, 3)}, id="replicate"),
]


def _float_arrays(result):
    if isinstance(result, np.ndarray):
        return {"result": result}
    return {
        f.name: getattr(result, f.name)
        for f in dataclasses.fields(result)
        if isinstance(getattr(result, f.name), np.ndarray)
        and getattr(result, f.name).dtype.kind == "f"
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", DTYPE_SPECS)
@pytest.mark.parametrize("route", ROUTES)
def test_float_dtype_is_kept(route, kwargs, dtype):
    spec = ConvSpec.create((2, 2, 5, 6), (3, 2, 3, 2), **kwargs)
    rng = np.random.default_rng(1)
    x, w, g = (
        rng.standard_normal(s).astype(dtype)
        for s in (spec.input_shape, spec.weight_shape, spec.output_shape)
    )
    arrays = _float_arrays(route(spec, x, w, g))
    assert len(arrays) >= 1, "the route returned no float arrays to check"
    for name, arr in arrays.items():
        assert arr.dtype == dtype, f"{name} became {arr.dtype}; {dtype.__name__} must stay"


BAD_SHAPES = [
    pytest.param(
        lambda s, x, w, g: forward_arrays(s, x[:, :, :-1], w),
        "the input x",
        id="forward: x one row short",
    ),
    pytest.param(
        lambda s, x, w, g: forward_arrays(s, x, w, np.ones(5)),
        "the bias",
        id="forward: bias of the wrong length",
    ),
    pytest.param(
        lambda s, x, w, g: input_grad_arrays(s, w[:, :, :, :1], g),
        "the kernel w",
        id="input_grad: kernel one column short",
    ),
    pytest.param(
        lambda s, x, w, g: input_grad_arrays(s, w, g[:1, :1]),
        "grad_out",
        id="input_grad: grad_out of another layer",
    ),
    pytest.param(
        lambda s, x, w, g: weight_grad_arrays(s, x[0], g),
        "the input x",
        id="weight_grad: x without batch axis",
    ),
    pytest.param(
        lambda s, x, w, g: scatter_grad_x_padded(s, w, g[..., :-1]),
        "grad_out",
        id="scatter: grad_out one column short",
    ),
]


@pytest.mark.parametrize(("call", "name"), BAD_SHAPES)
def test_arrays_of_the_wrong_shape_are_refused_by_name(call, name):
    spec = ConvSpec.create((2, 2, 5, 5), (3, 2, 3, 3), padding=1)
    x, w, g = (np.ones(s) for s in (spec.input_shape, spec.weight_shape, spec.output_shape))
    with pytest.raises(ConvSpecError, match=name):
        call(spec, x, w, g)


@pytest.mark.parametrize("cls", [ForwardArrays, InputGradArrays, WeightGradArrays, Layer])
def test_stages_are_built_by_name_only(cls):
    """Four same-shape boolean masks in one stage: a positional slip would pass silently."""
    fields = [f.name for f in dataclasses.fields(cls)]
    with pytest.raises(TypeError):
        cls(*fields)

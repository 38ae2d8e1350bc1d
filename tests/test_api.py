"""The public API (conv2d, conv2d_input, conv2d_weight, conv2d_bias) against four oracles:

1. known answers worked by hand (the seeds' examples, corrected where they are wrong);
2. the plain-loop reference in `convviz.engine.reference`, over random configurations (hypothesis);
3. central finite differences of the forward;
4. the adjoint identity ⟨conv2d(x, w), g⟩ = ⟨x, conv2d_input⟩ = ⟨w, conv2d_weight⟩.
Then dtypes and the promise not to mutate inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from oracles import assert_array, conv_cases, grid, inner, numeric_grad, read_only
from quick import examples

from convviz import conv2d, conv2d_bias, conv2d_input, conv2d_weight
from convviz.engine.reference import conv2d_input_loop, conv2d_loop, conv2d_weight_loop

# =================================================================================================
# 1. Known answers, by hand
# =================================================================================================

# d2l corr2d: 0·0 + 1·1 + 3·2 + 4·3 = 19, 1·0 + 2·1 + 4·2 + 5·3 = 25, ...
D2L_X = grid([[0, 1, 2], [3, 4, 5], [6, 7, 8]])
D2L_K = grid([[0, 1], [2, 3]])

# Recitation (seed 001), 3×3 ⋆ 2×2 at stride 1, 1-based names. X = 1..9, F = [[1, 2], [3, 4]],
# dL/dO = [[1, 10], [100, 1000]]: every product lands in its own decimal digit, so the digits of a
# gradient cell spell out which dL/dO terms (units: O11, tens: O12, ...) reached it.
REC_X = grid([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
REC_F = grid([[1, 2], [3, 4]])
REC_DO = grid([[1, 10], [100, 1000]])

# Recitation, 5×5 ⋆ 3×3 at stride 2, 0-based names: f = 1..9, x[r, c] = 5r + c, same dL/dy.
REC2_F = grid([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
REC2_X = grid(np.arange(25).reshape(5, 5))
REC2_DY = REC_DO

# Keras answer (seed 000): x = 1..9, Sobel-like kernel, 'same' padding (1 per side), grad_out ones.
KERAS_X = grid([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
KERAS_K = grid([[1, 0, -1], [2, 0, -2], [1, 0, -1]])
KERAS_G = np.ones((1, 1, 3, 3))

KNOWN_ANSWERS = [
    pytest.param(
        lambda: conv2d(D2L_X, D2L_K),
        [[19, 25], [37, 43]],
        id="d2l corr2d forward",
    ),
    pytest.param(
        # O11 = X11F11 + X12F12 + X21F21 + X22F22 = 1 + 4 + 12 + 20 = 37
        lambda: conv2d(REC_X, REC_F),
        [[37, 47], [67, 77]],
        id="recitation s1 forward",
    ),
    pytest.param(
        # dX12 = dO11·F12 + dO12·F11 = 1·2 + 10·1 = 12;  dX22 = 1·4 + 10·3 + 100·2 + 1000·1 = 1234
        lambda: conv2d_input((1, 1, 3, 3), REC_F, REC_DO),
        [[1, 12, 20], [103, 1234, 2040], [300, 3400, 4000]],
        id="recitation s1 dL/dX",
    ),
    pytest.param(
        # dF11 = dO11·X11 + dO12·X12 + dO21·X21 + dO22·X22 = 1 + 20 + 400 + 5000 = 5421
        lambda: conv2d_weight(REC_X, (1, 1, 2, 2), REC_DO),
        [[5421, 6532], [8754, 9865]],
        id="recitation s1 dL/dF",
    ),
    pytest.param(
        # dx02 = dy00·f02 + dy01·f00 = 3 + 10 = 13;  dx22 = 9 + 10·7 + 100·3 + 1000·1 = 1379
        lambda: conv2d_input((1, 1, 5, 5), REC2_F, REC2_DY, stride=2),
        [
            [1, 2, 13, 20, 30],
            [4, 5, 46, 50, 60],
            [107, 208, 1379, 2080, 3090],
            [400, 500, 4600, 5000, 6000],
            [700, 800, 7900, 8000, 9000],
        ],
        id="recitation s2 dL/dx",
    ),
    pytest.param(
        # df[a,b] = Σ dy[i,j]·x[2i+a, 2j+b] = Σ dy[i,j]·(5(2i+a) + 2j+b)
        #         = (5a+b)·Σdy + Σ dy[i,j]·(10i + 2j) = 1111·(5a+b) + (0 + 20 + 1000 + 12000)
        lambda: conv2d_weight(REC2_X, (1, 1, 3, 3), REC2_DY, stride=2),
        [[13020 + 1111 * (5 * a + b) for b in range(3)] for a in range(3)],
        id="recitation s2 dL/df",
    ),
    pytest.param(
        # y00: padded window [[0,0,0],[0,1,2],[0,4,5]] against K, row by row:
        #      (0·1 + 0·0 + 0·(-1)) + (0·2 + 1·0 + 2·(-2)) + (0·1 + 4·0 + 5·(-1)) = -4 - 5 = -9
        # y11: the window is x itself: (1-3)·1 + (4-6)·2 + (7-9)·1 = -2 - 4 - 2 = -8
        lambda: conv2d(KERAS_X, KERAS_K, padding="same"),
        [[-9, -6, 9], [-20, -8, 20], [-21, -6, 21]],
        id="keras same forward",
    ),
    pytest.param(
        # with grad_out ones, dx[r,c] sums the kernel taps whose window holds x[r,c]:
        # dx00 = taps rows 0-1, cols 0-1 = 1 + 0 + 2 + 0 = 3;  dx10 = rows 0-2, cols 0-1 = 4
        lambda: conv2d_input((1, 1, 3, 3), KERAS_K, KERAS_G, padding="same"),
        [[3, 0, -3], [4, 0, -4], [3, 0, -3]],
        id="keras same dL/dx",
    ),
    pytest.param(
        # dw[a,b] = sum of the 3×3 block of the padded x at (a, b):
        # dw00 = 1 + 2 + 4 + 5 = 12;  dw11 = 1 + ... + 9 = 45;  dw21 = 4+5+6+7+8+9 = 39
        lambda: conv2d_weight(KERAS_X, (1, 1, 3, 3), KERAS_G, padding="same"),
        [[12, 21, 16], [27, 45, 33], [24, 39, 28]],
        id="keras same dL/dw",
    ),
    pytest.param(lambda: conv2d_bias(KERAS_G), [9], id="keras bias grad = 9 ones"),
]


@pytest.mark.parametrize(("compute", "expected"), KNOWN_ANSWERS)
def test_known_answer(compute, expected):
    got, expected = compute(), np.asarray(expected, dtype=np.float64)
    if expected.ndim == 2:  # one image, one channel: (1, 1, H, W)
        expected = expected[None, None]
    assert_array(got, expected, "hand-worked answer")


# The recitation's symbolic formulas (1-based), each term (dL/dO cell, F cell), evaluated with
# distinct values. Written as the seed states them; the seed's stride-1 list is correct.
S1_INPUT_GRAD = [
    ("11", [("11", "11")]),
    ("12", [("11", "12"), ("12", "11")]),
    ("13", [("12", "12")]),
    ("21", [("11", "21"), ("21", "11")]),
    ("22", [("11", "22"), ("12", "21"), ("21", "12"), ("22", "11")]),
    ("23", [("12", "22"), ("22", "12")]),
    ("31", [("21", "21")]),
    ("32", [("21", "22"), ("22", "21")]),
    ("33", [("22", "22")]),
]


def _cell(a: np.ndarray, name: str, base: int) -> float:
    """a[r, c] of a (1, 1, H, W) array named 'rc' in `base`-based indices."""
    return float(a[0, 0, int(name[0]) - base, int(name[1]) - base])


def _evaluate(terms, grad: np.ndarray, kernel: np.ndarray, base: int) -> float:
    return sum(_cell(grad, g, base) * _cell(kernel, f, base) for g, f in terms)


@pytest.mark.parametrize(("cell", "terms"), S1_INPUT_GRAD, ids=[f"dX{c}" for c, _ in S1_INPUT_GRAD])
def test_recitation_stride1_input_formulas(cell, terms):
    F, dO = np.array([[[[2.0, 3.0], [5.0, 7.0]]]]), np.array([[[[11.0, 13.0], [17.0, 19.0]]]])
    grad_x = conv2d_input((1, 1, 3, 3), F, dO)
    assert _cell(grad_x, cell, 1) == _evaluate(terms, dO, F, 1), f"dL/dX{cell}"


# Stride 2, 0-based; the dx22 row is the corrected one (the seed lists f20 twice).
S2_INPUT_GRAD = [
    ("00", [("00", "00")]),
    ("01", [("00", "01")]),
    ("02", [("00", "02"), ("01", "00")]),
    ("22", [("00", "22"), ("01", "20"), ("10", "02"), ("11", "00")]),
]
SEED_WRONG_DX22 = [("00", "22"), ("01", "20"), ("10", "20"), ("11", "00")]


@pytest.mark.parametrize(("cell", "terms"), S2_INPUT_GRAD, ids=[f"dx{c}" for c, _ in S2_INPUT_GRAD])
def test_recitation_stride2_input_formulas(cell, terms):
    f = grid(np.arange(2.0, 11.0).reshape(3, 3) ** 2)  # 4, 9, 16, ...: no two sums collide
    dy = grid([[1, 10], [100, 1000]])
    grad_x = conv2d_input((1, 1, 5, 5), f, dy, stride=2)
    assert _cell(grad_x, cell, 0) == _evaluate(terms, dy, f, 0), f"dL/dx{cell}"
    if cell == "22":
        assert _cell(grad_x, cell, 0) != _evaluate(SEED_WRONG_DX22, dy, f, 0), "seed's typo"


def test_multichannel_one_by_one_kernel_is_a_channel_mix():
    """Seed 002's structure at its smallest: with 1×1 kernels y[k] = Σ_c W[k, c]·x[c]."""
    x = np.stack([np.full((3, 4), 1.0), np.full((3, 4), 2.0)])[None]  # (1, 2, 3, 4)
    w = np.array([[1.0, 10.0], [100.0, 1000.0]]).reshape(2, 2, 1, 1)
    y = conv2d(x, w)
    assert_array(y, np.stack([np.full((3, 4), 21.0), np.full((3, 4), 2100.0)])[None], "1×1 mix")
    g = np.stack([np.full((3, 4), 1.0), np.full((3, 4), 3.0)])[None]
    # dX[c] = Σ_k W[k, c]·g[k]: c=0 → 1 + 300 = 301, c=1 → 10 + 3000 = 3010
    grad_x = conv2d_input(x.shape, w, g)
    assert_array(grad_x, np.stack([np.full((3, 4), 301.0), np.full((3, 4), 3010.0)])[None], "dX")
    # dW[k, c] = Σ g[k]·x[c] over 12 cells: [[12·1·1, 12·1·2], [12·3·1, 12·3·2]]
    assert_array(conv2d_weight(x, w.shape, g), [[[[12.0]], [[24.0]]], [[[36.0]], [[72.0]]]], "dW")


def test_seed_002_shapes():
    """Input 5×100×100, 10 filters of 5×5×5 → output 10×96×96; dE/dF per (filter, channel)."""
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((1, 5, 100, 100)), rng.standard_normal((10, 5, 5, 5))
    y = conv2d(x, w)
    assert y.shape == (1, 10, 96, 96)
    assert conv2d_weight(x, w.shape, y).shape == (10, 5, 5, 5)
    assert conv2d_input(x.shape, w, y).shape == (1, 5, 100, 100)


def test_remainder_rows_get_zero_gradient():
    """H=6, k=3, s=2: windows reach rows 0..4; row 5 is the remainder and gets no gradient."""
    w = np.ones((1, 1, 3, 3))
    grad_x = conv2d_input((1, 1, 6, 6), w, np.ones((1, 1, 2, 2)), stride=2)
    assert not grad_x[0, 0, 5, :].any() and not grad_x[0, 0, :, 5].any()
    assert grad_x[0, 0, :5, :5].all()


# =================================================================================================
# 2. The plain-loop reference, over random configurations
# =================================================================================================
LOOP = settings(max_examples=examples(150), deadline=None)


@LOOP
@given(conv_cases())
def test_conv2d_matches_loop(case):
    got = conv2d(case.x, case.w, case.bias, **case.kwargs)
    want = conv2d_loop(case.x, case.w, case.bias, **case.kwargs)
    assert_array(got, want, f"conv2d vs loop, {case!r}")


@LOOP
@given(conv_cases())
def test_conv2d_input_matches_loop(case):
    got = conv2d_input(case.x.shape, case.w, case.grad_out, **case.kwargs)
    want = conv2d_input_loop(case.x.shape, case.w, case.grad_out, **case.kwargs)
    assert_array(got, want, f"conv2d_input vs loop, {case!r}")


@LOOP
@given(conv_cases())
def test_conv2d_weight_matches_loop(case):
    got = conv2d_weight(case.x, case.w.shape, case.grad_out, **case.kwargs)
    want = conv2d_weight_loop(case.x, case.w.shape, case.grad_out, **case.kwargs)
    assert_array(got, want, f"conv2d_weight vs loop, {case!r}")


# =================================================================================================
# 3. Finite differences of the forward
# =================================================================================================
FD_CONFIGS = [
    # x shape, w shape, keyword arguments
    pytest.param((1, 1, 4, 5), (1, 1, 2, 3), {}, id="valid s1"),
    pytest.param((2, 2, 5, 4), (3, 2, 3, 3), {"padding": 1}, id="zeros p1, channels, batch"),
    pytest.param((1, 1, 5, 5), (1, 1, 4, 2), {"padding": "same"}, id="same, even kernel"),
    pytest.param((1, 2, 7, 8), (2, 2, 3, 3), {"stride": 2, "dilation": 2}, id="s2 d2"),
    pytest.param((1, 1, 6, 7), (1, 1, 3, 2), {"stride": (2, 3)}, id="remainder rows and cols"),
    pytest.param(
        (1, 2, 4, 5),
        (2, 2, 3, 3),
        {"padding": ((1, 2), (2, 1)), "padding_mode": "reflect"},
        id="reflect per-side",
    ),
    pytest.param(
        (1, 1, 4, 4),
        (2, 1, 3, 3),
        {"padding": (2, 3), "padding_mode": "circular", "stride": 2},
        id="circular s2",
    ),
    pytest.param(
        (2, 1, 3, 4),
        (1, 1, 2, 2),
        {"padding": 3, "padding_mode": "replicate", "dilation": 2},
        id="replicate wider than input, d2",
    ),
    pytest.param((1, 1, 3, 3), (1, 1, 3, 3), {"padding": "full"}, id="full"),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "kwargs"), FD_CONFIGS)
def test_gradients_match_finite_differences(x_shape, w_shape, kwargs):
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    g = rng.standard_normal(conv2d(x, w, **kwargs).shape)

    def loss_of_x(x_):
        return inner(conv2d(x_, w, **kwargs), g)

    def loss_of_w(w_):
        return inner(conv2d(x, w_, **kwargs), g)

    assert_array(
        conv2d_input(x_shape, w, g, **kwargs),
        numeric_grad(loss_of_x, x),
        "grad_x vs FD",
        rtol=1e-6,
        atol=1e-7,
    )
    assert_array(
        conv2d_weight(x, w_shape, g, **kwargs),
        numeric_grad(loss_of_w, w),
        "grad_w vs FD",
        rtol=1e-6,
        atol=1e-7,
    )
    b = rng.standard_normal(w_shape[0])
    assert_array(
        conv2d_bias(g),
        numeric_grad(lambda b_: inner(conv2d(x, w, b_, **kwargs), g), b),
        "grad_b vs FD",
        rtol=1e-6,
        atol=1e-7,
    )


# =================================================================================================
# 4. The adjoint identity (every padding mode: the forward is linear in x and in w)
# =================================================================================================
@settings(max_examples=examples(250), deadline=None)
@given(conv_cases(max_k=4))
def test_adjoint_identity(case):
    y_dot_g = inner(conv2d(case.x, case.w, **case.kwargs), case.grad_out)
    x_dot_gx = inner(case.x, conv2d_input(case.x.shape, case.w, case.grad_out, **case.kwargs))
    w_dot_gw = inner(case.w, conv2d_weight(case.x, case.w.shape, case.grad_out, **case.kwargs))
    scale = max(1.0, np.abs(case.grad_out).sum() * np.abs(case.x).max() * np.abs(case.w).sum())
    assert abs(y_dot_g - x_dot_gx) <= 1e-12 * scale, f"⟨y, g⟩ {y_dot_g} vs ⟨x, grad_x⟩ {x_dot_gx}"
    assert abs(y_dot_g - w_dot_gw) <= 1e-12 * scale, f"⟨y, g⟩ {y_dot_g} vs ⟨w, grad_w⟩ {w_dot_gw}"
    with_bias = conv2d(case.x, case.w, case.bias, **case.kwargs)
    b_dot_gb = inner(case.bias, conv2d_bias(case.grad_out))
    assert np.isclose(inner(with_bias, case.grad_out) - y_dot_g, b_dot_gb, rtol=1e-9, atol=1e-9)


# =================================================================================================
# dtypes
# =================================================================================================
def _all_four(x, w, g, b, **kw):
    """Results of the four API functions, by name."""
    return {
        "conv2d": conv2d(x, w, b, **kw),
        "conv2d_input": conv2d_input(np.shape(x), w, g, **kw),
        "conv2d_weight": conv2d_weight(x, np.shape(w), g, **kw),
        "conv2d_bias": conv2d_bias(g),
    }


def _operands(dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(-5, 6, (2, 2, 6, 5)).astype(dtype)
    w = rng.integers(-3, 4, (3, 2, 3, 2)).astype(dtype)
    g = rng.integers(-2, 3, (2, 3, 3, 3)).astype(dtype)  # stride 2, padding 1
    b = rng.integers(-2, 3, 3).astype(dtype)
    return x, w, g, b


DTYPE_ROWS = [
    pytest.param(np.float32, np.float32, id="float32 stays float32"),
    pytest.param(np.float64, np.float64, id="float64 stays float64"),
    pytest.param(np.int64, np.float64, id="int64 becomes float64"),
    pytest.param(np.int32, np.float64, id="int32 becomes float64"),
]


@pytest.mark.parametrize(("dtype", "expected"), DTYPE_ROWS)
def test_result_dtype(dtype, expected):
    results = _all_four(*_operands(dtype), stride=2, padding=1)
    wrong = {name: r.dtype for name, r in results.items() if r.dtype != expected}
    assert not wrong, f"expected {np.dtype(expected)}, got {wrong}"


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_float32_close_to_float64(mode):
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 2, 6, 5)), rng.standard_normal((3, 2, 3, 2))
    g, b = rng.standard_normal((2, 3, 3, 3)), rng.standard_normal(3)
    kw = {"stride": 2, "padding": 1, "padding_mode": mode}
    single = _all_four(*(a.astype(np.float32) for a in (x, w, g, b)), **kw)
    double = _all_four(x, w, g, b, **kw)
    for name in double:
        assert single[name].dtype == np.float32, name
        assert_array(
            single[name], double[name], f"{name} float32 vs float64, {mode}", rtol=1e-5, atol=1e-5
        )


def test_lists_are_accepted():
    y = conv2d([[[[0, 1, 2], [3, 4, 5], [6, 7, 8]]]], [[[[0, 1], [2, 3]]]])
    assert_array(y, grid([[19, 25], [37, 43]]), "nested lists in")
    assert y.dtype == np.float64


# =================================================================================================
# The API never mutates its inputs
# =================================================================================================
@pytest.mark.parametrize("mode", ["zeros", "reflect"])
def test_api_does_not_mutate_inputs(mode):
    x, w, g, b = _operands(np.float64)
    kw = {"stride": 2, "padding": 1, "padding_mode": mode}
    frozen = read_only(x, w, g, b)  # any in-place write raises
    _all_four(*frozen, **kw)
    for name, before, after in zip("xwgb", (x, w, g, b), frozen):
        assert np.array_equal(before, after), f"{name} changed"

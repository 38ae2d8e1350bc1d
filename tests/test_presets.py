"""Presets and example values: every preset is a valid layer with values of the right shapes; the
hand-worked presets give the numbers worked out below; example values are small, seeded integers.

Oracles: arrays worked out by hand (checked against the loop reference), and the documented
ranges and kernels of `values`.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from oracles import assert_array, grid

from convviz import conv2d, conv2d_input, conv2d_weight
from convviz.engine.arrays import forward_arrays, input_grad_arrays, weight_grad_arrays
from convviz.engine.formulas import forward_formula, input_grad_formula, weight_grad_formula
from convviz.engine.reference import conv2d_input_loop, conv2d_loop, conv2d_weight_loop
from convviz.engine.spec import PADDING_MODES, ConvSpec
from convviz.engine.values import (
    DRAWS,
    GRAD_OUT_KINDS,
    GRAD_OUT_LABELS,
    NAMED_KERNELS,
    example_grad_out,
    example_w,
    example_x,
    layer_values,
    mse_target,
    named_kernel,
    random_ints,
)
from convviz.model.presets import DEFAULT_PRESET, PRESETS, PRESETS_BY_KEY, Preset

PRESET_PARAMS = [pytest.param(p, id=p.key) for p in PRESETS]


def run(preset: Preset):
    """(spec, x, w, y, grad_out) of a preset, through the public API."""
    spec = preset.spec()
    x, w = preset.values()
    kwargs = {
        "stride": spec.stride,
        "padding": spec.padding,
        "dilation": spec.dilation,
        "padding_mode": spec.padding_mode,
    }
    y = conv2d(x, w, **kwargs)
    return spec, x, w, y, preset.grad_out_for(y), kwargs


def is_small_int(a: np.ndarray, low: int, high: int) -> bool:
    return bool(np.all(a == np.round(a)) and a.min() >= low and a.max() <= high)


# --- the table itself ----------------------------------------------------------------------------
def test_preset_keys_are_unique_and_indexed():
    keys = [p.key for p in PRESETS]
    assert len(keys) == len(set(keys)), f"duplicate preset keys in {keys}"
    assert set(PRESETS_BY_KEY) == set(keys) and all(PRESETS_BY_KEY[p.key] is p for p in PRESETS)
    assert DEFAULT_PRESET in PRESETS


@pytest.mark.parametrize("preset", PRESET_PARAMS)
def test_every_preset_builds_a_layer_with_values_of_the_right_shapes(preset):
    spec, x, w, y, g, _ = run(preset)
    assert isinstance(spec, ConvSpec) and spec.padding_mode in PADDING_MODES
    assert spec.input_shape == preset.input_shape and spec.weight_shape == preset.weight_shape
    assert x.shape == spec.input_shape and w.shape == spec.weight_shape
    assert y.shape == g.shape == spec.output_shape, "grad_out has y's shape"
    assert preset.kernel in (*NAMED_KERNELS, "random") and preset.grad_out in GRAD_OUT_KINDS
    assert preset.title and preset.note, "the menu shows a title and a note"
    for name, a in (("x", x), ("w", w), ("grad_out", g)):
        assert a.dtype == np.float64 and np.isfinite(a).all(), name
        assert np.all(a == np.round(a)), f"{name} must be whole numbers a student can add"


@pytest.mark.parametrize("preset", PRESET_PARAMS)
def test_preset_values_are_deterministic(preset):
    x1, w1 = preset.values()
    x2, w2 = preset.values()
    assert_array(x1, x2, f"{preset.key}: x from the same seed")
    assert_array(w1, w2, f"{preset.key}: w from the same seed")


SMALL = [pytest.param(p, id=p.key) for p in PRESETS if np.prod(p.input_shape) <= 200]


@pytest.mark.parametrize("preset", SMALL)
def test_small_presets_agree_with_the_loop_reference(preset):
    _, x, w, y, g, kwargs = run(preset)
    assert_array(y, conv2d_loop(x, w, **kwargs), f"{preset.key}: y")
    assert_array(
        conv2d_input(x.shape, w, g, **kwargs),
        conv2d_input_loop(x.shape, w, g, **kwargs),
        f"{preset.key}: grad_x",
    )
    assert_array(
        conv2d_weight(x, w.shape, g, **kwargs),
        conv2d_weight_loop(x, w.shape, g, **kwargs),
        f"{preset.key}: grad_w",
    )


# --- hand-worked presets -------------------------------------------------------------------------
def test_d2l_preset_gives_d2l_answer():
    _, _, _, y, _, _ = run(PRESETS_BY_KEY["d2l"])
    assert_array(y, grid([[19, 25], [37, 43]]), "0·0 + 1·1 + 3·2 + 4·3 = 19 …")


def test_keras_same_preset_by_hand():
    """Input 1..9, Sobel x [[1,0,-1],[2,0,-2],[1,0,-1]], 'same' pads 1 per side, grad_out ones.

    y₀₀ = window [[0,0,0],[0,1,2],[0,4,5]]·w = (1·0 + 2·(-2)) + (4·0 + 5·(-1)) = -9.
    grad_x₀₀ = Σ of the taps that reach x₀₀ = w rows 0–1 × cols 0–1 = 1 + 0 + 2 + 0 = 3.
    grad_w₀₀ = Σ x_pad over the window at offset (0, 0) = 1 + 2 + 4 + 5 = 12.
    """
    preset = PRESETS_BY_KEY["keras-same"]
    spec, x, w, y, g, kwargs = run(preset)
    assert spec.padding == ((1, 1), (1, 1))
    assert_array(g, np.ones((1, 1, 3, 3)), "grad_out of ones (loss = Σ y)")
    assert_array(y, grid([[-9, -6, 9], [-20, -8, 20], [-21, -6, 21]]), "keras-same y")
    grad_x = conv2d_input(x.shape, w, g, **kwargs)
    assert_array(grad_x, grid([[3, 0, -3], [4, 0, -4], [3, 0, -3]]), "keras-same grad_x")
    grad_w = conv2d_weight(x, w.shape, g, **kwargs)
    assert_array(grad_w, grid([[12, 21, 16], [27, 45, 33], [24, 39, 28]]), "keras-same grad_w")


WORKED = [pytest.param(PRESETS_BY_KEY[k], id=k) for k in ("recitation-s1", "recitation-s2")]


@pytest.mark.parametrize("preset", WORKED)
def test_recitation_presets_show_every_factor(preset):
    """The recitation's examples are symbolic: their presets use numbers with no zero among x, w
    and grad_out, so no term of any formula reads '2·0' and hides which factor was used."""
    spec, x, w, y, g, _ = run(preset)
    for name, a in (("x", x), ("w", w), ("grad_out", g)):
        assert np.all(a != 0), f"{preset.key}: {name} has a zero: {a[0, 0]}"
    fwd, ig, wg = (
        forward_arrays(spec, x, w),
        input_grad_arrays(spec, w, g),
        weight_grad_arrays(spec, x, g),
    )
    formulas = [
        *(forward_formula(fwd, *i) for i in np.ndindex(y.shape)),
        *(input_grad_formula(ig, *i) for i in np.ndindex(x.shape)),
        *(weight_grad_formula(wg, *i) for i in np.ndindex(w.shape)),
    ]
    for f in formulas:
        for t in f.terms:
            assert t.vanishes or (t.left_value != 0 and t.right_value != 0), (f.text(), t)


def test_recitation_s1_preset_by_hand():
    """x = 1..9, f = [[1, 2], [3, 4]], ∂L/∂y = [[1, -2], [3, -1]] (0-based names).

    y₀₀ = 1·1 + 2·2 + 4·3 + 5·4 = 37 (the recitation's O11).
    ∂L/∂x₁₁ = ∂L/∂y₀₀·w₁₁ + ∂L/∂y₀₁·w₁₀ + ∂L/∂y₁₀·w₀₁ + ∂L/∂y₁₁·w₀₀
            = 1·4 + (-2)·3 + 3·2 + (-1)·1 = 3.
    ∂L/∂x₀₁ = ∂L/∂y₀₀·w₀₁ + ∂L/∂y₀₁·w₀₀ = 1·2 + (-2)·1 = 0.
    ∂L/∂w₀₀ = Σ ∂L/∂y[i, j]·x[i, j] = 1·1 + (-2)·2 + 3·4 + (-1)·5 = 4.
    """
    _, x, w, y, g, kwargs = run(PRESETS_BY_KEY["recitation-s1"])
    loop_y, loop_gx = conv2d_loop(x, w, **kwargs), conv2d_input_loop(x.shape, w, g, **kwargs)
    loop_gw = conv2d_weight_loop(x, w.shape, g, **kwargs)
    assert y[0, 0, 0, 0] == loop_y[0, 0, 0, 0] == 1 * 1 + 2 * 2 + 4 * 3 + 5 * 4 == 37
    assert loop_gx[0, 0, 1, 1] == 1 * 4 + (-2) * 3 + 3 * 2 + (-1) * 1 == 3
    assert loop_gx[0, 0, 0, 1] == 1 * 2 + (-2) * 1 == 0
    assert loop_gw[0, 0, 0, 0] == 1 * 1 + (-2) * 2 + 3 * 4 + (-1) * 5 == 4
    assert_array(conv2d_input(x.shape, w, g, **kwargs), loop_gx, "recitation-s1 grad_x")
    assert_array(conv2d_weight(x, w.shape, g, **kwargs), loop_gw, "recitation-s1 grad_w")


def test_recitation_s2_preset_by_hand():
    """x[r, c] = 1 + (5r + c) mod 9, f = 1..9, ∂L/∂y = [[1, 2], [3, 4]], stride 2.

    ∂L/∂x₂₂ = ∂L/∂y₀₀·w₂₂ + ∂L/∂y₀₁·w₂₀ + ∂L/∂y₁₀·w₀₂ + ∂L/∂y₁₁·w₀₀ = 1·9 + 2·7 + 3·3 + 4·1 = 36
    (the preset's note). ∂L/∂x₁₁ = ∂L/∂y₀₀·w₁₁ = 5: only one window covers it.
    y₀₀ = rows 1 2 3 / 6 7 8 / 2 3 4 against 1..9 = 1+4+9 + 24+35+48 + 14+24+36 = 195.
    """
    preset = PRESETS_BY_KEY["recitation-s2"]
    _, x, w, y, g, kwargs = run(preset)
    loop_gx = conv2d_input_loop(x.shape, w, g, **kwargs)
    assert loop_gx[0, 0, 2, 2] == 1 * 9 + 2 * 7 + 3 * 3 + 4 * 1 == 36
    assert loop_gx[0, 0, 1, 1] == 1 * 5
    assert "= 36" in preset.note
    assert y[0, 0, 0, 0] == conv2d_loop(x, w, **kwargs)[0, 0, 0, 0] == 195
    assert_array(conv2d_input(x.shape, w, g, **kwargs), loop_gx, "recitation-s2 grad_x")


GEOMETRY_ROWS = [
    # key, padding, out size, remainder
    pytest.param("even-same", ((1, 2), (1, 2)), (6, 6), (0, 0), id="even-same pads (1, 2)"),
    pytest.param("remainder", ((0, 0), (0, 0)), (2, 2), (1, 1), id="remainder leaves (1, 1)"),
    pytest.param("recitation-s1", ((0, 0), (0, 0)), (2, 2), (0, 0), id="recitation-s1"),
    pytest.param("recitation-s2", ((0, 0), (0, 0)), (2, 2), (0, 0), id="recitation-s2"),
    pytest.param("classroom", ((1, 1), (1, 1)), (4, 4), (0, 0), id="classroom 7x7 s2 p1"),
    pytest.param("dilation-2", ((2, 2), (2, 2)), (7, 7), (0, 0), id="dilation-2 keeps size"),
    pytest.param("qa-channels", ((0, 0), (0, 0)), (96, 96), (0, 0), id="qa 100 -> 96"),
]


@pytest.mark.parametrize(("key", "padding", "out", "remainder"), GEOMETRY_ROWS)
def test_preset_geometry(key, padding, out, remainder):
    spec = PRESETS_BY_KEY[key].spec()
    assert spec.padding == padding and spec.out_size == out and spec.remainder == remainder


def test_reflect_preset_uses_reflect_and_channels_preset_has_channels_and_batch():
    assert PRESETS_BY_KEY["reflect"].spec().padding_mode == "reflect"
    spec = PRESETS_BY_KEY["channels-small"].spec()
    assert spec.batch == 2 and spec.in_channels == 2 and spec.out_channels == 3


# --- example values ------------------------------------------------------------------------------
SPEC = ConvSpec.create((2, 2, 5, 6), (3, 2, 3, 3), padding=1)
VALUE_ROWS = [
    # name, make(spec, seed), low, high
    pytest.param(example_x, 0, 9, id="example_x in [0, 9]"),
    pytest.param(example_w, -2, 2, id="example_w in [-2, 2]"),
    pytest.param(
        lambda s, seed: example_grad_out(s, None, seed, "random"),
        -2,
        2,
        id="random grad_out in [-2, 2]",
    ),
]


@pytest.mark.parametrize(("make", "low", "high"), VALUE_ROWS)
def test_example_values_are_small_integers_deterministic_per_seed(make, low, high):
    a = make(SPEC, 11)
    assert is_small_int(a, low, high), f"values outside [{low}, {high}] or not whole: {a}"
    assert a.min() < a.max(), "a random example is not constant"
    assert_array(make(SPEC, 11), a, "same seed → same array")
    assert not np.array_equal(make(SPEC, 12), a), "different seed → different array"


def test_random_ints_uses_no_global_state():
    np.random.seed(0)
    a = random_ints((4, 4), 5, -3, 3)
    np.random.seed(1)
    assert_array(random_ints((4, 4), 5, -3, 3), a, "the global seed must not matter")
    assert set(np.unique(random_ints((50, 50), 5, -3, 3))) == set(range(-3, 4)), "both ends hit"


KERNEL_ROWS = [
    pytest.param("identity", (3, 3), [[0, 0, 0], [0, 1, 0], [0, 0, 0]], id="identity 3x3"),
    pytest.param("identity", (1, 1), [[1]], id="identity 1x1"),
    pytest.param("identity", (2, 4), [[0, 1, 0, 0], [0, 0, 0, 0]], id="identity 2x4 top-left"),
    pytest.param("box", (2, 3), [[1, 1, 1], [1, 1, 1]], id="box 2x3"),
    pytest.param("sobel x", (3, 3), [[1, 0, -1], [2, 0, -2], [1, 0, -1]], id="sobel x"),
    pytest.param("sobel y", (3, 3), [[1, 2, 1], [0, 0, 0], [-1, -2, -1]], id="sobel y"),
    pytest.param("laplacian", (3, 3), [[0, 1, 0], [1, -4, 1], [0, 1, 0]], id="laplacian"),
    pytest.param("sharpen", (3, 3), [[0, -1, 0], [-1, 5, -1], [0, -1, 0]], id="sharpen"),
    pytest.param("sobel x", (5, 5), None, id="sobel x has no 5x5"),
    pytest.param("laplacian", (2, 2), None, id="laplacian has no 2x2"),
    pytest.param("no such kernel", (3, 3), None, id="unknown name"),
]


@pytest.mark.parametrize(("name", "size", "expected"), KERNEL_ROWS)
def test_named_kernels(name, size, expected):
    k = named_kernel(name, size)
    if expected is None:
        assert k is None
    else:
        assert_array(k, np.array(expected, float), f"{name} {size}")
        assert k.dtype.kind == "f"


@pytest.mark.parametrize("size", [(3, 3), (5, 3), (1, 5), (2, 4)])
def test_identity_kernel_leaves_the_input_unchanged_with_same_padding(size):
    """The identity tap sits at ((kH-1)//2, (kW-1)//2), where 'same' puts the top/left pad."""
    spec = ConvSpec.create((1, 2, 4, 5), (2, 2, *size), padding="same")
    w = example_w(spec, 0, "identity")
    w[0, 1] = 0  # filter 0 reads channel 0 only, filter 1 channel 1 only
    w[1, 0] = 0
    x = example_x(spec, 3)
    assert_array(conv2d(x, w, padding="same"), x, "identity with 'same' is a no-op")


def test_example_w_puts_a_named_kernel_on_every_pair_or_falls_back_to_random():
    w = example_w(SPEC, 0, "sobel y")
    for k in range(3):
        for c in range(2):
            assert_array(w[k, c], NAMED_KERNELS["sobel y"], f"w[{k}, {c}] is sobel y")
    w[0, 0, 0, 0] = 99  # the result is writable and owns its memory
    assert w[1, 1, 0, 0] == 1, "example_w must copy, not broadcast one shared kernel"
    spec5 = ConvSpec.create((1, 1, 6, 6), (1, 1, 5, 5))
    fallback = example_w(spec5, 4, "sobel x")
    assert_array(fallback, example_w(spec5, 4, "random"), "no 5×5 Sobel: random weights")


def test_grad_out_kinds():
    spec = ConvSpec.create((1, 1, 4, 4), (1, 1, 2, 2))
    y = np.arange(9.0).reshape(spec.output_shape) * 0.5
    assert_array(example_grad_out(spec, y, 0, "ones"), np.ones(spec.output_shape), "ones")
    for draw in DRAWS:
        target = y - example_grad_out(spec, y, 0, "mse", draw)
        assert is_small_int(target, -5, 6), "mse: grad_out = y − an integer target in [-5, 5]"
        drawn = mse_target(spec, None, 0, draw)  # one draw per seed, whatever y
        y2 = y + 7.25  # never an integer: the target is the draw itself
        assert_array(example_grad_out(spec, y2, 0, "mse", draw), y2 - drawn, "same seed")
        assert_array(
            example_grad_out(spec, y, 1, "random", draw),
            example_grad_out(spec, y2, 1, "random", draw),
            "random grad_out does not depend on y",
        )
    # draw 2: where the draw equals y it is one more, so that no cell of ∂L/∂y = y − t is 0
    y = mse_target(spec, None, 0).copy()
    y[0, 0, 0, 0] += 0.5
    g = example_grad_out(spec, y, 0, "mse")
    assert np.all(g != 0) and np.count_nonzero(g == -1) >= 8
    assert set(GRAD_OUT_LABELS) == set(GRAD_OUT_KINDS), "every kind has a label"


@pytest.mark.parametrize("kind", ["zeros", "", "MSE", "Ones"])
def test_unknown_grad_out_kind_raises(kind):
    with pytest.raises(ValueError, match="is not one of"):
        example_grad_out(SPEC, None, 0, kind)


def test_layer_values_seeded_examples_and_given_arrays():
    spec = ConvSpec.create((1, 2, 4, 4), (2, 2, 3, 3), padding=1, padding_mode="circular")
    x, w, g = layer_values(spec, 5, "box", "mse")
    assert_array(x, example_x(spec, 5), "x defaults to the seeded example")
    assert_array(w, np.ones(spec.weight_shape), "w is the named kernel on every pair")
    y = conv2d(x, w, padding=1, padding_mode="circular")
    assert_array(g, example_grad_out(spec, y, 5, "mse"), "mse grad_out = y − target, y of x, w")
    given = np.arange(32.0)
    x2, _, g2 = layer_values(spec, 5, x=given, g=np.zeros(32))
    assert_array(x2, given.reshape(spec.input_shape), "given x is reshaped, not replaced")
    assert_array(g2, np.zeros(spec.output_shape), "given grad_out is used as is")
    _, _, ones = layer_values(spec, 5)
    assert_array(ones, np.ones(spec.output_shape), "default grad_out is ones")


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_notes_speak_the_apps_notation(preset):
    """x, w, y and ∂L/∂· as on every grid; a source's own letters only in an aside '(its …)'.
    k is the filter index, so a kernel size is 'kernel', not 'k − 1'."""
    said = re.sub(r"\([^)]*\)", "", preset.note)
    for foreign in ("∂L/∂X", "∂L/∂O", "∂E/", "∂L/∂F", "k − 1"):
        assert foreign not in said, f"{preset.key}: {foreign}"

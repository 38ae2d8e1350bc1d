"""ConvSpec: the shape arithmetic, against hand-worked rows and the formulas as properties."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from quick import examples

from convviz.engine.spec import (
    NUMPY_PAD_MODES,
    PADDING_MODES,
    TORCH_PAD_MODES,
    ConvSpec,
    ConvSpecError,
    parse_padding,
    same_padding,
    spec_of_call,
)

# --- 'same' padding: the TensorFlow/Keras rule -------------------------------------------------
# out = ceil(H / s); total = max((out-1)*s + d*(k-1) + 1 - H, 0); top = total // 2, rest at bottom.
SAME_ROWS = [
    # H, k, s, d, expected (top, bottom)
    pytest.param(5, 3, 1, 1, (1, 1), id="H5 k3 s1: odd kernel, symmetric"),
    pytest.param(5, 4, 1, 1, (1, 2), id="H5 k4 s1: even kernel, extra at bottom"),
    pytest.param(5, 2, 1, 1, (0, 1), id="H5 k2 s1: the one extra goes bottom"),
    pytest.param(5, 3, 2, 1, (1, 1), id="H5 k3 s2: out 3, total 2"),
    pytest.param(6, 3, 2, 1, (0, 1), id="H6 k3 s2: out 3, total 1"),
    pytest.param(7, 3, 1, 2, (2, 2), id="H7 k3 d2: span 5, total 4"),
    pytest.param(10, 5, 3, 1, (2, 2), id="H10 k5 s3: out 4, total 4"),
    pytest.param(4, 1, 3, 1, (0, 0), id="H4 k1 s3: no padding needed"),
    pytest.param(3, 3, 5, 1, (0, 0), id="H3 k3 s5: one window fits exactly"),
    pytest.param(2, 5, 1, 1, (2, 2), id="H2 k5 s1: kernel wider than input"),
    pytest.param(1, 3, 2, 1, (1, 1), id="H1 k3 s2: single row"),
]


@pytest.mark.parametrize(("H", "k", "s", "d", "expected"), SAME_ROWS)
def test_same_padding_rows(H, k, s, d, expected):
    assert same_padding(H, k, s, d) == expected
    spec = ConvSpec.create(
        (1, 1, H, 1), (1, 1, k, 1), stride=(s, 1), dilation=(d, 1), padding="same"
    )
    assert spec.padding[0] == expected, "ConvSpec.create('same') disagrees with same_padding"
    assert spec.out_size[0] == math.ceil(H / s), "'same' must give out = ceil(H / stride)"


def test_same_even_kernel_keeps_size_where_the_seed_rule_does_not():
    """Seed 000 pads (k-1)//2 on both sides; for k=4 that loses a row, the TF rule keeps it."""
    seed_rule = ConvSpec.create((1, 1, 5, 5), (1, 1, 4, 4), padding=(4 - 1) // 2)
    tf_rule = ConvSpec.create((1, 1, 5, 5), (1, 1, 4, 4), padding="same")
    assert seed_rule.out_size == (4, 4)
    assert tf_rule.out_size == (5, 5)
    assert tf_rule.padding == ((1, 2), (1, 2))


# --- output size and the derived sizes, worked by hand -------------------------------------------
# One axis per row: H, k, stride, (lo, hi) padding, dilation →
#   span = d(k-1)+1, padded = H+lo+hi, out = (padded-span)//s + 1, reach = (out-1)s + span,
#   remainder = padded - reach, dilated_out = (out-1)s + 1,
#   full_padding = (span-1, span-1+remainder)
AXIS_ROWS = [
    # H, k, s, pad, d,   span, padded, out, reach, rem, dil_out, full
    pytest.param(3, 2, 1, (0, 0), 1, 2, 3, 2, 3, 0, 2, (1, 1), id="d2l 3x3*2x2"),
    pytest.param(5, 3, 2, (0, 0), 1, 3, 5, 2, 5, 0, 3, (2, 2), id="seed 5x5*3x3 s2"),
    pytest.param(6, 3, 2, (0, 0), 1, 3, 6, 2, 5, 1, 3, (2, 3), id="H6 k3 s2: remainder 1"),
    pytest.param(5, 3, 2, (1, 1), 1, 3, 7, 3, 7, 0, 5, (2, 2), id="H5 k3 s2 p1"),
    pytest.param(10, 3, 3, (0, 0), 1, 3, 10, 3, 9, 1, 7, (2, 3), id="H10 k3 s3: remainder 1"),
    pytest.param(9, 3, 1, (1, 1), 3, 7, 11, 5, 11, 0, 5, (6, 6), id="H9 k3 d3 p1"),
    pytest.param(10, 4, 3, (1, 0), 2, 7, 11, 2, 10, 1, 4, (6, 7), id="H10 k4 s3 d2 p(1,0)"),
    pytest.param(8, 2, 3, (2, 0), 2, 3, 10, 3, 9, 1, 7, (2, 3), id="H8 k2 s3 d2 p(2,0)"),
    pytest.param(100, 5, 1, (0, 0), 1, 5, 100, 96, 100, 0, 96, (4, 4), id="seed 002: 100 -> 96"),
    pytest.param(224, 7, 2, (3, 3), 1, 7, 230, 112, 229, 1, 223, (6, 7), id="ResNet stem 224"),
    pytest.param(1, 1, 1, (0, 0), 1, 1, 1, 1, 1, 0, 1, (0, 0), id="1x1 on 1x1"),
    pytest.param(2, 3, 1, (0, 1), 1, 3, 3, 1, 3, 0, 1, (2, 2), id="H2 k3 p(0,1): just fits"),
]


def _axis_spec(axis, H, k, s, pad, d) -> ConvSpec:
    """The row's numbers on one axis; a 1-wide kernel on a 1-wide input on the other."""
    plain = {"H": 1, "k": 1, "s": 1, "pad": (0, 0), "d": 1}
    row = {"H": H, "k": k, "s": s, "pad": pad, "d": d}
    ax = [row, plain] if axis == 0 else [plain, row]
    return ConvSpec.create(
        (1, 1, ax[0]["H"], ax[1]["H"]),
        (1, 1, ax[0]["k"], ax[1]["k"]),
        stride=(ax[0]["s"], ax[1]["s"]),
        padding=(ax[0]["pad"], ax[1]["pad"]),
        dilation=(ax[0]["d"], ax[1]["d"]),
    )


@pytest.mark.parametrize("axis", [0, 1], ids=["rows", "cols"])
@pytest.mark.parametrize(
    ("H", "k", "s", "pad", "d", "span", "padded", "out", "reach", "rem", "dil_out", "full"),
    AXIS_ROWS,
)
def test_sizes_rows(axis, H, k, s, pad, d, span, padded, out, reach, rem, dil_out, full):
    spec = _axis_spec(axis, H, k, s, pad, d)
    got = {
        "span": spec.span[axis],
        "padded_size": spec.padded_size[axis],
        "out_size": spec.out_size[axis],
        "reach": spec.reach[axis],
        "remainder": spec.remainder[axis],
        "dilated_out_size": spec.dilated_out_size[axis],
        "full_padding": spec.full_padding[axis],
    }
    want = {
        "span": span,
        "padded_size": padded,
        "out_size": out,
        "reach": reach,
        "remainder": rem,
        "dilated_out_size": dil_out,
        "full_padding": full,
    }
    assert got == want
    other = 1 - axis  # the plain axis stays 1 → 1 with nothing extra
    assert (spec.out_size[other], spec.remainder[other], spec.full_padding[other]) == (1, 0, (0, 0))


def test_shapes_of_a_multichannel_batch():
    spec = ConvSpec.create((2, 5, 100, 90), (10, 5, 5, 3), stride=(1, 2), padding=((1, 0), (2, 2)))
    assert spec.output_shape == (2, 10, 97, 46)  # (100+1-5)//1+1, (90+4-3)//2+1
    assert spec.padded_shape == (2, 5, 101, 94)
    assert (spec.batch, spec.in_channels, spec.out_channels) == (2, 5, 10)
    assert (spec.in_size, spec.kernel_size) == ((100, 90), (5, 3))


def test_describe_shows_the_arithmetic():
    spec = ConvSpec.create((1, 1, 6, 7), (1, 1, 3, 2), stride=2, padding=((0, 1), (0, 0)))
    assert spec.describe().splitlines() == [
        "out_H = floor((6 + 0 + 1 - 1·(3-1) - 1) / 2) + 1 = 3",
        "out_W = floor((7 + 0 + 0 - 1·(2-1) - 1) / 2) + 1 = 3",
    ]


# --- padding forms ------------------------------------------------------------------------------
PADDING_FORM_ROWS = [
    # padding, kernel (kH, kW), dilation, expected ((top, bottom), (left, right)) on a 6x7 input
    pytest.param(0, (3, 3), 1, ((0, 0), (0, 0)), id="int 0"),
    pytest.param(2, (3, 3), 1, ((2, 2), (2, 2)), id="int 2"),
    pytest.param((1, 2), (3, 3), 1, ((1, 1), (2, 2)), id="pair (rows, cols)"),
    pytest.param([1, 2], (3, 3), 1, ((1, 1), (2, 2)), id="pair as list"),
    pytest.param(((0, 1), (2, 3)), (3, 3), 1, ((0, 1), (2, 3)), id="per-side pairs"),
    pytest.param([[0, 1], [2, 3]], (3, 3), 1, ((0, 1), (2, 3)), id="per-side lists"),
    pytest.param("valid", (3, 3), 1, ((0, 0), (0, 0)), id="valid"),
    pytest.param("same", (3, 4), 1, ((1, 1), (1, 2)), id="same: even kW extra right"),
    pytest.param("same", (2, 5), 2, ((1, 1), (4, 4)), id="same with dilation 2"),
    pytest.param("full", (3, 2), 1, ((2, 2), (1, 1)), id="full = k-1 per side"),
    pytest.param("full", (3, 2), (2, 3), ((4, 4), (3, 3)), id="full = dil*(k-1) per side"),
]


@pytest.mark.parametrize(("padding", "kernel", "dilation", "expected"), PADDING_FORM_ROWS)
def test_padding_forms(padding, kernel, dilation, expected):
    d = dilation if isinstance(dilation, tuple) else (dilation, dilation)
    assert parse_padding(padding, (6, 7), kernel, (1, 1), d) == expected
    spec = ConvSpec.create((1, 1, 6, 7), (1, 1, *kernel), padding=padding, dilation=dilation)
    assert spec.padding == expected


@pytest.mark.parametrize("padding", [2.0, np.float64(1.0), " Valid ", "SAME", True])
def test_padding_is_read_as_strictly_as_every_python_argument(padding):
    """A whole number is an int (never 2.0), a word is spelt as PyTorch spells it."""
    with pytest.raises(ConvSpecError, match="padding `"):
        ConvSpec.create((1, 1, 6, 7), (1, 1, 3, 3), padding=padding)


# --- frozen, hashable, equal by value -----------------------------------------------------------
def test_equal_specs_from_different_forms_hash_equal():
    forms = [
        ConvSpec.create((1, 2, 5, 5), (3, 2, 3, 3), stride=1, padding=1, dilation=1),
        ConvSpec.create([1, 2, 5, 5], [3, 2, 3, 3], stride=(1, 1), padding=(1, 1), dilation=[1, 1]),
        ConvSpec.create((1, 2, 5, 5), (3, 2, 3, 3), padding=((1, 1), (1, 1))),
        ConvSpec.create((1, 2, 5, 5), (3, 2, 3, 3), padding="same"),
    ]
    assert all(f == forms[0] for f in forms)
    assert len({hash(f) for f in forms}) == 1
    assert len({f: None for f in forms}) == 1, "equal specs must be one cache key"
    different = ConvSpec.create((1, 2, 5, 5), (3, 2, 3, 3), padding=1, padding_mode="reflect")
    assert different != forms[0]
    assert len({forms[0], different}) == 2


KWARGS_ROWS = [
    pytest.param({}, id="defaults"),
    pytest.param(dict(stride=(2, 3), dilation=(1, 2)), id="stride and dilation per axis"),
    pytest.param(dict(padding=((1, 2), (0, 3)), padding_mode="reflect"), id="per-side reflect"),
    pytest.param(dict(padding="same", stride=2, padding_mode="circular"), id="same, circular"),
]


@pytest.mark.parametrize("kw", KWARGS_ROWS)
def test_kwargs_rebuild_the_spec(kw):
    spec = ConvSpec.create((2, 3, 7, 8), (4, 3, 3, 2), **kw)
    assert set(spec.kwargs()) == {"stride", "padding", "dilation", "padding_mode"}
    assert ConvSpec.create(spec.input_shape, spec.weight_shape, **spec.kwargs()) == spec
    args = spec.kwargs().values()
    assert spec_of_call(spec.input_shape, spec.weight_shape, *args) == spec


@pytest.mark.parametrize("table", [NUMPY_PAD_MODES, TORCH_PAD_MODES], ids=["numpy", "torch"])
def test_every_padding_mode_has_a_name_in_each_backend(table):
    assert tuple(table) == PADDING_MODES


def test_spec_is_frozen():
    spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.stride = (2, 2)
    assert spec.stride == (1, 1)


# --- the formulas as properties -----------------------------------------------------------------
@st.composite
def axis_geometry(draw):
    """One axis: H, k, stride, dilation and per-side padding with the kernel fitting."""
    k, s, d = draw(st.integers(1, 6)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    lo, hi = draw(st.integers(0, 5)), draw(st.integers(0, 5))
    span = d * (k - 1) + 1
    H = draw(st.integers(max(1, span - lo - hi), span + 20))
    return H, k, s, d, lo, hi


@settings(max_examples=examples(200), deadline=None)
@given(axis_geometry())
def test_size_formulas_hold(geometry):
    H, k, s, d, lo, hi = geometry
    spec = ConvSpec.create(
        (1, 1, H, 1), (1, 1, k, 1), stride=(s, 1), padding=((lo, hi), (0, 0)), dilation=(d, 1)
    )
    assert spec.out_size[0] == math.floor((H + lo + hi - d * (k - 1) - 1) / s) + 1
    assert spec.reach[0] + spec.remainder[0] == H + lo + hi
    assert 0 <= spec.remainder[0] < s, "a remainder of a whole stride would fit one more window"
    # the full correlation of the padded, dilated grad_out gives back the padded input's size
    assert spec.dilated_out_size[0] + sum(spec.full_padding[0]) - spec.span[0] + 1 == H + lo + hi


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(1, 40), st.integers(1, 7), st.integers(1, 5), st.integers(1, 4))
def test_same_rule_holds(H, k, s, d):
    top, bottom = same_padding(H, k, s, d)
    assert 0 <= bottom - top <= 1, "the odd extra goes bottom/right"
    spec = ConvSpec.create(
        (1, 1, H, 1), (1, 1, k, 1), stride=(s, 1), dilation=(d, 1), padding="same"
    )
    assert spec.out_size[0] == math.ceil(H / s)
    # minimal: one row less of padding loses an output row, or no longer fits the kernel
    if top + bottom:
        try:
            fewer = ConvSpec.create(
                (1, 1, H, 1),
                (1, 1, k, 1),
                stride=(s, 1),
                dilation=(d, 1),
                padding=((top, bottom - 1), (0, 0)),
            )
        except ConvSpecError:
            assert spec.out_size[0] == 1
        else:
            assert fewer.out_size[0] == spec.out_size[0] - 1


def test_spec_error_is_a_value_error():
    assert issubclass(ConvSpecError, ValueError)


@pytest.mark.parametrize("padding", [0, 1, ((2, 0), (1, 3)), "same"])
def test_padded_index_and_padded_label_are_inverse(padding):
    spec = ConvSpec.create((1, 1, 5, 6), (1, 1, 3, 3), padding=padding)
    (pt, _), (pl, _) = spec.padding
    for cell in [(0, 0), (4, 5), (2, 3)]:
        assert spec.padded_index(cell) == (cell[0] + pt, cell[1] + pl)
        assert spec.padded_label(spec.padded_index(cell)) == cell

"""ops: each transform beside its adjoint, against hand-worked rows and as properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from oracles import assert_array, inner, read_only
from quick import examples

from convviz.engine.ops import (
    crop,
    dilate,
    dilation_mask,
    fold_matrix,
    pad,
    pad_mask,
    rot180,
    source_index,
    subsample,
    unpad,
)
from convviz.engine.spec import PADDING_MODES

# --- pad, by hand (PyTorch's padding_mode semantics), one row [1, 2, 3] padded (2, 2) ------------
PAD_ROWS = [
    pytest.param("zeros", [0, 0, 1, 2, 3, 0, 0], [-1, -1, 0, 1, 2, -1, -1], id="zeros"),
    pytest.param("reflect", [3, 2, 1, 2, 3, 2, 1], [2, 1, 0, 1, 2, 1, 0], id="reflect: no edge"),
    pytest.param("replicate", [1, 1, 1, 2, 3, 3, 3], [0, 0, 0, 1, 2, 2, 2], id="replicate"),
    pytest.param("circular", [2, 3, 1, 2, 3, 1, 2], [1, 2, 0, 1, 2, 0, 1], id="circular: wraps"),
]


@pytest.mark.parametrize(("mode", "padded", "sources"), PAD_ROWS)
def test_pad_one_row(mode, padded, sources):
    a = np.array([[1.0, 2.0, 3.0]])
    assert_array(pad(a, ((0, 0), (2, 2)), mode), [padded], f"pad columns, {mode}")
    assert_array(pad(a.T, ((2, 2), (0, 0)), mode), np.array([padded]).T, f"pad rows, {mode}")
    assert list(source_index(3, (2, 2), mode)) == sources


# unpad of ones counts, for each input cell, how many padded cells hold a copy of it
UNPAD_COUNT_ROWS = [
    pytest.param("zeros", [1, 1, 1], id="zeros: crop"),
    pytest.param("reflect", [2, 3, 2], id="reflect: 1 gets two mirrors"),
    pytest.param("replicate", [3, 1, 3], id="replicate: edges get the ring"),
    pytest.param("circular", [2, 3, 2], id="circular"),
]


@pytest.mark.parametrize(("mode", "counts"), UNPAD_COUNT_ROWS)
def test_unpad_folds_the_ring_back(mode, counts):
    ones = np.ones((1, 7))
    assert_array(unpad(ones, ((0, 0), (2, 2)), mode), [counts], f"unpad of ones, {mode}")


def test_pad_two_axes_by_hand():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert_array(
        pad(a, ((1, 1), (1, 1)), "replicate"),
        [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]],
        "replicate both axes",
    )
    assert_array(
        pad(a, ((1, 0), (0, 2)), "zeros"),
        [[0, 0, 0, 0], [1, 2, 0, 0], [3, 4, 0, 0]],
        "zeros, per-side",
    )


def test_pad_acts_on_the_last_two_axes_only():
    a = np.arange(2 * 3 * 4 * 5, dtype=float).reshape(2, 3, 4, 5)
    for mode in PADDING_MODES:
        assert pad(a, ((1, 2), (3, 0)), mode).shape == (2, 3, 7, 8), mode


def test_pad_mask_by_hand():
    expected = [
        [True, True, True, True, True],
        [False, False, False, True, True],
        [False, False, False, True, True],
    ]
    assert pad_mask((2, 3), ((1, 0), (0, 2))).tolist() == expected


def test_dilate_by_hand():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert_array(dilate(a, (2, 3)), [[1, 0, 0, 2], [0, 0, 0, 0], [3, 0, 0, 4]], "dilate (2, 3)")
    assert dilation_mask((2, 2), (2, 3)).tolist() == [
        [False, True, True, False],
        [True, True, True, True],
        [False, True, True, False],
    ]


def test_rot180_by_hand_keeps_channels():
    w = np.array([[[[1, 2, 3], [4, 5, 6]]], [[[7, 8, 9], [10, 11, 12]]]])  # (2, 1, 2, 3)
    assert rot180(w).tolist() == [[[[6, 5, 4], [3, 2, 1]]], [[[12, 11, 10], [9, 8, 7]]]]


def test_crop_keeps_top_left():
    a = np.arange(12).reshape(3, 4)
    assert crop(a, (2, 3)).tolist() == [[0, 1, 2], [4, 5, 6]]


# --- properties ---------------------------------------------------------------------------------
small = st.integers(1, 5)


@st.composite
def padded_pair(draw):
    """An array a, a padding valid for the drawn mode, and an array b of a's padded shape."""
    mode = draw(st.sampled_from(PADDING_MODES))
    H, W = draw(small), draw(small)
    sides = tuple((draw(st.integers(0, 4)), draw(st.integers(0, 4))) for _ in range(2))
    limit = {"reflect": lambda p, n: p < n, "circular": lambda p, n: p <= n}.get(
        mode, lambda p, n: True
    )
    assume(all(limit(p, n) for (lo, hi), n in zip(sides, (H, W)) for p in (lo, hi)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lead = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    a = rng.standard_normal((*lead, H, W))
    Hp, Wp = H + sum(sides[0]), W + sum(sides[1])
    b = rng.standard_normal((*lead, Hp, Wp))
    return mode, sides, a, b


@settings(max_examples=examples(150), deadline=None)
@given(padded_pair())
def test_pad_unpad_adjoint(case):
    mode, sides, a, b = case
    lhs, rhs = inner(pad(a, sides, mode), b), inner(a, unpad(b, sides, mode))
    assert np.isclose(lhs, rhs, rtol=1e-10, atol=1e-10), f"⟨pad a, b⟩ {lhs} != ⟨a, unpad b⟩ {rhs}"


@settings(max_examples=examples(100), deadline=None)
@given(padded_pair())
def test_pad_matches_fold_matrices_and_masks(case):
    mode, sides, a, _ = case
    (H, W), padded = a.shape[-2:], pad(a, sides, mode)
    rows, cols = fold_matrix(H, sides[0], mode), fold_matrix(W, sides[1], mode)
    assert_array(rows @ a @ cols.T, padded, f"P_rows a P_cols^T vs pad, {mode} {sides}")
    assert_array(unpad(pad(a, sides, "zeros"), sides, "zeros"), a, "unpad ∘ pad (zeros) = id")
    mask = pad_mask((H, W), sides)
    assert mask.sum() == padded.shape[-2] * padded.shape[-1] - H * W, "mask counts the ring"
    assert np.array_equal(mask, pad(np.ones((H, W)), sides, "zeros") == 0)


@st.composite
def dilated_pair(draw):
    stride = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = rng.standard_normal((draw(st.integers(1, 2)), draw(small), draw(small)))
    h, w = a.shape[-2:]
    b = rng.standard_normal((a.shape[0], (h - 1) * stride[0] + 1, (w - 1) * stride[1] + 1))
    return stride, a, b


@settings(max_examples=examples(150), deadline=None)
@given(dilated_pair())
def test_dilate_subsample_adjoint_and_inverse(case):
    stride, a, b = case
    assert np.isclose(inner(dilate(a, stride), b), inner(a, subsample(b, stride)), rtol=1e-10)
    assert np.array_equal(subsample(dilate(a, stride), stride), a), "subsample ∘ dilate = id"
    mask = dilation_mask(a.shape[-2:], stride)
    assert mask.shape == b.shape[-2:]
    assert mask.sum() == mask.size - a.shape[-2] * a.shape[-1], "mask counts inserted zeros"
    assert not dilate(a, stride)[..., mask].any(), "the mask marks only inserted zeros"


@settings(max_examples=examples(50), deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_rot180_twice_is_identity(h, w, seed):
    a = np.random.default_rng(seed).standard_normal((2, 3, h, w))
    assert np.array_equal(rot180(rot180(a)), a)
    assert np.array_equal(rot180(a)[..., 0, 0], a[..., -1, -1])


# --- nothing mutates its inputs -----------------------------------------------------------------
SIDES = ((1, 2), (2, 1))
NO_MUTATION_ROWS = [
    pytest.param(lambda a: pad(a, SIDES, "zeros"), (3, 3), id="pad zeros"),
    pytest.param(lambda a: pad(a, SIDES, "reflect"), (3, 3), id="pad reflect"),
    pytest.param(lambda a: unpad(a, SIDES, "zeros"), (6, 6), id="unpad zeros"),
    pytest.param(lambda a: unpad(a, SIDES, "circular"), (6, 6), id="unpad circular"),
    pytest.param(lambda a: dilate(a, (2, 3)), (3, 3), id="dilate"),
    pytest.param(lambda a: subsample(a, (2, 3)), (5, 7), id="subsample"),
    pytest.param(rot180, (3, 4), id="rot180"),
    pytest.param(lambda a: crop(a, (2, 2)), (3, 4), id="crop"),
]


@pytest.mark.parametrize(("op", "shape"), NO_MUTATION_ROWS)
def test_ops_do_not_mutate_inputs(op, shape):
    original = np.random.default_rng(0).standard_normal((2, *shape))
    (frozen,) = read_only(original)  # an in-place write would raise here
    op(frozen)
    assert np.array_equal(frozen, original)

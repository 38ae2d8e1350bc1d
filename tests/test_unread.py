"""Every zero explained, the engine's part: which cells no window reads (between the windows and
at the remainder), on hand-worked layers and against a plain loop over every window's taps.

A 1×1 kernel at stride 3 on 8×8 reads rows and columns 0, 3, 6 only: rows/columns 1, 2, 4, 5 lie
between the windows and 7 is the remainder; their ∂L/∂x is 0 whatever the values.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from oracles import conv_cases

from convviz.engine.arrays import (
    input_grad_arrays,
    remainder_mask,
    unread_input_mask,
    unread_mask,
)
from convviz.engine.ops import source_index
from convviz.engine.spec import ConvSpec


def spec_of(size, kernel, **kw) -> ConvSpec:
    return ConvSpec.create((1, 1, *size), (1, 1, *kernel), **kw)


# --- oracle --------------------------------------------------------------------------------------
def read_loop(spec: ConvSpec) -> np.ndarray:
    """(Hp, Wp) True where some window's tap lands: a plain loop over windows and taps."""
    read = np.zeros(spec.padded_size, dtype=bool)
    (oH, oW), (kH, kW) = spec.out_size, spec.kernel_size
    (sh, sw), (dh, dw) = spec.stride, spec.dilation
    for i in range(oH):
        for j in range(oW):
            for a in range(kH):
                for b in range(kW):
                    read[i * sh + a * dh, j * sw + b * dw] = True
    return read


def read_x_loop(spec: ConvSpec) -> np.ndarray:
    """(H, W) True on the cells of x that a window reads, itself or through a padded copy."""
    read = read_loop(spec)
    rows = source_index(spec.in_size[0], spec.padding[0], spec.padding_mode)
    cols = source_index(spec.in_size[1], spec.padding[1], spec.padding_mode)
    out = np.zeros(spec.in_size, dtype=bool)
    for r, q in zip(*np.nonzero(read)):
        if rows[r] >= 0 and cols[q] >= 0:
            out[rows[r], cols[q]] = True
    return out


def lines(mask: np.ndarray) -> tuple[list[int], list[int]]:
    """The rows and the columns that are wholly True."""
    return np.flatnonzero(mask.all(axis=1)).tolist(), np.flatnonzero(mask.all(axis=0)).tolist()


# --- hand-worked ---------------------------------------------------------------------------------
HAND = [
    # (id, spec, unread rows of x̃, unread columns of x̃, remainder rows, remainder columns)
    ("1x1-stride3", spec_of((8, 8), (1, 1), stride=3), [1, 2, 4, 5, 7], [1, 2, 4, 5, 7], [7], [7]),
    # taps 0 and 3 (dilation 3), windows at 0 and 3: reads 0, 3, 6 of 7, no remainder
    ("dilation-gaps", spec_of((7, 7), (2, 2), stride=3, dilation=3),
     [1, 2, 4, 5], [1, 2, 4, 5], [], []),
    # stride 2 with a 2-wide kernel reads every cell but the last (odd width): remainder only
    ("remainder-only", spec_of((5, 4), (2, 2), stride=2), [4], [], [4], []),
    # padded 1 per side, 1×1 stride 2 on 5 wide: x̃ 0..6, windows at 0, 2, 4, 6
    ("padded-1x1", spec_of((5, 5), (1, 1), stride=2, padding=1), [1, 3, 5], [1, 3, 5], [], []),
    ("stride1-reads-all", spec_of((4, 4), (3, 3)), [], [], [], []),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "rows", "cols", "rem_rows", "rem_cols"),
                         [h[1:] for h in HAND], ids=[h[0] for h in HAND])  # fmt: skip
def test_hand_worked(spec, rows, cols, rem_rows, rem_cols):
    mask = unread_mask(spec)
    assert lines(mask) == (rows, cols)
    # every unread cell is on an unread row or column (windows are row × column products)
    r, c = np.indices(mask.shape)
    assert np.array_equal(mask, np.isin(r, rows) | np.isin(c, cols))
    assert lines(remainder_mask(spec)) == (rem_rows, rem_cols)
    assert not (remainder_mask(spec) & ~mask).any(), "the remainder is never read"


def test_the_issue_layer_grad_x_is_zero_exactly_there():
    """The link of the issue: ∂L/∂x is 0 on rows/columns 1, 2, 4, 5, 7 and non-zero elsewhere
    (non-zero values: a 1×1 kernel's gradient is w·∂L/∂y on the read cells)."""
    spec = spec_of((8, 8), (1, 1), stride=3)
    ig = input_grad_arrays(spec, np.full(spec.weight_shape, 2.0), np.ones(spec.output_shape))
    assert np.array_equal(ig.grad_x[0, 0] == 0, ig.unread_x_mask)
    assert lines(ig.unread_x_mask) == ([1, 2, 4, 5, 7], [1, 2, 4, 5, 7])


def test_a_padded_copy_carries_the_gradient_back():
    """Circular padding: x[3] is not read itself, but its copy in the ring is, so its gradient
    is not 0; with zero padding the same cell is unread."""
    kw = {"kernel": (1, 1), "stride": 3, "padding": ((1, 1), (0, 0))}
    circ = spec_of((4, 1), padding_mode="circular", **kw)
    zeros = spec_of((4, 1), **kw)
    # x̃ rows 0..5 copy x rows 3, 0, 1, 2, 3, 0; windows read x̃ rows 0 and 3
    assert np.flatnonzero(~unread_mask(circ)[:, 0]).tolist() == [0, 3]
    assert np.flatnonzero(~unread_input_mask(circ)[:, 0]).tolist() == [2, 3]
    assert np.flatnonzero(~unread_input_mask(zeros)[:, 0]).tolist() == [2]


# --- against a plain loop ------------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(conv_cases(max_channels=1, max_batch=1))
def test_unread_is_no_window_tap(case):
    spec = case.spec
    assert np.array_equal(unread_mask(spec), ~read_loop(spec))
    assert np.array_equal(unread_input_mask(spec), ~read_x_loop(spec))
    assert not (remainder_mask(spec) & ~unread_mask(spec)).any()


@settings(max_examples=60, deadline=None)
@given(conv_cases())
def test_unread_cells_have_zero_gradient(case):
    """Whatever the values, the gradient of an unread cell is exactly 0 (x̃ and x)."""
    ig = input_grad_arrays(case.spec, case.w, case.grad_out)
    assert (ig.grad_x_padded[..., ig.unread_mask] == 0).all()
    assert (ig.grad_x[..., ig.unread_x_mask] == 0).all()

"""copies_mask: the padded cells that hold an input cell, and that unpad folds back onto it."""

import numpy as np
import pytest

from convviz.engine.ops import copies_mask, pad, unpad


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("cell", [(0, 0), (1, 2), (3, 3)])
def test_copies_are_where_the_cell_is_padded_to(mode, cell):
    size, padding = (4, 4), ((2, 1), (1, 2))
    probe = np.zeros(size)
    probe[cell] = 1.0
    padded = pad(probe, padding, mode)
    expected = padded == 1.0  # every padded position that copies the probed cell
    np.testing.assert_array_equal(copies_mask(size, padding, mode, cell), expected)
    # and the fold: the gradient of all those copies returns to the cell
    grad = np.where(expected, 1.0, 0.0)
    assert unpad(grad, padding, mode)[cell] == expected.sum()


def test_zero_padding_has_no_copies():
    mask = copies_mask((3, 3), ((1, 1), (1, 1)), "zeros", (0, 0))
    assert mask.sum() == 1 and mask[1, 1]


def test_reflect_corner_hand_example():
    # reflect of rows [0, 1, 2] by 1: [1, 0, 1, 2, 1] -> row 1 appears at padded rows 0, 2, 4
    mask = copies_mask((3, 3), ((1, 1), (1, 1)), "reflect", (1, 1))
    assert np.argwhere(mask).tolist() == [[r, c] for r in (0, 2, 4) for c in (0, 2, 4)]

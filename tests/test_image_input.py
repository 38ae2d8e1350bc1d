"""Loading x from an image: sampling to the input size and quantising to small integers."""

import numpy as np
import pytest

from convviz.engine.values import image_to_input


@pytest.mark.parametrize(
    ("gray", "size", "expected"),
    [
        pytest.param(np.full((4, 4), 255.0), (2, 2), np.full((2, 2), 9.0), id="white is 9"),
        pytest.param(np.zeros((3, 5)), (3, 3), np.zeros((3, 3)), id="black is 0"),
        pytest.param(
            np.array([[0.0, 255.0], [255.0, 0.0]]),
            (4, 4),
            np.kron(np.array([[0.0, 9.0], [9.0, 0.0]]), np.ones((2, 2))),
            id="upsampling repeats cells",
        ),
        pytest.param(
            np.tile(np.array([0.0, 0.0, 255.0, 255.0]), (4, 1)),
            (2, 2),
            np.array([[0.0, 9.0], [0.0, 9.0]]),
            id="downsampling keeps the edge",
        ),
        pytest.param(np.full((2, 2), 127.5), (1, 1), np.array([[4.0]]), id="mid grey rounds to 4"),
    ],
)
def test_image_to_input(gray, size, expected):
    np.testing.assert_array_equal(image_to_input(gray, size), expected)


def test_image_to_input_levels_and_shape():
    rng = np.random.default_rng(0)
    out = image_to_input(rng.uniform(0, 255, (37, 53)), (7, 9))
    assert out.shape == (7, 9)
    assert out.min() >= 0 and out.max() <= 9 and np.array_equal(out, np.round(out))

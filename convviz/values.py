"""Example values: small integers from a seed, named kernels, and grad_out choices.

Values default to small integers so a student can check every sum by hand.
"""

from __future__ import annotations

import numpy as np

from convviz.conv import forward_padded
from convviz.ops import pad
from convviz.spec import ConvSpec

# Named 3×3 kernels; `named_kernel` resizes the ones that have a natural size-free form.
NAMED_KERNELS = {
    "identity": None,
    "box": None,
    "sobel x": np.array([[1, 0, -1], [2, 0, -2], [1, 0, -1]]),
    "sobel y": np.array([[1, 2, 1], [0, 0, 0], [-1, -2, -1]]),
    "laplacian": np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]]),
    "sharpen": np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]]),
}
GRAD_OUT_KINDS = ("ones", "random", "mse")
GRAD_OUT_LABELS = {
    "ones": "ones (loss = sum of y)",
    "random": "random integers",
    "mse": "from a loss: ½‖y − target‖²",
}


def named_kernel(name: str, size: tuple[int, int]) -> np.ndarray | None:
    """A (kH, kW) float kernel by name, or None if that name has no kernel of this size."""
    kH, kW = size
    if name == "identity":
        k = np.zeros(size)
        k[(kH - 1) // 2, (kW - 1) // 2] = 1
        return k
    if name == "box":
        return np.ones(size)
    k = NAMED_KERNELS.get(name)
    return k.astype(float) if k is not None and k.shape == tuple(size) else None


def random_ints(shape, seed: int, low: int, high: int) -> np.ndarray:
    """Integers in [low, high] as floats, from a seeded Generator (no global random state)."""
    return np.random.default_rng(seed).integers(low, high + 1, size=shape).astype(float)


def example_x(spec: ConvSpec, seed: int) -> np.ndarray:
    return random_ints(spec.input_shape, seed, 0, 9)


def example_w(spec: ConvSpec, seed: int, kernel: str = "random") -> np.ndarray:
    """The layer's weights: a named kernel on every (k, c) pair, or integers in [-2, 2]."""
    k2d = named_kernel(kernel, spec.kernel_size)
    if k2d is None:
        return random_ints(spec.weight_shape, seed + 1, -2, 2)
    return np.broadcast_to(k2d, spec.weight_shape).copy()


def example_grad_out(spec: ConvSpec, y: np.ndarray, seed: int, kind: str = "ones") -> np.ndarray:
    """grad_out = ∂L/∂y: ones (L = Σy), random integers, or y − target for L = ½‖y − target‖²."""
    if kind == "ones":
        return np.ones(spec.output_shape)
    if kind == "random":
        return random_ints(spec.output_shape, seed + 2, -2, 2)
    if kind == "mse":
        return y - random_ints(spec.output_shape, seed + 3, -5, 5)
    raise ValueError(f"grad_out kind {kind!r} is not one of {', '.join(GRAD_OUT_KINDS)}")


def layer_values(
    spec: ConvSpec,
    seed: int,
    kernel: str = "random",
    grad_out: str = "ones",
    *,
    x=None,
    w=None,
    g=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, w, grad_out) of a layer: the arrays given (e.g. a user's edits), seeded examples else."""
    x = example_x(spec, seed) if x is None else np.asarray(x, float).reshape(spec.input_shape)
    w = (
        example_w(spec, seed, kernel)
        if w is None
        else np.asarray(w, float).reshape(spec.weight_shape)
    )
    if g is not None:
        return x, w, np.asarray(g, float).reshape(spec.output_shape)
    y = (
        forward_padded(pad(x, spec.padding, spec.padding_mode), w, spec)
        if grad_out == "mse"
        else None
    )
    return x, w, example_grad_out(spec, y, seed, grad_out)


def image_to_input(gray: np.ndarray, size: tuple[int, int], levels: int = 10) -> np.ndarray:
    """A grayscale image (h, w) with values 0–255, sampled to (H, W) and quantised to 0…levels-1.

    Nearest-cell sampling keeps edges crisp; small integers keep the sums checkable by hand.
    """
    h, w = gray.shape
    rows = ((np.arange(size[0]) + 0.5) * h / size[0]).astype(int)  # (H,)
    cols = ((np.arange(size[1]) + 0.5) * w / size[1]).astype(int)  # (W,)
    return np.round(gray[np.ix_(rows, cols)] / 255 * (levels - 1))

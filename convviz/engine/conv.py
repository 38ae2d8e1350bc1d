"""The public numeric API: conv2d and its gradients with PyTorch's semantics.

Cross-correlation, NCHW activations, (C_out, C_in, kH, kW) weights, dilation 1 = none. Each
function checks its arrays, works out the layer's shapes (`ConvSpec`), pads, and hands the sums
to the fast path (`convviz.engine.fastpath`: im2col + one matrix product per block). The textbook
route the app draws lives in `arrays`; tests check that both agree.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from convviz.engine.fastpath import forward_padded, input_grad_padded, weight_grad_padded
from convviz.engine.ops import pad, unpad
from convviz.engine.spec import ConvSpecError, spec_of_call


def as_array(a: ArrayLike, name: str, ndim: int) -> NDArray[np.floating]:
    """A float32/float64 array of rank `ndim` with finite values, or ConvSpecError."""
    try:
        arr = np.asarray(a)
    except (TypeError, ValueError) as exc:  # ragged lists
        raise ConvSpecError(f"{name} is not a rectangular array of numbers: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise ConvSpecError(f"{name} must hold numbers, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise ConvSpecError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ConvSpecError(f"{name} contains NaN or infinity: replace them with finite numbers")
    return arr


def _check_shape(arr: np.ndarray, expected: tuple, name: str) -> None:
    if arr.shape != tuple(expected):
        raise ConvSpecError(f"{name} must have shape {tuple(expected)} here, got {arr.shape}")


def conv2d(
    x: ArrayLike,
    w: ArrayLike,
    bias: ArrayLike | None = None,
    *,
    stride=1,
    padding=0,
    dilation=1,
    padding_mode: str = "zeros",
) -> NDArray[np.floating]:
    """2D cross-correlation, as torch.nn.functional.conv2d (plus PyTorch's padding_mode).

    Args:
        x : shape (N, C_in, H, W); w : shape (C_out, C_in, kH, kW); bias : (C_out,) or None.
        stride, dilation : an int or a pair (dilation 1 = none).
        padding : an int, a pair, per-side pairs ((top, bottom), (left, right)), or 'valid',
            'same' (TensorFlow's rule for every stride, the odd extra at the bottom/right),
            'full'; padding_mode : 'zeros', 'reflect', 'replicate' or 'circular'.

    Shape:
        y : (N, C_out, oH, oW), oH = ⌊(H + pad_top + pad_bottom − dilation·(kH − 1) − 1) / stride⌋
        + 1 (oW likewise); ConvSpecError when a size is under 1 or a setting cannot work.

    Examples:
        >>> import numpy as np
        >>> x = np.arange(9.0).reshape(1, 1, 3, 3)
        >>> w = np.array([[0.0, 1.0], [2.0, 3.0]]).reshape(1, 1, 2, 2)
        >>> conv2d(x, w)[0, 0]
        array([[19., 25.],
               [37., 43.]])
        >>> conv2d(np.ones((1, 1, 5, 5)), np.ones((1, 1, 3, 3)), stride=2, padding=1).shape
        (1, 1, 3, 3)
        >>> conv2d(np.ones((1, 1, 5, 5)), np.ones((1, 1, 3, 3)), padding="same").shape
        (1, 1, 5, 5)
    """
    x, w = as_array(x, "the input x", 4), as_array(w, "the kernel w", 4)
    spec = spec_of_call(x.shape, w.shape, stride, padding, dilation, padding_mode)
    y = forward_padded(pad(x, spec.padding, spec.padding_mode), w, spec)
    if bias is not None:
        b = as_array(bias, "the bias", 1)
        _check_shape(b, (spec.out_channels,), "the bias")
        y += b.astype(y.dtype, copy=False)[None, :, None, None]
    return y


def conv2d_input(
    input_shape,
    w: ArrayLike,
    grad_out: ArrayLike,
    *,
    stride=1,
    padding=0,
    dilation=1,
    padding_mode: str = "zeros",
) -> NDArray[np.floating]:
    """Gradient of conv2d w.r.t. its input, as torch.nn.grad.conv2d_input: the full correlation
    of ∂L/∂y (dilated by the stride) with the kernel rotated 180°, the padded ring masked away.

    Args:
        input_shape : (N, C_in, H, W); w : shape (C_out, C_in, kH, kW);
        grad_out : ∂L/∂y, shape (N, C_out, oH, oW); stride, padding, dilation, padding_mode:
            as conv2d's.

    Shape:
        grad_x : (N, C_in, H, W); grad_out must be conv2d's output shape, oH = ⌊(H + pad_top
        + pad_bottom − dilation·(kH − 1) − 1) / stride⌋ + 1 (oW likewise).

    Examples:
        >>> import numpy as np
        >>> w = np.array([[0.0, 1.0], [2.0, 3.0]]).reshape(1, 1, 2, 2)
        >>> conv2d_input((1, 1, 3, 3), w, np.ones((1, 1, 2, 2)))[0, 0]  # every tap it met
        array([[0., 1., 1.],
               [2., 6., 4.],
               [2., 5., 3.]])
    """
    w, g = as_array(w, "the kernel w", 4), as_array(grad_out, "grad_out", 4)
    # ConvSpec checks that input_shape is a 4-number shape
    spec = spec_of_call(input_shape, w.shape, stride, padding, dilation, padding_mode)
    _check_shape(g, spec.output_shape, "grad_out")
    return unpad(input_grad_padded(g, w, spec), spec.padding, spec.padding_mode)


def conv2d_weight(
    x: ArrayLike,
    weight_shape,
    grad_out: ArrayLike,
    *,
    stride=1,
    padding=0,
    dilation=1,
    padding_mode: str = "zeros",
) -> NDArray[np.floating]:
    """Gradient of conv2d w.r.t. its weight, as torch.nn.grad.conv2d_weight: the padded input
    correlated with ∂L/∂y dilated by the stride, summed over the batch.

    Args:
        x : shape (N, C_in, H, W); weight_shape : (C_out, C_in, kH, kW);
        grad_out : ∂L/∂y, shape (N, C_out, oH, oW); stride, padding, dilation, padding_mode:
            as conv2d's.

    Shape:
        grad_w : (C_out, C_in, kH, kW); grad_out must be conv2d's output shape, oH = ⌊(H +
        pad_top + pad_bottom − dilation·(kH − 1) − 1) / stride⌋ + 1 (oW likewise).

    Examples:
        >>> import numpy as np
        >>> x = np.arange(9.0).reshape(1, 1, 3, 3)
        >>> conv2d_weight(x, (1, 1, 2, 2), np.ones((1, 1, 2, 2)))[0, 0]  # each window's sum
        array([[ 8., 12.],
               [20., 24.]])
    """
    x, g = as_array(x, "the input x", 4), as_array(grad_out, "grad_out", 4)
    spec = spec_of_call(x.shape, weight_shape, stride, padding, dilation, padding_mode)
    _check_shape(g, spec.output_shape, "grad_out")
    return weight_grad_padded(pad(x, spec.padding, spec.padding_mode), g, spec)


def conv2d_bias(grad_out: ArrayLike) -> NDArray[np.floating]:
    """Gradient w.r.t. the bias: grad_out (N, C_out, oH, oW) summed over batch and space.

    Shape:
        grad_b : (C_out,).

    Examples:
        >>> import numpy as np
        >>> conv2d_bias(np.ones((2, 3, 4, 4)))
        array([32., 32., 32.])
    """
    return as_array(grad_out, "grad_out", 4).sum(axis=(0, 2, 3))

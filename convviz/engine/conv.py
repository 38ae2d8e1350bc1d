"""The public numeric API: conv2d and its gradients with PyTorch's semantics.

Cross-correlation, NCHW activations, (C_out, C_in, kH, kW) weights, dilation 1 = none. Each
function checks its arrays, works out the layer's shapes (`ConvSpec`), pads, and hands the sums
to the fast path (`convviz.engine.fastpath`: im2col + one matrix product per block). The textbook
route the app draws lives in `stages`; tests check that both agree.
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

    x : shape (N, C_in, H, W); w : shape (C_out, C_in, kH, kW); bias : shape (C_out,) or None.
    Returns y : shape (N, C_out, oH, oW).
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
    """Gradient of conv2d w.r.t. its input, as torch.nn.grad.conv2d_input.

    input_shape : (N, C_in, H, W); w : shape (C_out, C_in, kH, kW);
    grad_out : shape (N, C_out, oH, oW). Returns grad_x : shape (N, C_in, H, W).
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
    """Gradient of conv2d w.r.t. its weight, as torch.nn.grad.conv2d_weight.

    x : shape (N, C_in, H, W); weight_shape : (C_out, C_in, kH, kW);
    grad_out : shape (N, C_out, oH, oW). Returns grad_w : shape (C_out, C_in, kH, kW).
    """
    x, g = as_array(x, "the input x", 4), as_array(grad_out, "grad_out", 4)
    spec = spec_of_call(x.shape, weight_shape, stride, padding, dilation, padding_mode)
    _check_shape(g, spec.output_shape, "grad_out")
    return weight_grad_padded(pad(x, spec.padding, spec.padding_mode), g, spec)


def conv2d_bias(grad_out: ArrayLike) -> NDArray[np.floating]:
    """Gradient w.r.t. the bias: grad_out (N, C_out, oH, oW) summed over batch and space."""
    return as_array(grad_out, "grad_out", 4).sum(axis=(0, 2, 3))

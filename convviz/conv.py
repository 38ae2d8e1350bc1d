"""The public numeric API: conv2d and its gradients with PyTorch's semantics.

Cross-correlation, NCHW activations, (C_out, C_in, kH, kW) weights, dilation 1 = none.
The fast path loops over the kH·kW kernel taps only; each tap is one batched GEMM on a strided
view of the padded input (for the input gradient, a strided-slice addition: col2im).
The textbook route the app draws lives in `stages`; tests check that both agree.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from convviz.ops import pad, unpad
from convviz.spec import ConvSpec, ConvSpecError


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


def tap_slices(spec: ConvSpec, i: int, j: int) -> tuple[slice, slice]:
    """Rows and columns of the padded input that kernel tap (i, j) meets, over all windows."""
    (sh, sw), (dh, dw), (oH, oW) = spec.stride, spec.dilation, spec.out_size
    return (
        slice(i * dh, i * dh + (oH - 1) * sh + 1, sh),
        slice(j * dw, j * dw + (oW - 1) * sw + 1, sw),
    )


def _taps(spec: ConvSpec):
    kH, kW = spec.kernel_size
    for i in range(kH):
        for j in range(kW):
            yield i, j, tap_slices(spec, i, j)


def forward_padded(x_pad: np.ndarray, w: np.ndarray, spec: ConvSpec) -> np.ndarray:
    """y (N, C_out, oH, oW) from the already padded input (N, C_in, Hp, Wp); no bias."""
    N, C = x_pad.shape[:2]
    O, (oH, oW) = spec.out_channels, spec.out_size
    dtype = np.result_type(x_pad, w)
    y = np.zeros((N, O, oH * oW), dtype=dtype)
    for i, j, (rows, cols) in _taps(spec):
        x_tap = x_pad[:, :, rows, cols].reshape(N, C, oH * oW)  # (N, C, P)
        y += w[:, :, i, j].astype(dtype, copy=False) @ x_tap  # (O, C) @ (N, C, P) -> (N, O, P)
    return y.reshape(N, O, oH, oW)


def input_grad_padded(grad_out: np.ndarray, w: np.ndarray, spec: ConvSpec) -> np.ndarray:
    """Gradient w.r.t. the padded input (N, C_in, Hp, Wp), ring included: col2im by taps."""
    N, O = grad_out.shape[:2]
    C, (oH, oW) = spec.in_channels, spec.out_size
    dtype = np.result_type(grad_out, w)
    g = grad_out.reshape(N, O, oH * oW)
    grad_pad = np.zeros((N, C, *spec.padded_size), dtype=dtype)
    for i, j, (rows, cols) in _taps(spec):
        stamp = w[:, :, i, j].T.astype(dtype, copy=False) @ g  # (C, O) @ (N, O, P) -> (N, C, P)
        grad_pad[:, :, rows, cols] += stamp.reshape(N, C, oH, oW)
    return grad_pad


def weight_grad_padded(x_pad: np.ndarray, grad_out: np.ndarray, spec: ConvSpec) -> np.ndarray:
    """grad_w (C_out, C_in, kH, kW): the padded input correlated with grad_out, summed over N."""
    N, C = x_pad.shape[:2]
    O, (oH, oW) = spec.out_channels, spec.out_size
    dtype = np.result_type(x_pad, grad_out)
    g = grad_out.reshape(N, O, oH * oW)
    grad_w = np.zeros(spec.weight_shape, dtype=dtype)
    for i, j, (rows, cols) in _taps(spec):
        x_tap = x_pad[:, :, rows, cols].reshape(N, C, oH * oW)  # (N, C, P)
        grad_w[:, :, i, j] = np.einsum("nop,ncp->oc", g, x_tap, optimize=True)
    return grad_w


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
    spec = ConvSpec.create(x.shape, w.shape, stride=stride, padding=padding,
                           dilation=dilation, padding_mode=padding_mode)
    y = forward_padded(pad(x, spec.padding, spec.padding_mode), w, spec)
    if bias is not None:
        b = as_array(bias, "the bias", 1)
        _check_shape(b, (spec.out_channels,), "the bias")
        y += b.astype(y.dtype, copy=False)[None, :, None, None]
    return y


def conv2d_input(
    input_shape, w: ArrayLike, grad_out: ArrayLike, *, stride=1, padding=0, dilation=1,
    padding_mode: str = "zeros",
) -> NDArray[np.floating]:
    """Gradient of conv2d w.r.t. its input, as torch.nn.grad.conv2d_input.

    input_shape : (N, C_in, H, W); w : shape (C_out, C_in, kH, kW);
    grad_out : shape (N, C_out, oH, oW). Returns grad_x : shape (N, C_in, H, W).
    """
    w, g = as_array(w, "the kernel w", 4), as_array(grad_out, "grad_out", 4)
    spec = ConvSpec.create(tuple(input_shape), w.shape, stride=stride, padding=padding,
                           dilation=dilation, padding_mode=padding_mode)
    _check_shape(g, spec.output_shape, "grad_out")
    return unpad(input_grad_padded(g, w, spec), spec.padding, spec.padding_mode)


def conv2d_weight(
    x: ArrayLike, weight_shape, grad_out: ArrayLike, *, stride=1, padding=0, dilation=1,
    padding_mode: str = "zeros",
) -> NDArray[np.floating]:
    """Gradient of conv2d w.r.t. its weight, as torch.nn.grad.conv2d_weight.

    x : shape (N, C_in, H, W); weight_shape : (C_out, C_in, kH, kW);
    grad_out : shape (N, C_out, oH, oW). Returns grad_w : shape (C_out, C_in, kH, kW).
    """
    x, g = as_array(x, "the input x", 4), as_array(grad_out, "grad_out", 4)
    spec = ConvSpec.create(x.shape, tuple(weight_shape), stride=stride, padding=padding,
                           dilation=dilation, padding_mode=padding_mode)
    _check_shape(g, spec.output_shape, "grad_out")
    return weight_grad_padded(pad(x, spec.padding, spec.padding_mode), g, spec)


def conv2d_bias(grad_out: ArrayLike) -> NDArray[np.floating]:
    """Gradient w.r.t. the bias: grad_out (N, C_out, oH, oW) summed over batch and space."""
    return as_array(grad_out, "grad_out", 4).sum(axis=(0, 2, 3))

"""The public numeric API: conv2d and its gradients with PyTorch's semantics.

Cross-correlation, NCHW activations, (C_out, C_in, kH, kW) weights, dilation 1 = none.
The fast path loops over the kH·kW kernel taps only, to copy each tap's strided window into an
im2col block that meets the whole kernel in one GEMM (for the input gradient, the reverse: one
GEMM, then a strided-slice addition per tap, col2im).
The textbook route the app draws lives in `stages`; tests check that both agree.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from convviz._threads import run_split
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


# --- fast path -----------------------------------------------------------------------------------
# im2col + GEMM in blocks of a few output rows: a block copies the windows of all kH·kW taps (one
# strided-slice copy per tap) and meets the whole kernel in one GEMM, so the contraction is long
# (kH·kW·C_in) while the copy stays in cache. The input gradient runs it backwards (col2im): one
# GEMM per block gives every tap's stamps, and strided-slice additions put them in place.
# Large work is split over two threads (see `_threads`): NumPy's copies and additions use one core.

_BLOCK_BYTES = 1 << 21  # im2col (or stamp) bytes per block: long GEMMs, cache-resident copies
_THREAD_FLOPS = 2e7  # below this, a second thread costs about what it saves


def _taps(spec: ConvSpec) -> tuple[int, list[tuple[int, slice]]]:
    """sh, and per kernel tap (row-major) its first padded row and the padded columns it meets.

    Output rows r0:r1 meet padded rows i0 + r0·sh : i0 + (r1 - 1)·sh + 1 : sh, as in `tap_slices`;
    the spec's sizes (computed properties) are read once per call, not once per block.
    """
    (sh, sw), (dh, dw), (kH, kW) = spec.stride, spec.dilation, spec.kernel_size
    oW = spec.out_size[1]
    cols = [slice(j * dw, j * dw + (oW - 1) * sw + 1, sw) for j in range(kW)]
    return sh, [(i * dh, c) for i in range(kH) for c in cols]


def _windows(taps, r0: int, r1: int):
    """(t, rows, cols) of every tap for output rows r0:r1."""
    sh, starts = taps
    for t, (i0, cols) in enumerate(starts):
        yield t, slice(i0 + r0 * sh, i0 + (r1 - 1) * sh + 1, sh), cols


def _blocks(N: int, oH: int, row_bytes: int) -> list[tuple[int, int, int, int]]:
    """(n0, n1, r0, r1) blocks of samples × output rows, each ~_BLOCK_BYTES of im2col.

    row_bytes : the im2col bytes of one output row of one sample.
    """
    n_rows = -(-oH // max(1, _BLOCK_BYTES // row_bytes))
    if N % 2 and 1 < n_rows < oH:  # an even count splits evenly over two threads
        n_rows += n_rows % 2
    rows = -(-oH // n_rows)
    per = max(1, _BLOCK_BYTES // (row_bytes * oH)) if n_rows == 1 else 1
    return [
        (n, min(n + per, N), r, min(r + rows, oH))
        for n in range(0, N, per)
        for r in range(0, oH, rows)
    ]


def _scratch(blocks: list, depth: int, oW: int, dtype):
    """view(n0, n1, r0, r1) -> a (B, depth, R·oW) array in one buffer shared by the blocks."""
    buf = np.empty(depth * oW * max((n1 - n0) * (r1 - r0) for n0, n1, r0, r1 in blocks), dtype)
    return lambda n0, n1, r0, r1: buf[: (n1 - n0) * depth * (r1 - r0) * oW].reshape(
        n1 - n0, depth, (r1 - r0) * oW
    )


def _im2col(x_pad: np.ndarray, taps, block: tuple, out: np.ndarray) -> np.ndarray:
    """The windows of every tap for one block, copied into out (B, kH·kW·C_in, R·oW)."""
    n0, n1, r0, r1 = block
    cols = out.reshape(n1 - n0, len(taps[1]), x_pad.shape[1], r1 - r0, -1)  # (B, T, C_in, R, oW)
    for t, rows, cs in _windows(taps, r0, r1):
        cols[:, t] = x_pad[n0:n1, :, rows, cs]
    return out


def _split(work, parts: list, flops: float) -> list:
    """work over two halves of `parts` on two threads when the work is large, else one call."""
    half = len(parts) // 2
    return run_split(
        work, [parts[:half], parts[half:]] if half else [parts], flops >= _THREAD_FLOPS
    )


def forward_padded(x_pad: np.ndarray, w: np.ndarray, spec: ConvSpec) -> np.ndarray:
    """y (N, C_out, oH, oW) from the already padded input (N, C_in, Hp, Wp); no bias."""
    N, O, (oH, oW), taps = spec.batch, spec.out_channels, spec.out_size, _taps(spec)
    dtype = np.result_type(x_pad, w)
    x_pad = x_pad.astype(dtype, copy=False)
    w2 = w.astype(dtype, copy=False).transpose(0, 2, 3, 1).reshape(O, -1)  # (O, kH·kW·C_in)
    y = np.empty((N, O, oH * oW), dtype=dtype)
    blocks = _blocks(N, oH, w2.shape[1] * oW * y.itemsize)

    def work(part):
        scratch = _scratch(part, w2.shape[1], oW, dtype)
        for n0, n1, r0, r1 in part:
            cols = _im2col(x_pad, taps, (n0, n1, r0, r1), scratch(n0, n1, r0, r1))
            np.matmul(w2, cols, out=y[n0:n1, :, r0 * oW : r1 * oW])  # (O, TC) @ (B, TC, R·oW)

    _split(work, blocks, 2.0 * y.size * w2.shape[1])
    return y.reshape(N, O, oH, oW)


def weight_grad_padded(x_pad: np.ndarray, grad_out: np.ndarray, spec: ConvSpec) -> np.ndarray:
    """grad_w (C_out, C_in, kH, kW): the padded input correlated with grad_out, summed over N."""
    N, (O, C, kH, kW), (oH, oW), taps = spec.batch, spec.weight_shape, spec.out_size, _taps(spec)
    dtype = np.result_type(x_pad, grad_out)
    x_pad = x_pad.astype(dtype, copy=False)
    g = grad_out.astype(dtype, copy=False).reshape(N, O, oH * oW)  # (N, O, oH·oW)
    TC = kH * kW * C
    blocks = _blocks(N, oH, TC * oW * g.itemsize)

    def work(part):
        scratch = _scratch(part, TC, oW, dtype)
        grad_w = np.zeros((O, TC), dtype=dtype)
        for n0, n1, r0, r1 in part:
            cols = _im2col(x_pad, taps, (n0, n1, r0, r1), scratch(n0, n1, r0, r1))
            # (B, O, R·oW) @ (B, R·oW, TC) -> (B, O, TC), summed over the block's samples
            grad_w += (g[n0:n1, :, r0 * oW : r1 * oW] @ cols.transpose(0, 2, 1)).sum(axis=0)
        return grad_w

    grad_w = sum(_split(work, blocks, 2.0 * g.size * TC))  # (O, kH·kW·C_in)
    return np.ascontiguousarray(grad_w.reshape(O, kH, kW, C).transpose(0, 3, 1, 2))


def input_grad_padded(grad_out: np.ndarray, w: np.ndarray, spec: ConvSpec) -> np.ndarray:
    """Gradient w.r.t. the padded input (N, C_in, Hp, Wp), ring included, remainder zero.

    col2im: per block, W_tapᵀ @ grad_out for every tap in one GEMM, then each tap's stamps are
    added onto the padded-input cells that tap met.
    """
    N, (O, C, kH, kW), (oH, oW), taps = spec.batch, spec.weight_shape, spec.out_size, _taps(spec)
    dtype = np.result_type(grad_out, w)
    g = grad_out.astype(dtype, copy=False).reshape(N, O, oH * oW)  # (N, O, oH·oW)
    w_taps = w.astype(dtype, copy=False).transpose(2, 3, 1, 0).reshape(kH * kW, C, O)  # (T, C, O)
    grad_pad = np.zeros(spec.padded_shape, dtype=dtype)
    blocks = _blocks(N, oH, kH * kW * C * oW * g.itemsize)

    def work(task):
        part, cs = task  # blocks, and the input channels this thread owns
        w2 = w_taps[:, cs].reshape(-1, O)  # (T·C', O)
        scratch = _scratch(part, w2.shape[0], oW, dtype)
        for n0, n1, r0, r1 in part:
            stamps = np.matmul(w2, g[n0:n1, :, r0 * oW : r1 * oW], out=scratch(n0, n1, r0, r1))
            stamps = stamps.reshape(n1 - n0, kH * kW, -1, r1 - r0, oW)  # (B, T, C', R, oW)
            for t, rows, cols in _windows(taps, r0, r1):
                grad_pad[n0:n1, cs, rows, cols] += stamps[:, t]

    # windows overlap, so the two threads must own disjoint samples (or channels, for one sample)
    mid = next((i for i, b in enumerate(blocks) if b[0] >= N // 2 > 0), None)
    if mid is not None:
        tasks = [(blocks[:mid], slice(0, C)), (blocks[mid:], slice(0, C))]
    else:
        tasks = [(blocks, slice(0, C // 2)), (blocks, slice(C // 2, C))][C < 2 :]
    run_split(work, tasks, 2.0 * g.size * kH * kW * C >= _THREAD_FLOPS)
    return grad_pad


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
    spec = ConvSpec.create(
        x.shape,
        w.shape,
        stride=stride,
        padding=padding,
        dilation=dilation,
        padding_mode=padding_mode,
    )
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
    spec = ConvSpec.create(
        input_shape,  # ConvSpec checks it is a 4-number shape
        w.shape,
        stride=stride,
        padding=padding,
        dilation=dilation,
        padding_mode=padding_mode,
    )
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
    spec = ConvSpec.create(
        x.shape,
        weight_shape,
        stride=stride,
        padding=padding,
        dilation=dilation,
        padding_mode=padding_mode,
    )
    _check_shape(g, spec.output_shape, "grad_out")
    return weight_grad_padded(pad(x, spec.padding, spec.padding_mode), g, spec)


def conv2d_bias(grad_out: ArrayLike) -> NDArray[np.floating]:
    """Gradient w.r.t. the bias: grad_out (N, C_out, oH, oW) summed over batch and space."""
    return as_array(grad_out, "grad_out", 4).sum(axis=(0, 2, 3))

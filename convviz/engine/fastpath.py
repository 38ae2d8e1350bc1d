"""The fast path behind the public API: im2col + GEMM for the forward pass and ∂L/∂w, col2im
for ∂L/∂x, on the already padded input.

The method, in plain words: for a block of a few output rows, copy the window of every kernel
tap (one strided slice per tap) into one im2col matrix, then meet the whole kernel in a single
matrix product, so the contraction is long (kH·kW·C_in) while the copy stays in cache. The input
gradient runs it backwards: one product per block gives every tap's stamps, and a strided-slice
addition per tap puts them in place. `convviz.engine.arrays` computes the same numbers the textbook
way; the tests check both against a plain loop.
"""

from __future__ import annotations

import numpy as np

from convviz.engine._threads import WORKERS, run_split
from convviz.engine.spec import ConvSpec

# Large work is split over WORKERS threads (see `_threads`): NumPy's copies and additions use one
# core each.

_BLOCK_BYTES = 1 << 21  # im2col (or stamp) bytes per block: long GEMMs, cache-resident copies
_THREAD_FLOPS = 2e7  # below this, more threads cost about what they save


def _taps(spec: ConvSpec) -> tuple[int, list[tuple[int, slice]]]:
    """sh, and per kernel tap (row-major) its first padded row and the padded columns it meets.

    Output rows r0:r1 meet padded rows i0 + r0·sh : i0 + (r1 - 1)·sh + 1 : sh (tap row i starts
    at i0 = i·dh); the spec's sizes (computed properties) are read once per call, not per block.
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
    if N % WORKERS and 1 < n_rows < oH:  # a multiple of WORKERS splits evenly over the threads
        n_rows = min(oH, -(-n_rows // WORKERS) * WORKERS)
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


def _shares(items: list, ways: int) -> list[list]:
    """`items` in up to `ways` consecutive runs of near-equal length (none empty)."""
    ways = max(1, min(ways, len(items)))
    return [items[len(items) * i // ways : len(items) * (i + 1) // ways] for i in range(ways)]


def _split(work, parts: list, flops: float) -> list:
    """work over WORKERS shares of `parts` on threads when the work is large, else one call."""
    return run_split(work, _shares(parts, WORKERS), flops >= _THREAD_FLOPS)


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

    # windows overlap, so each thread must own disjoint samples (or channels, for one sample)
    if N > 1:
        owners = _shares(range(N), WORKERS)
        shares = ([b for b in blocks if b[0] in own] for own in owners)
        tasks = [(share, slice(0, C)) for share in shares if share]  # a block may hold samples
    else:
        tasks = [(blocks, slice(own.start, own.stop)) for own in _shares(range(C), WORKERS)]
    run_split(work, tasks, 2.0 * g.size * kH * kW * C >= _THREAD_FLOPS)
    return grad_pad

"""The readable twin of the engine: plain loops over the chain-rule sums.

Slow on purpose and independent of the fast code: it shares only `ConvSpec` (the geometry) and
reads padded cells through `source_index`, so every gradient that lands on a padded copy goes
back to the cell it was copied from. Tests compare the vectorized engine against these loops.
"""

from __future__ import annotations

import numpy as np

from convviz.engine.ops import source_index
from convviz.engine.spec import ConvSpec, spec_of_call


def _windows(spec: ConvSpec):
    """Every (n, k, c, i, j, a, b, r, q): output cell, tap, and the input cell (r, q) it reads.

    r or q is -1 when the tap reads a zero-padded cell.
    """
    (pt, pb), (pl, pr) = spec.padding
    H, W = spec.in_size
    src_r = source_index(H, (pt, pb), spec.padding_mode)
    src_c = source_index(W, (pl, pr), spec.padding_mode)
    N, C = spec.batch, spec.in_channels
    K, (kH, kW), (oH, oW) = spec.out_channels, spec.kernel_size, spec.out_size
    (sh, sw), (dh, dw) = spec.stride, spec.dilation
    for n in range(N):
        for k in range(K):
            for c in range(C):
                for i in range(oH):
                    for j in range(oW):
                        for a in range(kH):
                            for b in range(kW):
                                r, q = src_r[i * sh + a * dh], src_c[j * sw + b * dw]
                                yield n, k, c, i, j, a, b, r, q


def conv2d_loop(x, w, bias=None, *, stride=1, padding=0, dilation=1, padding_mode="zeros"):
    """y[n,k,i,j] = bias[k] + Σ_c Σ_a Σ_b x_pad[n,c,i·s+a·d, j·s+b·d] · w[k,c,a,b]."""
    spec = spec_of_call(x.shape, w.shape, stride, padding, dilation, padding_mode)
    y = np.zeros(spec.output_shape)
    for n, k, c, i, j, a, b, r, q in _windows(spec):
        if r >= 0 and q >= 0:
            y[n, k, i, j] += x[n, c, r, q] * w[k, c, a, b]
    if bias is not None:
        y += np.asarray(bias)[None, :, None, None]
    return y


def conv2d_input_loop(
    input_shape, w, grad_out, *, stride=1, padding=0, dilation=1, padding_mode="zeros"
):
    """∂L/∂x[n,c,r,q] = Σ over every (output cell, tap) that read x[n,c,r,q] of ∂L/∂y · w."""
    spec = spec_of_call(input_shape, w.shape, stride, padding, dilation, padding_mode)
    grad_x = np.zeros(spec.input_shape)
    for n, k, c, i, j, a, b, r, q in _windows(spec):
        if r >= 0 and q >= 0:
            grad_x[n, c, r, q] += grad_out[n, k, i, j] * w[k, c, a, b]
    return grad_x


def conv2d_weight_loop(
    x, weight_shape, grad_out, *, stride=1, padding=0, dilation=1, padding_mode="zeros"
):
    """∂L/∂w[k,c,a,b] = Σ_n Σ_i Σ_j ∂L/∂y[n,k,i,j] · x_pad[n,c,i·s+a·d, j·s+b·d]."""
    spec = spec_of_call(x.shape, weight_shape, stride, padding, dilation, padding_mode)
    grad_w = np.zeros(spec.weight_shape)
    for n, k, c, i, j, a, b, r, q in _windows(spec):
        if r >= 0 and q >= 0:
            grad_w[k, c, a, b] += grad_out[n, k, i, j] * x[n, c, r, q]
    return grad_w


MAX_LIVE_TERMS = 200_000  # multiply-adds the loops may run while a page waits


def largest_difference(spec: ConvSpec, x, w, grad_out, y, grad_x, grad_w) -> float | None:
    """Largest |engine − loops| over y, ∂L/∂x and ∂L/∂w; None when the loops would be too slow.

    The app runs this live so a student sees the numbers agree with an independent computation.
    """
    N, K, oH, oW = spec.output_shape
    if N * K * oH * oW * spec.in_channels * spec.kernel_size[0] * spec.kernel_size[1] > (
        MAX_LIVE_TERMS
    ):
        return None
    kw = spec.kwargs()
    return float(
        max(
            np.abs(conv2d_loop(x, w, **kw) - y).max(),
            np.abs(conv2d_input_loop(x.shape, w, grad_out, **kw) - grad_x).max(),
            np.abs(conv2d_weight_loop(x, w.shape, grad_out, **kw) - grad_w).max(),
        )
    )

"""Sweeps: every step of one sliding-window animation, built in one vectorized call.

A sweep slides a (channel-stacked) kernel over an operand: at step t the window sits on output
cell `targets[t]`, covers operand rows `rows[t]` × columns `cols[t]`, and yields the products
`products[t]` whose total is `sums[t]`. The forward pass, the full correlation of the textbook
input gradient and the weight-gradient correlation are all sweeps over different operands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from convviz.engine.arrays import ForwardArrays, InputGradArrays, WeightGradArrays
from convviz.engine.ops import unpad

MAX_TAP_LOOP = 64  # kernels up to this many taps are multiplied tap by tap


@dataclass(frozen=True)
class Sweep:
    """All T = oh·ow steps of one correlation, row-major over the output."""

    operand: np.ndarray  # (C, H, W) what the window slides over
    kernel: np.ndarray  # (C, kh, kw)
    stride: tuple[int, int]
    dilation: tuple[int, int]
    out_size: tuple[int, int]  # (oh, ow)
    targets: np.ndarray  # (T, 2) output cell of each step
    rows: np.ndarray  # (T, kh) operand rows the taps cover
    cols: np.ndarray  # (T, kw) operand columns the taps cover
    products: np.ndarray  # (T, C, kh, kw) operand · kernel, tap by tap
    partial: np.ndarray  # (T, C) the sum of each channel's products
    sums: np.ndarray  # (T,) Σ over channels and taps, plus `offset`
    offset: float = 0.0  # a constant added to every sum (the bias)

    @property
    def steps(self) -> int:
        return len(self.sums)

    def result(self) -> np.ndarray:
        """The output this sweep writes, shape (oh, ow)."""
        return self.sums.reshape(self.out_size)


def window_index(
    out_size: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    kernel_size: tuple[int, int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each of the T = oh·ow steps (row-major) puts its window.

    Returns targets, shape (T, 2), the output cell of each step; rows, shape (T, kh), and
    cols, shape (T, kw), the operand rows and columns its taps cover.
    """
    (oh, ow), (sh, sw), (dh, dw), (kh, kw) = out_size, stride, dilation, kernel_size
    oy, ox = np.divmod(np.arange(oh * ow), ow)
    rows = oy[:, None] * sh + np.arange(kh) * dh  # (T, kh)
    cols = ox[:, None] * sw + np.arange(kw) * dw  # (T, kw)
    return np.stack([oy, ox], axis=1), rows, cols


SweepBuilder = Callable[..., Sweep]  # (operand, kernel, stride, dilation, offset=) like sweep


def sweep(
    operand: np.ndarray, kernel: np.ndarray, stride=(1, 1), dilation=(1, 1), offset: float = 0.0
) -> Sweep:
    """Slide kernel (C, kh, kw) over operand (C, H, W): every step's cells, products and sums."""
    (sh, sw), (dh, dw) = stride, dilation
    C, kh, kw = kernel.shape
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    win = sliding_window_view(operand, span, axis=(1, 2))  # (C, H-eh+1, W-ew+1, eh, ew)
    win = win[:, ::sh, ::sw, ::dh, ::dw]  # (C, oh, ow, kh, kw), a view
    oh, ow = win.shape[1:3]
    if kh * kw <= MAX_TAP_LOOP:  # one strided multiply per tap: ~4x faster than 5-D broadcast
        by_tap = np.empty((kh, kw, C, oh * ow), dtype=np.result_type(operand, kernel))
        for i in range(kh):
            for j in range(kw):
                by_tap[i, j] = (win[..., i, j] * kernel[:, i, j, None, None]).reshape(C, oh * ow)
        products = by_tap.transpose(3, 2, 0, 1)  # (T, C, kh, kw), a view
        partial = by_tap.sum(axis=(0, 1)).T  # (T, C)
    else:  # a big 'kernel' (the weight gradient's grad_out) over few steps: one broadcast
        products = (win * kernel[:, None, None]).reshape(C, oh * ow, kh, kw).transpose(1, 0, 2, 3)
        partial = products.sum(axis=(2, 3))  # (T, C)
    targets, rows, cols = window_index((oh, ow), (sh, sw), (dh, dw), (kh, kw))
    return Sweep(
        operand,
        kernel,
        (sh, sw),
        (dh, dw),
        (oh, ow),
        targets=targets,
        rows=rows,
        cols=cols,
        products=products,
        partial=partial,
        sums=partial.sum(axis=1) + offset,
        offset=offset,
    )


def forward_sweep(
    stages: ForwardArrays, n: int = 0, k: int = 0, build: SweepBuilder = sweep
) -> Sweep:
    """The forward window over x_padded[n] with filter k; its result is y[n, k].

    `build` makes the sweep from its operands (`sweep`, or a builder with its signature).
    """
    return build(
        stages.x_padded[n],
        stages.w[k],
        stages.spec.stride,
        stages.spec.dilation,
        offset=float(stages.bias[k]),
    )


def input_grad_sweep(
    stages: InputGradArrays, n: int = 0, c: int = 0, build: SweepBuilder = sweep
) -> Sweep:
    """The full correlation: rotated filters of channel c over the padded, dilated grad_out[n].

    Its result is grad_x_padded[n, c], ring included; `build` as in `forward_sweep`.
    """
    return build(stages.padded[n], stages.w_rot[c], (1, 1), stages.spec.dilation)


def weight_grad_sweep(
    stages: WeightGradArrays, k: int = 0, c: int = 0, build: SweepBuilder = sweep
) -> Sweep:
    """grad_out[:, k] (dilated by the stride) over x_padded[:, c], stepping by the dilation.

    The batch is the channel axis of this sweep, so `partial` holds each sample's contribution.
    Its result is grad_w[k, c]; `build` as in `forward_sweep`.
    """
    spec = stages.spec
    rH, rW = spec.reach
    return build(stages.x_padded[:, c, :rH, :rW], stages.grad_out[:, k], spec.dilation, spec.stride)


@dataclass(frozen=True)
class Scatter:
    """The scatter route for one (n, c): each grad_out cell of each filter stamps grad_out·w.

    Steps go filter by filter (all of filter 0's cells, then filter 1's, …): step s is cell
    cells[s] of filter filters[s], and what it stamps is exactly grad_out[n, k, cell] · w[k, c].
    """

    stamps: np.ndarray  # (S, kH, kW) grad_out[n, k, t] · w[k, c] for (k, t) = filters[s], cells[s]
    rows: np.ndarray  # (S, kH) rows of the padded input each stamp lands on
    cols: np.ndarray  # (S, kW)
    running: np.ndarray  # (S, Hp, Wp) the padded-input gradient after each stamp
    filters: np.ndarray  # (S,) k of each step
    cells: np.ndarray  # (S,) the grad_out cell t (row-major) of each step
    grad_out: np.ndarray  # (K, oH, oW) grad_out[n]: what the steps read
    kernels: np.ndarray  # (K, kH, kW) w[:, c]


def scatter(stages: ForwardArrays, grad_out: np.ndarray, n: int = 0, c: int = 0) -> Scatter:
    """Every stamp of the scatter route and the running sum; running[-1] = grad_x_padded[n, c]."""
    spec = stages.spec
    (oH, oW), (kH, kW) = spec.out_size, spec.kernel_size
    g, w = grad_out[n], stages.w[:, c]  # (K, oH, oW), (K, kH, kW)
    K, T = g.shape[0], oH * oW
    filters, cells = np.divmod(np.arange(K * T), T)
    stamps = g.reshape(K * T)[:, None, None] * w[filters]  # (S, kH, kW)
    _, rows, cols = window_index((oH, oW), spec.stride, spec.dilation, (kH, kW))
    rows, cols = rows[cells], cols[cells]  # (S, kH), (S, kW): cell t's window, for every filter
    placed = np.zeros((K * T, *spec.padded_size), dtype=stamps.dtype)
    s = np.arange(K * T)
    for i in range(kH):  # a loop over kernel taps, each placing all stamps at once
        for j in range(kW):
            placed[s, rows[:, i], cols[:, j]] = stamps[:, i, j]
    return Scatter(stamps, rows, cols, np.cumsum(placed, axis=0), filters, cells, g, w)


def channel_contributions(stages: InputGradArrays, n: int = 0, c: int = 0) -> np.ndarray:
    """grad_x[n, c] split by filter: (C_out, H, W), one full correlation per filter k.

    Their sum over k is grad_x[n, c]: the Q&A's ∂E/∂X[c] = Σ_k full(∂E/∂O[k], rot180 F[k, c]).
    For library users and the tests; the app takes the same shares from its lean sweep
    (`filter_shares`).
    """
    return filter_shares(input_grad_sweep(stages, n, c), stages.spec)


def filter_shares(full_correlation: Sweep, spec) -> np.ndarray:
    """Each filter's share of the input gradient the full correlation computes: (C_out, H, W).

    The sweep's channels are the filters k (its `partial` holds each one's sum per cell);
    unpadded like ∂L/∂x̃, so the shares add up to ∂L/∂x[n, c].
    """
    per_filter = full_correlation.partial.T.reshape(-1, *spec.padded_size)  # (C_out, Hp, Wp)
    return unpad(per_filter, spec.padding, spec.padding_mode)  # (C_out, H, W)

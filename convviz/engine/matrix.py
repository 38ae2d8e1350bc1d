"""The convolution as a matrix: y = M·vec(x), ∂L/∂x = Mᵀ·vec(∂L/∂y), im2col, conv_transpose2d.

Why the textbook route dilates, pads and flips: a row of Mᵀ lists, for one input cell, the output
cells that read it and the tap each one used. Those outputs sit `stride` apart (hence the zeros
inserted into ∂L/∂y), reach past the edges (hence its padding) and meet the taps in reverse order
(hence the 180° rotation). Every builder here loops over the kH·kW kernel taps only.

Padding modes: M includes the padding rule (M = C·P with P the one-hot padding matrix of
`ops.fold_matrix`), so for reflect/replicate/circular an entry may be the sum of several taps
(a cell read once directly and again through a copy in the ring); `taps` marks those entries.

`matrix_forward`, `matrix_input_grad`, `im2col_forward` and `im2col_weight_grad` compute a layer
through M and through im2col: the page does not call them; they are the proof that what it
draws is the convolution, run by tests/test_matrix.py against the public API.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import NDArray

from convviz.engine.ops import pad, source_index, unpad
from convviz.engine.spec import ConvSpec

MAX_MATRIX_CELLS = 64  # input (H·W) and output (oH·oW) cells per channel the matrix view draws
SEVERAL = -2  # `taps` value of an entry where several taps add up (a cell and its padded copy)


def too_large(spec: ConvSpec) -> str | None:
    """Why the matrix of this layer is not drawn (a sentence with the sizes), or None."""
    (H, W), (oH, oW) = spec.in_size, spec.out_size
    if H * W <= MAX_MATRIX_CELLS and oH * oW <= MAX_MATRIX_CELLS:
        return None
    return (
        f"the matrix view is drawn for at most {MAX_MATRIX_CELLS} input and "
        f"{MAX_MATRIX_CELLS} output cells per channel; this layer has {H}×{W} = {H * W} input "
        f"and {oH}×{oW} = {oH * oW} output cells, so M would be {oH * oW}×{H * W}. Make the "
        f"input smaller (e.g. 8×8 or less) to see it"
    )


def _tap_reads(spec: ConvSpec, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """For tap (a, b): the flat output index of every window and the flat input cell it reads.

    Windows whose tap reads a zero-padded cell are left out. Shapes (n,) and (n,).
    """
    (H, W), (oH, oW) = spec.in_size, spec.out_size
    (sh, sw), (dh, dw) = spec.stride, spec.dilation
    src_r = source_index(H, spec.padding[0], spec.padding_mode)[a * dh + sh * np.arange(oH)]
    src_c = source_index(W, spec.padding[1], spec.padding_mode)[b * dw + sw * np.arange(oW)]
    rows = src_r[:, None] * W + src_c[None, :]  # (oH, oW) flat input cell
    ok = (src_r[:, None] >= 0) & (src_c[None, :] >= 0)
    out = np.arange(oH * oW).reshape(oH, oW)
    return out[ok], rows[ok]


def conv_matrix(spec: ConvSpec, w2: NDArray) -> tuple[np.ndarray, np.ndarray]:
    """M with vec(y[n, k]) = Σ_c M[k, c] · vec(x[n, c]) for one kernel slice w2 = w[k, c].

    w2 : shape (kH, kW). Returns (M, taps): M of shape (oH·oW, H·W); taps (same shape, int) is
    the row-major index a·kW + b of the tap behind each entry, -1 where M is structurally zero,
    SEVERAL where more than one tap adds up there (a cell read again through a padded copy).
    """
    (H, W), (oH, oW), (kH, kW) = spec.in_size, spec.out_size, spec.kernel_size
    M = np.zeros((oH * oW, H * W), dtype=np.result_type(w2, np.float64))
    count = np.zeros(M.shape, dtype=np.int64)
    taps = np.full(M.shape, -1, dtype=np.int64)
    for a in range(kH):
        for b in range(kW):
            out, inp = _tap_reads(spec, a, b)
            np.add.at(M, (out, inp), w2[a, b])
            np.add.at(count, (out, inp), 1)
            taps[out, inp] = a * kW + b
    taps[count > 1] = SEVERAL
    return M, taps


def block_matrix(spec: ConvSpec, w: NDArray) -> np.ndarray:
    """The whole layer's matrix: vec(y[n]) = M · vec(x[n]) over all channels.

    w : shape (C_out, C_in, kH, kW). Returns shape (C_out·oH·oW, C_in·H·W).
    """
    blocks = [[conv_matrix(spec, w[k, c])[0] for c in range(w.shape[1])] for k in range(w.shape[0])]
    return np.block(blocks)


def matrix_forward(spec: ConvSpec, w: NDArray, x: NDArray) -> np.ndarray:
    """y (N, C_out, oH, oW) as M · vec(x[n]) for every sample (no bias)."""
    N = x.shape[0]
    y = x.reshape(N, -1) @ block_matrix(spec, w).T  # (N, C_out·oH·oW)
    return y.reshape(spec.output_shape)


def matrix_input_grad(spec: ConvSpec, w: NDArray, grad_out: NDArray) -> np.ndarray:
    """∂L/∂x (N, C_in, H, W) as Mᵀ · vec(∂L/∂y[n]) for every sample."""
    N = grad_out.shape[0]
    grad_x = grad_out.reshape(N, -1) @ block_matrix(spec, w)  # (N, C_in·H·W)
    return grad_x.reshape(spec.input_shape)


# --- im2col --------------------------------------------------------------------------------------


def _windows(spec: ConvSpec, a: np.ndarray) -> np.ndarray:
    """Every window of the (already padded) last two axes: (..., oH, oW, kH, kW)."""
    (sh, sw), (dh, dw) = spec.stride, spec.dilation
    win = sliding_window_view(a, spec.span, axis=(-2, -1))  # (..., Hp-eH+1, Wp-eW+1, eH, eW)
    return win[..., ::sh, ::sw, ::dh, ::dw]


def im2col(spec: ConvSpec, x: NDArray) -> np.ndarray:
    """Patches as rows: (N, oH·oW, C_in·kH·kW), columns ordered (c, a, b) like w[k].ravel().

    y[n, k] = patches[n] @ vec(w[k]); ∂L/∂w[k] = Σ_n patches[n]ᵀ @ vec(∂L/∂y[n, k]).
    """
    N, C = spec.batch, spec.in_channels
    win = _windows(spec, pad(x, spec.padding, spec.padding_mode))  # (N, C, oH, oW, kH, kW)
    return win.transpose(0, 2, 3, 1, 4, 5).reshape(
        N, -1, C * spec.kernel_size[0] * spec.kernel_size[1]
    )


def im2col_sources(spec: ConvSpec) -> np.ndarray:
    """Which input cell each patch entry copies: (oH·oW, C_in·kH·kW) flat index c·H·W + r·W + q,
    -1 for a zero-padded entry. The same for every sample."""
    (H, W), C = spec.in_size, spec.in_channels
    rows = source_index(H, spec.padding[0], spec.padding_mode)
    cols = source_index(W, spec.padding[1], spec.padding_mode)
    flat = np.where((rows[:, None] >= 0) & (cols[None, :] >= 0), rows[:, None] * W + cols, -1)
    flat = flat[None] + (np.arange(C) * H * W)[:, None, None] * (flat[None] >= 0)  # (C, Hp, Wp)
    win = _windows(spec, flat)  # (C, oH, oW, kH, kW)
    return win.transpose(1, 2, 0, 3, 4).reshape(-1, C * spec.kernel_size[0] * spec.kernel_size[1])


def im2col_forward(spec: ConvSpec, x: NDArray, w: NDArray) -> np.ndarray:
    """y (N, C_out, oH, oW) as patches @ W2ᵀ (no bias)."""
    cols = im2col(spec, x)  # (N, oH·oW, C·kH·kW)
    y = cols @ w.reshape(spec.out_channels, -1).T  # (N, oH·oW, C_out)
    return y.transpose(0, 2, 1).reshape(spec.output_shape)


def im2col_weight_grad(spec: ConvSpec, x: NDArray, grad_out: NDArray) -> np.ndarray:
    """∂L/∂w (C_out, C_in, kH, kW) = Σ_n patches[n]ᵀ @ ∂L/∂y[n] (as columns per filter)."""
    cols = im2col(spec, x)  # (N, oH·oW, C·kH·kW)
    g = grad_out.reshape(spec.batch, spec.out_channels, -1)  # (N, C_out, oH·oW)
    grad_w = np.einsum("npt,nkp->kt", cols, g)  # (C_out, C·kH·kW)
    return grad_w.reshape(spec.weight_shape)


# --- the transposed convolution ------------------------------------------------------------------


def conv_transpose2d(
    grad_y: NDArray,
    w: NDArray,
    stride=(1, 1),
    padding=(0, 0),
    dilation=(1, 1),
    output_padding=(0, 0),
) -> np.ndarray:
    """torch.nn.functional.conv_transpose2d in NumPy (groups 1, no bias), pairs for (rows, cols).

    grad_y : (N, C_out, oH, oW); w : (C_out, C_in, kH, kW), the forward conv's weight as is.
    Each input cell stamps grad_y · w[:, :, a, b] for every tap, `stride` apart; the full result,
    (oH-1)·s + d·(k-1) + 1 + output_padding per axis, is cropped by `padding` on both sides.
    Returns (N, C_in, (oH-1)·s - 2p + d·(k-1) + output_padding + 1, …).
    """
    N, _, oH, oW = grad_y.shape
    _, C, kH, kW = w.shape
    (sh, sw), (ph, pw), (dh, dw), (qh, qw) = stride, padding, dilation, output_padding
    full = np.zeros(
        (N, C, (oH - 1) * sh + dh * (kH - 1) + 1 + qh, (oW - 1) * sw + dw * (kW - 1) + 1 + qw)
    )
    for a in range(kH):
        for b in range(kW):
            stamp = np.tensordot(w[:, :, a, b], grad_y, axes=([0], [1])).transpose(1, 0, 2, 3)
            full[
                :,
                :,
                a * dh : a * dh + (oH - 1) * sh + 1 : sh,
                b * dw : b * dw + (oW - 1) * sw + 1 : sw,
            ] += stamp
    return full[:, :, ph : full.shape[2] - ph, pw : full.shape[3] - pw]


@dataclass(frozen=True)
class TransposePlan:
    """How this layer's ∂L/∂x is a `conv_transpose2d` call, and what (if anything) follows it."""

    stride: tuple[int, int]
    padding: tuple[int, int]  # PyTorch's: the same on both sides of an axis
    dilation: tuple[int, int]
    output_padding: tuple[int, int]  # the remainder rows/columns no window reached
    after: str  # "" | "crop" | "fold": what turns the call's result into ∂L/∂x
    reason: str  # why a step follows the call ("" when the call alone is ∂L/∂x)

    def call(self) -> str:
        """The PyTorch call as code."""
        target = "grad_x_padded" if self.after else "grad_x"
        return (
            f"{target} = F.conv_transpose2d(grad_y, w, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, "
            f"output_padding={self.output_padding})"
        )

    def code(self, spec: ConvSpec) -> str:
        """The call and the step after it, as a student would type them."""
        lines = ["import torch.nn.functional as F", "", self.call()]
        (pt, pb), (pl, pr) = spec.padding
        if self.after == "crop":
            Hp, Wp = spec.padded_size
            lines.append(f"grad_x = grad_x_padded[:, :, {pt}:{Hp - pb}, {pl}:{Wp - pr}]")
        elif self.after == "fold":
            lines.append(
                f"grad_x = fold_ring(grad_x_padded)  # add the ring's gradient back onto the "
                f"cells {spec.padding_mode} padding copied (ops.unpad)"
            )
        return "\n".join(lines)


def transpose_plan(spec: ConvSpec) -> TransposePlan:
    """The conv_transpose2d arguments that give this layer's ∂L/∂x (or its padded version).

    output_padding is the remainder (always < stride, as PyTorch requires). PyTorch pads both sides
    alike and with zeros only: uneven padding is done as padding 0 then a crop, and
    reflect/replicate/circular as padding 0 then folding the ring back onto its sources.
    """
    (pt, pb), (pl, pr) = spec.padding
    even = pt == pb and pl == pr
    if spec.padding_mode != "zeros" and any((pt, pb, pl, pr)):
        after = "fold"
        reason = (
            f"conv_transpose2d knows only zero padding: with padding 0 it returns ∂L/∂x̃ (the "
            f"padded input's gradient); the ring's gradient is then added back onto the cells "
            f"{spec.padding_mode} padding copied it from"
        )
    elif not even:
        after = "crop"
        reason = (
            f"PyTorch pads both sides alike, but this layer pads top {pt}, bottom {pb}, left "
            f"{pl}, right {pr}: with padding 0 the call returns ∂L/∂x̃, then the ring is cropped"
        )
    else:
        after, reason = "", ""
    return TransposePlan(
        spec.stride,
        (pt, pl) if not after else (0, 0),
        spec.dilation,
        spec.remainder,
        after,
        reason,
    )


MAX_TRANSPOSE_WORK = 50_000_000  # multiply-adds of the live conv_transpose check on a page


def transpose_difference(
    spec: ConvSpec, w: NDArray, grad_out: NDArray, grad_x: NDArray, n: int = 0, c: int = 0
) -> tuple[float, int, bool]:
    """(largest |transposed convolution − grad_x|, cells compared, whether only [n, c] was).

    Beyond MAX_TRANSPOSE_WORK the check runs on sample n and input channel c only.
    """
    N, K, oH, oW = grad_out.shape
    work = N * K * spec.in_channels * oH * oW * spec.kernel_size[0] * spec.kernel_size[1]
    if work > MAX_TRANSPOSE_WORK:
        sub = ConvSpec.create((1, 1, *spec.in_size), (K, 1, *spec.kernel_size), **spec.kwargs())
        got = transpose_input_grad(sub, w[:, c : c + 1], grad_out[n : n + 1])
        return float(np.abs(got[0, 0] - grad_x[n, c]).max()), got.size, True
    got = transpose_input_grad(spec, w, grad_out)
    return float(np.abs(got - grad_x).max()), got.size, False


def transpose_input_grad(spec: ConvSpec, w: NDArray, grad_out: NDArray) -> np.ndarray:
    """∂L/∂x (N, C_in, H, W) by the transposed convolution of `transpose_plan`."""
    plan = transpose_plan(spec)
    out = conv_transpose2d(
        grad_out, w, plan.stride, plan.padding, plan.dilation, plan.output_padding
    )
    if plan.after:  # the call gave the padded input's gradient: crop or fold its ring
        return unpad(out, spec.padding, spec.padding_mode)
    return out


# --- one slice, for the matrix page --------------------------------------------------------------


@dataclass(frozen=True)
class MatrixSlice:
    """The matrices of one (sample n, filter k, channel c) slice and the products they make.

    Flat indices are row-major: input cell r·W + q, output cell i·oW + j, tap a·kW + b.
    """

    spec: ConvSpec
    n: int
    k: int
    c: int
    M: np.ndarray  # (oH·oW, H·W) for w[k, c]
    taps: np.ndarray  # (oH·oW, H·W) tap behind each entry, -1 none, SEVERAL for a sum of taps
    x: np.ndarray  # (H·W,) vec(x[n, c])
    y_part: np.ndarray  # (oH·oW,) M · vec(x[n, c]): channel c's share of y[n, k] (no bias)
    grad_out: np.ndarray  # (oH·oW,) vec(∂L/∂y[n, k])
    grad_x_part: np.ndarray  # (H·W,) Mᵀ · vec(∂L/∂y[n, k]): filter k's share of ∂L/∂x[n, c]
    patches: np.ndarray  # (oH·oW, kH·kW) im2col of x[n, c]
    sources: np.ndarray  # (oH·oW, kH·kW) the input cell each patch entry copies, -1 a zero
    w: np.ndarray  # (kH·kW,) vec(w[k, c])
    grad_w_part: np.ndarray  # (kH·kW,) patchesᵀ · vec(∂L/∂y[n, k]): sample n's share of ∂L/∂w


def matrix_slice(spec: ConvSpec, x: NDArray, w: NDArray, grad_out: NDArray, n: int, k: int, c: int):
    """Every matrix of the page for one slice; x, w, grad_out are the layer's full arrays."""
    M, taps = conv_matrix(spec, w[k, c])
    one = ConvSpec.create((1, 1, *spec.in_size), (1, 1, *spec.kernel_size), **spec.kwargs())
    patches = im2col(one, x[n : n + 1, c : c + 1])[0]  # (oH·oW, kH·kW)
    xv, gv = x[n, c].ravel(), grad_out[n, k].ravel()
    return MatrixSlice(
        spec,
        n,
        k,
        c,
        M,
        taps,
        xv,
        M @ xv,
        gv,
        M.T @ gv,
        patches,
        im2col_sources(one),
        w[k, c].ravel(),
        patches.T @ gv,
    )

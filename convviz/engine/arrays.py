"""The stages the app draws, as frozen dataclasses of named arrays and masks.

Each route computes its numbers the way the textbook tells it (pad, dilate, rotate, full
correlation, mask) by reusing the fast forward correlation, so the drawn arrays are the computed
arrays; tests check that every route's result equals the public API's and a plain loop's. The
weight gradient runs through the kernel's taps (the API's GEMM): the correlation the page
animates, ∂L/∂y slid over x̃, is `sweeps.weight_grad_sweep`, and the tests check it gives the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from convviz.engine.conv import as_array
from convviz.engine.fastpath import forward_padded, input_grad_padded, weight_grad_padded
from convviz.engine.ops import dilate, dilation_mask, pad, pad_mask, rot180, source_index, unpad
from convviz.engine.spec import ConvSpec, ConvSpecError


@dataclass(frozen=True, kw_only=True)  # many same-shape arrays: named, never by position
class ForwardArrays:
    """x → padded x → windows of the (dilated) kernel at the stride → y."""

    spec: ConvSpec
    x: np.ndarray  # (N, C_in, H, W)
    w: np.ndarray  # (C_out, C_in, kH, kW)
    bias: np.ndarray  # (C_out,), zeros when the layer has none
    x_padded: np.ndarray  # (N, C_in, Hp, Wp)
    pad_mask: np.ndarray  # (Hp, Wp) True on cells added by padding
    remainder_mask: np.ndarray  # (Hp, Wp) True on bottom/right cells no window reaches
    unread_mask: np.ndarray  # (Hp, Wp) True on cells no window's tap lands on (remainder too)
    y: np.ndarray  # (N, C_out, oH, oW)


@dataclass(frozen=True, kw_only=True)
class InputGradArrays:
    """The textbook route: dilate grad_out, pad it, rotate the kernel, correlate, mask, crop."""

    spec: ConvSpec
    grad_out: np.ndarray  # (N, C_out, oH, oW)
    dilated: np.ndarray  # (N, C_out, dH, dW): stride-1 zeros inserted
    dilation_mask: np.ndarray  # (dH, dW) True on inserted zeros
    padded: np.ndarray  # (N, C_out, Hg, Wg): dil*(k-1) per side + remainder at bottom/right
    padded_ring: np.ndarray  # (Hg, Wg) True on cells added by that padding
    padded_dilation_mask: np.ndarray  # (Hg, Wg) True on inserted zeros, in padded coordinates
    w_rot: np.ndarray  # (C_in, C_out, kH, kW): each kernel rotated 180°, in/out channels swapped
    grad_x_padded: np.ndarray  # (N, C_in, Hp, Wp): gradient w.r.t. the padded input, ring included
    pad_mask: np.ndarray  # (Hp, Wp) True on the ring of padded cells
    unread_mask: np.ndarray  # (Hp, Wp) True on cells no window reads: their gradient is 0
    unread_x_mask: np.ndarray  # (H, W) True on cells of x that neither a window nor a copy read
    ring: np.ndarray  # (N, C_in, Hp, Wp): the ring's gradient, which the mask drops or folds back
    grad_x: np.ndarray  # (N, C_in, H, W)
    w: np.ndarray  # (C_out, C_in, kH, kW), the kernel before rotation


@dataclass(frozen=True, kw_only=True)
class WeightGradArrays:
    """grad_w[k, c] = Σ_n x_pad[n, c] ⋆ dilate(grad_out[n, k]); grad_b[k] = Σ grad_out[:, k]."""

    spec: ConvSpec
    x_padded: np.ndarray  # (N, C_in, Hp, Wp)
    pad_mask: np.ndarray  # (Hp, Wp)
    remainder_mask: np.ndarray  # (Hp, Wp)
    unread_mask: np.ndarray  # (Hp, Wp)
    grad_out: np.ndarray  # (N, C_out, oH, oW)
    dilated: np.ndarray  # (N, C_out, dH, dW)
    dilation_mask: np.ndarray  # (dH, dW)
    grad_w: np.ndarray  # (C_out, C_in, kH, kW), summed over the batch
    grad_b: np.ndarray  # (C_out,)


def remainder_mask(spec: ConvSpec) -> np.ndarray:
    """(Hp, Wp) mask, True on the bottom rows / right columns that no window reaches."""
    mask = np.zeros(spec.padded_size, dtype=bool)
    rH, rW = spec.reach
    mask[rH:, :] = True
    mask[:, rW:] = True
    return mask


def read_lines(spec: ConvSpec) -> tuple[np.ndarray, np.ndarray]:
    """Per axis of the padded input, (Hp,) and (Wp,) bools: True where some window's tap lands.

    Window o's tap t sits at o·stride + t·dilation; windows are products of a row range and a
    column range, so a cell is read exactly when its row and its column both are.
    """
    lines = []
    for size, o, s, k, d in zip(
        spec.padded_size, spec.out_size, spec.stride, spec.kernel_size, spec.dilation
    ):
        line = np.zeros(size, dtype=bool)
        line[np.add.outer(np.arange(o) * s, np.arange(k) * d)] = True  # (o, k) tap positions
        lines.append(line)
    return lines[0], lines[1]


def unread_mask(spec: ConvSpec) -> np.ndarray:
    """(Hp, Wp) mask, True on the padded-input cells no window reads: between the windows (a
    stride wider than the dilated kernel, or a dilation's gaps) and the remainder alike."""
    rows, cols = read_lines(spec)
    return ~(rows[:, None] & cols[None, :])


def unread_input_mask(spec: ConvSpec) -> np.ndarray:
    """(H, W) mask, True on the cells of x whose gradient no window carries: no window reads the
    cell, nor any padded copy of it (reflect, replicate, circular), so ∂L/∂x there is 0."""
    read = []
    for size, sides, line in zip(spec.in_size, spec.padding, read_lines(spec)):
        src = source_index(size, sides, spec.padding_mode)  # (Hp,) the x index each row copies
        hit = np.zeros(size, dtype=bool)
        hit[src[line & (src >= 0)]] = True
        read.append(hit)
    return ~(read[0][:, None] & read[1][None, :])


def _checked(a, name: str, shape: tuple) -> np.ndarray:
    arr = as_array(a, name, len(shape))
    if arr.shape != tuple(shape):
        raise ConvSpecError(
            f"{name} must have shape {tuple(shape)} for this layer, got {arr.shape}"
        )
    return arr


def forward_arrays(spec: ConvSpec, x, w, bias=None) -> ForwardArrays:
    """Every array of the forward pass; x : (N, C_in, H, W), w : (C_out, C_in, kH, kW)."""
    x = _checked(x, "the input x", spec.input_shape)
    w = _checked(w, "the kernel w", spec.weight_shape)
    dtype = np.result_type(x, w)
    b = (
        np.zeros(spec.out_channels, dtype)
        if bias is None
        else _checked(bias, "the bias", (spec.out_channels,)).astype(dtype)
    )
    x_padded = pad(x, spec.padding, spec.padding_mode)
    y = forward_padded(x_padded, w, spec) + b[None, :, None, None]
    return ForwardArrays(
        spec=spec,
        x=x,
        w=w,
        bias=b,
        x_padded=x_padded,
        pad_mask=pad_mask(spec.in_size, spec.padding),
        remainder_mask=remainder_mask(spec),
        unread_mask=unread_mask(spec),
        y=y,
    )


@lru_cache(maxsize=256)  # a spec is frozen: the same layer, the same correlation
def full_correlation_spec(spec: ConvSpec) -> ConvSpec:
    """The stride-1 correlation of the padded, dilated grad_out with the rotated kernel."""
    Hg, Wg = (d + lo + hi for d, (lo, hi) in zip(spec.dilated_out_size, spec.full_padding))
    C_out, C_in, kH, kW = spec.weight_shape
    return ConvSpec.create(
        (spec.batch, C_out, Hg, Wg),
        (C_in, C_out, kH, kW),
        stride=1,
        padding=0,
        dilation=spec.dilation,
    )


def input_grad_arrays(spec: ConvSpec, w, grad_out) -> InputGradArrays:
    """The textbook route to grad_x; w : (C_out, C_in, kH, kW), grad_out : (N, C_out, oH, oW)."""
    w = _checked(w, "the kernel w", spec.weight_shape)
    g = _checked(grad_out, "grad_out", spec.output_shape)
    dilated = dilate(g, spec.stride)
    padded = pad(dilated, spec.full_padding)
    w_rot = rot180(w).transpose(1, 0, 2, 3)  # (C_in, C_out, kH, kW)
    grad_x_padded = forward_padded(padded, w_rot, full_correlation_spec(spec))  # (N, C_in, Hp, Wp)
    ring_mask = pad_mask(spec.in_size, spec.padding)
    d_mask = dilation_mask(spec.out_size, spec.stride)
    return InputGradArrays(
        spec=spec,
        grad_out=g,
        dilated=dilated,
        dilation_mask=d_mask,
        padded=padded,
        padded_ring=pad_mask(spec.dilated_out_size, spec.full_padding),
        padded_dilation_mask=pad(d_mask, spec.full_padding),  # constant padding with False
        w_rot=np.ascontiguousarray(w_rot),
        grad_x_padded=grad_x_padded,
        pad_mask=ring_mask,
        unread_mask=unread_mask(spec),
        unread_x_mask=unread_input_mask(spec),
        ring=np.where(ring_mask, grad_x_padded, 0),
        grad_x=unpad(grad_x_padded, spec.padding, spec.padding_mode),
        w=w,
    )


def weight_grad_arrays(spec: ConvSpec, x, grad_out) -> WeightGradArrays:
    """grad_w as the padded input correlated with the dilated grad_out (step = the dilation).

    x : (N, C_in, H, W), grad_out : (N, C_out, oH, oW); the sweep of this correlation (the
    window steps by the dilation) is `sweeps.weight_grad_sweep`.
    """
    x = _checked(x, "the input x", spec.input_shape)
    g = _checked(grad_out, "grad_out", spec.output_shape)
    x_padded = pad(x, spec.padding, spec.padding_mode)
    # through the kernel's kH·kW taps, like the forward pass (sliding ∂L/∂y's oH·oW cells as a
    # kernel over the input gives the same numbers at a Python step per ∂L/∂y cell)
    grad_w = weight_grad_padded(x_padded, g, spec)  # (C_out, C_in, kH, kW)
    return WeightGradArrays(
        spec=spec,
        x_padded=x_padded,
        pad_mask=pad_mask(spec.in_size, spec.padding),
        remainder_mask=remainder_mask(spec),
        unread_mask=unread_mask(spec),
        grad_out=g,
        dilated=dilate(g, spec.stride),
        dilation_mask=dilation_mask(spec.out_size, spec.stride),
        grad_w=np.ascontiguousarray(grad_w),
        grad_b=g.sum(axis=(0, 2, 3)),
    )


@dataclass(frozen=True, kw_only=True)
class Layer:
    """Everything about one layer the app shows: the forward pass and both gradient routes."""

    forward: ForwardArrays
    input_grad: InputGradArrays
    weight_grad: WeightGradArrays


def layer(spec: ConvSpec, x, w, grad_out, bias=None) -> Layer:
    """Forward, input-gradient and weight-gradient stages for one set of values."""
    return Layer(
        forward=forward_arrays(spec, x, w, bias),
        input_grad=input_grad_arrays(spec, w, grad_out),
        weight_grad=weight_grad_arrays(spec, x, grad_out),
    )


def scatter_grad_x_padded(spec: ConvSpec, w, grad_out) -> np.ndarray:
    """The scatter route: every grad_out cell stamps grad_out·w onto its window (col2im).

    The app animates this route stamp by stamp (`sweeps.scatter`); this whole-layer form is
    what the tests compare with the textbook route's grad_x_padded.
    """
    w = _checked(w, "the kernel w", spec.weight_shape)
    g = _checked(grad_out, "grad_out", spec.output_shape)
    return input_grad_padded(g, w, spec)

"""A layer's loss and its target: L = ½‖y − t‖² and ∂L/∂y, t typed, drawn or made by a kernel.

L = ½‖y − t‖² summed over every cell (reduction "sum"), or that sum divided by the batch size
N (reduction "mean": L = (1/N)·½Σₙ‖yₙ − tₙ‖², ∂L/∂y = (y − t)/N). The target t is typed, drawn
at random (the very draw of `gout=mse`, so old links keep their numbers) or made by a named
kernel from the same input with the same stride, padding and dilation, so the layer has a kernel
to learn. Everything is computed in float64, as the PyTorch snippet and the cross-checks are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from convviz.engine.conv import as_array
from convviz.engine.fastpath import forward_padded
from convviz.engine.ops import pad
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.engine.text import shape_text
from convviz.engine.values import NAMED_KERNELS, example_w, mse_target, named_kernel

REDUCTIONS = ("sum", "mean")
TARGET_SOURCES = ("random", "typed", *NAMED_KERNELS)


# --- validation -----------------------------------------------------------------------------------


def check_reduction(reduction) -> str:
    if reduction not in REDUCTIONS:
        raise ConvSpecError(
            f"the loss reduction {reduction!r} is not known: use 'sum' (½‖y − t‖²) or "
            "'mean' (the same divided by the batch size N)"
        )
    return reduction


def checked_array(a, name: str, shape: tuple[int, ...], what: str) -> NDArray[np.float64]:
    """`a` as float64 of exactly `shape`, finite, or ConvSpecError naming the shape to give.

    what : what the shape is, in words (e.g. "y's shape"), for the message.
    """
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConvSpecError(f"{name} must be an array of numbers of {what} {shape}") from None
    if arr.shape != tuple(shape):
        raise ConvSpecError(
            f"{name} must have {what} {tuple(shape)}, got {arr.shape}: give one number per "
            f"cell ({int(np.prod(shape))} in all)"
        )
    if not np.isfinite(arr).all():
        raise ConvSpecError(f"{name} contains NaN or infinity: replace them with finite numbers")
    return arr


# --- the loss and its ∂L/∂y -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Loss:
    """L = scale·½‖y − t‖² and ∂L/∂y = scale·(y − t), every term as an array a page can draw.

    scale is 1 for the reduction "sum" and 1/N for "mean" (N, the batch size, written out).
    """

    reduction: str
    y: np.ndarray  # (N, C_out, oH, oW)
    target: np.ndarray  # (N, C_out, oH, oW)
    diff: np.ndarray  # (N, C_out, oH, oW): y − t
    scale: float  # 1 or 1/N
    per_sample: np.ndarray  # (N,): ½‖yₙ − tₙ‖²
    value: float  # L = scale·Σₙ per_sample[n]
    grad_out: np.ndarray  # (N, C_out, oH, oW): ∂L/∂y = scale·(y − t)


def unchecked_mse(y: np.ndarray, t: np.ndarray, reduction: str) -> Loss:
    """The loss record, unchecked (a run's overflowing steps come through here)."""
    diff = y - t
    scale = 1.0 if reduction == "sum" else 1.0 / y.shape[0]
    per_sample = 0.5 * np.einsum("nkij,nkij->n", diff, diff)  # (N,)
    return Loss(
        reduction=reduction,
        y=y,
        target=t,
        diff=diff,
        scale=scale,
        per_sample=per_sample,
        value=float(scale * per_sample.sum()),
        grad_out=scale * diff,
    )


def mse_loss(y: ArrayLike, target: ArrayLike, *, reduction: str = "sum") -> Loss:
    """The squared-error loss of y against the target, and ∂L/∂y.

    y, target : shape (N, C_out, oH, oW). reduction : "sum" or "mean" (÷N).
    """
    y = as_array(y, "y", 4).astype(np.float64)
    t = checked_array(target, "the target", y.shape, "y's shape")
    return unchecked_mse(y, t, check_reduction(reduction))


# --- the target -----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Target:
    """What y is pulled towards: t, where it comes from, and the kernels that made it."""

    source: str  # "random", "typed" or a name of values.NAMED_KERNELS
    t: np.ndarray  # (N, C_out, oH, oW): the shape of y
    kernels: tuple[np.ndarray, ...] = ()  # one (C_out, C_in, kH, kW) per layer, for a kernel


def random_target(spec: ConvSpec, seed: int, y: np.ndarray | None = None) -> np.ndarray:
    """`gout=mse`'s target, integers in [−5, 5] of y's shape (N, C_out, oH, oW): the draw
    `values.mse_target` owns (given the layer's first y, the one whose ∂L/∂y the app shows)."""
    return mse_target(spec, y, seed)


def target_kernel(spec: ConvSpec, name: str, layer: str = "the layer") -> np.ndarray:
    """The named kernel on every (filter, channel) pair, (C_out, C_in, kH, kW); ConvSpecError
    when it has no form of the layer's kernel size."""
    if named_kernel(name, spec.kernel_size) is None:
        sized = [k for k, v in NAMED_KERNELS.items() if v is None or v.shape == spec.kernel_size]
        raise ConvSpecError(
            f"the '{name}' kernel is {shape_text(NAMED_KERNELS[name].shape)}, but the kernel of "
            f"{layer} is {shape_text(spec.kernel_size)}: make the target with "
            f"{' or '.join(repr(k) for k in sized)}, or give the layer a "
            f"{shape_text(NAMED_KERNELS[name].shape)} kernel"
        )
    return example_w(spec, 0, name)  # the seed only matters for "random"


def make_target(
    spec: ConvSpec,
    x: ArrayLike,
    source: str = "random",
    *,
    seed: int = 0,
    values=None,
    y: np.ndarray | None = None,
) -> Target:
    """The target of one layer: random (seeded; `y`, the layer's output before it learns, as
    the app's `gout=mse` draws it), typed `values`, or a named kernel's output.

    x : shape (N, C_in, H, W). A kernel's target is conv2d(x, kernel) with the layer's own
    stride, padding and dilation and no bias, so w can reach it exactly.
    """
    if source == "random":
        return Target(source=source, t=random_target(spec, seed, y))
    if source == "typed":
        t = checked_array(values, "the target", spec.output_shape, "y's shape")
        return Target(source=source, t=t)
    if source not in NAMED_KERNELS:
        raise ConvSpecError(
            f"the target source {source!r} is not known: use one of {', '.join(TARGET_SOURCES)}"
        )
    x = checked_array(x, "the input x", spec.input_shape, "the shape")
    kernel = target_kernel(spec, source)
    t = forward_padded(pad(x, spec.padding, spec.padding_mode), kernel, spec)
    return Target(source=source, t=t, kernels=(kernel,))

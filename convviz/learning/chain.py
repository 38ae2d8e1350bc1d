"""Two stacked convolutions: why a layer needs ∂L/∂x — it is the ∂L/∂y of the layer before.

x → conv₁ (w₁, b₁) → pre → ReLU (optional) → h → conv₂ (w₂, b₂) → y, L = ½‖y − t‖² (÷N for the
mean). Backward: ∂L/∂y → layer 2's backward gives ∂L/∂w₂, ∂L/∂b₂ and ∂L/∂h; the ReLU's gate
passes ∂L/∂h where pre > 0 (∂L/∂pre = ∂L/∂h · [pre > 0]; at pre = 0 the gate is shut, as in
PyTorch); ∂L/∂pre is layer 1's ∂L/∂y, and layer 1's backward gives ∂L/∂w₁, ∂L/∂b₁ and ∂L/∂x.
Each layer's arrays are its own `stages.Layer`, so a page draws layer 1's dilation, padding,
rotation and mask from ∂L/∂h exactly as it draws a single layer's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from convviz.engine.arrays import (
    ForwardArrays,
    Layer,
    forward_arrays,
    input_grad_arrays,
    weight_grad_arrays,
)
from convviz.engine.conv import conv2d
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.engine.text import shape_text
from convviz.engine.values import NAMED_KERNELS
from convviz.learning.loss import (
    Loss,
    Target,
    check_reduction,
    checked_array,
    mse_loss,
    random_target,
    target_kernel,
)
from convviz.learning.sgd import layer_params
from convviz.learning.training import layer_macs


@dataclass(frozen=True)
class TwoLayerSpec:
    """The geometry of x → conv₁ → (ReLU) → conv₂ → y: layer 2's input is layer 1's output."""

    first: ConvSpec
    second: ConvSpec
    relu: bool = True

    def __post_init__(self):
        if self.second.input_shape != self.first.output_shape:
            raise ConvSpecError(
                f"layer 2's input must be layer 1's output {self.first.output_shape}, "
                f"got {self.second.input_shape}"
            )

    @classmethod
    def create(
        cls,
        first: ConvSpec,
        weight_shape,
        *,
        stride=1,
        padding=0,
        dilation=1,
        padding_mode: str = "zeros",
        relu: bool = True,
        max_macs: int | None = None,
    ) -> TwoLayerSpec:
        """Layer 2 on layer 1's output h; ConvSpecError, naming layer 2, if it cannot work.

        weight_shape : (C_out₂, C_out₁, kH₂, kW₂). max_macs : the most multiply-adds one pass
        of both layers together may take (the app's work limit), None for no limit.
        """
        try:
            second = ConvSpec.create(
                first.output_shape,
                weight_shape,
                stride=stride,
                padding=padding,
                dilation=dilation,
                padding_mode=padding_mode,
            )
        except ConvSpecError as exc:
            h = shape_text(first.out_size)
            raise ConvSpecError(f"layer 2 (its input is h, layer 1's {h} output): {exc}") from None
        stack = cls(first, second, bool(relu))
        stack.check_work(max_macs)
        return stack

    @property
    def macs(self) -> int:
        """Multiply-adds of one pass through both layers."""
        return layer_macs(self.first) + layer_macs(self.second)

    def check_work(self, max_macs: int | None) -> None:
        """ConvSpecError when one pass of both layers costs more than max_macs."""
        if max_macs is None or self.macs <= max_macs:
            return
        raise ConvSpecError(
            f"the two layers need {self.macs:,} multiply-adds per pass (layer 1 "
            f"{layer_macs(self.first):,}, layer 2 {layer_macs(self.second):,}); the app computes "
            f"up to {max_macs:,}: lower the batch, the channels, the kernels or the input size"
        )


@dataclass(frozen=True, kw_only=True)
class TwoLayerPass:
    """Forward and backward through both layers, every intermediate array named."""

    spec: TwoLayerSpec
    first: Layer  # x → pre; its grad_out is ∂L/∂pre (∂L/∂h after the gate)
    second: Layer  # h → y; its grad_out is ∂L/∂y
    pre: np.ndarray  # (N, C₁, H₁, W₁): layer 1's output, before the ReLU
    gate: np.ndarray  # (N, C₁, H₁, W₁) bool: pre > 0 (all True without a ReLU)
    h: np.ndarray  # (N, C₁, H₁, W₁): ReLU(pre), layer 2's input
    loss: Loss  # y, the target, y − t, L and ∂L/∂y
    grad_h: np.ndarray  # (N, C₁, H₁, W₁): ∂L/∂h, layer 2's ∂L/∂x
    grad_pre: np.ndarray  # (N, C₁, H₁, W₁): ∂L/∂h · gate, layer 1's ∂L/∂y

    @property
    def y(self) -> np.ndarray:
        return self.second.forward.y

    @property
    def grad_x(self) -> np.ndarray:
        return self.first.input_grad.grad_x

    @property
    def grads(self) -> dict[str, np.ndarray]:
        """∂L/∂w₁, ∂L/∂b₁, ∂L/∂w₂, ∂L/∂b₂ by name: "w1", "b1", "w2", "b2"."""
        one, two = self.first.weight_grad, self.second.weight_grad
        return {"w1": one.grad_w, "b1": one.grad_b, "w2": two.grad_w, "b2": two.grad_b}


def _relu(pre: np.ndarray, on: bool) -> tuple[np.ndarray, np.ndarray]:
    """(gate, h): gate = pre > 0 and h = pre·gate with a ReLU; all-open gate and h = pre else."""
    gate = pre > 0 if on else np.ones(pre.shape, dtype=bool)
    return gate, np.where(gate, pre, 0.0) if on else pre


def two_layer_pass(
    spec: TwoLayerSpec,
    x: ArrayLike,
    w1: ArrayLike,
    b1: ArrayLike | None,
    w2: ArrayLike,
    b2: ArrayLike | None,
    target: ArrayLike,
    *,
    reduction: str = "sum",
) -> TwoLayerPass:
    """Forward x → y, L against the target, and the chain rule back through both layers.

    x : (N, C_in, H, W); w1 : (C₁, C_in, kH₁, kW₁); b1 : (C₁,) or None; w2 : (C₂, C₁, kH₂, kW₂);
    b2 : (C₂,) or None; target : (N, C₂, oH, oW), y's shape.
    """
    one, two = spec.first, spec.second
    x = checked_array(x, "the input x", one.input_shape, "the shape")
    w1, b1 = layer_params(one, w1, b1)
    w2, b2 = layer_params(two, w2, b2)
    forward1 = forward_arrays(one, x, w1, b1)
    gate, h = _relu(forward1.y, spec.relu)  # forward1.y is pre (N, C₁, H₁, W₁)
    forward2 = forward_arrays(two, h, w2, b2)
    loss = mse_loss(forward2.y, target, reduction=check_reduction(reduction))
    second = _backward(forward2, loss.grad_out)
    grad_h = second.input_grad.grad_x
    grad_pre = np.where(gate, grad_h, 0.0)
    return TwoLayerPass(
        spec=spec,
        first=_backward(forward1, grad_pre),
        second=second,
        pre=forward1.y,
        gate=gate,
        h=h,
        loss=loss,
        grad_h=grad_h,
        grad_pre=grad_pre,
    )


def _backward(forward: ForwardArrays, grad_out: np.ndarray) -> Layer:
    """A layer's stages: its forward pass and both gradient routes from grad_out."""
    spec = forward.spec
    return Layer(
        forward=forward,
        input_grad=input_grad_arrays(spec, forward.w, grad_out),
        weight_grad=weight_grad_arrays(spec, forward.x, grad_out),
    )


def two_layer_forward(spec: TwoLayerSpec, x, w1, b1, w2, b2) -> np.ndarray:
    """y (N, C₂, oH, oW) of the two layers; b1, b2 may be None (zero)."""
    pre = conv2d(x, w1, b1, **spec.first.kwargs())
    return conv2d(_relu(pre, spec.relu)[1], w2, b2, **spec.second.kwargs())


def two_layer_target(
    spec: TwoLayerSpec, x: ArrayLike, source: str = "random", *, seed: int = 0, values=None
) -> Target:
    """The target of the two layers: random (seeded, of y's shape), typed `values`, or the
    output of the two layers with the named kernel in both (no bias)."""
    if source == "random":
        return Target(source=source, t=random_target(spec.second, seed))
    if source == "typed":
        t = checked_array(values, "the target", spec.second.output_shape, "y's shape")
        return Target(source=source, t=t)
    if source not in NAMED_KERNELS:
        raise ConvSpecError(f"the target source {source!r} is not known")
    kernels = (
        target_kernel(spec.first, source, "layer 1"),
        target_kernel(spec.second, source, "layer 2"),
    )
    t = two_layer_forward(spec, x, kernels[0], None, kernels[1], None)
    return Target(source=source, t=t, kernels=kernels)

"""How a convolution layer learns one step: SGD on w and b, and the curvature that bounds its rate.

A step is SGD in PyTorch's form, momentum μ included: v ← μ·v + g, p ← p − η·v, with v = g on
the first step; the loss and its ∂L/∂y are `convviz.learning.loss`'s, a run of steps
`convviz.learning.training`'s. Each step is the engine's vectorized forward and weight-gradient
calls, in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from convviz.engine.conv import as_array
from convviz.engine.fastpath import forward_padded, weight_grad_padded
from convviz.engine.matrix import im2col
from convviz.engine.numbers import Range, take
from convviz.engine.ops import pad
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.learning.loss import Loss, check_reduction, checked_array, mse_loss, unchecked_mse

MAX_LR = 1e3  # the control's bound (the issue: 1e9 is refused); rates that learn are far smaller
MAX_MOMENTUM = 0.999  # μ = 1 never forgets a gradient: the steps never shrink
# The Hessian is computed from the im2col matrix when it holds at most this many values.
CURVATURE_VALUES = 1_000_000
CURVATURE_UNKNOWNS = 512

Velocity = tuple[NDArray[np.float64], NDArray[np.float64]]  # (for w, for b)


# --- validation -----------------------------------------------------------------------------------


LR_RANGE = Range(0, MAX_LR, above=True)  # at 0 w never moves; below 0 each step climbs the loss
MOMENTUM_RANGE = Range(0, MAX_MOMENTUM)


def check_learning_rate(lr) -> float:
    """η as a float in (0, MAX_LR], or ConvSpecError naming it and the range."""
    return take(lr, "lr", LR_RANGE)


def check_momentum(momentum) -> float:
    """μ as a float in [0, MAX_MOMENTUM], or ConvSpecError naming it and the range."""
    return take(momentum, "momentum", MOMENTUM_RANGE)


def layer_params(spec: ConvSpec, w, b) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(w, b) as float64 of the layer's shapes; b = None is a zero bias."""
    w = checked_array(w, "the kernel w", spec.weight_shape, "the shape")
    if b is None:
        return w, np.zeros(spec.out_channels)
    return w, checked_array(b, "the bias b", (spec.out_channels,), "the shape")


# --- one step -------------------------------------------------------------------------------------


def sgd_step(
    w: ArrayLike,
    b: ArrayLike,
    grad_w: ArrayLike,
    grad_b: ArrayLike,
    lr: float,
    *,
    momentum: float = 0.0,
    velocity: Velocity | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], Velocity]:
    """One step of SGD as torch.optim.SGD takes it (no dampening, no weight decay, no Nesterov).

    v ← μ·v + g (v = g on the first step, velocity=None), then p ← p − η·v, for w and for b.
    w, grad_w : shape (C_out, C_in, kH, kW); b, grad_b : shape (C_out,);
    velocity : (v_w, v_b) of those shapes, from the previous step.
    Returns (w_new, b_new, (v_w, v_b)); the inputs are not changed.
    """
    lr, mu = check_learning_rate(lr), check_momentum(momentum)
    w = as_array(w, "the kernel w", 4).astype(np.float64)
    b = as_array(b, "the bias b", 1).astype(np.float64)
    g_w = checked_array(grad_w, "∂L/∂w", w.shape, "w's shape")
    g_b = checked_array(grad_b, "∂L/∂b", b.shape, "b's shape")
    if velocity is not None:
        velocity = (
            checked_array(velocity[0], "the velocity of w", w.shape, "w's shape"),
            checked_array(velocity[1], "the velocity of b", b.shape, "b's shape"),
        )
    return sgd_update(w, b, g_w, g_b, lr, mu, velocity)


def sgd_update(w, b, g_w, g_b, lr: float, mu: float, velocity: Velocity | None) -> tuple:
    """`sgd_step` on checked arrays: v ← μ·v + g (v = g first), p ← p − η·v."""
    if velocity is None:
        v_w, v_b = g_w.copy(), g_b.copy()
    else:
        v_w, v_b = mu * velocity[0] + g_w, mu * velocity[1] + g_b
    return w - lr * v_w, b - lr * v_b, (v_w, v_b)


@dataclass(frozen=True, kw_only=True)
class Step:
    """One gradient step of one layer: w and b before and after, and the loss at both."""

    spec: ConvSpec
    x: np.ndarray  # (N, C_in, H, W)
    lr: float
    momentum: float
    before: Loss  # at w_before, b_before
    after: Loss  # the forward pass run again at w_after, b_after
    w_before: np.ndarray  # (C_out, C_in, kH, kW)
    w_after: np.ndarray
    delta_w: np.ndarray  # w_after − w_before = −η·v_w, per tap
    b_before: np.ndarray  # (C_out,)
    b_after: np.ndarray
    delta_b: np.ndarray
    grad_w: np.ndarray  # ∂L/∂w at w_before
    grad_b: np.ndarray  # ∂L/∂b at w_before
    velocity: Velocity  # (v_w, v_b) the step took; pass it to the next step


def layer_forward(x_pad: np.ndarray, w: np.ndarray, b: np.ndarray, spec: ConvSpec) -> np.ndarray:
    """y = conv(x, w) + b from the padded input: (N, C_out, oH, oW)."""
    return forward_padded(x_pad, w, spec) + b[None, :, None, None]


def layer_grads(x_pad: np.ndarray, grad_out: np.ndarray, spec: ConvSpec) -> tuple:
    """(∂L/∂w, ∂L/∂b) from ∂L/∂y (N, C_out, oH, oW)."""
    return weight_grad_padded(x_pad, grad_out, spec), grad_out.sum(axis=(0, 2, 3))


def learning_step(
    spec: ConvSpec,
    x: ArrayLike,
    w: ArrayLike,
    b: ArrayLike | None,
    target: ArrayLike,
    lr: float,
    *,
    momentum: float = 0.0,
    velocity: Velocity | None = None,
    reduction: str = "sum",
) -> Step:
    """Forward, L and ∂L/∂y, ∂L/∂w and ∂L/∂b, one `sgd_step`, and the forward pass again.

    x : (N, C_in, H, W); w : (C_out, C_in, kH, kW); b : (C_out,) or None (zeros);
    target : (N, C_out, oH, oW).
    """
    x = checked_array(x, "the input x", spec.input_shape, "the shape")
    w, b = layer_params(spec, w, b)
    x_pad = pad(x, spec.padding, spec.padding_mode)
    before = mse_loss(layer_forward(x_pad, w, b, spec), target, reduction=reduction)
    grad_w, grad_b = layer_grads(x_pad, before.grad_out, spec)
    w_after, b_after, v = sgd_step(w, b, grad_w, grad_b, lr, momentum=momentum, velocity=velocity)
    with np.errstate(over="ignore", invalid="ignore"):
        after = unchecked_mse(
            layer_forward(x_pad, w_after, b_after, spec), before.target, before.reduction
        )
    if not math.isfinite(after.value):
        raise ConvSpecError(
            f"one step at the learning rate {lr:g} overflows: the loss after it is beyond any "
            "number; take a smaller rate"
        )
    return Step(
        spec=spec,
        x=x,
        lr=float(lr),
        momentum=float(momentum),
        before=before,
        after=after,
        w_before=w,
        w_after=w_after,
        delta_w=w_after - w,
        b_before=b,
        b_after=b_after,
        delta_b=b_after - b,
        grad_w=grad_w,
        grad_b=grad_b,
        velocity=v,
    )


# --- how fast a layer can learn: the curvature of L ---------------------------------------------


@dataclass(frozen=True)
class Curvature:
    """The Hessian of L w.r.t. one filter's taps and bias (every filter has the same one).

    L is quadratic in (w, b), with Hessian scale·AᵀA (A: the im2col matrix and a column of
    ones for the bias). Plain SGD at a rate η below 1/λ_max moves every direction of (w, b)
    straight towards the minimum; between 1/λ_max and 2/λ_max the stiffest directions overshoot
    and swing back (the loss still falls at every step); above 2/λ_max the swings grow and the
    run diverges. With rank < P unknowns, many kernels give the same y: SGD ends at the one
    nearest its start, not at the kernel that made the target.
    """

    eigenvalues: np.ndarray  # (P,) ascending, P = C_in·kH·kW + 1 unknowns per filter
    rank: int  # independent equations the output cells give for the P unknowns

    @property
    def unknowns(self) -> int:
        return len(self.eigenvalues)

    @property
    def determined(self) -> bool:
        """True when only one kernel and bias give the target's y (rank = unknowns)."""
        return self.rank == self.unknowns

    def critical_lr(self, momentum: float = 0.0) -> float:
        """The rate above which SGD diverges: 2(1 + μ)/λ_max (λ_max > 0: the bias is seen)."""
        return 2 * (1 + check_momentum(momentum)) / float(self.eigenvalues[-1])


def curvature(spec: ConvSpec, x: ArrayLike, *, reduction: str = "sum") -> Curvature | None:
    """The Hessian's eigenvalues and rank, or None when the layer is too large to say cheaply.

    x : shape (N, C_in, H, W). Bounded: at most CURVATURE_VALUES numbers in the im2col matrix
    and CURVATURE_UNKNOWNS unknowns per filter.
    """
    x = checked_array(x, "the input x", spec.input_shape, "the shape")
    rows = spec.batch * spec.out_size[0] * spec.out_size[1]
    unknowns = spec.in_channels * spec.kernel_size[0] * spec.kernel_size[1] + 1
    if rows * unknowns > CURVATURE_VALUES or unknowns > CURVATURE_UNKNOWNS:
        return None
    patches = im2col(spec, x).reshape(rows, unknowns - 1)  # (N·oH·oW, C_in·kH·kW)
    a = np.hstack([patches, np.ones((rows, 1))])  # (rows, P): the bias is a column
    sv = np.linalg.svd(a, compute_uv=False)  # descending; P of them when rows ≥ P
    sv = np.concatenate([sv, np.zeros(unknowns - len(sv))])
    rank = int((sv > sv[0] * max(a.shape) * np.finfo(float).eps).sum())  # matrix_rank's rule
    scale = 1.0 if check_reduction(reduction) == "sum" else 1.0 / spec.batch
    eig = scale * sv[::-1] ** 2  # the Hessian scale·AᵀA's eigenvalues, ascending
    return Curvature(eig, rank)

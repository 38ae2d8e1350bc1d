"""How a convolution layer learns: a loss, its ∂L/∂y, gradient steps on w and b, a training run.

L = ½‖y − t‖² summed over every cell (reduction "sum"), or that sum divided by the batch size
N (reduction "mean": L = (1/N)·½Σₙ‖yₙ − tₙ‖², ∂L/∂y = (y − t)/N). The target t is typed, drawn
at random (the very draw of `gout=mse`, so old links keep their numbers) or made by a named
kernel from the same input with the same stride, padding and dilation, so the layer has a kernel
to learn. A step is SGD in PyTorch's form, momentum μ included: v ← μ·v + g, p ← p − η·v, with
v = g on the first step. A run loops over its steps (never over cells); each step is the
engine's vectorized forward and weight-gradient calls. Everything is computed in float64, as
the PyTorch snippet and the cross-checks are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike, NDArray

from convviz.conv import as_array
from convviz.fastpath import forward_padded, weight_grad_padded
from convviz.matrix import im2col
from convviz.ops import pad
from convviz.spec import ConvSpec, ConvSpecError
from convviz.text import shape_text
from convviz.values import NAMED_KERNELS, example_w, mse_target, named_kernel

MAX_STEPS = 200
MAX_LR = 1e3  # the control's bound (the issue: 1e9 is refused); rates that learn are far smaller
MAX_MOMENTUM = 0.999  # μ = 1 never forgets a gradient: the steps never shrink
REDUCTIONS = ("sum", "mean")
TARGET_SOURCES = ("random", "typed", *NAMED_KERNELS)
# A run stops at the first step whose loss is not finite, is above LOSS_LIMIT while above the
# start, or is GROWTH_LIMIT times the start: well before float64 overflows.
LOSS_LIMIT = 1e12
GROWTH_LIMIT = 1e6
# float64 values a run keeps of w, ∂L/∂w, the velocity and y (16 MB); beyond, evenly spaced
# steps are kept (the loss, b and ∂L/∂b are small and kept at every step).
KEPT_VALUES = 2_000_000
# The Hessian is computed from the im2col matrix when it holds at most this many values.
CURVATURE_VALUES = 1_000_000
CURVATURE_UNKNOWNS = 512

Velocity = tuple[NDArray[np.float64], NDArray[np.float64]]  # (for w, for b)


# --- validation -----------------------------------------------------------------------------------


def _real(value, name: str) -> float:
    """A real number (not a bool), or ConvSpecError."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ConvSpecError(f"the {name} must be a number, got {value!r}")
    value = float(value)
    if math.isnan(value):
        raise ConvSpecError(f"the {name} is NaN: type a number such as 0.01")
    return value


def check_learning_rate(lr) -> float:
    """η as a float in (0, MAX_LR], or ConvSpecError saying what to type instead."""
    lr = _real(lr, "learning rate")
    if lr <= 0:
        raise ConvSpecError(
            f"the learning rate must be positive, got {lr:g}: at 0 w never moves, below 0 "
            "each step climbs the loss; type e.g. 0.01"
        )
    if lr > MAX_LR:
        raise ConvSpecError(
            f"the learning rate {lr:g} is beyond {MAX_LR:g}, the largest this app takes: "
            "type a smaller rate such as 0.01"
        )
    return lr


def check_momentum(momentum) -> float:
    """μ as a float in [0, MAX_MOMENTUM], or ConvSpecError."""
    mu = _real(momentum, "momentum")
    if not 0 <= mu <= MAX_MOMENTUM:
        raise ConvSpecError(
            f"the momentum must be in 0…{MAX_MOMENTUM:g}, got {mu:g}: 0 is plain SGD, "
            "0.9 the usual choice; at 1 or more the steps never shrink"
        )
    return mu


def check_steps(steps) -> int:
    """The number of steps of a run, a whole number in 1…MAX_STEPS, or ConvSpecError."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise ConvSpecError(f"the number of steps must be a whole number, got {steps!r}")
    if not 1 <= steps <= MAX_STEPS:
        raise ConvSpecError(
            f"the number of steps must be in 1…{MAX_STEPS}, got {steps}: "
            f"choose 1 to see one step, up to {MAX_STEPS} to watch the layer learn"
        )
    return int(steps)


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


def layer_params(spec: ConvSpec, w, b) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(w, b) as float64 of the layer's shapes; b = None is a zero bias."""
    w = checked_array(w, "the kernel w", spec.weight_shape, "the shape")
    if b is None:
        return w, np.zeros(spec.out_channels)
    return w, checked_array(b, "the bias b", (spec.out_channels,), "the shape")


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


def _mse(y: np.ndarray, t: np.ndarray, reduction: str) -> Loss:
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
    return _mse(y, t, check_reduction(reduction))


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
    return _update(w, b, g_w, g_b, lr, mu, velocity)


def _update(w, b, g_w, g_b, lr: float, mu: float, velocity: Velocity | None) -> tuple:
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


def _forward(x_pad: np.ndarray, w: np.ndarray, b: np.ndarray, spec: ConvSpec) -> np.ndarray:
    """y = conv(x, w) + b from the padded input: (N, C_out, oH, oW)."""
    return forward_padded(x_pad, w, spec) + b[None, :, None, None]


def _grads(x_pad: np.ndarray, grad_out: np.ndarray, spec: ConvSpec) -> tuple:
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
    before = mse_loss(_forward(x_pad, w, b, spec), target, reduction=reduction)
    grad_w, grad_b = _grads(x_pad, before.grad_out, spec)
    w_after, b_after, v = sgd_step(w, b, grad_w, grad_b, lr, momentum=momentum, velocity=velocity)
    with np.errstate(over="ignore", invalid="ignore"):
        after = _mse(_forward(x_pad, w_after, b_after, spec), before.target, before.reduction)
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


# --- a training run -------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Run:
    """Steps 0…S of one layer's training: the loss at every step, w and y at the kept steps.

    Step s holds the state after s updates: w[s], b[s], the y and L they give, and ∂L/∂w,
    ∂L/∂b there; velocity[s] is the v of the update that led to it (zero at s = 0), so
    w[s + 1] = w[s] − η·velocity_w[s + 1].
    """

    spec: ConvSpec
    x: np.ndarray  # (N, C_in, H, W)
    target: np.ndarray  # (N, C_out, oH, oW)
    lr: float
    momentum: float
    reduction: str
    steps_asked: int
    loss: np.ndarray  # (S + 1,) every step done
    b: np.ndarray  # (S + 1, C_out)
    grad_b: np.ndarray  # (S + 1, C_out)
    velocity_b: np.ndarray  # (S + 1, C_out)
    kept: np.ndarray  # (K,) the steps whose arrays below are kept, 0 and S included
    w: np.ndarray  # (K, C_out, C_in, kH, kW)
    grad_w: np.ndarray  # (K, C_out, C_in, kH, kW)
    velocity_w: np.ndarray  # (K, C_out, C_in, kH, kW)
    y: np.ndarray  # (K, N, C_out, oH, oW)
    stopped_at: int | None = None  # the step that diverged (not in the arrays), if any
    message: str = ""  # why it stopped, in words; "" when every step asked was taken

    @property
    def steps_done(self) -> int:
        return len(self.loss) - 1

    @property
    def diverged(self) -> bool:
        return self.stopped_at is not None

    @property
    def rises(self) -> np.ndarray:
        """The steps whose loss is above the step before: the rate overshoots there."""
        return np.flatnonzero(np.diff(self.loss) > 0) + 1

    def index(self, step: int) -> int | None:
        """Where step `step` is in the kept arrays (w, grad_w, velocity_w, y), or None."""
        i = int(np.searchsorted(self.kept, step))
        return i if i < len(self.kept) and self.kept[i] == step else None


def layer_macs(spec: ConvSpec) -> int:
    """Multiply-adds of one pass, N·C_in·C_out·kH·kW·oH·oW (as `state.macs`, which the app's
    limit uses; the engine does not import the app's state)."""
    return int(np.prod(spec.output_shape)) * spec.in_channels * int(np.prod(spec.kernel_size))


def max_steps(spec: ConvSpec, max_macs: int | None) -> int:
    """The most steps a run of this layer may take within `max_macs` multiply-adds.

    A run of S steps makes S + 1 forward and S + 1 weight-gradient passes.
    """
    if max_macs is None:
        return MAX_STEPS
    return int(min(MAX_STEPS, max_macs // (2 * layer_macs(spec)) - 1))


def kept_steps(spec: ConvSpec, steps: int) -> np.ndarray:
    """The steps whose w, ∂L/∂w, velocity and y a run of `steps` keeps: all, or evenly spaced
    ones (0 and the last included) within KEPT_VALUES numbers."""
    per_step = 3 * int(np.prod(spec.weight_shape)) + int(np.prod(spec.output_shape))
    count = min(steps + 1, max(2, KEPT_VALUES // per_step))
    return np.unique(np.linspace(0, steps, count).round().astype(int))


def _divergence(step: int, loss: float, start: float, lr: float) -> str | None:
    """Why the run must stop at this step, in words, or None."""
    if not math.isfinite(loss):
        what = f"the numbers overflowed at step {step}"
    elif loss > GROWTH_LIMIT * start and start > 0:
        what = f"at step {step} the loss reached {loss:.3g}, {loss / start:.2g} times its start"
    elif loss > LOSS_LIMIT and loss > start:
        what = f"at step {step} the loss reached {loss:.3g}, beyond {LOSS_LIMIT:g}"
    else:
        return None
    return (
        f"Stopped: {what} ({start:.3g} at step 0). The learning rate {lr:g} is too large for "
        "this layer: each step overshoots the minimum further than the last"
    )


def _hint(spec: ConvSpec, x: np.ndarray, momentum: float, reduction: str) -> str:
    """What rate would work, when the layer is small enough to say."""
    c = curvature(spec, x, reduction=reduction)
    if c is None:
        return "; try a rate 10 times smaller"
    return f"; below {c.critical_lr(momentum):.3g} (2(1 + μ)/λ_max) it converges"


def _check_run(spec: ConvSpec, steps, max_macs: int | None) -> int:
    steps = check_steps(steps)
    most = max_steps(spec, max_macs)
    if steps > most:
        raise ConvSpecError(
            f"{steps} steps of this layer need {2 * (steps + 1) * layer_macs(spec):,} "
            f"multiply-adds (a forward and a weight-gradient pass per step); the app computes up "
            f"to {max_macs:,}: "
            + (f"take at most {most} steps" if most >= 1 else "make the layer smaller")
        )
    return steps


class _History:
    """What a run keeps, step by step: small arrays at every step, large ones at `kept`."""

    def __init__(self, kept: np.ndarray):
        self.plan = set(kept.tolist())
        self.small = {"loss": [], "b": [], "grad_b": [], "velocity_b": []}
        self.large = {"kept": [], "w": [], "grad_w": [], "velocity_w": [], "y": []}
        self.last: dict = {}

    def add(self, step: int, **arrays) -> None:
        for name, values in self.small.items():
            values.append(arrays[name])
        self.last = {"kept": step} | {k: arrays[k] for k in self.large if k != "kept"}
        if step in self.plan:
            self._keep()

    def _keep(self) -> None:
        for name, values in self.large.items():
            values.append(self.last[name])

    def arrays(self) -> dict:
        """Every kept series stacked; the last step done is kept even when a run stopped early."""
        if self.large["kept"][-1] != self.last["kept"]:
            self._keep()
        return {name: np.array(v) for name, v in (self.small | self.large).items()}


def train(
    spec: ConvSpec,
    x: ArrayLike,
    w: ArrayLike,
    b: ArrayLike | None,
    target: ArrayLike,
    lr: float,
    steps: int,
    *,
    momentum: float = 0.0,
    reduction: str = "sum",
    max_macs: int | None = None,
) -> Run:
    """`steps` gradient steps from (w, b) towards the target; stops early if the loss diverges.

    x : (N, C_in, H, W); w : (C_out, C_in, kH, kW); b : (C_out,) or None (zeros);
    target : (N, C_out, oH, oW); max_macs : the most multiply-adds the run may take (None:
    no limit); a run takes 2·(steps + 1)·`layer_macs(spec)`.
    """
    steps = _check_run(spec, steps, max_macs)
    lr, mu, reduction = (
        check_learning_rate(lr),
        check_momentum(momentum),
        check_reduction(reduction),
    )
    x = checked_array(x, "the input x", spec.input_shape, "the shape")
    w, b = layer_params(spec, w, b)
    t = checked_array(target, "the target", spec.output_shape, "y's shape")
    history = _History(kept_steps(spec, steps))
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected, then reported
        stopped, message = _descend(spec, x, w, b, t, (lr, mu, reduction, steps), history)
    if stopped == 0:
        raise ConvSpecError(
            "the loss of these values overflows before the first step: use smaller numbers"
        )
    return Run(
        spec=spec,
        x=x,
        target=t,
        lr=lr,
        momentum=mu,
        reduction=reduction,
        steps_asked=steps,
        stopped_at=stopped,
        message=message,
        **history.arrays(),
    )


def _descend(spec: ConvSpec, x, w, b, t, how: tuple, history: _History) -> tuple[int | None, str]:
    """The steps of `train` into `history`; (the step that diverged or None, why in words)."""
    lr, mu, reduction, steps = how
    x_pad, velocity = pad(x, spec.padding, spec.padding_mode), None
    for s in range(steps + 1):
        loss = _mse(_forward(x_pad, w, b, spec), t, reduction)
        start = history.small["loss"][0] if s else loss.value
        message = _divergence(s, loss.value, start, lr)
        if message:
            return s, message + _hint(spec, x, mu, reduction) + "."
        g_w, g_b = _grads(x_pad, loss.grad_out, spec)
        v_w, v_b = (np.zeros_like(w), np.zeros_like(b)) if velocity is None else velocity
        history.add(s, loss=loss.value, y=loss.y, w=w, b=b, grad_w=g_w, grad_b=g_b,
                    velocity_w=v_w, velocity_b=v_b)  # fmt: skip
        if s < steps:
            w, b, velocity = _update(w, b, g_w, g_b, lr, mu, velocity)
    return None, ""

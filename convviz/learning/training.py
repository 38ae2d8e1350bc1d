"""A bounded training run of one layer: SGD steps until the last one asked or until it diverges.

A run loops over its steps (never over cells); each step is the engine's vectorized forward and
weight-gradient calls (`convviz.learning.sgd`). Its work is bounded by the app's limit on
multiply-adds, and the large arrays it keeps (w, ∂L/∂w, the velocity, y) by KEPT_VALUES.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from convviz.engine.numbers import Range, take
from convviz.engine.ops import pad
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.engine.text import count
from convviz.learning.loss import check_reduction, checked_array, unchecked_mse
from convviz.learning.sgd import (
    check_learning_rate,
    check_momentum,
    curvature,
    layer_forward,
    layer_grads,
    layer_params,
    sgd_update,
)

MAX_STEPS = 200
# A run stops at the first step whose loss is not finite, is above LOSS_LIMIT while above the
# start, or is GROWTH_LIMIT times the start: well before float64 overflows.
LOSS_LIMIT = 1e12
GROWTH_LIMIT = 1e6
# float64 values a run keeps of w, ∂L/∂w, the velocity and y (16 MB); beyond, evenly spaced
# steps are kept (the loss, b and ∂L/∂b are small and kept at every step).
KEPT_VALUES = 2_000_000


STEPS_RANGE = Range(1, MAX_STEPS, whole=True)


def check_steps(steps) -> int:
    """The number of steps of a run, a whole number in 1…MAX_STEPS, or ConvSpecError."""
    return take(steps, "steps", STEPS_RANGE)


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
            + (f"take at most {count(most, 'step')}" if most >= 1 else "make the layer smaller")
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
        loss = unchecked_mse(layer_forward(x_pad, w, b, spec), t, reduction)
        start = history.small["loss"][0] if s else loss.value
        message = _divergence(s, loss.value, start, lr)
        if message:
            return s, message + _hint(spec, x, mu, reduction) + "."
        g_w, g_b = layer_grads(x_pad, loss.grad_out, spec)
        v_w, v_b = (np.zeros_like(w), np.zeros_like(b)) if velocity is None else velocity
        history.add(s, loss=loss.value, y=loss.y, w=w, b=b, grad_w=g_w, grad_b=g_b,
                    velocity_w=v_w, velocity_b=v_b)  # fmt: skip
        if s < steps:
            w, b, velocity = sgd_update(w, b, g_w, g_b, lr, mu, velocity)
    return None, ""

"""One layer's learning experiment: its target, one gradient step and a training run, from settings.

The Learning page, its exports and its tests read this record; every number in it is
`convviz.learning.loss`'s, `convviz.learning.sgd`'s or `convviz.learning.training`'s. Engine layer:
NumPy and the standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from convviz.engine.fastpath import forward_padded
from convviz.engine.ops import pad
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.learning import sgd
from convviz.learning.loss import Target, make_target
from convviz.learning.training import Run, train


@dataclass(frozen=True)
class Settings:
    """How the layer learns (the URL's lr, steps, mom, tgt, red and t).

    lr : None is the layer's safe rate (`safe_rate`); typed : the typed target's values
    (y's shape, row-major), used when target is "typed".
    """

    lr: float | None = None
    steps: int = 100
    momentum: float = 0.0
    target: str = "sobel x"
    reduction: str = "sum"
    typed: np.ndarray | None = None

    def _key(self) -> tuple:
        """The settings as plain values (typed, an array, as its shape and bytes)."""
        typed = None if self.typed is None else (self.typed.shape, self.typed.tobytes())
        return (self.lr, self.steps, self.momentum, self.target, self.reduction, typed)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, Settings) and self._key() == other._key()


@dataclass(frozen=True, kw_only=True)
class Experiment:
    """The target, the rate used, the loss's curvature, one step from w and a run of steps."""

    settings: Settings
    target: Target
    lr: float
    curvature: sgd.Curvature | None
    step: sgd.Step
    run: Run

    @property
    def auto_rate(self) -> bool:
        return self.settings.lr is None

    @property
    def underdetermined(self) -> bool:
        """The target came from a kernel, but the outputs do not pin w down: many kernels give
        the same y, and SGD need not end at the target's."""
        return (
            bool(self.target.kernels)
            and self.curvature is not None
            and (not self.curvature.determined)
        )

    @property
    def kernel_error(self) -> np.ndarray | None:
        """max |w − target kernel| at every kept step, when a kernel made the target."""
        if not self.target.kernels:
            return None
        return np.abs(self.run.w - self.target.kernels[0]).max(axis=(1, 2, 3, 4))


def largest_curvature_bound(spec: ConvSpec, x: np.ndarray, reduction: str = "sum") -> float:
    """An upper bound of λ_max for a layer too big for `sgd.curvature`: the Hessian's trace,
    scale·(Σ over every window of its squared inputs + the bias's one per output cell), from
    one forward pass of x² with a kernel of ones."""
    x_pad = pad(np.asarray(x, dtype=float), spec.padding, spec.padding_mode)
    ones = np.ones((1, *spec.weight_shape[1:]))  # (1, C_in, kH, kW)
    squares = forward_padded(x_pad**2, ones, replace(spec, weight_shape=ones.shape))
    scale = 1.0 if reduction == "sum" else 1.0 / spec.batch
    return scale * (float(squares.sum()) + spec.batch * spec.out_size[0] * spec.out_size[1])


def safe_rate(curvature: sgd.Curvature | None, bound: float | None = None) -> float:
    """A rate that moves the stiffest direction of (w, b) to its minimum in one step,
    1/λ_max to 2 significant digits (half the rate where plain SGD starts to diverge); for a
    layer whose curvature is not computed, 1/`bound` (λ_max ≤ bound: slower, never diverging)."""
    top = float(curvature.eigenvalues[-1]) if curvature is not None else bound
    if not top or top <= 0:
        return sgd.MAX_LR
    rate = min(1 / top, sgd.MAX_LR)
    digits = 1 - math.floor(math.log10(rate))
    return float(np.floor(rate * 10**digits) / 10**digits)


def experiment(
    spec: ConvSpec,
    x: np.ndarray,
    w: np.ndarray,
    settings: Settings,
    *,
    seed: int = 0,
    y: np.ndarray | None = None,
    max_macs: int | None = None,
) -> Experiment:
    """The experiment of the layer (x, w; bias 0) under `settings`; ConvSpecError if a setting
    cannot work (a target of the wrong shape, a kernel of another size, too many steps, a step that
    overflows). A run that diverges is returned, stopped, with its message.

    x : (N, C_in, H, W); w : (C_out, C_in, kH, kW); y : the layer's output (for the random
    target, drawn as the app's `gout=mse` draws it).
    """
    target = make_target(spec, x, settings.target, seed=seed, values=settings.typed, y=y)
    curv = sgd.curvature(spec, x, reduction=settings.reduction)
    if settings.lr is not None:
        lr = settings.lr
    elif curv is None:
        lr = safe_rate(None, largest_curvature_bound(spec, x, settings.reduction))
    else:
        lr = safe_rate(curv)
    step = sgd.learning_step(
        spec, x, w, None, target.t, lr, momentum=settings.momentum, reduction=settings.reduction
    )
    run = train(
        spec,
        x,
        w,
        None,
        target.t,
        lr,
        settings.steps,
        momentum=settings.momentum,
        reduction=settings.reduction,
        max_macs=max_macs,
    )
    return Experiment(settings=settings, target=target, lr=lr, curvature=curv, step=step, run=run)


__all__ = [
    "ConvSpecError",
    "Experiment",
    "Settings",
    "experiment",
    "largest_curvature_bound",
    "safe_rate",
]

"""One layer's learning lesson: its target, one gradient step and a training run, from settings.

The Learning page, its exports and its tests read this record; every number in it is
`convviz.learn`'s. Engine layer: NumPy and the standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from convviz import learn
from convviz.spec import ConvSpec, ConvSpecError

FALLBACK_LR = 1e-3  # a layer too big for its curvature to be computed cheaply starts here


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

    def __hash__(self):  # typed is an array: hash its bytes
        typed = None if self.typed is None else self.typed.tobytes()
        return hash((self.lr, self.steps, self.momentum, self.target, self.reduction, typed))

    def __eq__(self, other):
        return isinstance(other, Settings) and hash(self) == hash(other)


@dataclass(frozen=True, kw_only=True)
class Lesson:
    """The target, the rate used, the loss's curvature, one step from w and a run of steps."""

    settings: Settings
    target: learn.Target
    lr: float
    curvature: learn.Curvature | None
    step: learn.Step
    run: learn.Run

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


def safe_rate(curvature: learn.Curvature | None) -> float:
    """A rate that moves the stiffest direction of (w, b) to its minimum in one step,
    1/λ_max to 2 significant digits (half the rate where plain SGD starts to diverge)."""
    if curvature is None or curvature.eigenvalues[-1] <= 0:
        return FALLBACK_LR
    rate = 1 / float(curvature.eigenvalues[-1])
    digits = 1 - math.floor(math.log10(rate))
    return float(np.floor(rate * 10**digits) / 10**digits)


def lesson(
    spec: ConvSpec,
    x: np.ndarray,
    w: np.ndarray,
    settings: Settings,
    *,
    seed: int = 0,
    y: np.ndarray | None = None,
    max_macs: int | None = None,
) -> Lesson:
    """The lesson of the layer (x, w; bias 0) under `settings`; ConvSpecError if a setting cannot
    work (a target of the wrong shape, a kernel of another size, too many steps, a step that
    overflows). A run that diverges is returned, stopped, with its message.

    x : (N, C_in, H, W); w : (C_out, C_in, kH, kW); y : the layer's output (for the random
    target, drawn as the app's `gout=mse` draws it).
    """
    target = learn.make_target(spec, x, settings.target, seed=seed, values=settings.typed, y=y)
    curv = learn.curvature(spec, x, reduction=settings.reduction)
    lr = safe_rate(curv) if settings.lr is None else settings.lr
    step = learn.learning_step(
        spec, x, w, None, target.t, lr, momentum=settings.momentum, reduction=settings.reduction
    )
    run = learn.train(
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
    return Lesson(settings=settings, target=target, lr=lr, curvature=curv, step=step, run=run)


__all__ = ["FALLBACK_LR", "ConvSpecError", "Lesson", "Settings", "lesson", "safe_rate"]

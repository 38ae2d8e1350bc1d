"""Independent checks of how a layer learns: the loss's gradients, the two-layer chain, a run.

L = ½‖y − t‖² is quadratic in each weight and bias (and, between the ReLU's kinks, in layer 1's
too), so a central difference is exact up to rounding, as it is for the linear L of the layer's
own checks (`convviz.engine.checks`, whose Check and Row these are). A training run is compared with
torch.optim.SGD when torch is importable. Work is bounded at every legal size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convviz.engine.checks import FD_STEP, TOLERANCE, Check, Row, central_slope, fd_cells
from convviz.engine.conv import conv2d
from convviz.engine.spec import TORCH_PAD_MODES
from convviz.engine.text import count
from convviz.learning.chain import TwoLayerPass
from convviz.learning.loss import Loss, mse_loss
from convviz.learning.sgd import Step
from convviz.learning.training import Run


def _rounding(loss: Loss, magnitude: np.ndarray, terms: int) -> float:
    """How far rounding may move L: each y cell is off by ≲ terms·eps·magnitude (the sum of its
    |products|), which moves L by |∂L/∂y|·that; the sum of squares adds eps·L per cell."""
    eps = np.finfo(np.float64).eps
    dy = terms * eps * magnitude  # (N, C_out, oH, oW)
    return 4 * float(np.sum(np.abs(loss.grad_out) * dy) + loss.diff.size * eps * loss.value)


def loss_gradient_check(step: Step, h: float = FD_STEP) -> Check:
    """Central differences of L = ½‖y − t‖² (÷N for the mean) beside ∂L/∂w and ∂L/∂b.

    step : a `learn.learning_step`; the differences are taken at its w and b before the step.
    """
    spec, x, before = step.spec, step.x, step.before
    kw = spec.kwargs()

    def loss(w, b) -> float:
        y = conv2d(x, w, b, **kw)
        return mse_loss(y, before.target, reduction=before.reduction).value

    rows = []
    for c in fd_cells(spec)[1]:
        slope = central_slope(lambda v: loss(v, step.b_before), step.w_before, c, h)
        rows.append(Row(f"∂L/∂w{list(c)}", float(step.grad_w[c]), slope))
    for k in dict.fromkeys((0, spec.out_channels - 1)):
        slope = central_slope(lambda v: loss(step.w_before, v), step.b_before, (k,), h)
        rows.append(Row(f"∂L/∂b[{k}]", float(step.grad_b[k]), slope))
    magnitude = conv2d(np.abs(x), np.abs(step.w_before), np.abs(step.b_before), **kw)
    terms = spec.in_channels * spec.kernel_size[0] * spec.kernel_size[1] + 1
    return Check.of_rows(
        "Finite differences of the loss",
        f"the slope of L = {_loss_words(before)} when one tap or bias moves by ±h, beside "
        "the engine's ∂L/∂w and ∂L/∂b",
        rows,
        f"step h = {h:g}; L is quadratic in each tap and bias, so the central difference is "
        "exact up to rounding",
        tol=_rounding(before, magnitude, terms) / h,
    )


def _loss_words(loss: Loss) -> str:
    return "½‖y − t‖²" if loss.reduction == "sum" else f"(1/{loss.y.shape[0]})·½Σₙ‖yₙ − tₙ‖²"


def _two_layer_cells(p: TwoLayerPass) -> list[tuple[str, str, tuple]]:
    """(name, label, cell) of the numbers the chain check moves: layer 2's taps and bias, then
    layer 1's (through the ReLU), then x's."""
    one, two = p.spec.first, p.spec.second
    biases = {
        name: dict.fromkeys((0, spec.out_channels - 1)) for name, spec in (("b1", one), ("b2", two))
    }
    return (
        [("w2", "∂L/∂w₂", c) for c in fd_cells(two)[1]]
        + [("b2", "∂L/∂b₂", (k,)) for k in biases["b2"]]
        + [("w1", "∂L/∂w₁", c) for c in fd_cells(one)[1]]
        + [("b1", "∂L/∂b₁", (k,)) for k in biases["b1"]]
        + [("x", "∂L/∂x", c) for c in fd_cells(one)[0]]
    )


def _central(loss_gate, a: np.ndarray, cell: tuple, step: float):
    """(slope, whether the gate stayed the same) of one central difference of `cell` of a."""
    plus, minus = a.astype(np.float64, copy=True), a.astype(np.float64, copy=True)
    plus[cell] += step
    minus[cell] -= step
    (l_plus, g_plus), (l_minus, g_minus) = loss_gate(plus), loss_gate(minus)
    return (l_plus - l_minus) / (2 * step), np.array_equal(g_plus, g_minus)


@dataclass(frozen=True)
class _Part:
    """The terms of the two-layer L that move with one number: the same two layers on a slice
    (one sample of x; one filter of layer 1 and what layer 2 reads of it; one filter of
    layer 2), whose loss differs from L by terms that cancel in a difference."""

    values: dict  # x, w1, b1, w2, b2 of the slice; h instead of x, w1, b1 for a layer-2 number
    cell: tuple  # the number's cell in its slice
    target: np.ndarray  # the target's slice
    y_rest: np.ndarray | float  # the part of y the slice does not make (it does not move)


def _own_forward(p: TwoLayerPass, values: dict) -> dict:
    """values with the check's own h and y (conv2d twice, its own ReLU), not the pass's."""
    one, two = p.spec.first, p.spec.second
    pre = conv2d(values["x"], values["w1"], values["b1"], **one.kwargs())
    h = np.maximum(pre, 0.0) if p.spec.relu else pre
    return values | {"h": h, "y": conv2d(h, values["w2"], values["b2"], **two.kwargs())}


def _moving_part(p: TwoLayerPass, own: dict, name: str, cell: tuple) -> _Part:
    """The slice of the two-layer problem in which values[name][cell] moves L."""
    i, t, at = cell[0], p.loss.target, (0, *cell[1:])
    if name == "x":  # sample i
        layers = {k: own[k] for k in ("w1", "b1", "w2", "b2")}
        return _Part(layers | {"x": own["x"][i : i + 1]}, at, t[i : i + 1], 0.0)
    if name in ("w1", "b1"):  # filter i of layer 1, and channel i of layer 2's taps
        w2 = own["w2"][:, i : i + 1]
        made = conv2d(own["h"][:, i : i + 1], w2, **p.spec.second.kwargs())
        part = {"x": own["x"], "w1": own["w1"][i : i + 1], "b1": own["b1"][i : i + 1]}
        part |= {"w2": w2, "b2": np.zeros(len(own["b2"]))}
        return _Part(part, at, t, own["y"] - made)
    part = {"h": own["h"], "w2": own["w2"][i : i + 1], "b2": own["b2"][i : i + 1]}  # filter i
    return _Part(part, at, t[:, i : i + 1], 0.0)


def _chain_loss(p: TwoLayerPass, part: _Part, name: str, held: np.ndarray | None = None):
    """v ↦ (L of the slice, its ReLU gate) with part.values[name] replaced by v; with `held`,
    that gate whatever the pre-activations. The loss keeps the whole layer's 1/N."""
    one, two, scale = p.spec.first, p.spec.second, p.loss.scale

    def loss_gate(v):
        a = part.values | {name: v}
        if "h" in a:  # a layer-2 number: h does not move
            gate, h = None, a["h"]
        else:
            pre = conv2d(a["x"], a["w1"], a["b1"], **one.kwargs())
            gate = held if held is not None else pre > 0 if p.spec.relu else None
            h = pre if gate is None else np.where(gate, pre, 0.0)
        y = conv2d(h, a["w2"], a["b2"], **two.kwargs()) + part.y_rest
        return scale * 0.5 * float(np.sum((y - part.target) ** 2)), gate

    return loss_gate


def _chain_slope(p: TwoLayerPass, part: _Part, name: str, h: float) -> tuple[float, bool]:
    """(slope, held) of the central difference; held when it would cross a ReLU kink: then the
    slope is taken with the gate held as it is at the point (the check's own pre > 0)."""
    loss_gate, a = _chain_loss(p, part, name), part.values[name]
    slope, same_gate = _central(loss_gate, a, part.cell, h)
    if same_gate:
        return slope, False
    gate = loss_gate(a)[1]
    return _central(_chain_loss(p, part, name, held=gate), a, part.cell, h)[0], True


def two_layer_check(p: TwoLayerPass, h: float = FD_STEP) -> Check:
    """Central differences of the two-layer loss beside ∂L/∂w₂, ∂L/∂b₂, ∂L/∂w₁, ∂L/∂b₁, ∂L/∂x.

    A difference that crosses a kink of the ReLU (a pre-activation within h of 0, or at it:
    integer layers often have one) is not the derivative: there the slope is taken with the
    ReLU's gate held as it is at the point, which is the derivative wherever it exists and
    ReLU′(0) = 0 (PyTorch's choice, the engine's) where it does not; such a row says
    "gate held". L is evaluated on the slice each number moves (bounded work).
    """
    values = {"x": p.first.forward.x, "w1": p.first.forward.w, "b1": p.first.forward.bias}
    values |= {"w2": p.second.forward.w, "b2": p.second.forward.bias}
    own, grads = _own_forward(p, values), p.grads | {"x": p.grad_x}
    rows, held = [], []
    for name, label, cell in _two_layer_cells(p):
        slope, gate_held = _chain_slope(p, _moving_part(p, own, name, cell), name, h)
        what = f"{label}{list(cell)}" + (" (gate held)" if gate_held else "")
        held += [what] if gate_held else []
        rows.append(Row(what, float(grads[name][cell]), slope))
    return Check.of_rows(
        "Finite differences through both layers",
        f"the slope of the two-layer L = {_loss_words(p.loss)} when one tap, bias or input cell "
        "moves by ±h, beside the chain rule's ∂L/∂w₂, ∂L/∂b₂, ∂L/∂w₁, ∂L/∂b₁ and ∂L/∂x",
        rows,
        _two_layer_note(h, held),
        tol=_rounding(p.loss, _chain_magnitude(p, values), _chain_terms(p)) / h,
    )


def _chain_magnitude(p: TwoLayerPass, values: dict) -> np.ndarray:
    """Σ|products| behind each y cell, through both layers: (N, C₂, oH, oW)."""
    one, two = p.spec.first, p.spec.second
    m_h = conv2d(np.abs(values["x"]), np.abs(values["w1"]), np.abs(values["b1"]), **one.kwargs())
    return conv2d(m_h, np.abs(values["w2"]), np.abs(values["b2"]), **two.kwargs())


def _chain_terms(p: TwoLayerPass) -> int:
    """Terms of the sums behind a y cell's rounding: layer 1's error is carried by layer 2's
    weights (within layer 2's magnitude), layer 2 adds its own."""
    one, two = p.spec.first, p.spec.second
    return (one.in_channels * one.kernel_size[0] * one.kernel_size[1] + 1) + (
        two.in_channels * two.kernel_size[0] * two.kernel_size[1] + 1
    )


def _two_layer_note(h: float, held: list[str]) -> str:
    note = (
        f"step h = {h:g}; L is quadratic in each number between the ReLU's kinks, so the "
        "difference is exact; L is summed over the terms that move with the number (its "
        "sample, or its filter), the rest cancel in the difference"
    )
    if held:
        note += (
            f"; at {', '.join(held)} a pre-activation lies within h of 0 (or at it), where the "
            "slope of L jumps: the slope is taken with the ReLU's gate held as it is there (at "
            "exactly 0 shut: ReLU′(0) = 0, as in PyTorch)"
        )
    return note


def training_torch_check(run: Run) -> Check:
    """The run's losses, w and b against torch.optim.SGD (autograd) from the same start, or
    skipped when torch is not installed."""
    name = "PyTorch SGD"
    claim = (
        f"the loss at each of {count(run.steps_done + 1, 'step')} and the final w and b, against "
        f"torch.optim.SGD (lr {run.lr:g}, momentum {run.momentum:g}) with autograd"
    )
    try:
        import torch
    except ImportError:
        return Check(name, claim, note="skipped: torch is not installed on this server")
    losses, w, b = _torch_sgd(run, torch)
    last, tap = run.index(run.steps_done), fd_cells(run.spec)[1][1]
    pairs = [("L", run.loss, losses), ("w", run.w[last], w), ("b", run.b[-1], b)]
    rows = (
        Row("L at step 0", float(run.loss[0]), float(losses[0])),
        Row(f"L at step {run.steps_done}", float(run.loss[-1]), float(losses[-1])),
        Row(f"w{list(tap)} at the end", float(run.w[last][tap]), float(w[tap])),
    )
    # each quantity against its own size: the loss is in y's units squared, w in its own
    worst = max(float(np.abs(a - b).max() / max(1.0, np.abs(b).max())) for _, a, b in pairs)
    note = f"torch {torch.__version__}, float64; each difference relative to its quantity's size"
    return Check(name, claim, rows, worst, TOLERANCE, note)


def _torch_sgd(run: Run, torch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(losses (S + 1,), final w, final b) of torch.optim.SGD on the run's layer."""
    F = torch.nn.functional
    spec = run.spec
    (pt, pb), (pl, pr) = spec.padding
    x = torch.tensor(run.x)
    if any((pt, pb, pl, pr)):
        x = F.pad(x, (pl, pr, pt, pb), mode=TORCH_PAD_MODES[spec.padding_mode])
    t = torch.tensor(run.target)
    w = torch.tensor(run.w[0], requires_grad=True)
    b = torch.tensor(run.b[0], requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=run.lr, momentum=run.momentum)
    scale = 1.0 if run.reduction == "sum" else 1.0 / spec.batch
    losses = []
    for s in range(run.steps_done + 1):
        opt.zero_grad()
        y = F.conv2d(x, w, b, stride=spec.stride, dilation=spec.dilation)
        loss = scale * 0.5 * ((y - t) ** 2).sum()
        losses.append(loss.item())
        if s < run.steps_done:
            loss.backward()
            opt.step()
    return np.array(losses), w.detach().numpy(), b.detach().numpy()

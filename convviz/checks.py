"""Independent checks of one layer's numbers, each with the number it rests on.

Four witnesses, none of which shares the engine's fast path: the plain-loop reference
(`convviz.reference`, or per-cell loops at sampled cells when the whole layer would take too
long), finite differences of L = Σ ∂L/∂y · y, the adjoint identity, and PyTorch's autograd when
torch is importable. Work is bounded at every legal size; when cells are sampled, the check says
how many.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convviz import reference
from convviz.chain import TwoLayerPass
from convviz.conv import conv2d
from convviz.learn import Step
from convviz.loss import Loss, mse_loss
from convviz.ops import source_index
from convviz.spec import TORCH_PAD_MODES, ConvSpec
from convviz.stages import Layer
from convviz.training import Run

TOLERANCE = 1e-9  # relative: all four checks are exact up to floating-point rounding
FD_STEP = 1e-3
FULL_LOSS_WORK = 2_000_000  # multiply-adds of one L evaluation before it is restricted
SAMPLED_CELLS = 4  # per array, when the full loop reference would be too slow


@dataclass(frozen=True)
class Row:
    """One compared number: what it is, the engine's value, the independent value."""

    label: str
    engine: float
    independent: float

    @property
    def difference(self) -> float:
        return abs(self.engine - self.independent)


@dataclass(frozen=True)
class Check:
    """One independent check: its verdict, the largest difference and the rows behind it."""

    name: str
    claim: str  # what is compared, in a sentence
    rows: tuple[Row, ...] = ()
    worst: float | None = None  # largest |engine − independent|; None when skipped
    tolerance: float = TOLERANCE  # the largest difference that floating-point rounding explains
    note: str = ""  # sampling, restriction, or why it was skipped

    @property
    def skipped(self) -> bool:
        return self.worst is None

    @property
    def passed(self) -> bool:
        return self.worst is not None and self.worst <= self.tolerance


def _checked(name: str, claim: str, rows: list[Row], note: str = "", tol: float = 0.0) -> Check:
    """A check over rows; it passes within `tol` or TOLERANCE relative to its numbers."""
    worst = max((r.difference for r in rows), default=0.0)
    scale = max((abs(v) for r in rows for v in (r.engine, r.independent)), default=1.0)
    return Check(name, claim, tuple(rows), worst, max(tol, TOLERANCE * max(1.0, scale)), note)


# --- 1. the plain-loop reference -----------------------------------------------------------------


def _sources(spec: ConvSpec) -> tuple[np.ndarray, np.ndarray]:
    (H, W), ((pt, pb), (pl, pr)) = spec.in_size, spec.padding
    return (
        source_index(H, (pt, pb), spec.padding_mode),
        source_index(W, (pl, pr), spec.padding_mode),
    )


def y_cell_loop(spec: ConvSpec, x, w, n: int, k: int, i: int, j: int) -> float:
    """y[n, k, i, j] by a plain loop over channels and taps (no bias)."""
    src_r, src_c = _sources(spec)
    (sh, sw), (dh, dw), (kH, kW) = spec.stride, spec.dilation, spec.kernel_size
    total = 0.0
    for c in range(spec.in_channels):
        for a in range(kH):
            for b in range(kW):
                r, q = src_r[i * sh + a * dh], src_c[j * sw + b * dw]
                if r >= 0 and q >= 0:
                    total += float(x[n, c, r, q]) * float(w[k, c, a, b])
    return total


def grad_x_cell_loop(spec: ConvSpec, w, grad_out, n: int, c: int, r: int, q: int) -> float:
    """∂L/∂x[n, c, r, q]: every (output cell, tap) whose padded cell copies x[r, q]."""
    src_r, src_c = _sources(spec)
    (sh, sw), (dh, dw), (kH, kW) = spec.stride, spec.dilation, spec.kernel_size
    (oH, oW) = spec.out_size
    total = 0.0
    for pr in np.flatnonzero(src_r == r):
        for pc in np.flatnonzero(src_c == q):
            for k in range(spec.out_channels):
                for a in range(kH):
                    for b in range(kW):
                        i, ri = divmod(int(pr) - a * dh, sh)
                        j, rj = divmod(int(pc) - b * dw, sw)
                        if ri == 0 and rj == 0 and 0 <= i < oH and 0 <= j < oW:
                            total += float(grad_out[n, k, i, j]) * float(w[k, c, a, b])
    return total


def grad_w_cell_loop(spec: ConvSpec, x, grad_out, k: int, c: int, a: int, b: int) -> float:
    """∂L/∂w[k, c, a, b] = Σ_n Σ_i Σ_j ∂L/∂y[n, k, i, j] · x_pad[n, c, i·s + a·d, j·s + b·d]."""
    src_r, src_c = _sources(spec)
    (sh, sw), (dh, dw), (oH, oW) = spec.stride, spec.dilation, spec.out_size
    total = 0.0
    for n in range(spec.batch):
        for i in range(oH):
            for j in range(oW):
                r, q = src_r[i * sh + a * dh], src_c[j * sw + b * dw]
                if r >= 0 and q >= 0:
                    total += float(grad_out[n, k, i, j]) * float(x[n, c, r, q])
    return total


def sample_cells(shape: tuple[int, ...], count: int, seed: int = 0) -> list[tuple[int, ...]]:
    """`count` distinct cells of an array: the first and last cell, then seeded random ones."""
    size = int(np.prod(shape))
    first = [0, size - 1] if size > 1 else [0]
    rng = np.random.default_rng(seed)
    rest = rng.permutation(size)[: count + 2]
    flat = list(dict.fromkeys([*first, *map(int, rest)]))[:count]
    return [tuple(int(v) for v in np.unravel_index(f, shape)) for f in flat]


def reference_check(lay: Layer) -> Check:
    """The engine against the plain-loop reference: every cell when small, else sampled cells."""
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    spec, g = fw.spec, ig.grad_out
    y = fw.y - fw.bias[None, :, None, None]
    name = "Plain-loop reference"
    claim = "y, ∂L/∂x and ∂L/∂w against plain loops over the chain-rule sums"
    N, K, oH, oW = spec.output_shape
    if N * K * oH * oW * spec.in_channels * spec.kernel_size[0] * spec.kernel_size[1] <= (
        reference.MAX_LIVE_TERMS
    ):
        return _full_reference(lay, name, claim)
    rows = []
    for cell in sample_cells(y.shape, SAMPLED_CELLS):
        rows.append(Row(f"y{list(cell)}", float(y[cell]), y_cell_loop(spec, fw.x, fw.w, *cell)))
    for cell in sample_cells(ig.grad_x.shape, SAMPLED_CELLS):
        loop = grad_x_cell_loop(spec, fw.w, g, *cell)
        rows.append(Row(f"∂L/∂x{list(cell)}", float(ig.grad_x[cell]), loop))
    for cell in sample_cells(wg.grad_w.shape, SAMPLED_CELLS):
        loop = grad_w_cell_loop(spec, fw.x, g, *cell)
        rows.append(Row(f"∂L/∂w{list(cell)}", float(wg.grad_w[cell]), loop))
    note = (
        f"the whole layer would take more than {reference.MAX_LIVE_TERMS:,} loop steps: "
        f"{SAMPLED_CELLS} cells of each array were sampled (first, last and random ones)"
    )
    return _checked(name, claim, rows, note)


def _full_reference(lay: Layer, name: str, claim: str) -> Check:
    """Every cell against the loop reference; a few of them shown as rows."""
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    spec, g = fw.spec, ig.grad_out
    kw = spec.kwargs()
    pairs = [
        ("y", fw.y - fw.bias[None, :, None, None], reference.conv2d_loop(fw.x, fw.w, **kw)),
        ("∂L/∂x", ig.grad_x, reference.conv2d_input_loop(fw.x.shape, fw.w, g, **kw)),
        ("∂L/∂w", wg.grad_w, reference.conv2d_weight_loop(fw.x, fw.w.shape, g, **kw)),
    ]
    rows = [
        Row(f"{label}{list(cell)}", float(engine[cell]), float(loop[cell]))
        for label, engine, loop in pairs
        for cell in sample_cells(engine.shape, 2)
    ]
    worst = max(float(np.abs(engine - loop).max()) for _, engine, loop in pairs)
    scale = max(float(np.abs(engine).max()) for _, engine, _ in pairs)
    total = sum(engine.size for _, engine, _ in pairs)
    note = f"every cell compared ({total} numbers); two of each array shown"
    return Check(name, claim, tuple(rows), worst, TOLERANCE * max(1.0, scale), note)


# --- 2. finite differences -----------------------------------------------------------------------


def fd_cells(spec: ConvSpec) -> tuple[list[tuple], list[tuple]]:
    """A few cells of x and w worth checking: a corner (the padding meets it), the centre, the
    last cell (in the remainder if there is one); the first, centre and last tap."""
    N, C, H, W = spec.input_shape
    K, _, kH, kW = spec.weight_shape
    xs = [(0, 0, 0, 0), (N - 1, C - 1, H // 2, W // 2), (N - 1, C - 1, H - 1, W - 1)]
    ws = [(0, 0, 0, 0), (K - 1, C - 1, kH // 2, kW // 2), (K - 1, C - 1, kH - 1, kW - 1)]
    return list(dict.fromkeys(xs)), list(dict.fromkeys(ws))


def _loss(spec: ConvSpec, x, w, g) -> float:
    """L = Σ ∂L/∂y · y with ∂L/∂y held fixed (bias left out: it does not move with x or w)."""
    return float(np.sum(g * conv2d(x, w, **spec.kwargs())))


def finite_difference_check(lay: Layer, step: float = FD_STEP) -> Check:
    """Central differences (L(v + h) − L(v − h)) / 2h beside the engine's ∂L/∂x and ∂L/∂w.

    At large sizes L is evaluated only on the terms that move: sample n and channel c for an x
    cell, filter k and channel c for a w cell (the others cancel exactly in the difference).
    """
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    spec, g = fw.spec, ig.grad_out
    N, K, oH, oW = spec.output_shape
    work = N * K * oH * oW * spec.in_channels * spec.kernel_size[0] * spec.kernel_size[1]
    restrict = work > FULL_LOSS_WORK
    xs, ws = fd_cells(spec)
    rows = []
    for n, c, r, q in xs:
        x, w, gg = fw.x, fw.w, g
        if restrict:
            x, w, gg = x[n : n + 1, c : c + 1], w[:, c : c + 1], g[n : n + 1]
        cell = (0, 0, r, q) if restrict else (n, c, r, q)
        slope = _slope(lambda v, w=w, gg=gg: _loss(spec, v, w, gg), x, cell, step)
        rows.append(Row(f"∂L/∂x[{n}, {c}, {r}, {q}]", float(ig.grad_x[n, c, r, q]), slope))
    for k, c, a, b in ws:
        x, w, gg = fw.x, fw.w, g
        if restrict:
            x, w, gg = x[:, c : c + 1], w[k : k + 1, c : c + 1], g[:, k : k + 1]
        cell = (0, 0, a, b) if restrict else (k, c, a, b)
        slope = _slope(lambda v, x=x, gg=gg: _loss(spec, x, v, gg), w, cell, step)
        rows.append(Row(f"∂L/∂w[{k}, {c}, {a}, {b}]", float(wg.grad_w[k, c, a, b]), slope))
    note = (
        f"step h = {step:g}; L is linear in each cell, so the central difference is exact "
        "up to rounding"
    )
    if restrict:
        note += (
            "; at this size L is summed only over the terms that move with the cell (the rest "
            "cancel in the difference)"
        )
    # L's rounding error (a few ulps of Σ|∂L/∂y·y|), divided by the step 2h
    size = float(np.abs(g * (fw.y - fw.bias[None, :, None, None])).sum())
    return _checked(
        "Finite differences",
        "the slope of L = Σ ∂L/∂y·y when one cell moves by ±h, beside the engine's gradient",
        rows,
        note,
        tol=64 * np.finfo(np.float64).eps * size / step,
    )


def _slope(loss, a: np.ndarray, cell: tuple, step: float) -> float:
    plus, minus = a.astype(np.float64, copy=True), a.astype(np.float64, copy=True)
    plus[cell] += step
    minus[cell] -= step
    return (loss(plus) - loss(minus)) / (2 * step)


# --- 3. the adjoint identity ---------------------------------------------------------------------


def adjoint_check(lay: Layer) -> Check:
    """⟨conv(x, w), g⟩ = ⟨x, ∂L/∂x(g)⟩ = ⟨w, ∂L/∂w(g)⟩: three inner products of one number."""
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    g = ig.grad_out
    y = fw.y - fw.bias[None, :, None, None]
    forward = float(np.vdot(y, g))
    rows = [
        Row("⟨conv(x), g⟩ vs ⟨x, ∂L/∂x⟩", forward, float(np.vdot(fw.x, ig.grad_x))),
        Row("⟨conv(x), g⟩ vs ⟨w, ∂L/∂w⟩", forward, float(np.vdot(fw.w, wg.grad_w))),
    ]
    return _checked(
        "Adjoint identity",
        "⟨conv(x, w), g⟩ = ⟨x, ∂L/∂x(g)⟩ = ⟨w, ∂L/∂w(g)⟩ with g the current ∂L/∂y",
        rows,
        "one sum over every cell: bounded at every size",
    )


# --- 4. PyTorch ----------------------------------------------------------------------------------


def torch_check(lay: Layer) -> Check:
    """y, ∂L/∂x and ∂L/∂w from PyTorch's autograd, or skipped when torch is not installed."""
    name, claim = "PyTorch autograd", "y, ∂L/∂x and ∂L/∂w from torch.autograd on the same layer"
    try:
        import torch
        import torch.nn.functional as F  # noqa: N812  (PyTorch's own spelling)
    except ImportError:
        return Check(name, claim, note="skipped: torch is not installed on this server")
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    spec = fw.spec
    x = torch.tensor(fw.x, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(fw.w, dtype=torch.float64, requires_grad=True)
    (pt, pb), (pl, pr) = spec.padding
    mode = TORCH_PAD_MODES[spec.padding_mode]
    xp = F.pad(x, (pl, pr, pt, pb), mode=mode) if any((pt, pb, pl, pr)) else x
    y = F.conv2d(xp, w, stride=spec.stride, dilation=spec.dilation)
    (y * torch.tensor(ig.grad_out, dtype=torch.float64)).sum().backward()
    y0 = fw.y - fw.bias[None, :, None, None]
    diffs = [
        ("y", y.detach().numpy(), y0),
        ("∂L/∂x", x.grad.numpy(), ig.grad_x),
        ("∂L/∂w", w.grad.numpy(), wg.grad_w),
    ]
    worst = max(float(np.abs(a - b).max()) for _, a, b in diffs)
    scale = max(float(np.abs(b).max()) for _, _, b in diffs)
    tol = TOLERANCE * max(1.0, scale)
    return Check(name, claim, (), worst, tol, f"torch {torch.__version__}, float64")


def all_checks(lay: Layer) -> list[Check]:
    """Every independent check of this layer, in the order a student reads them."""
    return [
        reference_check(lay),
        finite_difference_check(lay),
        adjoint_check(lay),
        torch_check(lay),
    ]


# --- 5. learning: the loss's gradients, the two-layer chain, a training run ----------------------
# L = ½‖y − t‖² is quadratic in each weight and bias (and, between the ReLU's kinks, in layer
# 1's too), so a central difference is exact up to rounding, as it is for the linear L above.


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
        slope = _slope(lambda v: loss(v, step.b_before), step.w_before, c, h)
        rows.append(Row(f"∂L/∂w{list(c)}", float(step.grad_w[c]), slope))
    for k in dict.fromkeys((0, spec.out_channels - 1)):
        slope = _slope(lambda v: loss(step.w_before, v), step.b_before, (k,), h)
        rows.append(Row(f"∂L/∂b[{k}]", float(step.grad_b[k]), slope))
    magnitude = conv2d(np.abs(x), np.abs(step.w_before), np.abs(step.b_before), **kw)
    terms = spec.in_channels * spec.kernel_size[0] * spec.kernel_size[1] + 1
    return _checked(
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
    return _checked(
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
        f"the loss at each of {run.steps_done + 1} steps and the final w and b, against "
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

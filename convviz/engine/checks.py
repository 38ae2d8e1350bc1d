"""Independent checks of one layer's numbers, each with the number it rests on.

Four witnesses, none of which shares the engine's fast path: the plain-loop reference
(`convviz.engine.reference`, or per-cell loops at sampled cells when the whole layer would take too
long), finite differences of L = Σ ∂L/∂y · y, the adjoint identity, and PyTorch's autograd when
torch is importable. Work is bounded at every legal size; when cells are sampled, the check says
how many. The checks of how the layer learns are `convviz.learning.checks`'.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convviz.engine import reference
from convviz.engine.arrays import Layer
from convviz.engine.conv import conv2d
from convviz.engine.ops import source_index
from convviz.engine.spec import TORCH_PAD_MODES, ConvSpec

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

    @classmethod
    def of_rows(
        cls, name: str, claim: str, rows: list[Row], note: str = "", tol: float = 0.0
    ) -> Check:
        """A check over rows; it passes within `tol` or TOLERANCE relative to its numbers."""
        worst = max((r.difference for r in rows), default=0.0)
        scale = max((abs(v) for r in rows for v in (r.engine, r.independent)), default=1.0)
        return cls(name, claim, tuple(rows), worst, max(tol, TOLERANCE * max(1.0, scale)), note)


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
    return Check.of_rows(name, claim, rows, note)


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
        slope = central_slope(lambda v, w=w, gg=gg: _loss(spec, v, w, gg), x, cell, step)
        rows.append(Row(f"∂L/∂x[{n}, {c}, {r}, {q}]", float(ig.grad_x[n, c, r, q]), slope))
    for k, c, a, b in ws:
        x, w, gg = fw.x, fw.w, g
        if restrict:
            x, w, gg = x[:, c : c + 1], w[k : k + 1, c : c + 1], g[:, k : k + 1]
        cell = (0, 0, a, b) if restrict else (k, c, a, b)
        slope = central_slope(lambda v, x=x, gg=gg: _loss(spec, x, v, gg), w, cell, step)
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
    return Check.of_rows(
        "Finite differences",
        "the slope of L = Σ ∂L/∂y·y when one cell moves by ±h, beside the engine's gradient",
        rows,
        note,
        tol=64 * np.finfo(np.float64).eps * size / step,
    )


def central_slope(loss, a: np.ndarray, cell: tuple, step: float) -> float:
    """(loss(a + h) − loss(a − h)) / 2h, with h = `step` added to and taken from `cell` of a."""
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
    return Check.of_rows(
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

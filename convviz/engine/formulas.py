"""Formulas: the terms of one output or gradient cell, summed and rendered as LaTeX or text.

A Formula is the terms (`convviz.engine.terms`: operand cell × kernel cell, each flagged when it may
vanish or move) whose sum is one cell of y, ∂L/∂x or ∂L/∂w, built here from the layer's stages.
The numeric sum of the terms equals the engine's value; a sum cut short says what the rest is.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from convviz.engine.arrays import ForwardArrays, InputGradArrays, Layer, WeightGradArrays
from convviz.engine.ops import source_index
from convviz.engine.spec import ConvSpec
from convviz.engine.terms import Symbol, Term, TermArrays
from convviz.engine.text import MINUS, count, number


def _values(terms: Sequence[Term]) -> np.ndarray:
    if isinstance(terms, TermArrays):
        return terms.values
    return np.array([t.value for t in terms], dtype=float)


# How many terms a written sum shows before the rest becomes "[n more terms = s]"
FULL_TERMS = 27  # the formula box and the exports: a 3×3 window over 3 channels, whole
SHORT_TERMS = 12  # a one-line caption: under a still, on a slide, in the handout


@dataclass(frozen=True)
class Shown:
    """What a rendering cut at max_terms shows: the summands written out and the rest, summed.

    A summand is a term, or for a folded ∂L/∂x cell one padded copy's whole gradient.
    """

    visible: tuple[float, ...]  # the value of each summand written out
    hidden_count: int  # summands not written out
    hidden_sum: float  # what they add up to (stated in the formula when hidden_count > 0)
    constant: float  # the bias, written out when non-zero

    @property
    def total(self) -> float:
        """What the written formula adds up to: written summands + stated remainder + constant."""
        return float(sum(self.visible) + self.hidden_sum + self.constant)


@dataclass(frozen=True)
class Formula:
    """The terms whose sum is one cell; `value` is the engine's number for that cell.

    A ∂L/∂x cell whose padded copies send gradient back has `groups`: one Formula per padded cell
    that holds it (the cell itself first, then each copy), whose values sum to `value`. It is
    written grouped, ∂L/∂x₁₁ = ∂L/∂x̃₁₁ + ∂L/∂x̃₋₁,₋₁ + …, and each group expands to its taps.
    """

    target: Symbol
    terms: Sequence[Term]  # a tuple, or TermArrays for the long sums
    value: float
    constant: float = 0.0  # the bias, for a forward cell
    dropped: bool = False  # the cell itself is on the zero-padded ring: its gradient is dropped
    groups: tuple[Formula, ...] = ()  # the padded copies of a folded ∂L/∂x cell
    varying: frozenset[str] = frozenset()  # the layer's axes (n, c, k) with more than one entry

    def name(self, latex: bool = False) -> str:
        """The cell this sums to, with the tags of the axes that vary (e.g. y[n=1]₀₀)."""
        return self.target.latex(self.varying) if latex else self.target.text(self.varying)

    def said(self) -> str:
        """The cell as a sentence writes it: ∂L/∂x[2, 2] (`Symbol.said`)."""
        return self.target.said(self.varying)

    @property
    def total(self) -> float:
        return float(_values(self.terms).sum() + self.constant)

    @property
    def any_vanishing(self) -> bool:
        """Whether a term is structurally zero (a padded or an inserted zero)."""
        if isinstance(self.terms, TermArrays):
            return bool(self.terms.vanishing.any())
        return any(t.vanishes for t in self.terms)

    @property
    def nbytes(self) -> int:
        """Roughly the memory it holds (a Term object ~330 B, measured with tracemalloc)."""
        own = self.terms.nbytes if isinstance(self.terms, TermArrays) else 384 * len(self.terms)
        return own + 384 + sum(g.nbytes for g in self.groups)

    def _summands(self) -> np.ndarray:
        if self.groups:
            return np.array([g.value for g in self.groups], dtype=float)
        return _values(self.terms)

    def shown(self, max_terms: int = 30) -> Shown:
        """The summands `latex`/`text` write out with this max_terms, and the rest, summed."""
        values = self._summands()
        return Shown(
            tuple(values[:max_terms].tolist()),
            max(len(values) - max_terms, 0),
            float(values[max_terms:].sum()),
            self.constant,
        )

    def adds_up(self, max_terms: int = 30, rel: float = 1e-9) -> bool:
        """True if what is written (summands, the stated remainder, the constant) sums to `value`;
        for a grouped formula, also each copy's taps to that copy's value."""
        close = abs(self.shown(max_terms).total - self.value) <= rel * max(1.0, abs(self.value))
        return close and all(g.adds_up(max_terms, rel) for g in self.groups)

    def check(self, max_terms: int = 30) -> str:
        """One honest sentence: whether what is written adds up to the engine's value, and how."""
        return _plain(self._check(max_terms))

    def _check(self, max_terms: int) -> str:
        shown, value = self.shown(max_terms), _num(self.value, wrap=False)
        if not self.adds_up(max_terms):
            return (
                f"✗ the written terms add up to {_num(shown.total, wrap=False)}, "
                f"the engine says {value}"
            )
        what = "copies" if self.groups else "terms"
        if shown.hidden_count:
            return (
                f"✓ the {len(shown.visible)} {what} written out "
                f"(Σ = {_num(sum(shown.visible), wrap=False)}) and the {shown.hidden_count} "
                f"not written (Σ = {_num(shown.hidden_sum, wrap=False)}) add up to the "
                f"engine's value {value}"
            )
        if self.groups:
            return (
                f"✓ the cell's own ∂L/∂x̃ and its {len(self.groups) - 1} padded "
                f"cop{'y' if len(self.groups) == 2 else 'ies'} add up to the engine's value {value}"
            )
        return f"✓ the terms add up to the engine's value {value}"

    def _written(
        self, numeric: bool, max_terms: int, latex: bool, mark: Callable[[str], str] | None = None
    ) -> list[str]:
        """The written summands: terms (or a folded cell's copies), the rest's sum, the bias."""
        if self.groups:
            parts = [_num(g.value) if numeric else g.name(latex) for g in self.groups[:max_terms]]
        elif latex:
            parts = [_latex_term(t, numeric, self.varying, mark) for t in self.terms[:max_terms]]
        else:
            parts = [_text_term(t, numeric, self.varying) for t in self.terms[:max_terms]]
        shown = self.shown(max_terms)
        if shown.hidden_count:
            more = f"{shown.hidden_count} more {'copies' if self.groups else 'terms'}"
            more = rf"\text{{{more}}}" if latex else more
            parts.append(f"[{more} = {_num(shown.hidden_sum, wrap=False)}]")
        if self.constant:
            parts.append(_num(self.constant) if numeric else "b")
        return parts

    def latex(
        self,
        numeric: bool = False,
        max_terms: int = 30,
        per_line: int = 0,
        mark: Callable[[str], str] | None = None,
    ) -> str:
        """LaTeX of the sum; with per_line > 0, an aligned block of that many terms a line.

        Past max_terms summands the rest is written as one bracket saying what it adds up to.
        mark : wraps the LaTeX of each vanishing term (`Term.vanishes`), e.g. to grey it; how
            that looks is the renderer's choice. None writes it like every other term.
        """
        parts = self._written(numeric, max_terms, latex=True, mark=mark)
        if not parts:
            parts = ["0"]
        target, value = self.name(latex=True), _num(self.value, wrap=False)
        if per_line <= 0 or len(parts) <= per_line:
            return f"{target} = {' + '.join(parts)} = {value}"
        lines = [" + ".join(parts[i : i + per_line]) for i in range(0, len(parts), per_line)]
        rest = "".join(rf" \\ &\quad + {line}" for line in lines[1:])
        return rf"\begin{{aligned}} {target} &= {lines[0]}{rest} \\ &= {value} \end{{aligned}}"

    def vanishing_last(self) -> Formula:
        """The same sum with its structurally zero terms (padded or inserted zeros) last, so that
        a sum cut short writes the terms that count and states the zeros among the rest."""
        if self.groups:
            return self
        if isinstance(self.terms, TermArrays):  # a weight gradient's terms, as arrays
            order = np.argsort(self.terms.vanishing, kind="stable")
            return replace(self, terms=self.terms.reordered(order))
        return replace(self, terms=tuple(sorted(self.terms, key=lambda t: t.vanishes)))

    def words(self, max_terms: int = SHORT_TERMS) -> str:
        """The sum in words, as a screen reader says it after the cell's value: 'the sum of 4
        products: 1 times 6 plus 2 times 4 plus …'; past max_terms, 'and K more, adding up to S'
        (the terms that count first: `vanishing_last`). A folded ∂L/∂x cell is the sum of its
        own gradient and its padded copies'."""
        formula = self.vanishing_last()
        if self.groups:
            parts = [number(g.value) for g in self.groups[:max_terms]]
            copies = count(len(self.groups) - 1, "padded copy", "padded copies")
            head = f"the sum of its own gradient and its {copies}"
        else:
            parts = [f"{number(t.left_value)} times {number(t.right_value)}"
                     for t in formula.terms[:max_terms]]  # fmt: skip
            head = f"the sum of {count(len(self.terms), 'product')}"
            if not parts:
                head = "no product: no window reads it"
        said = f"{head}: {' plus '.join(parts)}" if parts else head
        shown = formula.shown(max_terms)
        if shown.hidden_count:
            said += f", and {shown.hidden_count} more, adding up to {number(shown.hidden_sum)}"
        if self.constant:
            said += f", plus the bias {number(self.constant)}"
        return said

    def text(self, numeric: bool = False, max_terms: int = 30) -> str:
        """Plain text of the sum; past max_terms, '[n more terms = s]' says what the rest is."""
        parts = self._written(numeric, max_terms, latex=False)
        body = " + ".join(parts) if parts else "0"
        return _plain(f"{self.name()} = {body} = {_num(self.value, wrap=False)}")


def _plain(text: str) -> str:
    """Plain text writes its minus signs as the grids do, '−' (LaTeX sets '-' as one itself)."""
    return text.replace("-", MINUS)


def _num(v: float, wrap: bool = True) -> str:
    """A number as written in a sum: whole numbers plain, negatives in parentheses if wrap."""
    s = number(v, minus="-")  # LaTeX sets "-" as a minus sign; non-finite are said, not crashed
    return f"({s})" if wrap and s.startswith("-") else s


def _latex_term(
    t: Term, numeric: bool, axes: Collection[str], mark: Callable[[str], str] | None
) -> str:
    body = (
        f"{_num(t.left_value)} \\cdot {_num(t.right_value)}"
        if numeric
        else f"{t.left.latex(axes)}\\,{t.right.latex(axes)}"
    )
    return mark(body) if mark is not None and t.vanishes else body


def _text_term(t: Term, numeric: bool, axes: Collection[str]) -> str:
    if numeric:
        return f"{_num(t.left_value)}·{_num(t.right_value)}"
    return f"{t.left.text(axes)}·{t.right.text(axes)}"


def _varying(spec: ConvSpec) -> frozenset[str]:
    """The axes with more than one entry (batch n, in c, out k): their tags are worth writing."""
    sizes = {"n": spec.batch, "c": spec.in_channels, "k": spec.out_channels}
    return frozenset(a for a, size in sizes.items() if size > 1)


def _tags(**axes: int) -> tuple[tuple[str, int], ...]:
    return tuple(axes.items())


def _x_symbols(spec: ConvSpec, n: int, c: int, pr: np.ndarray, pc: np.ndarray) -> tuple:
    """The input cells behind padded positions (pr, pc) (int arrays of one shape), flattened:
    ([each one's source Symbol, or '0'], [whether it is a cell the padding added])."""
    (pt, _), (pl, _) = spec.padding
    H, W = spec.in_size
    r = source_index(H, spec.padding[0], spec.padding_mode)[pr].ravel()
    q = source_index(W, spec.padding[1], spec.padding_mode)[pc].ravel()
    inside = (pt <= pr) & (pr < pt + H) & (pl <= pc) & (pc < pl + W)
    is_pad = (~inside.ravel() | (r < 0) | (q < 0)).tolist()
    zero, tags = Symbol("0"), _tags(n=n, c=c)
    sources = zip(r.tolist(), q.tolist())
    symbols = [zero if a < 0 or b < 0 else _cell("x", a, b, tags) for a, b in sources]
    return symbols, is_pad


@lru_cache(maxsize=1 << 16)
def _cell(name: str, row: int, col: int, tags: tuple) -> Symbol:
    """The Symbol of one cell, made once: a new layer's sums name the same cells again and
    again (overlapping windows), and a frozen dataclass is slow to make."""
    return Symbol(name, (row, col), tags)


def forward_formula(stages: ForwardArrays, n: int, k: int, i: int, j: int) -> Formula:
    """y[n, k, i, j] = Σ_c Σ_taps x_pad[n, c, i·s + a·d, j·s + b·d] · w[k, c, a, b] + bias[k]."""
    spec = stages.spec
    (sh, sw), (dh, dw), (kH, kW) = spec.stride, spec.dilation, spec.kernel_size
    a, b = np.divmod(np.arange(kH * kW), kW)  # the taps, row-major
    pr, pc = i * sh + a * dh, j * sw + b * dw  # the padded cells they meet
    terms = []
    for c in range(spec.in_channels):
        xs, pads = _x_symbols(spec, n, c, pr, pc)
        tags = _tags(k=k, c=c)
        ws = [_cell("w", ai, bi, tags) for ai, bi in zip(a.tolist(), b.tolist())]
        x_values = stages.x_padded[n, c, pr, pc].tolist()
        w_values = stages.w[k, c].ravel().tolist()
        terms += map(Term, xs, ws, x_values, w_values, pads)
    return Formula(
        Symbol("y", (i, j), _tags(n=n, k=k)),
        tuple(terms),
        float(stages.y[n, k, i, j]),
        constant=float(stages.bias[k]),
        varying=_varying(spec),
    )


def forward_words(stages: ForwardArrays, n: int, k: int, most: int = SHORT_TERMS) -> np.ndarray:
    """Every cell of y[n, k] in words, as `forward_formula(…).words(most)` says it, built for the
    whole grid at once: an (oH, oW) array of str. A new layer's output grid is said on every
    figure that draws it (the keyboard grid); a Formula a cell cost ~50 µs of Python."""
    spec = stages.spec
    (sh, sw), (dh, dw), (kH, kW) = spec.stride, spec.dilation, spec.kernel_size
    (oH, oW), channels = spec.out_size, spec.in_channels
    pr = np.arange(oH)[:, None] * sh + np.arange(kH)[None, :] * dh  # (oH, kH) padded rows
    pc = np.arange(oW)[:, None] * sw + np.arange(kW)[None, :] * dw  # (oW, kW) padded columns
    left = stages.x_padded[n][:, pr[:, None, :, None], pc[None, :, None, :]]  # (C, oH, oW, kH, kW)
    left = np.moveaxis(left, 0, 2).reshape(oH, oW, -1)  # terms: c, then taps
    # a term vanishes where its tap meets a zero the padding added (no source cell)
    rows = source_index(spec.in_size[0], spec.padding[0], spec.padding_mode)[pr] < 0
    cols = source_index(spec.in_size[1], spec.padding[1], spec.padding_mode)[pc] < 0
    zero = rows[:, None, :, None] | cols[None, :, None, :]  # (oH, oW, kH, kW)
    vanish = np.tile(zero.reshape(oH, oW, -1), (1, 1, channels))
    return _words_grid(left, stages.w[k].ravel(), vanish, most, float(stages.bias[k]))


def input_grad_words(
    stages: InputGradArrays, n: int, c: int, most: int = SHORT_TERMS, padded: bool = False
) -> np.ndarray:
    """Every cell of ∂L/∂x[n, c] (of ∂L/∂x̃ with padded) in words, as `input_grad_formula(…)
    .words(most)` says it, built for the whole grid at once. A cell whose padded copies fold
    back (a non-zero padding mode) is said by its own Formula: those are the border's few."""
    spec = stages.spec
    (dh, dw), (kH, kW) = spec.dilation, spec.kernel_size
    pH, pW = stages.pad_mask.shape
    gr = np.arange(pH)[:, None] + np.arange(kH)[None, :] * dh  # (pH, kH) rows of padded grad_out
    gc = np.arange(pW)[:, None] + np.arange(kW)[None, :] * dw
    taps = (gr[:, None, :, None], gc[None, :, None, :])
    left = stages.padded[n][(slice(None), *taps)]  # (K, pH, pW, kH, kW)
    left = np.moveaxis(left, 0, 2).reshape(pH, pW, -1)  # terms: k, then taps
    zero = (stages.padded_ring | stages.padded_dilation_mask)[taps].reshape(pH, pW, -1)
    vanish = np.tile(zero, (1, 1, spec.out_channels))
    said = _words_grid(left, stages.w_rot[c].ravel(), vanish, most, 0.0)
    if padded:
        return said
    (pt, pb), (pl, pright) = spec.padding
    H, W = spec.in_size
    said = said[pt : pt + H, pl : pl + W].copy()
    if spec.padding_mode != "zeros":  # the cells with copies on the ring: their own words
        src_r = source_index(H, (pt, pb), spec.padding_mode)
        src_c = source_index(W, (pl, pright), spec.padding_mode)
        rr, cc = np.nonzero(stages.pad_mask)
        for row, col in {(int(src_r[r]), int(src_c[q])) for r, q in zip(rr, cc)}:
            said[row, col] = input_grad_formula(stages, n, c, row, col).words(most)
    return said


def weight_grad_words(
    stages: WeightGradArrays, k: int, c: int, most: int = SHORT_TERMS
) -> np.ndarray:
    """Every cell of ∂L/∂w[k, c] in words, as `weight_grad_formula(…).words(most)` says it, built
    for the whole grid at once (a cell sums N·oH·oW products)."""
    spec = stages.spec
    (sh, sw), (dh, dw), (kH, kW) = spec.stride, spec.dilation, spec.kernel_size
    (oH, oW), (H, W) = spec.out_size, spec.in_size
    pr = np.arange(kH)[:, None] * dh + np.arange(oH)[None, :] * sh  # (kH, oH) padded rows
    pc = np.arange(kW)[:, None] * dw + np.arange(oW)[None, :] * sw
    left = stages.x_padded[:, c][:, pr[:, None, :, None], pc[None, :, None, :]]
    left = np.moveaxis(left, 0, 2).reshape(kH, kW, -1)  # (N, kH, kW, oH, oW) → terms: n, then i, j
    rows = source_index(H, spec.padding[0], spec.padding_mode)[pr] < 0
    cols = source_index(W, spec.padding[1], spec.padding_mode)[pc] < 0
    zero = (rows[:, None, :, None] | cols[None, :, None, :]).reshape(kH, kW, -1)
    vanish = np.tile(zero, (1, 1, spec.batch))
    return _words_grid(left, stages.grad_out[:, k].ravel(), vanish, most, 0.0)


def grid_words(layer: Layer, kind: str, n: int, k: int, c: int, most: int) -> np.ndarray | None:
    """Every cell of the sum grid `kind` ("y", "grad_x", "grad_x_padded", "grad_w") of slice
    (n, k, c) in words, as each cell's `Formula.words(most)`; None for an operand's grid."""
    if kind == "y":
        return forward_words(layer.forward, n, k, most)
    if kind in ("grad_x", "grad_x_padded"):
        return input_grad_words(layer.input_grad, n, c, most, kind == "grad_x_padded")
    if kind == "grad_w":
        return weight_grad_words(layer.weight_grad, k, c, most)
    return None


def _words_grid(
    left: np.ndarray, right: np.ndarray, vanish: np.ndarray, most: int, constant: float
) -> np.ndarray:
    """`Formula.words(most)` of each cell of a grid whose terms are left[i, j, t] · right[t]
    (vanish[i, j, t]: structurally zero), one str a cell; each distinct number written once."""
    left = np.asarray(left, dtype=float)
    right = np.broadcast_to(np.asarray(right, dtype=float), left.shape)
    order = np.argsort(vanish, axis=-1, kind="stable")  # the terms that count first
    left, right = np.take_along_axis(left, order, -1), np.take_along_axis(right, order, -1)
    terms = left.shape[-1]
    shown = min(most, terms)
    out = np.empty(left.shape[:2], dtype=object)
    if shown:
        texts = _texts(np.stack([left[..., :shown], right[..., :shown]]))
        products = (texts[0] + " times " + texts[1]).reshape(-1, shown).tolist()
        head = f"the sum of {count(terms, 'product')}: "
        out.ravel()[:] = [head + " plus ".join(cell) for cell in products]
    else:
        out[...] = "no product: no window reads it"
    if terms > shown:
        rest = (left[..., shown:] * right[..., shown:]).sum(axis=-1)
        out += f", and {terms - shown} more, adding up to " + _texts(rest)
    if constant:
        out += f", plus the bias {number(constant)}"
    return out


def _texts(values: np.ndarray) -> np.ndarray:
    """Each value written by `number`, as an object array shaped like `values`: each distinct
    number written once."""
    distinct, at = np.unique(values, return_inverse=True)
    return np.array([number(v) for v in distinct.tolist()], dtype=object)[at.reshape(values.shape)]


def _full_corr_terms(stages: InputGradArrays, n: int, c: int, pr: int, pc: int, **flags):
    """Terms of the full correlation at padded-input cell (pr, pc), in the seeds' notation."""
    spec = stages.spec
    (dh, dw), (kH, kW), (sh, sw) = spec.dilation, spec.kernel_size, spec.stride
    (gt, _), (gl, _) = spec.full_padding
    terms = []
    for k in range(spec.out_channels):
        for a in range(kH):
            for b in range(kW):
                gr, gc = pr + a * dh, pc + b * dw  # cell of the padded, dilated grad_out
                on_ring = bool(stages.padded_ring[gr, gc])
                is_zero = on_ring or bool(stages.padded_dilation_mask[gr, gc])
                left = (
                    Symbol("0")
                    if is_zero
                    else Symbol("dy", ((gr - gt) // sh, (gc - gl) // sw), _tags(n=n, k=k))
                )
                # the rotated tap (a, b) is the original tap (kH-1-a, kW-1-b): the flip shows here
                right = Symbol("w", (kH - 1 - a, kW - 1 - b), _tags(k=k, c=c))
                terms.append(
                    Term(
                        left,
                        right,
                        float(stages.padded[n, k, gr, gc]),
                        float(stages.w_rot[c, k, a, b]),
                        padding=on_ring,
                        dilation=is_zero and not on_ring,
                        **flags,
                    )
                )
    return terms


def _padded_cell_formula(
    stages: InputGradArrays, n: int, c: int, pr: int, pc: int, **flags
) -> Formula:
    """∂L/∂x̃ at padded cell (pr, pc): its taps of the full correlation. x̃ is indexed like x
    (the panels' axes), so the ring has negative indices: x̃₋₁,₋₁ is the top-left corner."""
    spec = stages.spec
    (pt, _), (pl, _) = spec.padding
    return Formula(
        Symbol("dxp", (pr - pt, pc - pl), _tags(n=n, c=c)),
        tuple(_full_corr_terms(stages, n, c, pr, pc, **flags)),
        float(stages.grad_x_padded[n, c, pr, pc]),
        dropped=bool(flags.get("dropped", False)),
        varying=_varying(spec),
    )


def input_grad_formula(
    stages: InputGradArrays, n: int, c: int, row: int, col: int, padded: bool = False
) -> Formula:
    """∂L/∂x[n, c, row, col] by the textbook route (ring copies folded back for non-zero modes).

    With padded=True, (row, col) is a cell of the padded input (array index) and the formula is
    that of grad_x_padded, flagged `dropped` when the mask throws it away. A cell whose padded
    copies fold back gets `groups`: its own ∂L/∂x̃ and each copy's, which add up to ∂L/∂x.
    """
    spec = stages.spec
    (pt, pb), (pl, pright) = spec.padding
    if padded:
        dropped = bool(stages.pad_mask[row, col]) and spec.padding_mode == "zeros"
        return _padded_cell_formula(stages, n, c, row, col, dropped=dropped)
    src_r = source_index(spec.in_size[0], (pt, pb), spec.padding_mode)
    src_c = source_index(spec.in_size[1], (pl, pright), spec.padding_mode)
    groups = [_padded_cell_formula(stages, n, c, row + pt, col + pl)]
    for cr in np.flatnonzero(src_r == row):  # every padded copy of this cell sends its gradient
        for cc in np.flatnonzero(src_c == col):  # home, in row-major order of the padded grid
            if stages.pad_mask[cr, cc]:
                groups.append(_padded_cell_formula(stages, n, c, int(cr), int(cc), folded=True))
    terms = tuple(t for g in groups for t in g.terms)
    target = Symbol("dx", (row, col), _tags(n=n, c=c))
    value = float(stages.grad_x[n, c, row, col])
    groups = tuple(groups) if len(groups) > 1 else ()
    return Formula(target, terms, value, groups=groups, varying=_varying(spec))


def weight_grad_formula(stages: WeightGradArrays, k: int, c: int, a: int, b: int) -> Formula:
    """∂L/∂w[k, c, a, b] = Σ_n Σ_i Σ_j x_pad[n, c, i·s + a·d, j·s + b·d] · ∂L/∂y[n, k, i, j]."""
    spec = stages.spec
    (sh, sw), (dh, dw), (oH, oW) = spec.stride, spec.dilation, spec.out_size
    (pt, _), (pl, _) = spec.padding
    H, W = spec.in_size
    i, j = np.divmod(np.arange(oH * oW), oW)  # the ∂L/∂y cells, row-major
    pr, pc = i * sh + a * dh, j * sw + b * dw  # the padded cells tap (a, b) met there
    r = source_index(H, spec.padding[0], spec.padding_mode)[pr]  # the input cell behind each
    q = source_index(W, spec.padding[1], spec.padding_mode)[pc]
    inside = (pt <= pr) & (pr < pt + H) & (pl <= pc) & (pc < pl + W)
    zero = (r < 0) | (q < 0)
    source = np.where(zero[:, None], -1, np.stack([r, q], axis=1))
    batch = spec.batch
    terms = TermArrays(
        "x",
        "dy",
        left_index=np.tile(source, (batch, 1)),
        right_index=np.tile(np.stack([i, j], axis=1), (batch, 1)),
        group=np.repeat(np.arange(batch), oH * oW),
        left_tags=tuple(_tags(n=n, c=c) for n in range(batch)),
        right_tags=tuple(_tags(n=n, k=k) for n in range(batch)),
        left_values=np.asarray(stages.x_padded[:, c, pr, pc], dtype=float).ravel(),
        right_values=np.asarray(stages.grad_out[:, k], dtype=float).ravel(),
        padding=np.tile(~inside | zero, batch),
    )
    target = Symbol("dw", (a, b), _tags(k=k, c=c))
    return Formula(target, terms, float(stages.grad_w[k, c, a, b]), varying=_varying(spec))

"""The terms of a cell's sum: the operand cells they name, the reasons they vanish or move.

A term is (operand cell) × (kernel cell): a `Term` of two `Symbol`s (a cell of x, x̃, w, y or
their gradients, with its slice's tags) and their values, flagged when it is a zero that dilation
inserted, a cell that padding added, or gradient that the mask drops or folds back onto the cell a
padded copy came from. A long sum keeps its terms as arrays (`TermArrays`), a Term made only when
one is read. `convviz.engine.formulas` sums and writes them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

import numpy as np

_SUB = str.maketrans("0123456789-", "₀₁₂₃₄₅₆₇₈₉₋")


@dataclass(frozen=True, slots=True)  # a ∂L/∂w cell can have ~10⁵ terms: small objects
class Symbol:
    """One named operand cell, e.g. x with tags (n, c) and index (row, col); name '0' = a zero."""

    name: str  # "x", "xp", "w", "y", the same with a leading "d" for ∂L/∂(·), or "0"
    index: tuple[int, ...] = ()
    tags: tuple[tuple[str, int], ...] = ()  # its slice, e.g. (("n", 0), ("c", 1))

    def latex(self, axes: Collection[str] = ()) -> str:
        """LaTeX of the cell, with the tags of `axes` (say, those that vary in the layer)."""
        if self.name == "0":
            return "0"
        plain, tags = self.name.removeprefix("d"), self._shown(axes)
        tag = f"^{{({','.join(f'{k}={v}' for k, v in tags)})}}" if tags else ""
        cell = _LATEX_BASE[plain] + tag + f"_{{{_join(self.index)}}}"
        return rf"\frac{{\partial L}}{{\partial {cell}}}" if self.name.startswith("d") else cell

    def text(self, axes: Collection[str] = ()) -> str:
        """Plain text of the cell, with the tags of `axes`."""
        if self.name == "0":
            return "0"
        plain, tags = self.name.removeprefix("d"), self._shown(axes)
        tag = f"[{', '.join(f'{k}={v}' for k, v in tags)}]" if tags else ""  # a slice
        cell = _TEXT_BASE[plain] + tag + _join(self.index).translate(_SUB)
        return f"∂L/∂{cell}" if self.name.startswith("d") else cell

    def said(self, axes: Collection[str] = ()) -> str:
        """The cell as a sentence writes it, its indices in brackets: ∂L/∂x[2, 2] (a subscript's
        digits run together, ₂₂)."""
        sub = self.text(axes).removesuffix(_join(self.index).translate(_SUB))
        return f"{sub}[{', '.join(map(str, self.index))}]" if self.index else sub

    def _shown(self, axes: Collection[str]) -> tuple[tuple[str, int], ...]:
        return tuple((a, v) for a, v in self.tags if a in axes)


# "xp" is the padded input x̃; a leading "d" makes a symbol the loss gradient ∂L/∂(·).
_LATEX_BASE = {"x": "x", "xp": r"\tilde{x}", "w": "w", "y": "y"}
_TEXT_BASE = {"x": "x", "xp": "x̃", "w": "w", "y": "y"}


def _join(index: tuple[int, ...]) -> str:
    return ("," if any(i > 9 or i < 0 for i in index) else "").join(str(i) for i in index)


@dataclass(frozen=True, slots=True)
class Term:
    """left · right, with the reasons it may be zero or be moved."""

    left: Symbol
    right: Symbol
    left_value: float
    right_value: float
    padding: bool = False  # left is a cell the padding added
    dilation: bool = False  # left is a zero the dilation inserted
    dropped: bool = False  # lands on a zero-padded cell: the mask drops it
    folded: bool = False  # lands on a padded copy: the mask adds it back onto its source

    @property
    def value(self) -> float:
        return self.left_value * self.right_value

    @property
    def vanishes(self) -> bool:
        """True if the term is structurally zero (a padded zero or a dilation zero)."""
        return self.dilation or (self.padding and self.left.name == "0")


_TERM_ARRAYS = ("left_index", "right_index", "group", "left_values", "right_values", "padding")


@dataclass(frozen=True, eq=False)
class TermArrays(Sequence):
    """Terms kept as arrays, one entry a term; a Term is made only when one is read.

    A ∂L/∂w cell of a big batch sums ~10⁵ terms, of which a formula writes out ~30: building every
    Term took most of a rerun. Symbols: `left_name` at `left_index` (a row of -1 is the zero a
    padded cell holds), `right_name` at `right_index`; their tags are `left_tags[group]` and
    `right_tags[group]` (e.g. the sample n of each term).
    """

    left_name: str
    right_name: str
    left_index: np.ndarray  # (T, 2) ints
    right_index: np.ndarray  # (T, 2) ints
    group: np.ndarray  # (T,) ints into the tags
    left_tags: tuple[tuple[tuple[str, int], ...], ...]
    right_tags: tuple[tuple[tuple[str, int], ...], ...]
    left_values: np.ndarray  # (T,) floats
    right_values: np.ndarray  # (T,) floats
    padding: np.ndarray  # (T,) bools: left is a cell the padding added

    def __len__(self) -> int:
        return len(self.left_values)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        (r, q), g = self.left_index[i].tolist(), int(self.group[i])
        left = Symbol("0") if r < 0 else Symbol(self.left_name, (r, q), self.left_tags[g])
        right = Symbol(self.right_name, tuple(self.right_index[i].tolist()), self.right_tags[g])
        lv, rv = float(self.left_values[i]), float(self.right_values[i])
        return Term(left, right, lv, rv, padding=bool(self.padding[i]))

    def __eq__(self, other) -> bool:
        if not isinstance(other, TermArrays):
            return NotImplemented
        same = all(np.array_equal(getattr(self, f), getattr(other, f)) for f in _TERM_ARRAYS)
        names = ("left_name", "right_name", "left_tags", "right_tags")
        return same and all(getattr(self, f) == getattr(other, f) for f in names)

    __hash__ = None

    @property
    def values(self) -> np.ndarray:
        return self.left_values * self.right_values

    @property
    def vanishing(self) -> np.ndarray:
        """Structurally zero terms: the zeros the padding added (these terms have no dilation)."""
        return self.padding & (self.left_index[:, 0] < 0)

    def reordered(self, order: np.ndarray) -> TermArrays:
        """The same terms in `order` (indices into them)."""
        return replace(self, **{f: getattr(self, f)[order] for f in _TERM_ARRAYS})

    @property
    def nbytes(self) -> int:
        arrays = (self.left_index, self.right_index, self.group, self.left_values)
        return sum(a.nbytes for a in arrays) + self.right_values.nbytes + self.padding.nbytes

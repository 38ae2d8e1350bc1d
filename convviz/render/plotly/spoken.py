"""A figure in words: what it is (its short text alternative), what its cells' sums are (for the
keyboard grid) and what each frame of its animation does (for the announcer).

The browser builds its sentences from these (convviz/player/grid.js and player.js): a cell's
name, number and role come with its click marker (`grids.cell_meta`); here its sum in words
(`say_sums`), a frame's deed (`window_says`, `motion_says`) and the figure's alternative
(`figure_alt`). Every number is the engine's, written by its one rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from convviz.engine.formulas import SHORT_TERMS, Formula
from convviz.engine.spec import ConvSpec
from convviz.engine.sweeps import Sweep
from convviz.engine.text import number
from convviz.render.panel import Panel
from convviz.render.plotly.adapter import Figure

# The grids whose cells are sums (the other grids hold values): (kind, (row, col)) → Formula
SUM_KINDS = ("y", "grad_x", "grad_x_padded", "grad_w")
FormulaOf = Callable[[str, tuple[int, int]], Formula | None]


@dataclass(frozen=True)
class Sums:
    """The sums of one layer's cells: its spec (what saying a cell costs), each cell's formula
    ((kind, (row, col)) in the grid's array indices → Formula) and, where the layer has it, a
    whole grid in words at once ((kind, most) → an array of the cells' `Formula.words(most)`, or
    None: that kind is said cell by cell)."""

    spec: ConvSpec
    formula: FormulaOf
    words: Callable[[str, int], np.ndarray | None] | None = None


# A figure's sums are said while the terms of all its said cells stay below this (building the
# formulas is the cost; a layer past it is said cell by cell in its formula box, after Enter)
SAID_TERMS = 20_000
_TAG = re.compile(r"<[^>]+>")


def figure_alt(fig) -> str:
    """What a figure shows, in words: its title and each grid's header (name, size, what its
    colours mean). Built from the figure's own layout, once per figure (kept on it)."""
    kept = fig.__dict__.get("_convviz_alt")
    if kept is not None:
        return kept
    layout = getattr(fig, "layout_dict", None)  # plotly_adapter.Figure: plain dicts
    if layout is None:
        layout = fig.layout.to_plotly_json()
    title = (layout.get("title") or {}).get("text", "")
    heads = [a.get("text", "") for a in layout.get("annotations", []) if a.get("xref") != "paper"]
    words = [_TAG.sub(" ", t).replace("■", "").split() for t in (title, *heads)]
    text = "; ".join(" ".join(w) for w in words if w)
    fig._convviz_alt = text = f"Figure of grids: {text}." if text else "Figure of grids."
    return text


def terms_per_cell(spec: ConvSpec, kind: str) -> int:
    """How many terms one cell of a sum grid adds up (at most): what saying it costs."""
    (kh, kw), (oh, ow) = spec.kernel_size, spec.out_size
    if kind == "y":
        return spec.in_channels * kh * kw
    if kind == "grad_w":
        return spec.batch * oh * ow
    return spec.out_channels * kh * kw  # ∂L/∂x, ∂L/∂x̃


def say_sums(fig: Figure, sums: Sums, most: int = SHORT_TERMS) -> Figure:
    """Each clickable cell of a sum grid gets its sum in words (`Formula.words`, at most `most`
    terms) in its click markers' meta ("sums", one per cell, "" for none), while the figure's
    cells' terms stay within SAID_TERMS. Once per figure (a shared figure is said once)."""
    if fig.__dict__.get("_convviz_said"):
        return fig
    fig._convviz_said = True
    budget = SAID_TERMS
    for trace in fig.traces:
        grid = (trace.get("meta") or {}).get("grid")
        if grid is None:
            continue
        cells = [(str(k), int(r), int(c)) for k, r, c in trace["customdata"]]
        cost = sum(terms_per_cell(sums.spec, k) for k, _, _ in cells if k in SUM_KINDS)
        if not cost or cost > budget:
            continue
        budget -= cost
        grids = {k: sums.words(k, most) if sums.words else None for k in {k for k, _, _ in cells}}
        said = [
            grids[k][r, c] if grids[k] is not None else _said(sums.formula, k, (r, c), most)
            for k, r, c in cells
        ]
        if any(said):
            grid["sums"] = said
    return fig


def _said(sums: FormulaOf, kind: str, cell: tuple[int, int], most: int) -> str:
    formula = sums(kind, cell) if kind in SUM_KINDS else None
    return formula.words(most) if formula is not None else ""


def _span(first: int, last: int, one: str, many: str) -> str:
    if first == last:
        return f"{one} {number(first)}"
    return f"{many} {number(first)}–{number(last)}"


def window_says(sweep: Sweep, steps: Sequence[int], operand: Panel, name: str) -> list[str]:
    """Per frame of a sliding window (its steps), what it does: 'the window over rows 2–4,
    columns 0–2 computes y[1, 0] = 26' (rows and columns as the operand's axes label them)."""
    (oy, ox), said = operand.origin, []
    for t in steps:
        rows, cols = sweep.rows[t] + oy, sweep.cols[t] + ox
        r, c = sweep.targets[t]
        where = (f"{_span(rows.min(), rows.max(), 'row', 'rows')}, "
                 f"{_span(cols.min(), cols.max(), 'column', 'columns')}")  # fmt: skip
        said.append(f"the window over {where} computes {name}[{r}, {c}] = "
                    f"{number(sweep.sums[t])}")  # fmt: skip
    return said


def motion_says(meta: dict, formula_of: Callable[[tuple], Formula] | None) -> list[str]:
    """Per frame of a motion (its `player_meta`), what its keyframe does: the scene's words,
    and the cell whose sum it computes with its value; '' for the frames on the way."""
    keys, said = set(meta.get("keys") or range(len(meta["names"]))), []
    cells = meta.get("cells") or [None] * len(meta["captions"])  # a figure of its own: no cells
    for i, (caption, cell) in enumerate(zip(meta["captions"], cells)):
        if i not in keys:
            said.append("")
            continue
        words = " ".join(caption)
        if cell and formula_of is not None:
            formula = formula_of(tuple(cell))
            words += f" It computes {formula.said()} = {number(formula.value)}."
        said.append(words)
    return said


def value_range(panel: Panel) -> tuple[float, float] | None:
    """The smallest and largest number a grid holds (None when it holds none)."""
    values = np.asarray(panel.values, dtype=float)
    values = values[np.isfinite(values)]
    return (float(values.min()), float(values.max())) if values.size else None

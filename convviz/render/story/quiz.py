"""What a quiz question gives the student: the operands, never the answer; after a wrong answer,
the cells that matter to it outlined."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from convviz.engine.arrays import Layer
from convviz.model.quiz import Lit, padding_words
from convviz.render.panel import Panel
from convviz.render.plotly.adapter import Figure
from convviz.render.plotly.grid_figure import panels_figure, panels_layout
from convviz.render.selection import tap_grid
from convviz.render.theme import Theme

# the slice axis a sum question adds over (beside the taps): ∂L/∂x over the filters, an output
# cell over the input channels, ∂L/∂w over the batch
SUMMED = {"grad_x": "k", "y": "c", "grad_w": "n", "bias": "n"}
LIT_WORDS = "the cells that matter (hint)"  # the legend's words for the outlined cells


def given_rows(
    lay: Layer, n: int, k: int, c: int, kind: str, lit: Sequence[Lit] = ()
) -> list[list[Panel]]:
    """The grids a question of `kind` is worked from, a row per slice it adds over: w[k, c] and
    ∂L/∂y[n, k] of every filter k for a cell of ∂L/∂x, x[n, c] and w[k, c] of every channel c for
    an output cell, x[n, c] and ∂L/∂y[n, k] of every sample n for ∂L/∂w (and ∂L/∂b); for the
    others (and when that axis has one slice) x[n, c], w[k, c] and ∂L/∂y[n, k] in one row.
    lit : the cells outlined (each Lit in the slices its tags agree with)."""
    spec = lay.forward.spec
    size = {"n": spec.batch, "c": spec.in_channels, "k": spec.out_channels}
    axis = SUMMED.get(kind)
    if axis is None or size[axis] == 1:
        return [_lit(given_panels(lay, n, k, c), {"n": n, "k": k, "c": c}, lit)]
    rows = []
    for i in range(size[axis]):
        at = {"n": n, "k": k, "c": c, axis: i}
        x, w, g = _lit(given_panels(lay, **at), at, lit)
        rows.append({"k": [w, g], "c": [x, w], "n": [x, g]}[axis])
    return rows


def _lit(panels: list[Panel], at: dict[str, int], lit: Sequence[Lit]) -> list[Panel]:
    """The panels of slice `at` with the cells of the Lits that apply to them outlined."""
    out = []
    for p in panels:
        masks = [x.mask for x in lit if x.applies(p.key, at) and x.mask.shape == p.shape]
        out.append(replace(p, highlight=np.logical_or.reduce(masks)) if masks else p)
    return out


def given_panels(lay: Layer, n: int, k: int, c: int) -> list[Panel]:
    """x[n, c] (unpadded), w[k, c] in its tap colours, and ∂L/∂y[n, k]: the slice's operands,
    and none of the numbers asked for."""
    fw, g = lay.forward, lay.input_grad.grad_out
    spec = fw.spec
    pad = padding_words(spec)
    tags = spec.batch > 1 or spec.in_channels > 1 or spec.out_channels > 1
    return [
        Panel(fw.x[n, c], f"x[n={n}, c={c}]" if tags else "x", "x", subtitle=pad),
        Panel(
            fw.w[k, c],
            f"w[k={k}, c={c}]" if tags else "w",
            "w",
            taps=tap_grid(*spec.kernel_size),
            subtitle=f"stride {spec.stride[0]}×{spec.stride[1]}, "
            f"dilation {spec.dilation[0]}×{spec.dilation[1]}",
        ),
        Panel(g[n, k], f"∂L/∂y[n={n}, k={k}]" if tags else "∂L/∂y", "g"),
    ]


def given_figures(rows: list[list[Panel]], theme: Theme) -> list[Figure]:
    """The given grids in lines, a figure each: as many rows side by side in a line as give the
    biggest cells (of equal cells, the most: the fewest lines to read); the lines' cells are
    alike.

    On a projector every line fits its one screen, each taking its share of the height; a
    laptop's page scrolls, so a line keeps the whole height. Subtitles (padding, stride: the
    same for every slice) are said once, by the first slice's grids.
    """
    said = [rows[0], *([replace(p, subtitle=None) for p in row] for row in rows[1:])]
    best = None
    for across in range(1, len(rows) + 1):
        starts = range(0, len(rows), across)
        lines = [[p for row in said[i : i + across] for p in row] for i in starts]
        tall = theme.figure_h if theme.show_secondary else theme.figure_h // len(lines)
        tile = replace(theme, figure_h=tall)
        cells = [panels_layout(line, tile)[1].cells for line in lines]
        least = min(min(c) for c in cells)
        if best is None or least >= best[0]:
            # one size for every line, unless small grids beside big ones have cells of their own
            alike = len(lines) > 1 and all(len(set(c)) == 1 for c in cells)
            best = (least, lines, replace(tile, cell_px=least) if alike else tile)
    _, lines, tile = best
    return [panels_figure(line, tile, highlight=LIT_WORDS) for line in lines]

"""Panels of the matrix page: M, Mᵀ, im2col and the grids they link, from a `MatrixSlice`.

Matrices are Panels like every other grid, so their nonzeros wear the kernel taps' colours
(`theme.tap_colors`, as on the other pages) and a click on an entry returns (key, row, col).
Structural zeros are drawn blank (NaN), so the sparsity pattern reads at a glance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convviz.engine.arrays import InputGradArrays
from convviz.engine.matrix import SEVERAL, MatrixSlice
from convviz.render.panel import Panel
from convviz.render.selection import tap_grid

# the page's three parts, one tab each: the forward product, its transpose, im2col
SECTIONS = ("1 · forward: y = M·x", "2 · backward: ∂L/∂x = Mᵀ·∂L/∂y", "3 · im2col: patches as rows")


@dataclass(frozen=True)
class Link:
    """What a selected entry ties together: an output cell, an input cell, a kernel tap."""

    out: int | None = None  # flat output cell i·oW + j
    inp: int | None = None  # flat input cell r·W + q
    tap: int | None = None  # a·kW + b

    def words(self, ms: MatrixSlice) -> str:
        """A sentence naming the linked cells with their labels."""
        W, oW, kW = ms.spec.in_size[1], ms.spec.out_size[1], ms.spec.kernel_size[1]
        parts = []
        if self.out is not None:
            parts.append(f"output y[{self.out // oW}, {self.out % oW}]")
        if self.inp is not None:
            parts.append(f"input x[{self.inp // W}, {self.inp % W}]")
        if self.tap is not None:
            parts.append(f"tap w[{self.tap // kW}, {self.tap % kW}]")
        elif self.out is not None and self.inp is not None:
            entry = int(ms.taps[self.out, self.inp])
            parts.append(
                "several taps, added up (the window reads this cell and a padded copy of it)"
                if entry == SEVERAL
                else "no tap: this window does not read that input cell (a zero of M)"
            )
        return ", ".join(parts)


# A product panel draws  (top vector) over (matrix), and the result column at its right:
#   row 0: the vector the matrix multiplies, one entry above each column;  row 1: blank
#   rows 2…: the matrix;  column C: blank;  column C + 1: the result, beside each row.
TOP, GAP = 2, 1
# which cell each product's top vector, rows, columns and result vector stand for
ROLES = {
    "M": ("inp", "out", "inp", "out"),  # top, matrix row, matrix column, right
    "Mt": ("out", "inp", "out", "inp"),
    "P": ("tap", "out", "tap", "out"),
    "Pt": ("out", "tap", "out", "tap"),
}


def _matrix_of(ms: MatrixSlice, key: str) -> np.ndarray:
    return {"M": ms.M, "Mt": ms.M.T, "P": ms.patches, "Pt": ms.patches.T}[key]


def link_of(ms: MatrixSlice, key: str, row: int, col: int) -> Link | None:
    """The cells an entry of panel `key` links (array indices of the panel as drawn);
    None for a blank cell or an entry outside this slice's panels (left from another layer)."""
    (H, W), (oH, oW), (kH, kW) = ms.spec.in_size, ms.spec.out_size, ms.spec.kernel_size
    grids = {"x": (H, W), "y": (oH, oW), "w": (kH, kW)}
    if key in grids:
        h, w = grids[key]
        if not (0 <= row < h and 0 <= col < w):
            return None
        role = {"x": "inp", "y": "out", "w": "tap"}[key]
        return Link(**{role: row * w + col})
    if key not in ROLES:
        return None
    R, C = _matrix_of(ms, key).shape
    top, rows, cols, right = ROLES[key]
    if row == 0 and 0 <= col < C:
        return Link(**{top: col})
    if col == C + GAP and TOP <= row < TOP + R:
        return Link(**{right: row - TOP})
    if not (TOP <= row < TOP + R and 0 <= col < C):
        return None
    found = {rows: row - TOP, cols: col}
    if key in ("M", "Mt"):
        tap = int(ms.taps[found["out"], found["inp"]])
        return Link(found["out"], found["inp"], tap if tap >= 0 else None)
    src = int(ms.sources[found["out"], found["tap"]])
    return Link(found["out"], src if src >= 0 else None, found["tap"])


def app_selection(ms: MatrixSlice, link: Link | None) -> tuple[str, int, int] | None:
    """The other pages' selection for a link: its output cell, else its input cell (in the
    padded-array indices of their x), else None (a tap alone is no cell of theirs)."""
    spec = ms.spec
    if link is None:
        return None
    if link.out is not None:
        return ("y", *divmod(link.out, spec.out_size[1]))
    if link.inp is not None:
        return ("x", *spec.padded_index(divmod(link.inp, spec.in_size[1])))
    return None


def page_cell(ms: MatrixSlice, selection: tuple[str, int, int]) -> tuple[str, int, int] | None:
    """This page's grid cell for the other pages' selection: an output, an input cell (x̃'s
    padding ring has none here), or a tap of ∂L/∂w."""
    key, r, c = selection
    if key in ("x", "grad_x_padded"):
        r, c = ms.spec.padded_label((r, c))
        key = "grad_x"
    inside = {"y": ms.spec.out_size, "grad_x": ms.spec.in_size, "grad_w": ms.spec.kernel_size}
    if key not in inside or not (0 <= r < inside[key][0] and 0 <= c < inside[key][1]):
        return None
    return {"y": "y", "grad_x": "x", "grad_w": "w"}[key], r, c


def _blank_zeros(m: np.ndarray, taps: np.ndarray) -> np.ndarray:
    """Entries no tap reaches drawn blank (NaN); a tap's zero weight still shows as 0."""
    return np.where(taps == -1, np.nan, m)


def _several_note(ms: MatrixSlice) -> str:
    if (ms.taps == SEVERAL).any():
        return " · plain colour: taps add up there (a cell and its padded copy)"
    return ""


def product_panel(ms: MatrixSlice, key: str, link: Link, title: str, subtitle: str) -> Panel:
    """(top vector) over (matrix) = (right column), with tap colours and the link lit."""
    m = _matrix_of(ms, key)
    R, C = m.shape
    top_role, row_role, col_role, right_role = ROLES[key]
    vectors = {
        "M": (ms.x, ms.y_part),
        "Mt": (ms.grad_out, ms.grad_x_part),
        "P": (ms.w, ms.y_part),
        "Pt": (ms.grad_out, ms.grad_w_part),
    }[key]
    if key in ("M", "Mt"):
        taps = ms.taps if key == "M" else ms.taps.T
        body, pad = _blank_zeros(m, taps), np.zeros(m.shape, dtype=bool)
        tap_ids = np.where(taps >= 0, taps, -1)
    else:
        pad = ms.sources < 0 if key == "P" else (ms.sources < 0).T
        body = m
        kk = ms.patches.shape[1]
        ids = np.arange(kk)[None, :] if key == "P" else np.arange(kk)[:, None]
        tap_ids = np.where(pad, -1, np.broadcast_to(ids, m.shape))
        taps = tap_ids
    shape = (R + TOP, C + 1 + GAP)
    values = np.full(shape, np.nan)
    values[0, :C] = vectors[0]
    values[TOP:, :C] = body
    values[TOP:, C + GAP] = vectors[1]
    full_taps = np.full(shape, -1)
    full_taps[TOP:, :C] = tap_ids
    full_pad = np.zeros(shape, dtype=bool)
    full_pad[TOP:, :C] = pad
    high = np.zeros(shape, dtype=bool)
    selected = None
    at = {"out": link.out, "inp": link.inp, "tap": link.tap}
    r, c = at[row_role], at[col_role]
    if r is not None and c is not None:
        selected = (TOP + r, c)
    elif r is not None:  # the whole row: what makes this result entry
        high[TOP + r, :C] = taps[r] != -1
    elif c is not None:  # the whole column: where this top entry goes
        high[TOP:, c] = taps[:, c] != -1
    if at[top_role] is not None:
        high[0, at[top_role]] = True
    if at[right_role] is not None:
        high[TOP + at[right_role], C + GAP] = True
    return Panel(
        values,
        title,
        key,
        pad_mask=full_pad,
        taps=full_taps,
        highlight=high,
        selected=selected,
        origin=(-TOP, 0),
        subtitle=subtitle,
        indexed=(R, C),  # the vector above and the result beside it are named in the subtitle
    )


def matrix_panel(ms: MatrixSlice, link: Link) -> Panel:
    """vec(x) over M, y beside it: the forward pass as one matrix product."""
    (oH, oW), (H, W) = ms.spec.out_size, ms.spec.in_size
    share = ": channel c's share" if ms.spec.in_channels > 1 else ""
    return product_panel(
        ms,
        "M",
        link,
        f"M · vec(x) = vec(y){share}",  # in the title: a projector may drop subtitle clauses
        f"M is {oH * oW}×{H * W} · a row per output cell, a column per input cell · top row: "
        f"vec(x), right column: y{_several_note(ms)}",
    )


def transpose_panel(ms: MatrixSlice, link: Link) -> Panel:
    """vec(∂L/∂y) over Mᵀ, ∂L/∂x beside it: the same entries, read down the columns."""
    (oH, oW), (H, W) = ms.spec.out_size, ms.spec.in_size
    share = ": filter k's share" if ms.spec.out_channels > 1 else ""
    return product_panel(
        ms,
        "Mt",
        link,
        f"Mᵀ · vec(∂L/∂y) = vec(∂L/∂x){share}",
        f"Mᵀ is {H * W}×{oH * oW} · a row per input cell · top row: vec(∂L/∂y), right column: "
        "∂L/∂x",
    )


def im2col_panel(ms: MatrixSlice, link: Link) -> Panel:
    """vec(w) over the patches, y beside them: each row is one window of the padded input."""
    (oH, oW), (kH, kW) = ms.spec.out_size, ms.spec.kernel_size
    share = ": channel c's share" if ms.spec.in_channels > 1 else ""
    return product_panel(
        ms,
        "P",
        link,
        f"patches · vec(w) = vec(y){share}",
        f"patches is {oH * oW}×{kH * kW} · a row per window, a column per tap (grey: padding) · "
        "top row: vec(w), right column: y",
    )


def im2col_grad_panel(ms: MatrixSlice, link: Link) -> Panel:
    """vec(∂L/∂y) over patchesᵀ, ∂L/∂w beside it."""
    (oH, oW), (kH, kW) = ms.spec.out_size, ms.spec.kernel_size
    share = ": sample n's share" if ms.spec.batch > 1 else ""
    return product_panel(
        ms,
        "Pt",
        link,
        f"patchesᵀ · vec(∂L/∂y) = vec(∂L/∂w){share}",
        f"patchesᵀ is {kH * kW}×{oH * oW} · a row per tap · top row: vec(∂L/∂y), right column: "
        "∂L/∂w",
    )


def grid_panels(ms: MatrixSlice, link: Link) -> list[Panel]:
    """x, w and y as the other pages draw them, with the linked cells lit."""
    spec = ms.spec
    (H, W), (oH, oW), (kH, kW) = spec.in_size, spec.out_size, spec.kernel_size

    def cell(flat, width):
        return None if flat is None else (flat // width, flat % width)

    x_high = y_high = w_high = None
    if link.out is not None and link.inp is None:  # the window of the output cell
        x_high = (ms.taps[link.out] != -1).reshape(H, W)
    if link.inp is not None and link.out is None:  # the outputs that read the input cell
        y_high = (ms.taps[:, link.inp] != -1).reshape(oH, oW)
    if link.tap is None and (link.out is not None or link.inp is not None):
        row = ms.taps[link.out] if link.out is not None else ms.taps[:, link.inp]
        w_high = np.isin(np.arange(kH * kW), row[row >= 0]).reshape(kH, kW)
    label = f"[{ms.n}, {ms.c}]" if spec.batch > 1 or spec.in_channels > 1 else ""
    return [
        Panel(
            ms.x.reshape(H, W),
            f"x{label}",
            "x",
            highlight=x_high,
            selected=cell(link.inp, W),
            # its values, as every grid; where each cell goes in vec(x) (M's column) in words
            subtitle=f"{H}×{W}; x[i, j] is column {W}·i + j of M",
        ),
        Panel(
            ms.w.reshape(kH, kW),
            f"w[{ms.k}, {ms.c}]",
            "w",
            taps=tap_grid(kH, kW),
            highlight=w_high,
            selected=cell(link.tap, kW),
            subtitle=f"{kH}×{kW}",
        ),
        Panel(
            ms.y_part.reshape(oH, oW),
            "y" if spec.in_channels == 1 else "y (channel c's share)",
            "y",
            highlight=y_high,
            selected=cell(link.out, oW),
            subtitle=f"{oH}×{oW}",
        ),
    ]


def read_cell(ms: MatrixSlice, out: int) -> tuple[int, int]:
    """The middle one of the input cells output `out` (row-major) reads: a row of Mᵀ that holds
    that output's entry."""
    cells = np.flatnonzero(ms.taps[out] != -1)
    return divmod(int(cells[len(cells) // 2]), ms.spec.in_size[1])


def spread_panel(ig: InputGradArrays, n: int, k: int, c: int, cell: tuple[int, int]) -> Panel:
    """Row `cell` of Mᵀ drawn where the textbook route puts it: the rotated kernel's window on
    the dilated, padded ∂L/∂y. Taps on inserted zeros or the ring are the zeros of that row."""
    spec = ig.spec
    (pt, _), (pl, _) = spec.padding
    (gt, _), (gl, _) = spec.full_padding
    (dh, dw), (kH, kW) = spec.dilation, spec.kernel_size
    pr, pc = cell[0] + pt, cell[1] + pl  # the cell in padded-input coordinates
    taps = np.full(ig.padded.shape[2:], -1)
    rows = pr + dh * np.arange(kH)
    cols = pc + dw * np.arange(kW)
    taps[np.ix_(rows, cols)] = tap_grid(kH, kW, rotated=True)
    return Panel(
        ig.padded[n, k],
        f"∂L/∂y[n={n}, k={k}] dilated and padded",
        "spread",
        pad_mask=ig.padded_ring,
        dilation_mask=ig.padded_dilation_mask,
        taps=taps,
        origin=(-gt, -gl),  # numbered as on the Input gradient page: ∂L/∂y's first cell is 0
        subtitle=f"the rotated kernel's window for x[{cell[0]}, {cell[1]}]",
    )

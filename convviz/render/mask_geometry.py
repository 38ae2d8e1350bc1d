"""Geometry of a boolean cell mask: the rectangles that tile it and the segments of its boundary.

Pure NumPy in cell coordinates (cell (r, c) spans c ± 0.5, r ± 0.5), for a renderer to draw.
"""

from __future__ import annotations

import numpy as np


def _runs(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every run of True in the rows of a 2-D bool array, row by row, left to right: (row,
    start, stop) arrays, the run [start, stop) in that row."""
    h, w = rows.shape
    edged = np.zeros((h, w + 2), np.int8)  # a False cell on each side closes every run
    edged[:, 1:-1] = rows
    steps = np.diff(edged, axis=1)
    row, start = np.nonzero(steps == 1)
    return row, start, np.nonzero(steps == -1)[1]


def mask_rects(mask: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(row, col, n_rows, n_cols) rectangles that tile mask: row runs merged down the rows."""
    mask = np.asarray(mask, bool)
    by_row: list[set[tuple[int, int]]] = [set() for _ in range(mask.shape[0] + 1)]
    for r, c0, c1 in zip(*(a.tolist() for a in _runs(mask))):  # a run at a time, not a cell
        by_row[r].add((c0, c1))
    open_runs: dict[tuple[int, int], int] = {}  # (c0, c1) -> first row
    rects = []
    for r, runs in enumerate(by_row):  # the last row has no runs: it closes every rectangle
        for (c0, c1), r0 in list(open_runs.items()):
            if (c0, c1) not in runs:
                rects.append((r0, c0, r - r0, c1 - c0))
                del open_runs[(c0, c1)]
        for run in runs:
            open_runs.setdefault(run, r)
    return sorted(rects)


def mask_outline(mask: np.ndarray) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Segments ((x0, y0), (x1, y1)) of the boundary of mask, in cell coordinates."""
    mask = np.asarray(mask, bool)
    h, w = mask.shape
    m = np.zeros((h + 2, w + 2), bool)
    m[1:-1, 1:-1] = mask
    horizontal = m[:-1, 1:-1] != m[1:, 1:-1]  # (h+1, w): edge on top of row r
    vertical = m[1:-1, :-1] != m[1:-1, 1:]  # (h, w+1): edge left of column c
    r, c0, c1 = (a - 0.5 for a in _runs(horizontal))
    segs = list(zip(zip(c0.tolist(), r.tolist()), zip(c1.tolist(), r.tolist())))
    c, r0, r1 = (a - 0.5 for a in _runs(vertical.T))
    return segs + list(zip(zip(c.tolist(), r0.tolist()), zip(c.tolist(), r1.tolist())))

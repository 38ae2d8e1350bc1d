"""Geometry of a boolean cell mask: the rectangles that tile it and the segments of its boundary.

Pure NumPy in cell coordinates (cell (r, c) spans c ± 0.5, r ± 0.5), for a renderer to draw.
"""

from __future__ import annotations

import numpy as np


def _runs(row: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) of each run of True in a 1-D bool array."""
    d = np.diff(np.concatenate([[0], row.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist()))


def mask_rects(mask: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(row, col, n_rows, n_cols) rectangles that tile mask: row runs merged down the rows."""
    open_runs: dict[tuple[int, int], int] = {}  # (c0, c1) -> first row
    rects = []
    for r, row in enumerate([*np.asarray(mask, bool), np.zeros(mask.shape[1], bool)]):
        runs = set(_runs(row))
        for (c0, c1), r0 in list(open_runs.items()):
            if (c0, c1) not in runs:
                rects.append((r0, c0, r - r0, c1 - c0))
                del open_runs[(c0, c1)]
        for run in runs:
            open_runs.setdefault(run, r)
    return sorted(rects)


def mask_outline(mask: np.ndarray) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Segments ((x0, y0), (x1, y1)) of the boundary of mask, in cell coordinates."""
    m = np.pad(np.asarray(mask, bool), 1)
    horizontal = m[:-1, 1:-1] != m[1:, 1:-1]  # (h+1, w): edge on top of row r
    vertical = m[1:-1, :-1] != m[1:-1, 1:]  # (h, w+1): edge left of column c
    segs = [
        ((c0 - 0.5, r - 0.5), (c1 - 0.5, r - 0.5))
        for r, line in enumerate(horizontal)
        for c0, c1 in _runs(line)
    ]
    segs += [
        ((c - 0.5, r0 - 0.5), (c - 0.5, r1 - 0.5))
        for c, line in enumerate(vertical.T)
        for r0, r1 in _runs(line)
    ]
    return segs

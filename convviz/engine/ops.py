"""Array transforms of the convolution story, each beside its adjoint.

pad ↔ unpad (crop, or fold the ring back for reflect/replicate/circular), dilate ↔ subsample,
rot180 (its own inverse). All act on the last two axes and never mutate their inputs.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from convviz.engine.spec import NUMPY_PAD_MODES, Sides


def pad(a: np.ndarray, padding: Sides, mode: str = "zeros") -> np.ndarray:
    """Pad the last two axes by ((top, bottom), (left, right)) with a PyTorch padding mode.

    As np.pad pads (its own modes, NUMPY_PAD_MODES), at a fraction of its cost on the small
    grids of a page: zeros around a copy, or each cell read from its source (`source_index`)."""
    a = np.asarray(a)
    (top, bottom), (left, right) = padding
    H, W = a.shape[-2:]
    if mode == "zeros":
        out = np.zeros((*a.shape[:-2], H + top + bottom, W + left + right), dtype=a.dtype)
        out[..., top : top + H, left : left + W] = a
        return out
    rows, cols = source_index(H, (top, bottom), mode), source_index(W, (left, right), mode)
    return a[..., rows[:, None], cols]


def source_index(size: int, sides: tuple[int, int], mode: str) -> np.ndarray:
    """For each padded position along one axis, the input index it copies (-1 for a zero);
    read-only, made once per axis (a sum's formula asks for it per cell)."""
    return _source_index(int(size), (int(sides[0]), int(sides[1])), mode)


@lru_cache(maxsize=1024)
def _source_index(size: int, sides: tuple[int, int], mode: str) -> np.ndarray:
    if mode == "zeros":
        index = np.pad(np.arange(size), sides, mode="constant", constant_values=-1)
    else:
        index = np.pad(np.arange(size), sides, mode=NUMPY_PAD_MODES[mode])
    index.flags.writeable = False
    return index


def fold_matrix(size: int, sides: tuple[int, int], mode: str, dtype=np.float64) -> np.ndarray:
    """One-hot (padded, size) matrix P with pad(v) = P @ v along one axis; P.T is the adjoint."""
    src = source_index(size, sides, mode)
    return (src[:, None] == np.arange(size)[None, :]).astype(dtype)


def unpad(g: np.ndarray, padding: Sides, mode: str = "zeros") -> np.ndarray:
    """Adjoint of `pad`: crop for zeros; for the other modes, add the ring back onto its sources."""
    (top, bottom), (left, right) = padding
    Hp, Wp = g.shape[-2:]
    if mode == "zeros":
        return g[..., top : Hp - bottom, left : Wp - right]
    H, W = Hp - top - bottom, Wp - left - right
    rows = fold_matrix(H, (top, bottom), mode, g.dtype)  # (Hp, H)
    cols = fold_matrix(W, (left, right), mode, g.dtype)  # (Wp, W)
    return rows.T @ g @ cols  # (..., H, W)


def pad_mask(size: tuple[int, int], padding: Sides) -> np.ndarray:
    """Boolean (Hp, Wp) mask, True on the cells that padding added."""
    (top, bottom), (left, right) = padding
    mask = np.ones((size[0] + top + bottom, size[1] + left + right), dtype=bool)
    mask[top : top + size[0], left : left + size[1]] = False
    return mask


def dilate(a: np.ndarray, stride: tuple[int, int]) -> np.ndarray:
    """Insert stride-1 zeros between neighbouring cells of the last two axes."""
    sh, sw = stride
    h, w = a.shape[-2:]
    out = np.zeros((*a.shape[:-2], (h - 1) * sh + 1, (w - 1) * sw + 1), dtype=a.dtype)
    out[..., ::sh, ::sw] = a
    return out


def subsample(a: np.ndarray, stride: tuple[int, int]) -> np.ndarray:
    """Adjoint of `dilate`: keep every stride-th cell of the last two axes."""
    return a[..., :: stride[0], :: stride[1]]


def dilation_mask(size: tuple[int, int], stride: tuple[int, int]) -> np.ndarray:
    """Boolean mask of a dilated (h, w) grid, True on the zeros that `dilate` inserted."""
    mask = np.ones(((size[0] - 1) * stride[0] + 1, (size[1] - 1) * stride[1] + 1), dtype=bool)
    mask[:: stride[0], :: stride[1]] = False
    return mask


def rot180(w: np.ndarray) -> np.ndarray:
    """Rotate the last two axes by 180° (flip up-down, then left-right)."""
    return w[..., ::-1, ::-1]


def crop(a: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Keep the top-left (rows, cols) of the last two axes."""
    return a[..., : size[0], : size[1]]


def copies_mask(size: tuple[int, int], padding: Sides, mode: str, cell: tuple[int, int]):
    """(Hp, Wp) bool mask of the padded cells holding input cell `cell`: itself and its copies.

    For zero padding that is the cell alone; reflect/replicate/circular add ring copies, whose
    gradient `unpad` adds back onto the cell.
    """
    rows = source_index(size[0], padding[0], mode) == cell[0]  # (Hp,)
    cols = source_index(size[1], padding[1], mode) == cell[1]  # (Wp,)
    return rows[:, None] & cols[None, :]

"""Panel: one 2D grid to draw, with the masks that say what each cell is.

Both the plotly views and the matplotlib exports draw Panels, so a stage looks the same on screen
and on a slide. Panels are built from engine data in `convviz.render.story.panels` and
`input_story`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

# What a cell is, beyond its number, in one letter and in words (the keyboard grid, the number
# tables): a cell the padding added, a zero the dilation inserted, gradient the mask drops, a
# cell no window reads; the first that applies
ROLES = (
    ("pad_mask", "p", "padding"),
    ("dilation_mask", "z", "a zero the dilation inserted"),
    ("dropped_mask", "d", "dropped by the mask"),
    ("unread_mask", "u", "no window reads it"),
)
ROLE_WORDS = {letter: words for _, letter, words in ROLES}


@dataclass(frozen=True)
class Panel:
    """A grid of numbers and its cell roles; every mask has the shape of `values`."""

    values: np.ndarray  # (h, w)
    title: str
    key: str  # identifies the panel in click events, e.g. "x", "y", "grad_x"
    pad_mask: np.ndarray | None = None  # cells the padding added
    dilation_mask: np.ndarray | None = None  # zeros the dilation inserted
    remainder_mask: np.ndarray | None = None  # cells no window reaches
    # cells no window reads, the remainder's and those between the windows: their gradient is 0
    unread_mask: np.ndarray | None = None
    dropped_mask: np.ndarray | None = None  # gradient the mask drops (crossed out)
    taps: np.ndarray | None = None  # int (h, w): kernel tap index colouring the cell, -1 none
    # each tap index's name (w₀₂, `selection.tap_names`), written in a corner of its cells: the
    # cue that tells taps apart without colour; None: no names
    tap_names: tuple[str, ...] | None = None
    highlight: np.ndarray | None = None  # bool (h, w): cells linked to the selection
    selected: tuple[int, int] | None = None  # the selected cell, if it is in this panel
    # the cell whose sum a slide writes out when nothing is selected (outlined solid black)
    written: tuple[int, int] | None = None
    origin: tuple[int, int] = (0, 0)  # index of the top-left cell in axis labels (e.g. -1)
    # array index, in the whole grid, of this panel's cell [0, 0]: a crop's place (a click on a
    # close-up selects the whole grid's cell)
    offset: tuple[int, int] = (0, 0)
    subtitle: str = ""  # shape or a short note under the title
    # rows and columns of index 0… that carry index labels, when the grid draws more than one
    # array (a matrix with the vectors it multiplies beside it); None: every cell is indexed
    indexed: tuple[int, int] | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape

    def labelled(self, axis: int) -> tuple[int, int]:
        """(first cell, number of cells) along `axis` (0 rows, 1 columns) with index labels."""
        if self.indexed is None:
            return 0, self.shape[axis]
        return -self.origin[axis], self.indexed[axis]

    def mask(self, name: str) -> np.ndarray:
        """A mask by field name, all False when absent."""
        m = getattr(self, name)
        return np.zeros(self.shape, dtype=bool) if m is None else np.asarray(m, dtype=bool)

    def roles(self) -> np.ndarray:
        """(h, w) str: each cell's role as a letter of ROLES ('.' for none)."""
        letters = np.full(self.shape, ".", dtype="<U1")
        for mask, letter, _ in reversed(ROLES):  # the first that applies is written last
            letters[self.mask(mask)] = letter
        return letters

    def tap_labels(self) -> np.ndarray | None:
        """(h, w) str: each tap cell's name (w₀₂), "" elsewhere; None without taps or names."""
        if self.taps is None or self.tap_names is None:
            return None
        taps = np.asarray(self.taps, int)
        names = np.array(("", *self.tap_names), dtype=object)
        return names[np.where(taps >= 0, taps + 1, 0)]

    def between(self) -> np.ndarray:
        """The cells no window reads that are not the remainder: between the windows (a stride
        wider than the dilated kernel, or a dilation's gaps)."""
        return self.mask("unread_mask") & ~self.mask("remainder_mask")


class SweepPanels(NamedTuple):
    """The three grids of a sliding window: what it slides over, what slides, what it writes."""

    operand: Panel  # e.g. the padded input
    kernel: Panel  # e.g. the kernel, its rotation, or ∂L/∂y
    output: Panel  # e.g. the output, or a gradient

"""The legend of a static export: what each colour and mark drawn means, in the app's words."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from convviz.render.panel import Panel

if TYPE_CHECKING:
    from convviz.render.mpl.static import Layout
from convviz.render.mpl.panel import (
    GAP,
    LINKED_STYLE,
    MARGIN,
    PAD_HATCH_STYLE,
    UNREAD_ALPHA,
    UNREAD_STYLE,
    font,
    text_width,
)
from convviz.render.theme import (
    DILATION_COLOR,
    DROPPED_COLOR,
    GRID_LINE,
    HIGHLIGHT_COLOR,
    MUTED_TEXT,
    PAD_COLOR,
    REMAINDER_COLOR,
    SELECTED_COLOR,
    Theme,
    tap_colors,
)

# --- legend -----------------------------------------------------------------------------------

# What each mark means, in the order a legend lists them (the same words as the app's captions).
LEGEND_WORDS = {
    "pad": "padding (added cells)",
    "dilation": "zero inserted by dilation",  # as on screen
    "remainder": "rows/columns no window reaches",
    "unread": "between the windows: no window reads it (gradient 0)",
    "dropped": "gradient the mask drops",
    "tap": "kernel tap (each its own colour)",
    "grad_out_tap": "∂L/∂y cell (each its own colour)",  # what slides in the weight gradient
    "highlight": "cells linked to the selection",
    "read": "the cells its sum reads",  # the highlight, when it is the written cell's window
    "selected": "selected cell",
    "written": "the cell written out below",
    # the two black outlines a sweep moves, one mark: the window and the cell it writes
    "window": "the window, and the cell its sum writes",
}
_LEGEND_FONT = 0.8  # of the theme's font size
_WASH = to_rgba(REMAINDER_COLOR, UNREAD_ALPHA)  # the cells no window reads, as drawn


def legend_marks(panels: list[Panel]) -> list[str]:
    """The marks these panels draw (keys of LEGEND_WORDS), so an export says what they mean."""
    tapped = [p for p in panels if p.taps is not None and (np.asarray(p.taps) >= 0).any()]
    slides_grad_out = any(p.key == "grad_out" for p in tapped)
    selects = any(p.selected is not None for p in panels)
    reads = not selects and any(p.written is not None for p in panels)
    present = {
        "pad": any(p.mask("pad_mask").any() for p in panels),
        "dilation": any(p.mask("dilation_mask").any() for p in panels),
        "remainder": any(p.mask("remainder_mask").any() for p in panels),
        "unread": any(p.between().any() for p in panels),
        "dropped": any(p.mask("dropped_mask").any() for p in panels),
        "tap": bool(tapped) and not slides_grad_out,
        "grad_out_tap": slides_grad_out,
        # the window of a cell written out (nothing selected), else cells linked to a selection
        "highlight": any(p.mask("highlight").any() for p in panels) and not reads,
        "read": any(p.mask("highlight").any() for p in panels) and reads,
        "selected": selects,
        "written": any(p.written is not None for p in panels),
    }
    return [mark for mark, shown in present.items() if shown]


def _legend_handle(mark: str) -> Rectangle:
    """A one-cell swatch drawn as the panels draw that mark."""
    face, edge, hatch, style, lw = {
        "pad": (PAD_COLOR, GRID_LINE, PAD_HATCH_STYLE, "solid", 0.8),
        "dilation": (DILATION_COLOR, GRID_LINE, None, "solid", 0.8),
        "remainder": (_WASH, REMAINDER_COLOR, None, (0, (3, 2)), 1.5),
        "unread": (_WASH, REMAINDER_COLOR, None, UNREAD_STYLE, 1.5),
        "dropped": ("white", DROPPED_COLOR, "xx", "solid", 0.8),
        # a tap's swatch in the second tap colour: the first is a red, as the selection is
        "tap": ("none", tap_colors(1, 2)[1], None, "solid", 2.0),
        "grad_out_tap": ("none", tap_colors(1, 2)[1], None, "solid", 2.0),
        "highlight": ("none", HIGHLIGHT_COLOR, None, LINKED_STYLE, 2.0),
        "read": ("none", HIGHLIGHT_COLOR, None, LINKED_STYLE, 2.0),
        "selected": ("none", SELECTED_COLOR, None, "solid", 2.5),
        "written": ("none", HIGHLIGHT_COLOR, None, "solid", 2.5),
        "window": ("none", HIGHLIGHT_COLOR, None, "solid", 2.5),
    }[mark]
    return Rectangle((0, 0), 1, 1, facecolor=face, edgecolor=edge, hatch=hatch,
                     linestyle=style, linewidth=lw)  # fmt: skip


def legend_words(highlight: str | None = None) -> dict[str, str]:
    """What each mark means; highlight: what a lit cell means where it is not a selection's
    link (the ReLU gate's shut cells)."""
    return LEGEND_WORDS if highlight is None else {**LEGEND_WORDS, "highlight": highlight}


def _legend_columns(marks: list[str], theme: Theme, width_in: float, words=LEGEND_WORDS) -> int:
    """How many entries fit side by side in width_in inches."""
    size = _LEGEND_FONT * theme.font_size
    widest = max(text_width(words[m], size) for m in marks) + 3.5 * size  # + swatch
    return max(1, min(len(marks), int((width_in - 2 * MARGIN) * 72 // widest)))


def legend_band(marks: list[str], theme: Theme, width_in: float, words=LEGEND_WORDS) -> float:
    """Height in points of the legend's rows (0 without marks)."""
    if not marks:
        return 0.0
    rows = math.ceil(len(marks) / _legend_columns(marks, theme, width_in, words))
    return rows * 1.9 * _LEGEND_FONT * theme.font_size + GAP * 72 / 2


def place_legend(
    fig: Figure, marks: list[str], theme: Theme, layout: Layout, words=LEGEND_WORDS
) -> None:
    """The legend at the foot of the figure, centred."""
    if not marks:
        return
    width, height = layout.size
    fig.legend(
        [_legend_handle(m) for m in marks],
        [words[m] for m in marks],
        loc="lower center",
        bbox_to_anchor=(0.5, MARGIN / 2 / height),
        ncol=_legend_columns(marks, theme, width, words),
        frameon=False,
        prop=font(_LEGEND_FONT * theme.font_size),
        labelcolor=MUTED_TEXT,
        handlelength=1.2,
        handleheight=1.2,
        columnspacing=1.5,
    )

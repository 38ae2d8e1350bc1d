"""A printable handout: the whole story of the current layer as a PDF, one stage per page.

Each page has the stage's heading and caption (text), the stage's grids as the PNG export draws
them (with the cell's numeric formula under the grids) and the same formula in symbols. Pages are
A4 landscape, written by matplotlib's PdfPages; no pyplot.
"""

from __future__ import annotations

import io
import textwrap

import numpy as np
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure
from PIL import Image

from convviz.engine.formulas import SHORT_TERMS
from convviz.export.html import layer_line
from convviz.export.story import Still, Story
from convviz.render.mpl import panel, static
from convviz.render.theme import MUTED_TEXT, TEXT_COLOR

PAGE = (11.69, 8.27)  # A4 landscape, inches
IMAGE_DPI = 200  # the grids' resolution on paper
_FONT = list(panel.font_families())


def _stage_png(still: Still) -> np.ndarray:
    """The stage's grids (and the numeric formula) as the app's PNG export draws them."""
    fig = static.stage_figure(still.panels, still.formula, highlight=still.highlight)
    png = static.to_png(fig, dpi=IMAGE_DPI)
    with Image.open(io.BytesIO(png)) as im:
        return np.asarray(im.convert("RGB"))


def _text(fig: Figure, y: float, s: str, size: float, **kw) -> None:
    fig.text(0.05, y, s, fontsize=size, va="top", ha="left", fontfamily=_FONT, **kw)


def _page(still: Still, number: int, total: int) -> Figure:
    fig = Figure(figsize=PAGE)
    _text(fig, 0.95, still.title, 18, weight="bold", color=TEXT_COLOR)
    caption = "\n".join(textwrap.wrap(still.caption, 120))
    _text(fig, 0.90, caption, 11, color=MUTED_TEXT, linespacing=1.4)
    image = _stage_png(still)
    ax = fig.add_axes((0.05, 0.14, 0.9, 0.66))
    ax.imshow(image, interpolation="none")  # embedded as drawn: a PDF viewer scales it
    ax.set_axis_off()
    if still.formula is not None:
        symbolic = still.formula.text(numeric=False, max_terms=SHORT_TERMS)
        _text(fig, 0.11, "\n".join(textwrap.wrap(symbolic, 130)), 10, color=TEXT_COLOR)
    fig.text(0.95, 0.03, f"{number} / {total}", fontsize=9, ha="right", color=MUTED_TEXT)
    return fig


def _cover(story: Story, stills: list[Still]) -> Figure:
    fig = Figure(figsize=PAGE)
    _text(fig, 0.9, "How a convolution learns: forward and backward, with real numbers", 22,
          weight="bold", color=TEXT_COLOR)  # fmt: skip
    _text(fig, 0.82, "\n".join(textwrap.wrap(layer_line(story), 110)), 12, color=MUTED_TEXT)
    contents = "\n".join(f"{i + 2}.  {s.title}" for i, s in enumerate(stills))
    _text(fig, 0.7, contents, 13, color=TEXT_COLOR, linespacing=1.7)
    return fig


def handout_pdf(story: Story, progress=None) -> bytes:
    """The handout as PDF bytes: a cover, then one page per stage (forward, the six stages of
    the input gradient, the weight gradient). progress(done, total) is told per page."""
    stills = story.stills()
    total = len(stills) + 1
    buf = io.BytesIO()
    with PdfPages(buf, metadata={"Title": f"convviz handout: {story.preset}",
                                 "Creator": "convviz", "CreationDate": None}) as pdf:  # fmt: skip
        pdf.savefig(_cover(story, stills))
        for i, still in enumerate(stills):
            pdf.savefig(_page(still, i + 2, total))
            if progress:
                progress(i + 1, len(stills))
    return buf.getvalue()

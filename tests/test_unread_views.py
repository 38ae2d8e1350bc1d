"""Every zero explained, what a reader sees: the cells no window reads are marked and named on
the pages' figures, in every export's legend (PNG/SVG, GIF, .tex, HTML's figures), and in the
words of a cell's formula box. The layer is the issue's: 1×1 kernel, stride 3, 8×8 input.
"""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import LineCollection

from convviz.engine.spec import ConvSpec
from convviz.export import latex
from convviz.export.story import Story
from convviz.render.motion.model import legend_items
from convviz.render.mpl import static
from convviz.render.mpl.legend import LEGEND_WORDS, legend_marks
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.story.input_grad import feeds_text, unread_text
from convviz.render.story.panels import overview_panels

LINK = "?H=8&W=8&kH=1&kW=1&sh=3&sw=3&pad=explicit&pt=0&pb=0&pl=0&pr=0&step=5"
UNREAD = [1, 2, 4, 5, 7]  # rows and columns: 1, 2, 4, 5 between the windows, 7 the remainder


@pytest.fixture(scope="module")
def story() -> Story:
    return Story.of(link=LINK)


def lines_of(mask: np.ndarray) -> list[int]:
    return np.flatnonzero(mask.all(axis=1)).tolist()


def marks_between(panel) -> bool:
    """The panel marks rows 1, 2, 4, 5, 7 unread (origin: x̃ of this layer has no padding), of
    which row 7 is the remainder and the others lie between the windows."""
    return (
        lines_of(panel.mask("unread_mask")) == UNREAD
        and lines_of(panel.mask("remainder_mask")) == [7]
        and panel.between()[[1, 2, 4, 5], :7].all()
    )


def test_grad_x_panels_mark_the_cells_no_window_reads(story):
    _, backward = overview_panels(story.layer, 0, 0, 0)
    gx = next(p for p in backward if p.key == "grad_x")
    assert marks_between(gx)
    assert (gx.values[gx.mask("unread_mask")] == 0).all()
    assert (gx.values[~gx.mask("unread_mask")] != 0).all(), "values that teach: read cells ≠ 0"


def test_every_still_marks_them(story):
    """Forward's x̃, the mask step's ∂L/∂x̃ and ∂L/∂x, the full correlation's ∂L/∂x̃, the weight
    gradient's x̃: each carries the cells between the windows, and its legend names them."""
    marked = {(s.name, p.key) for s in story.stills() for p in s.panels if marks_between(p)}
    assert {
        ("forward", "x"),
        ("input-grad-step5", "grad_x_padded"),
        ("input-grad-step6", "grad_x_padded"),
        ("input-grad-step6", "grad_x"),
        ("weight-grad", "x"),
    } <= marked
    for still in story.stills():
        if any(p.between().any() for p in still.panels):
            assert "unread" in legend_marks(list(still.panels))


def test_plotly_figure_draws_and_names_them(story):
    panels = next(s for s in story.stills() if s.name == "input-grad-step6").panels
    fig = panels_figure(list(panels))
    names = [s["name"] for s in fig.layout_dict["shapes"]]
    assert names.count("unread") == 2 * 2  # wash and outline, on ∂L/∂x̃ and ∂L/∂x
    legend = " ".join(a["text"] for a in fig.layout_dict["annotations"])
    assert "between the windows: no window reads it, gradient 0" in legend


def test_png_svg_legend_draws_and_names_them(story):
    panels = next(s for s in story.stills() if s.name == "forward").panels
    fig = static.panels_figure(list(panels))
    drawn = [c for ax in fig.axes for c in ax.collections if isinstance(c, LineCollection)]
    assert any(c.get_label() == "unread" for c in drawn)
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert LEGEND_WORDS["unread"] in texts


def test_motion_legend_names_them(story):
    """A motion (its HTML and its GIF) lists the band in its legend."""
    from convviz.render.story.input_grad import Focus, stage_motion

    motion = stage_motion("mask", story.layer.input_grad, None, Focus())
    words = [w for _, _, w in legend_items(motion)]
    assert any(w.startswith("between the windows") for w in words)


def test_tex_marks_them(story):
    tex = latex.stages_tex(story)
    assert r"\newcommand{\cvgap}" in tex and "between the windows" in tex
    blocks = tex.split(r"\frac{\partial L}{\partial x} = ")[1]
    rows = blocks.split(r"\end{bmatrix}")[0].split(r" \\ ")
    assert all(cell.startswith(r"\cvgap") for cell in rows[1].split(" & ")[:7])
    assert rows[7].split(" & ")[0].startswith(r"\cvrem")
    assert not rows[0].split(" & ")[0].startswith(r"\cv")


# --- the words -----------------------------------------------------------------------------------
SPEC = ConvSpec.create((1, 1, 8, 8), (1, 1, 1, 1), stride=3)


@pytest.mark.parametrize(
    ("cell", "padded", "words"),
    [
        ((1, 0), False, "No window reads x[1, 0]: its gradient is 0. Row 1 lies between the "
         "windows: they start every 3 rows and read rows 0, 3, 6 only."),
        ((0, 7), False, "No window reads x[0, 7]: its gradient is 0. Column 7 is in the "
         "remainder: the last window ends at column 6."),
        ((3, 3), False, ""),
        ((6, 6), True, ""),
    ],
)  # fmt: skip
def test_formula_box_words(cell, padded, words):
    assert unread_text(SPEC, cell, padded) == words


def test_padded_copies_are_named():
    spec = ConvSpec.create(
        (1, 1, 4, 4), (1, 1, 1, 1), stride=3, padding=1, padding_mode="replicate"
    )
    assert "nor any padded copy of it" in unread_text(spec, (1, 1))


def test_forward_page_says_why_a_cell_is_unread(story):
    text = feeds_text(story.sweeps["forward"], (4, 0), story.spec)
    assert text.startswith("$x_{40}$ is read by no window: its gradient is 0. Row 4 lies between")

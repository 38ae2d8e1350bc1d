"""The matplotlib exports' figures: panels side by side with equal square cells, titles and
formulas that fit (set as math, wrapped, or plain text when mathtext refuses them), the legend
(each mark drawn and no other, below the panels and the formula, the selected cell told from a
tap), the PNG and SVG bytes, and a module that never imports pyplot."""

from __future__ import annotations

import io
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import static_cases
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from PIL import Image
from static_cases import legend_texts

from convviz.engine.formulas import forward_formula
from convviz.render.mpl import legend as static_legend
from convviz.render.mpl import panel as static_panel
from convviz.render.mpl import static
from convviz.render.mpl.legend import LEGEND_WORDS
from convviz.render.panel import Panel
from convviz.render.theme import THEME, tap_colors

# the module-scoped layer and panels of tests/static_cases.py, as this module's fixtures
classroom = static_cases.classroom
panels = static_cases.panels

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def formula_labels(fig: Figure) -> list[str]:
    return [a.get_label() for a in fig.artists if str(a.get_gid()).startswith("formula")]


# --- figures ----------------------------------------------------------------------------------


def test_panels_side_by_side_with_equal_square_cells(panels):
    fig = static.panels_figure(panels, title="forward")
    W, H = fig.get_size_inches()
    cells = []
    for ax, p in zip(fig.axes, panels):
        box = ax.get_position()
        cells += [box.width * W / p.shape[1], box.height * H / p.shape[0]]
    assert np.allclose(cells, cells[0])
    lefts = [ax.get_position().x0 for ax in fig.axes]
    assert lefts == sorted(lefts)
    assert cells[0] == pytest.approx(THEME.cell_px / static.EXPORT_PX_PER_INCH)


def test_a_long_title_over_one_small_grid_fits_the_figure():
    """The input-gradient step 1 slide: a 2×2 ∂L/∂y under a 40-character title (cut off)."""
    title = "∂L/∂y, the gradient from the next layer"
    fig = static.panels_figure([Panel(np.arange(4.0).reshape(2, 2), "∂L/∂y", "g")], title=title)
    fig.canvas.draw()
    (text,) = [t for t in fig.texts if t.get_text() == title]
    box = text.get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width


@pytest.mark.parametrize("numeric", [False, True], ids=["symbols", "numbers"])
def test_engine_formula_with_vanishing_terms_is_set_as_math(classroom, panels, numeric):
    """The engine's LaTeX has no colour commands, so mathtext sets it as is, no fallback."""
    f = forward_formula(classroom[0].forward, 0, 0, 0, 0)  # the corner window reads padding
    assert any(t.vanishes for t in f.terms)
    latex = f"${f.latex(numeric=numeric, max_terms=12)}$"
    fig = static.panels_figure(panels, formula=latex, formula_text="plain")
    lines = formula_labels(fig)
    assert all(s.startswith("$") and s.endswith("$") for s in lines), lines
    assert " ".join(s.strip("$") for s in lines) == latex.strip("$")
    assert static.to_png(fig).startswith(PNG_SIGNATURE)


def test_long_formula_wraps_at_top_level_plus():
    terms = " + ".join(
        rf"\frac{{\partial L}}{{\partial y_{{{i % 9}0}}}}\,w_{{{i}}}" for i in range(36)
    )
    latex = "$" + r"\frac{\partial L}{\partial x_{00}} = " + terms + " = 1$"
    fig = static.panels_figure([Panel(np.ones((2, 2)), "g", "g")], formula=latex)
    lines = formula_labels(fig)
    assert len(lines) > 1 and all(s.startswith("$") and s.endswith("$") for s in lines)
    assert "".join(s.strip("$") for s in lines).count("+") == 35


@pytest.mark.parametrize(
    ("formula", "text", "shown"),
    [
        (r"$\frac{a}{$", "x = a + b", "x = a + b"),
        (r"$\nosuchmacro{x}$", None, r"$\nosuchmacro{x}$"),
    ],
    ids=["with-fallback", "raw-source"],
)
def test_broken_formula_falls_back_to_plain_text(panels, formula, text, shown):
    fig = static.panels_figure(panels[1:], formula=formula, formula_text=text)
    assert formula_labels(fig) == [shown]
    assert static.to_png(fig, dpi=50).startswith(PNG_SIGNATURE)


def test_no_panels_is_an_error():
    with pytest.raises(ValueError, match="at least one panel"):
        static.panels_figure([])


def test_module_never_imports_pyplot():
    code = (
        "import sys, convviz.render.mpl.static\n"
        "bad = [m for m in ('matplotlib.pyplot', 'streamlit', 'plotly') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the legend -------------------------------------------------------------------------------


def test_an_export_says_what_its_marks_mean(classroom, panels):
    """Padding hatch, taps, outlines: each mark drawn is in the legend, and no mark not drawn."""
    x, w, y = panels  # classroom: padded input, tap colours, no inserted zeros
    words = static_legend.LEGEND_WORDS
    shown = legend_texts(static.panels_figure([x, w, y]))
    assert words["pad"] in shown and words["tap"] in shown
    assert words["dilation"] not in shown and words["dropped"] not in shown
    dilated = Panel(np.zeros((3, 3)), "d", "d", dilation_mask=np.eye(3, dtype=bool))
    assert legend_texts(static.panels_figure([dilated])) == [words["dilation"]]
    plain = Panel(np.ones((2, 2)), "p", "p")
    assert legend_texts(static.panels_figure([plain])) == []  # nothing to explain: no legend
    # the weight gradient slides ∂L/∂y, not the kernel: its colours are ∂L/∂y's cells
    grad_out = Panel(np.ones((2, 2)), "∂L/∂y", "grad_out", taps=np.arange(4).reshape(2, 2))
    shown = legend_texts(static.panels_figure([x, grad_out]))
    assert words["grad_out_tap"] in shown and words["tap"] not in shown


def test_the_legend_sits_below_the_panels_and_the_formula(panels):
    fig = static.panels_figure(list(panels), formula="$y = 1 + 2$")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    lowest_grid = min(ax.get_window_extent(renderer).y0 for ax in fig.axes)
    formula = [a for a in fig.artists if (a.get_gid() or "").startswith("formula")]
    assert legend.y1 < min(a.get_window_extent(renderer).y0 for a in formula) < lowest_grid
    assert legend.y0 >= 0 and legend.x0 >= 0 and legend.x1 <= fig.bbox.width


def test_a_legend_tells_the_selected_cell_from_a_kernel_tap(panels):
    """The selection's swatch is red; a tap's swatch was the first tap colour, another red, so
    "kernel tap" and "selected cell" read as one mark. It is now the second tap colour."""
    fig = static.panels_figure(list(panels))
    legend = fig.legends[0]
    swatches = {t.get_text(): h for t, h in zip(legend.texts, legend.legend_handles)}
    tap = to_rgba(swatches[LEGEND_WORDS["tap"]].get_edgecolor())
    selected = to_rgba(swatches[LEGEND_WORDS["selected"]].get_edgecolor())
    assert tap == to_rgba(tap_colors(1, 2)[1]) and np.abs(np.subtract(tap, selected)).max() > 0.3


# --- bytes ------------------------------------------------------------------------------------


def test_png_bytes_decode_at_the_requested_size(panels):
    fig = static.panels_figure(panels, title="forward", formula=r"$y_{12} = 4$")
    data = static.to_png(fig, dpi=100)
    assert data.startswith(PNG_SIGNATURE)
    image = Image.open(io.BytesIO(data))
    W, H = fig.get_size_inches()
    assert np.allclose(image.size, (W * 100, H * 100), atol=1)
    assert 600 < image.size[0] < 1700 and 300 < image.size[1] < 1000  # slide-sized


def test_svg_parses_and_keeps_cell_numbers_as_text(panels):
    data = static.to_svg(static.panels_figure(panels, formula=r"$y_{12} = 4$"))
    root = ET.fromstring(data)
    assert root.tag.endswith("svg")
    texts = {"".join(el.itertext()).strip() for el in root.iter() if el.tag.endswith("text")}
    for panel in panels:
        assert {static_panel.number(v) for v in panel.values.ravel()} <= texts
    assert any(el.get("id") == "formula-0" for el in root.iter())  # the formula, as outlines

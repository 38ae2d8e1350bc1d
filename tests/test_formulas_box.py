"""How the renderers write a formula's vanishing terms: the app's formula box and the .tex export
grey exactly those terms; the matplotlib export gets the engine's plain LaTeX."""

from __future__ import annotations

import re
from contextlib import nullcontext
from types import SimpleNamespace

import numpy as np
import pytest
from oracles import grid

from convviz.engine.arrays import input_grad_arrays
from convviz.engine.formulas import Formula, input_grad_formula
from convviz.engine.spec import ConvSpec
from convviz.export.latex import cell_latex
from convviz.render.theme import GREY_TERM, PRESENTATION, THEME
from convviz.ui import views

# a vanishing term's colour: the theme's in the box (KaTeX takes a hex), its named xcolor in a .tex
GREY = re.compile(rf"\\textcolor\{{(?:{re.escape(GREY_TERM)}|cvgrey)\}}\{{")


def corner_formula(mode: str) -> Formula:
    """∂L/∂x₀₀ of a 3×3 input, 3×3 kernel, padding 1: with zeros 5 of 9 taps read padding; with
    replicate the corner's three padded copies fold back onto it (a grouped formula)."""
    spec = ConvSpec.create((1, 1, 3, 3), (1, 1, 3, 3), padding=1, padding_mode=mode)
    w = grid([[1, 0, -1], [2, 0, -2], [1, 0, -1]])
    return input_grad_formula(input_grad_arrays(spec, w, np.ones(spec.output_shape)), 0, 0, 0, 0)


def box_latex(formula: Formula, theme=THEME) -> list[str]:
    """Every LaTeX display the formula box writes, in order (Streamlit replaced by a recorder)."""
    shown: list[str] = []
    fake = SimpleNamespace(
        latex=shown.append, caption=lambda *a, **k: None, expander=lambda *a, **k: nullcontext()
    )
    ctx = SimpleNamespace(theme=theme)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(views, "st", fake)
        views.formula_box(formula, ctx)
    return shown


def grey_flags(latex: str) -> list[bool]:
    """Whether each written summand of a box display is greyed (its own \\textcolor)."""
    flat = latex.removeprefix(r"\begin{aligned} ").removesuffix(r" \end{aligned}")
    flat = flat.replace(r" \\ &\quad + ", " + ").replace(r" \\ &= ", " = ").replace(" &= ", " = ")
    body = flat.split(" = ", 1)[1].rsplit(" = ", 1)[0]  # between the target and the value
    return [bool(GREY.match(p)) for p in body.split(" + ")]


@pytest.mark.parametrize("theme", [THEME, PRESENTATION], ids=["normal", "presentation"])
def test_the_formula_box_greys_exactly_the_vanishing_terms(theme):
    f = corner_formula("zeros")
    assert sum(t.vanishes for t in f.terms) == 5
    symbolic, numeric = box_latex(f, theme)
    for latex in (symbolic, numeric):
        assert grey_flags(latex) == [t.vanishes for t in f.terms], latex
        assert r"\color{" not in latex, "KaTeX's \\color switch would grey every later term"


def test_the_box_greys_the_taps_of_each_folded_copy():
    f = corner_formula("replicate")
    assert len(f.groups) == 4 and any(t.vanishes for g in f.groups for t in g.terms)
    shown = box_latex(f)
    assert not any(any(grey_flags(latex)) for latex in shown[:2])  # copies are named, not grey
    assert len(shown) == 2 * (1 + len(f.groups))  # the sum of copies, then each copy's taps
    for latex, g in zip(shown[2::2], f.groups):
        assert grey_flags(latex) == [t.vanishes for t in g.terms], latex


def test_the_tex_export_greys_the_same_terms_and_the_engine_none():
    f = corner_formula("zeros")
    tex = cell_latex(f, per_line=100)
    assert len(GREY.findall(tex)) == 2 * 5  # symbolic and numeric display
    assert "color" not in f.latex() + f.latex(numeric=True)

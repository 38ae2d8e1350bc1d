"""How a formula is written: numeric and symbolic text, LaTeX (gradient targets, the vanishing
terms a renderer marks), a sum cut short that states what the rest adds up to (wherever it is cut;
its zero terms last on a projector), the bias as a constant, symbols and the tags they write."""

from __future__ import annotations

import numpy as np
import pytest
from formula_cases import keras_same

from convviz.engine.arrays import forward_arrays, input_grad_arrays, weight_grad_arrays
from convviz.engine.formulas import (
    Formula,
    Symbol,
    Term,
    forward_formula,
    input_grad_formula,
    weight_grad_formula,
)
from convviz.engine.spec import ConvSpec

# --- text and LaTeX ------------------------------------------------------------------------------


def test_numeric_text_puts_negative_factors_in_parentheses():
    f = Formula(
        Symbol("y", (0, 0)), (Term(Symbol("x", (0, 0)), Symbol("w", (0, 0)), -2.0, 3.0),), -6.0
    )
    assert f.text(numeric=True) == "y₀₀ = (−2)·3 = −6"  # minus signs as the grids write them
    assert f.text() == "y₀₀ = x₀₀·w₀₀ = −6"


def test_keras_same_y00_numeric_and_symbolic():
    """y₀₀ = 0·1 + 0·0 + 0·(-1) + 0·2 + 1·0 + 2·(-2) + 0·1 + 4·0 + 5·(-1) = -9."""
    spec, x, w, _ = keras_same()
    f = forward_formula(forward_arrays(spec, x, w), 0, 0, 0, 0)
    assert f.text(numeric=True) == (
        "y₀₀ = 0·1 + 0·0 + 0·(−1) + 0·2 + 1·0 + 2·(−2) + 0·1 + 4·0 + 5·(−1) = −9"
    )
    assert [t.left.text() for t in f.terms] == ["0", "0", "0", "0", "x₀₀", "x₀₁", "0", "x₁₀", "x₁₁"]
    assert [t.padding for t in f.terms] == [True] * 4 + [False] * 2 + [True] + [False] * 2


def test_latex_of_gradient_targets_and_marked_vanishing_terms():
    spec, x, w, g = keras_same()
    ig, wg = input_grad_arrays(spec, w, g), weight_grad_arrays(spec, x, g)
    fx = input_grad_formula(ig, 0, 0, 0, 0)
    latex = fx.latex()
    assert latex.startswith(r"\frac{\partial L}{\partial x_{00}} = "), latex
    assert r"\frac{\partial L}{\partial y_{00}}" in latex
    vanishing = sum(t.vanishes for t in fx.terms)
    assert vanishing == 5, "x₀₀ of 'same' 3×3: 5 of 9 taps read the padding of grad_out"
    assert "color" not in latex + fx.latex(numeric=True), "the engine leaves the look to renderers"
    for numeric in (False, True):  # a renderer's mark wraps exactly the vanishing terms
        marked = fx.latex(numeric=numeric, mark=lambda s: f"⟨{s}⟩")
        terms = marked.split(" = ")[1].split(" + ")
        assert [t.startswith("⟨") for t in terms] == [t.vanishes for t in fx.terms], marked
        assert marked.replace("⟨", "").replace("⟩", "") == fx.latex(numeric=numeric)
    fw = weight_grad_formula(wg, 0, 0, 1, 1)
    assert fw.latex().startswith(r"\frac{\partial L}{\partial w_{11}} = ")
    fy = forward_formula(forward_arrays(spec, x, w), 0, 0, 1, 1)
    assert r"\partial" not in fy.latex() and fy.latex().startswith("y_{11} = ")
    assert fy.latex(mark=lambda s: "!") == fy.latex(), "the centre window reads no padding"
    assert fy.latex(numeric=True).endswith("= -8")
    fp = input_grad_formula(ig, 0, 0, 0, 0, padded=True)
    # x̃ is indexed like x and the panel's axes: padded cell [0, 0] is the ring corner x̃₋₁,₋₁
    assert fp.latex().startswith(r"\frac{\partial L}{\partial \tilde{x}_{-1,-1}}"), fp.latex()
    assert input_grad_formula(ig, 0, 0, 1, 1, padded=True).target.text() == "∂L/∂x̃₀₀"


def test_bias_shows_as_a_constant():
    spec, x, w, _ = keras_same()
    f = forward_formula(forward_arrays(spec, x, w, bias=[-2.5]), 0, 0, 1, 1)
    assert f.constant == -2.5 and np.isclose(f.total, -8 - 2.5)
    assert f.text().endswith(" + b = −10.5") and f.text(numeric=True).endswith(" + (−2.5) = −10.5")
    assert f.latex().endswith(" + b = -10.5")


# --- a sum cut short -----------------------------------------------------------------------------


def test_max_terms_truncation_states_what_the_rest_adds_up_to():
    """y₁₁ of keras-same = 1·1 + 2·0 + 3·(-1) + 4·2 + 5·0 + 6·(-2) + 7·1 + 8·0 + 9·(-1) = -8;
    cut after 4 terms, the 5 hidden ones add up to 0 + (-12) + 7 + 0 + (-9) = -14."""
    spec, x, w, _ = keras_same()
    f = forward_formula(forward_arrays(spec, x, w), 0, 0, 1, 1)
    text = f.text(numeric=True, max_terms=4)
    assert text == "y₁₁ = 1·1 + 2·0 + 3·(−1) + 4·2 + [5 more terms = −14] = −8", text
    assert f.text(max_terms=4).endswith(" + x₁₀·w₁₀ + [5 more terms = −14] = −8")
    latex = f.latex(max_terms=4)
    assert latex.count(r"\,") == 4 and latex.endswith(r"[\text{5 more terms} = -14] = -8"), latex
    assert "more" not in f.text(max_terms=9), "no note when nothing is cut"
    shown = f.shown(4)
    assert shown.visible == (1, 0, -3, 8) and shown.hidden_count == 5 and shown.hidden_sum == -14
    assert f.adds_up(4) and f.adds_up(9)
    assert f.check(4) == (
        "✓ the 4 terms written out (Σ = 6) and the 5 not written (Σ = −14) add up to the "
        "engine's value −8"
    )
    assert f.check(9) == "✓ the terms add up to the engine's value −8"


@pytest.mark.parametrize("max_terms", [1, 2, 5, 12, 27, 100])
@pytest.mark.parametrize("kind", ["forward", "grad_x", "grad_x_padded", "grad_w"])
def test_any_cut_of_any_formula_states_a_remainder_that_makes_the_total(kind, max_terms):
    """Every cell of a layer with channels, batch and reflect padding, cut anywhere: the numbers
    written in the text (summands and the stated remainder) add up to the value written last."""
    spec = ConvSpec.create((2, 2, 5, 5), (2, 2, 3, 3), padding=1, padding_mode="reflect")
    rng = np.random.default_rng(8)
    x, w = rng.integers(-3, 4, spec.input_shape) * 1.0, rng.integers(-2, 3, spec.weight_shape) * 1.0
    g = rng.integers(-2, 3, spec.output_shape) * 1.0
    fwd, ig, wg = (
        forward_arrays(spec, x, w),
        input_grad_arrays(spec, w, g),
        weight_grad_arrays(spec, x, g),
    )
    make = {
        "forward": (lambda idx: forward_formula(fwd, *idx), fwd.y.shape),
        "grad_x": (lambda idx: input_grad_formula(ig, *idx), ig.grad_x.shape),
        "grad_x_padded": (
            lambda idx: input_grad_formula(ig, *idx, padded=True),
            ig.grad_x_padded.shape,
        ),
        "grad_w": (lambda idx: weight_grad_formula(wg, *idx), wg.grad_w.shape),
    }[kind]
    for idx in np.ndindex(make[1]):
        f = make[0](idx)
        written = written_numbers(f.text(numeric=True, max_terms=max_terms))
        assert np.isclose(sum(written[:-1]), written[-1]), (kind, idx, f.text(True, max_terms))
        assert f.adds_up(max_terms) and f.check(max_terms).startswith("✓"), (kind, idx)


def written_numbers(text: str) -> list[float]:
    """The numbers a numeric formula writes, in order: each a·b product, each bracketed
    remainder, each lone summand (a copy's gradient, a bias); the last is the value."""
    text = text.replace("−", "-")  # float() reads only the ASCII minus
    sum_, value = text.split(" = ", 1)[1].rsplit(" = ", 1)  # after the target, before the value
    parts = sum_.split(" + ")
    numbers = []
    for part in parts:
        if part.startswith("["):
            numbers.append(float(part.rsplit("= ", 1)[1].rstrip("]")))
        elif "·" in part:
            a, b = (float(v.strip("()")) for v in part.split("·"))
            numbers.append(a * b)
        else:
            numbers.append(float(part.strip("()")))
    return [*numbers, float(value)]


def preset_layer(key: str):
    """A preset's layer with its own ∂L/∂y, as the app computes it."""
    from convviz.engine.arrays import layer
    from convviz.model.presets import PRESETS_BY_KEY

    p = PRESETS_BY_KEY[key]
    spec = p.spec()
    return layer(spec, *p.values(), p.grad_out_for(np.zeros(spec.output_shape)))


def test_a_sum_cut_short_on_a_projector_writes_the_terms_that_count():
    """recitation-s2's ∂L/∂x₂₂ (= 36) cut to 5 terms wrote three zeros of the dilation and
    folded 3·3 + 4·1 into '[4 more terms = 13]'. With its zero terms last (the player's line on a
    projector), the four that count are written and the rest is stated as 0."""
    lay = preset_layer("recitation-s2")
    f = input_grad_formula(lay.input_grad, 0, 0, 2, 2)
    g = f.vanishing_last()
    assert sorted(map(id, g.terms)) == sorted(map(id, f.terms)) and g.value == f.value == 36
    flags = [t.vanishes for t in g.terms]
    assert flags == sorted(flags) and any(flags)  # every zero after every real term
    assert g.text(numeric=True, max_terms=5) == (
        "∂L/∂x₂₂ = 1·9 + 2·7 + 3·3 + 4·1 + 0·8 + [4 more terms = 0] = 36"
    )
    assert g.adds_up(5) and f.adds_up(5)
    from convviz.render.theme import PRESENTATION
    from convviz.ui.views import frame_caption

    _, numeric = frame_caption(f, PRESENTATION.fitted(1232, 720))
    assert "3·3 + 4·1" in numeric, numeric


def test_a_weight_gradient_cut_short_writes_the_terms_that_count():
    """classroom's ∂L/∂w₀₀ on a projector wrote five padding zeros, '0·∂L/∂y₀₀ + … +
    0·∂L/∂y₁₀', and folded every term that counts into '[11 more terms = …]': its terms are
    arrays, which were never reordered. The same terms, zeros last."""
    lay = preset_layer("classroom")
    f = weight_grad_formula(lay.weight_grad, 0, 0, 0, 0)
    g = f.vanishing_last()
    assert sorted(map(str, g.terms)) == sorted(map(str, f.terms)) and g.value == f.value
    flags = [t.vanishes for t in g.terms]
    assert flags == sorted(flags) and any(flags) and not all(flags)
    written = g.text(numeric=True, max_terms=5)
    assert not written.split(" = ")[1].startswith("0·") and g.adds_up(5), written
    assert f.text(numeric=True, max_terms=5).split(" = ")[1].startswith("0·")  # as it was


# --- symbols -------------------------------------------------------------------------------------


SYMBOL_ROWS = [
    pytest.param(Symbol("x", (1, 2)), "x₁₂", "x_{12}", id="x"),
    pytest.param(Symbol("dy", (0, 1)), "∂L/∂y₀₁", r"\frac{\partial L}{\partial y_{01}}", id="dy"),
    pytest.param(Symbol("w", (10, 2)), "w₁₀,₂", "w_{10,2}", id="two-digit index gets a comma"),
    pytest.param(
        Symbol("x", (0, 0), (("n", 1), ("c", 2))),
        "x[n=1, c=2]₀₀",
        "x^{(n=1,c=2)}_{00}",
        id="batch and channel tags",
    ),
    pytest.param(
        Symbol("dxp", (3, 0)),
        "∂L/∂x̃₃₀",
        r"\frac{\partial L}{\partial \tilde{x}_{30}}",
        id="padded input",
    ),
    pytest.param(Symbol("0"), "0", "0", id="a zero"),
]


@pytest.mark.parametrize(("symbol", "text", "latex"), SYMBOL_ROWS)
def test_symbol_rendering(symbol, text, latex):
    assert symbol.text("nc") == text
    assert symbol.latex("nc") == latex


def test_a_symbol_writes_the_tags_it_is_asked_for():
    """The engine keeps the whole slice; which tags are written is the caller's choice."""
    s = Symbol("x", (0, 0), (("n", 1), ("c", 2)))
    assert s.text() == "x₀₀" and s.latex() == "x_{00}"
    assert s.text({"c"}) == "x[c=2]₀₀" and s.latex({"n"}) == "x^{(n=1)}_{00}"

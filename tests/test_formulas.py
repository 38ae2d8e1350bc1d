"""Formulas: the terms of every cell add up to the engine's number, each term names the operand
cells it multiplies, and the seeds' symbolic answers (corrected) come out term for term.

Oracles: the public API for each cell's value; the input arrays themselves for each named symbol
(a term's `left`/`right` must index the array it claims to read); hand-worked formulas.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from oracles import conv_cases, grid
from quick import examples

from convviz import conv2d, conv2d_input, conv2d_weight
from convviz.formulas import Formula, forward_formula, input_grad_formula, weight_grad_formula
from convviz.reference import conv2d_input_loop
from convviz.spec import ConvSpec
from convviz.stages import forward_stages, input_grad_stages, weight_grad_stages
from convviz.terms import Symbol, Term

# Formulas loop over terms in Python; keep the cases small (every cell of every array is checked).
SETTINGS = settings(max_examples=examples(100), deadline=None)
small_cases = conv_cases()


# --- oracles -------------------------------------------------------------------------------------
def assert_adds_up(f: Formula, engine_value: float, what: str) -> None:
    """total (Σ terms + constant) == value == the engine's cell; each term is left · right."""
    for t in f.terms:
        assert t.value == t.left_value * t.right_value, f"{what}: term {t} is not left·right"
        if t.vanishes:
            assert t.left_value == 0, f"{what}: vanishing term {t} has a nonzero left value"
    assert np.isclose(f.value, engine_value, atol=1e-9), f"{what}: value {f.value} != engine"
    assert np.isclose(f.total, engine_value, atol=1e-9), f"{what}: terms sum {f.total} != engine"


def tag(sym: Symbol, axis: str) -> int:
    """A symbol's batch/channel tag (every symbol carries its whole slice)."""
    return dict(sym.tags)[axis]


def pairs(f: Formula) -> list[tuple[str, str]]:
    return [(t.left.text(), t.right.text()) for t in f.terms if not t.vanishes]


def padded_grad_loop(case) -> np.ndarray:
    """∂L/∂x_pad (ring included): the loop reference on the padded input with no padding."""
    kw = case.kwargs
    return conv2d_input_loop(
        case.spec.padded_shape, case.w, case.grad_out, stride=kw["stride"], dilation=kw["dilation"]
    )


# --- every cell adds up, every symbol names the cell it reads ------------------------------------
@SETTINGS
@given(small_cases)
def test_forward_formula_of_every_cell(case):
    spec = case.spec
    fwd = forward_stages(spec, case.x, case.w, case.bias)
    y = conv2d(case.x, case.w, case.bias, **case.kwargs)
    for n, k, i, j in np.ndindex(y.shape):
        f = forward_formula(fwd, n, k, i, j)
        what = f"y[{n},{k},{i},{j}] of {case}"
        assert_adds_up(f, y[n, k, i, j], what)
        assert f.constant == case.bias[k], f"{what}: the bias is the constant"
        assert len(f.terms) == spec.in_channels * case.w.shape[2] * case.w.shape[3], what
        for t in f.terms:
            c = tag(t.right, "c")
            assert t.right.name == "w" and t.right_value == case.w[k, c, *t.right.index], what
            if t.left.name == "x":
                assert t.left_value == case.x[n, c, *t.left.index], f"{what}: {t.left} misnamed"
            else:
                assert t.left.name == "0" and t.padding and spec.padding_mode == "zeros", what
        assert not any(t.dilation or t.folded for t in f.terms), f"{what}: forward has no holes"


@SETTINGS
@given(small_cases)
def test_input_grad_formula_of_every_cell_folds_ring_copies_back(case):
    spec = case.spec
    ig = input_grad_stages(spec, case.w, case.grad_out)
    grad_x = conv2d_input(case.x.shape, case.w, case.grad_out, **case.kwargs)
    for n, c, r, q in np.ndindex(grad_x.shape):
        f = input_grad_formula(ig, n, c, r, q)
        what = f"grad_x[{n},{c},{r},{q}] of {case}"
        assert_adds_up(f, grad_x[n, c, r, q], what)
        assert f.target.name == "dx" and f.target.index == (r, q), what
        assert not f.dropped, f"{what}: a real cell is never dropped"
        assert not any(t.dropped for t in f.terms), f"{what}: no term of a real cell is dropped"
        if spec.padding_mode == "zeros":
            assert not any(t.folded for t in f.terms), f"{what}: zeros mode folds nothing back"
        for t in f.terms:
            assert not (t.padding and t.dilation), f"{what}: {t} is one kind of zero, not both"
            k = tag(t.right, "k")
            assert t.right_value == case.w[k, c, *t.right.index], f"{what}: {t.right} misnamed"
            if t.left.name == "dy":
                assert t.left_value == case.grad_out[n, k, *t.left.index], f"{what}: {t.left}"
            else:
                assert t.left.name == "0" and t.vanishes, f"{what}: {t} is a zero of the route"


@SETTINGS
@given(small_cases)
def test_padded_input_grad_formula_of_every_cell_including_the_ring(case):
    spec = case.spec
    ig = input_grad_stages(spec, case.w, case.grad_out)
    oracle = padded_grad_loop(case)
    ring = ig.pad_mask
    for n, c, r, q in np.ndindex(oracle.shape):
        f = input_grad_formula(ig, n, c, r, q, padded=True)
        what = f"grad_x_padded[{n},{c},{r},{q}] of {case}"
        assert_adds_up(f, oracle[n, c, r, q], what)
        assert f.target.name == "dxp", what
        assert f.dropped == (bool(ring[r, q]) and spec.padding_mode == "zeros"), (
            f"{what}: dropped exactly on the zero-padded ring"
        )
        assert not any(t.folded for t in f.terms), f"{what}: a padded cell's own terms"
        assert all(t.dropped == f.dropped for t in f.terms), f"{what}: terms share the drop"


@SETTINGS
@given(small_cases)
def test_weight_grad_formula_of_every_cell(case):
    spec = case.spec
    wg = weight_grad_stages(spec, case.x, case.grad_out)
    grad_w = conv2d_weight(case.x, case.w.shape, case.grad_out, **case.kwargs)
    for k, c, a, b in np.ndindex(grad_w.shape):
        f = weight_grad_formula(wg, k, c, a, b)
        what = f"grad_w[{k},{c},{a},{b}] of {case}"
        assert_adds_up(f, grad_w[k, c, a, b], what)
        assert len(f.terms) == spec.batch * spec.out_size[0] * spec.out_size[1], what
        for t in f.terms:
            n = tag(t.right, "n")
            assert t.right_value == case.grad_out[n, k, *t.right.index], f"{what}: {t.right}"
            if t.left.name == "x":
                assert t.left_value == case.x[n, c, *t.left.index], f"{what}: {t.left} misnamed"


# --- a table of configurations with channels and batch > 1 ---------------------------------------
TABLE = [
    pytest.param((2, 2, 5, 4), (3, 2, 3, 2), {"padding": 1}, id="N2 C2 K3 pad 1"),
    pytest.param(
        (1, 3, 6, 6),
        (2, 3, 3, 3),
        {"stride": 2, "padding": "same", "padding_mode": "reflect"},
        id="C3 K2 s2 same reflect",
    ),
    pytest.param(
        (2, 1, 5, 5),
        (2, 1, 2, 3),
        {"dilation": (2, 1), "padding": ((2, 1), (0, 2)), "padding_mode": "circular"},
        id="N2 K2 d(2,1) per-side circular",
    ),
    pytest.param(
        (1, 2, 4, 7),
        (1, 2, 3, 3),
        {"stride": (1, 3), "padding": 2, "padding_mode": "replicate"},
        id="C2 s(1,3) pad 2 replicate",
    ),
    pytest.param((2, 2, 7, 7), (2, 2, 3, 3), {"stride": 2, "padding": 1}, id="classroom x2"),
]


@pytest.mark.parametrize(("xs", "ws", "kwargs"), TABLE)
def test_table_every_formula_equals_the_engine(xs, ws, kwargs):
    spec = ConvSpec.create(xs, ws, **kwargs)
    rng = np.random.default_rng(3)
    x, w = rng.integers(-3, 4, xs).astype(float), rng.integers(-2, 3, ws).astype(float)
    g = rng.integers(-2, 3, spec.output_shape).astype(float)
    y = conv2d(x, w, **kwargs)
    grad_x, grad_w = conv2d_input(xs, w, g, **kwargs), conv2d_weight(x, ws, g, **kwargs)
    fwd, ig = forward_stages(spec, x, w), input_grad_stages(spec, w, g)
    wg = weight_grad_stages(spec, x, g)
    for idx in np.ndindex(y.shape):
        assert_adds_up(forward_formula(fwd, *idx), y[idx], f"y{idx}")
    for idx in np.ndindex(grad_x.shape):
        assert_adds_up(input_grad_formula(ig, *idx), grad_x[idx], f"grad_x{idx}")
    for idx in np.ndindex(grad_w.shape):
        assert_adds_up(weight_grad_formula(wg, *idx), grad_w[idx], f"grad_w{idx}")
    for idx in np.ndindex(ig.grad_x_padded.shape):
        f = input_grad_formula(ig, *idx, padded=True)
        assert_adds_up(f, ig.grad_x_padded[idx], f"grad_x_padded{idx}")
    # every symbol carries its slice; a formula writes the tags of the axes that vary only
    n = 1 if xs[0] > 1 else 0
    f = forward_formula(fwd, n, 0, 0, 0)
    assert f.target.tags == (("n", n), ("k", 0))
    assert forward_formula(fwd, 0, 0, 0, 0).terms[-1].right.tags == (("k", 0), ("c", ws[1] - 1))
    sizes = {"n": xs[0], "k": ws[0], "c": ws[1]}
    assert f.varying == {a for a, size in sizes.items() if size > 1}
    written = [f"{a}={v}" for a, v in (("n", n), ("k", 0)) if sizes[a] > 1]
    assert f.name() == "y" + (f"[{', '.join(written)}]" if written else "") + "₀₀"


# --- the seeds' symbolic answers -----------------------------------------------------------------
def recitation(stride: int, x_size: int, k_size: int):
    spec = ConvSpec.create((1, 1, x_size, x_size), (1, 1, k_size, k_size), stride=stride)
    rng = np.random.default_rng(0)
    w = rng.integers(-2, 3, spec.weight_shape).astype(float)
    g = rng.integers(-2, 3, spec.output_shape).astype(float)
    x = rng.integers(0, 10, spec.input_shape).astype(float)
    return spec, x, w, g


GRAD_X_ANSWERS = [
    pytest.param(
        2,
        5,
        3,
        (2, 2),
        [("∂L/∂y₀₀", "w₂₂"), ("∂L/∂y₀₁", "w₂₀"), ("∂L/∂y₁₀", "w₀₂"), ("∂L/∂y₁₁", "w₀₀")],
        id="recitation s2: x22 has four terms (the seed lists f20 twice)",
    ),
    pytest.param(2, 5, 3, (0, 0), [("∂L/∂y₀₀", "w₀₀")], id="recitation s2: x00"),
    pytest.param(
        2, 5, 3, (0, 2), [("∂L/∂y₀₀", "w₀₂"), ("∂L/∂y₀₁", "w₀₀")], id="recitation s2: x02"
    ),
    pytest.param(2, 5, 3, (1, 1), [("∂L/∂y₀₀", "w₁₁")], id="recitation s2: x11 one term"),
    pytest.param(
        1,
        3,
        2,
        (1, 1),
        [("∂L/∂y₀₀", "w₁₁"), ("∂L/∂y₀₁", "w₁₀"), ("∂L/∂y₁₀", "w₀₁"), ("∂L/∂y₁₁", "w₀₀")],
        id="recitation s1: x11 (the seed's X22) is the rotated filter",
    ),
    pytest.param(1, 3, 2, (0, 0), [("∂L/∂y₀₀", "w₀₀")], id="recitation s1: corner x00"),
]


@pytest.mark.parametrize(("stride", "xs", "ks", "cell", "expected"), GRAD_X_ANSWERS)
def test_recitation_input_gradient_terms(stride, xs, ks, cell, expected):
    spec, _, w, g = recitation(stride, xs, ks)
    ig = input_grad_stages(spec, w, g)
    f = input_grad_formula(ig, 0, 0, *cell)
    assert pairs(f) == expected
    assert np.isclose(f.total, conv2d_input(spec.input_shape, w, g, stride=stride)[0, 0, *cell])


def test_recitation_stride1_forward_y00():
    spec, x, w, _ = recitation(1, 3, 2)
    f = forward_formula(forward_stages(spec, x, w), 0, 0, 0, 0)
    assert f.text().startswith("y₀₀ = x₀₀·w₀₀ + x₀₁·w₀₁ + x₁₀·w₁₀ + x₁₁·w₁₁ = "), f.text()


def test_recitation_stride2_dilation_zeros_are_flagged():
    """x₂₂'s window over the padded, dilated grad_out: 9 taps, 4 real, 5 dilation zeros."""
    spec, _, w, g = recitation(2, 5, 3)
    f = input_grad_formula(input_grad_stages(spec, w, g), 0, 0, 2, 2)
    assert len(f.terms) == 9
    assert sum(t.dilation for t in f.terms) == 5 and sum(t.padding for t in f.terms) == 0
    f00 = input_grad_formula(input_grad_stages(spec, w, g), 0, 0, 0, 0)
    assert sum(t.padding for t in f00.terms) == 8, "x₀₀ reads 8 cells of the padding of grad_out"
    assert not any(t.dilation for t in f00.terms), "ring zeros are padding, not dilation zeros"
    assert all(t.vanishes for t in f00.terms if t.padding)


# --- text and LaTeX ---------------------------------------------------------------------------
def keras_same():
    spec = ConvSpec.create((1, 1, 3, 3), (1, 1, 3, 3), padding="same")
    x = grid([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    w = grid([[1, 0, -1], [2, 0, -2], [1, 0, -1]])
    return spec, x, w, np.ones(spec.output_shape)


def test_numeric_text_puts_negative_factors_in_parentheses():
    f = Formula(
        Symbol("y", (0, 0)), (Term(Symbol("x", (0, 0)), Symbol("w", (0, 0)), -2.0, 3.0),), -6.0
    )
    assert f.text(numeric=True) == "y₀₀ = (−2)·3 = −6"  # minus signs as the grids write them
    assert f.text() == "y₀₀ = x₀₀·w₀₀ = −6"


def test_keras_same_y00_numeric_and_symbolic():
    """y₀₀ = 0·1 + 0·0 + 0·(-1) + 0·2 + 1·0 + 2·(-2) + 0·1 + 4·0 + 5·(-1) = -9."""
    spec, x, w, _ = keras_same()
    f = forward_formula(forward_stages(spec, x, w), 0, 0, 0, 0)
    assert f.text(numeric=True) == (
        "y₀₀ = 0·1 + 0·0 + 0·(−1) + 0·2 + 1·0 + 2·(−2) + 0·1 + 4·0 + 5·(−1) = −9"
    )
    assert [t.left.text() for t in f.terms] == ["0", "0", "0", "0", "x₀₀", "x₀₁", "0", "x₁₀", "x₁₁"]
    assert [t.padding for t in f.terms] == [True] * 4 + [False] * 2 + [True] + [False] * 2


def test_latex_of_gradient_targets_and_marked_vanishing_terms():
    spec, x, w, g = keras_same()
    ig, wg = input_grad_stages(spec, w, g), weight_grad_stages(spec, x, g)
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
    fy = forward_formula(forward_stages(spec, x, w), 0, 0, 1, 1)
    assert r"\partial" not in fy.latex() and fy.latex().startswith("y_{11} = ")
    assert fy.latex(mark=lambda s: "!") == fy.latex(), "the centre window reads no padding"
    assert fy.latex(numeric=True).endswith("= -8")
    fp = input_grad_formula(ig, 0, 0, 0, 0, padded=True)
    # x̃ is indexed like x and the panel's axes: padded cell [0, 0] is the ring corner x̃₋₁,₋₁
    assert fp.latex().startswith(r"\frac{\partial L}{\partial \tilde{x}_{-1,-1}}"), fp.latex()
    assert input_grad_formula(ig, 0, 0, 1, 1, padded=True).target.text() == "∂L/∂x̃₀₀"


def test_max_terms_truncation_states_what_the_rest_adds_up_to():
    """y₁₁ of keras-same = 1·1 + 2·0 + 3·(-1) + 4·2 + 5·0 + 6·(-2) + 7·1 + 8·0 + 9·(-1) = -8;
    cut after 4 terms, the 5 hidden ones add up to 0 + (-12) + 7 + 0 + (-9) = -14."""
    spec, x, w, _ = keras_same()
    f = forward_formula(forward_stages(spec, x, w), 0, 0, 1, 1)
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
        forward_stages(spec, x, w),
        input_grad_stages(spec, w, g),
        weight_grad_stages(spec, x, g),
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


def test_bias_shows_as_a_constant():
    spec, x, w, _ = keras_same()
    f = forward_formula(forward_stages(spec, x, w, bias=[-2.5]), 0, 0, 1, 1)
    assert f.constant == -2.5 and np.isclose(f.total, -8 - 2.5)
    assert f.text().endswith(" + b = −10.5") and f.text(numeric=True).endswith(" + (−2.5) = −10.5")
    assert f.latex().endswith(" + b = -10.5")


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


# --- term flags ---------------------------------------------------------------------------------
def test_zero_padding_terms_are_zero_symbols_flagged_padding():
    spec, x, w, _ = keras_same()
    f = forward_formula(forward_stages(spec, x, w), 0, 0, 0, 0)
    padded = [t for t in f.terms if t.padding]
    assert len(padded) == 5 and all(t.left.name == "0" and t.vanishes for t in padded)


def test_reflect_padding_terms_name_their_source_cell():
    """Reflect pad 1: padded (0, 0) copies x₁₁, padded (0, 1) copies x₁₀, (1, 0) copies x₀₁."""
    spec = ConvSpec.create((1, 1, 3, 3), (1, 1, 2, 2), padding=1, padding_mode="reflect")
    x = grid(np.arange(9.0).reshape(3, 3))
    f = forward_formula(forward_stages(spec, x, np.ones(spec.weight_shape)), 0, 0, 0, 0)
    assert [t.left.text() for t in f.terms] == ["x₁₁", "x₁₀", "x₀₁", "x₀₀"]
    assert [t.padding for t in f.terms] == [True, True, True, False]
    assert not any(t.vanishes for t in f.terms), "reflected copies are real values"
    assert f.total == 4 + 3 + 1 + 0


def test_reflect_gradient_folds_ring_copies_back():
    """1×3 input, reflect pad 1 on the columns, 1×1 kernel: x₀₁ is copied to both ring cells,
    so ∂L/∂x₀₁ has its own term plus two folded ones; the corners have none."""
    spec = ConvSpec.create(
        (1, 1, 1, 3), (1, 1, 1, 1), padding=((0, 0), (1, 1)), padding_mode="reflect"
    )
    g = grid([[1.0, 10.0, 100.0, 1000.0, 10000.0]])
    ig = input_grad_stages(spec, grid([[2.0]]), g)
    f = input_grad_formula(ig, 0, 0, 0, 1)
    assert [t.folded for t in f.terms] == [False, True, True]
    assert pairs(f) == [("∂L/∂y₀₂", "w₀₀"), ("∂L/∂y₀₀", "w₀₀"), ("∂L/∂y₀₄", "w₀₀")]
    assert f.total == f.value == 2 * (100 + 1 + 10000)
    assert not any(t.folded for t in input_grad_formula(ig, 0, 0, 0, 0).terms)
    zeros = ConvSpec.create((1, 1, 1, 3), (1, 1, 1, 1), padding=((0, 0), (1, 1)))
    fz = input_grad_formula(input_grad_stages(zeros, grid([[2.0]]), g), 0, 0, 0, 1)
    assert [t.folded for t in fz.terms] == [False] and fz.total == 200, "zeros: ring dropped"


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_padded_ring_cells_are_dropped_only_for_zeros(mode):
    spec = ConvSpec.create((1, 1, 4, 4), (1, 1, 3, 3), padding=1, padding_mode=mode)
    rng = np.random.default_rng(5)
    ig = input_grad_stages(
        spec, rng.standard_normal(spec.weight_shape), rng.standard_normal(spec.output_shape)
    )
    ring = input_grad_formula(ig, 0, 0, 0, 3, padded=True)
    inside = input_grad_formula(ig, 0, 0, 2, 2, padded=True)
    assert ring.dropped == (mode == "zeros") and not inside.dropped
    assert np.isclose(ring.total, ig.grad_x_padded[0, 0, 0, 3]) and ring.total != 0
    # x₁₀ has a copy on the ring in every copying mode (reflect: row 1; replicate/circular: col 0)
    folded = [t for t in input_grad_formula(ig, 0, 0, 1, 0).terms if t.folded]
    assert (len(folded) > 0) == (mode != "zeros"), "ring copies fold back except for zeros"


# --- fold-back: a ∂L/∂x cell with padded copies is the sum of their ∂L/∂x̃ ---------------------
def reflect_preset_layer():
    from convviz.presets import PRESETS_BY_KEY

    preset = PRESETS_BY_KEY["reflect"]
    spec, (x, w) = preset.spec(), preset.values()
    g = preset.grad_out_for(conv2d(x, w, padding=spec.padding, padding_mode="reflect"))
    return spec, input_grad_stages(spec, w, g), g, w


def test_folded_cell_is_written_as_the_sum_of_its_copies():
    """The issue's cell: reflect preset, ∂L/∂x₁₁ gathers x̃₁₁ and its reflections at the corner
    and on the top and left edges; the copies' values come from the loop reference run on the
    padded input (no padding), and add up to the loop reference's ∂L/∂x₁₁."""
    spec, ig, g, w = reflect_preset_layer()
    oracle_padded = conv2d_input_loop(spec.padded_shape, w, g)[0, 0]  # ∂L/∂x̃, ring included
    oracle = conv2d_input_loop(spec.input_shape, w, g, padding=1, padding_mode="reflect")
    f = input_grad_formula(ig, 0, 0, 1, 1)
    names = [gr.target.text() for gr in f.groups]
    assert names == ["∂L/∂x̃₁₁", "∂L/∂x̃₋₁,₋₁", "∂L/∂x̃₋₁,₁", "∂L/∂x̃₁,₋₁"]
    copies = [oracle_padded[r + 1, q + 1] for r, q in [(1, 1), (-1, -1), (-1, 1), (1, -1)]]
    assert [gr.value for gr in f.groups] == copies
    assert np.isclose(sum(copies), oracle[0, 0, 1, 1]) and f.value == oracle[0, 0, 1, 1]
    nums = " + ".join(f"({v:g})" if v < 0 else f"{v:g}" for v in copies)
    total = f"{oracle[0, 0, 1, 1]:g}"
    assert f.text(numeric=True) == f"∂L/∂x₁₁ = {nums} = {total}".replace("-", "−")
    assert f.text() == f"∂L/∂x₁₁ = {' + '.join(names)} = {total}".replace("-", "−")
    assert r"\tilde{x}_{-1,-1}" in f.latex()
    # each copy expands to its 9 taps; the first is the cell's own, the others fold back
    assert [len(gr.terms) for gr in f.groups] == [9, 9, 9, 9]
    assert not any(t.folded for t in f.groups[0].terms)
    assert all(t.folded for gr in f.groups[1:] for t in gr.terms)
    assert f.terms == tuple(t for gr in f.groups for t in gr.terms), "terms: all taps, in order"
    assert f.adds_up(27) and all(gr.adds_up(4) for gr in f.groups)
    assert f.check(27) == (
        f"✓ the cell's own ∂L/∂x̃ and its 3 padded copies add up to the engine's value "
        f"{total.replace('-', '−')}"
    )


def test_a_formula_that_does_not_add_up_says_so():
    _, ig, _, _ = reflect_preset_layer()
    f = input_grad_formula(ig, 0, 0, 1, 1)
    wrong = dataclasses.replace(f, value=f.value + 1)
    assert not wrong.adds_up(27) and wrong.check(27).startswith("✗")
    broken_copy = dataclasses.replace(f.groups[1], value=f.groups[1].value + 1)
    inner = dataclasses.replace(f, groups=(f.groups[0], broken_copy, *f.groups[2:]))
    assert not inner.adds_up(27), "a copy whose taps do not make its value is caught too"


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_groups_only_where_copies_fold_back(mode):
    spec = ConvSpec.create((1, 1, 4, 5), (1, 1, 3, 2), padding=((1, 2), (2, 1)), padding_mode=mode)
    rng = np.random.default_rng(2)
    w, g = (
        rng.integers(-2, 3, spec.weight_shape) * 1.0,
        rng.integers(-2, 3, spec.output_shape) * 1.0,
    )
    ig = input_grad_stages(spec, w, g)
    oracle = conv2d_input_loop(spec.input_shape, w, g, padding=spec.padding, padding_mode=mode)
    for r, q in np.ndindex(spec.in_size):
        f = input_grad_formula(ig, 0, 0, r, q)
        copies = int(ig_copies(spec, r, q))
        assert len(f.groups) == (copies if copies > 1 else 0), (mode, r, q)
        assert np.isclose(
            sum(gr.value for gr in f.groups) if f.groups else f.total, oracle[0, 0, r, q]
        )


def ig_copies(spec: ConvSpec, r: int, q: int) -> int:
    from convviz.ops import copies_mask

    return copies_mask(spec.in_size, spec.padding, spec.padding_mode, (r, q)).sum()


def preset_layer(key: str):
    """A preset's layer with its own ∂L/∂y, as the app computes it."""
    from convviz.presets import PRESETS_BY_KEY
    from convviz.stages import layer

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

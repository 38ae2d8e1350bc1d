"""The matrix view's engine (convviz.engine.matrix) against the public API, over random layers.

M·vec(x) = conv2d, Mᵀ·vec(∂L/∂y) = conv2d_input, im2col both ways, and the transposed
convolution (with its output_padding for the remainder) = conv2d_input, for every padding mode,
stride, dilation, per-side padding and remainder hypothesis finds.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from quick import examples

from convviz.engine import matrix
from convviz.engine.conv import conv2d, conv2d_input, conv2d_weight
from convviz.engine.spec import PADDING_MODES, ConvSpec, ConvSpecError


@st.composite
def layers(draw):
    """A random legal layer and its values: (spec, x, w, grad_out)."""
    mode = draw(st.sampled_from(PADDING_MODES))
    H, W = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    kH, kW = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    pads = draw(st.lists(st.integers(0, 3), min_size=4, max_size=4))
    C = draw(st.integers(1, 2))
    try:
        spec = ConvSpec.create(
            (draw(st.integers(1, 2)), C, H, W),
            (draw(st.integers(1, 2)), C, kH, kW),
            stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
            padding=((pads[0], pads[1]), (pads[2], pads[3])),
            dilation=(draw(st.integers(1, 2)), draw(st.integers(1, 2))),
            padding_mode=mode,
        )
    except ConvSpecError:
        spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), stride=2, padding=1)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return (
        spec,
        rng.normal(size=spec.input_shape),
        rng.normal(size=spec.weight_shape),
        rng.normal(size=spec.output_shape),
    )


def api(spec: ConvSpec) -> dict:
    return dict(
        stride=spec.stride,
        padding=spec.padding,
        dilation=spec.dilation,
        padding_mode=spec.padding_mode,
    )


@settings(max_examples=examples(150), deadline=None)
@given(layers())
def test_matrix_routes_equal_the_engine(layer):
    spec, x, w, g = layer
    y = conv2d(x, w, **api(spec))
    grad_x = conv2d_input(x.shape, w, g, **api(spec))
    grad_w = conv2d_weight(x, w.shape, g, **api(spec))
    np.testing.assert_allclose(matrix.matrix_forward(spec, w, x), y, atol=1e-10)
    np.testing.assert_allclose(matrix.matrix_input_grad(spec, w, g), grad_x, atol=1e-10)
    np.testing.assert_allclose(matrix.im2col_forward(spec, x, w), y, atol=1e-10)
    np.testing.assert_allclose(matrix.im2col_weight_grad(spec, x, g), grad_w, atol=1e-10)
    np.testing.assert_allclose(matrix.transpose_input_grad(spec, w, g), grad_x, atol=1e-10)


@settings(max_examples=examples(60), deadline=None)
@given(layers())
def test_transpose_plan_is_a_legal_pytorch_call(layer):
    spec = layer[0]
    plan = matrix.transpose_plan(spec)
    for q, s, d in zip(plan.output_padding, plan.stride, plan.dilation):
        assert 0 <= q < max(s, d)  # PyTorch's rule for output_padding
    assert plan.output_padding == spec.remainder
    symmetric = (
        spec.padding[0][0] == spec.padding[0][1] and spec.padding[1][0] == spec.padding[1][1]
    )
    padded = any(p for side in spec.padding for p in side)
    direct = symmetric and (spec.padding_mode == "zeros" or not padded)
    assert (plan.after == "") == direct


@settings(max_examples=examples(60), deadline=None)
@given(layers())
def test_im2col_sources_name_the_cells_copied(layer):
    spec, x, _, _ = layer
    src = matrix.im2col_sources(spec)
    cols = matrix.im2col(spec, x)
    flat = x.reshape(spec.batch, -1)
    for n in range(spec.batch):
        np.testing.assert_array_equal(np.where(src >= 0, flat[n][src], 0.0), cols[n])


def test_recitation_matrix_by_hand():
    """3×3 ⋆ [[1, 2], [3, 4]]: each row of M is the kernel laid on the flattened input."""
    spec = ConvSpec.create((1, 1, 3, 3), (1, 1, 2, 2))
    M, taps = matrix.conv_matrix(spec, np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(
        M,
        [
            [1, 2, 0, 3, 4, 0, 0, 0, 0],
            [0, 1, 2, 0, 3, 4, 0, 0, 0],
            [0, 0, 0, 1, 2, 0, 3, 4, 0],
            [0, 0, 0, 0, 1, 2, 0, 3, 4],
        ],
    )
    # Mᵀ's row of the centre cell x₁₁ meets the taps in reverse (rotated) order: 4, 3, 2, 1
    assert list(M.T[4]) == [4, 3, 2, 1]
    assert list(taps.T[4]) == [3, 2, 1, 0]
    assert taps[0, 2] == -1


def test_stride_spreads_a_row_of_the_transpose():
    """Stride 2: an input cell is read by outputs 2 apart; the rotated taps meet it spread."""
    spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), stride=2)
    w = np.arange(1.0, 10.0).reshape(3, 3)
    M, _ = matrix.conv_matrix(spec, w)
    row = M.T[2 * 5 + 2].reshape(spec.out_size)  # x[2, 2], read by all four windows
    np.testing.assert_array_equal(row, [[9, 7], [3, 1]])  # w[2,2], w[2,0], w[0,2], w[0,0]


def test_padded_copies_add_up_in_one_entry():
    """Reflect padding: x[0, 1] is read directly and through its copy in the ring."""
    spec = ConvSpec.create((1, 1, 3, 3), (1, 1, 3, 3), padding=1, padding_mode="reflect")
    M, taps = matrix.conv_matrix(spec, np.ones((3, 3)))
    assert (taps == matrix.SEVERAL).any()
    np.testing.assert_array_equal(M.sum(axis=1), np.full(9, 9.0))  # every window has 9 taps


@pytest.mark.parametrize(
    "shape, ok", [((8, 8), True), ((9, 8), False), ((1, 64), True), ((2, 40), False)]
)
def test_too_large_says_why(shape, ok):
    spec = ConvSpec.create((1, 1, *shape), (1, 1, 1, 1))
    reason = matrix.too_large(spec)
    assert (reason is None) == ok
    if not ok:
        assert f"{shape[0] * shape[1]} input" in reason


def test_engine_module_imports_no_ui():
    import subprocess
    import sys

    code = (
        "import sys, convviz.engine.matrix, convviz.engine.checks, convviz.learning.checks, "
        "convviz.model.quiz; "
        "print([m for m in ('streamlit', 'plotly', 'matplotlib') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_clicked_entry_links_its_cells():
    """M[o, i] ties output o, input i and the tap between them; every panel lights them."""
    from convviz.render.story.matrix import TOP, grid_panels, link_of, matrix_panel, transpose_panel

    spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), stride=2)
    x = np.arange(25.0).reshape(1, 1, 5, 5)
    w = np.arange(1.0, 10.0).reshape(1, 1, 3, 3)
    g = np.ones(spec.output_shape)
    ms = matrix.matrix_slice(spec, x, w, g, 0, 0, 0)
    # y[1, 0] (output 2) reads x[3, 1] (input 16) through tap w[1, 1] (tap 4)
    link = link_of(ms, "M", TOP + 2, 16)
    assert (link.out, link.inp, link.tap) == (2, 16, 4)
    assert link_of(ms, "Mt", TOP + 16, 2) == link  # the same entry in the transpose
    assert link_of(ms, "M", 1, 0) is None  # the blank row between vec(x) and M
    assert link_of(ms, "M", 0, 16).inp == 16  # vec(x)'s entry
    assert link.words(ms) == "output y[1, 0], input x[3, 1], tap w[1, 1]"
    assert "no tap" in link_of(ms, "M", TOP + 0, 24).words(ms)  # y[0, 0] never reads x[4, 4]
    assert matrix_panel(ms, link).selected == (TOP + 2, 16)
    assert transpose_panel(ms, link).selected == (TOP + 16, 2)
    x_grid, w_grid, y_grid = grid_panels(ms, link)
    assert (x_grid.selected, w_grid.selected, y_grid.selected) == ((3, 1), (1, 1), (1, 0))
    # an output cell alone lights its window on x and its row of M
    row = link_of(ms, "y", 1, 0)
    x_grid = grid_panels(ms, row)[0]
    np.testing.assert_array_equal(
        np.flatnonzero(x_grid.highlight), [10, 11, 12, 15, 16, 17, 20, 21, 22]
    )
    lit = matrix_panel(ms, row).highlight[TOP + 2]
    assert lit[:25].sum() == 9 and lit[-1]  # the window's 9 taps, and y's entry beside them


def test_the_x_grid_says_where_its_cells_go_in_m_and_it_holds():
    """x's grid shows x's values (as every grid does); its subtitle said 'cells numbered row by
    row', which a student read as the numbers drawn. It now states the column of M each cell
    is, and that rule holds: output y[r, c]'s row of M is nonzero at the columns W·i + j of
    its window's cells."""
    from convviz.render.story.matrix import grid_panels, link_of

    spec = ConvSpec.create((1, 1, 6, 6), (1, 1, 3, 3), stride=2)
    rng = np.random.default_rng(3)
    x = rng.integers(1, 9, spec.input_shape).astype(float)
    w = np.ones(spec.weight_shape)
    ms = matrix.matrix_slice(spec, x, w, np.ones(spec.output_shape), 0, 0, 0)
    x_grid = grid_panels(ms, link_of(ms, "y", 1, 1))[0]
    assert x_grid.subtitle == "6×6; x[i, j] is column 6·i + j of M"
    np.testing.assert_array_equal(x_grid.values, x[0, 0])  # values, not numbers 0…35
    rows, cols = np.nonzero(x_grid.highlight)  # y[1, 1]'s window: x rows 2…4, cols 2…4
    assert set(6 * rows + cols) == set(np.flatnonzero(ms.taps[1 * 2 + 1] != -1))


def test_big_layers_check_the_transpose_on_one_slice(monkeypatch):
    spec = ConvSpec.create((2, 3, 6, 5), (4, 3, 3, 2), stride=2, padding=1, padding_mode="circular")
    rng = np.random.default_rng(1)
    w, g = rng.normal(size=spec.weight_shape), rng.normal(size=spec.output_shape)
    grad_x = conv2d_input(spec.input_shape, w, g, **api(spec))
    worst, cells, part = matrix.transpose_difference(spec, w, g, grad_x, 1, 2)
    assert worst < 1e-12 and cells == grad_x.size and not part
    monkeypatch.setattr(matrix, "MAX_TRANSPOSE_WORK", 0)
    worst, cells, part = matrix.transpose_difference(spec, w, g, grad_x, 1, 2)
    assert worst < 1e-12 and cells == 30 and part
    wrong = grad_x.copy()
    wrong[1, 2, 0, 0] += 1
    assert matrix.transpose_difference(spec, w, g, wrong, 1, 2)[0] == pytest.approx(1.0)


def test_a_slice_of_several_channels_says_so_in_the_titles_a_projector_keeps():
    """With 2 channels, 2 filters and 2 samples, the right column is one slice's share: each
    product's title says whose. In the subtitle, a projector dropped it with the last clauses, and
    M's y column (−28, −6, …) read as the Forward page's y (−9, −3, …)."""
    from convviz.render.story.matrix import (
        im2col_grad_panel,
        im2col_panel,
        link_of,
        matrix_panel,
        transpose_panel,
    )

    spec = ConvSpec.create((2, 2, 4, 4), (2, 2, 3, 3))
    rng = np.random.default_rng(0)
    x, w = rng.integers(-3, 4, spec.input_shape), rng.integers(-3, 4, spec.weight_shape)
    ms = matrix.matrix_slice(spec, x, w, np.ones(spec.output_shape), 0, 0, 0)
    link = link_of(ms, "M", 0, 0)
    shares = {matrix_panel: "channel c", transpose_panel: "filter k", im2col_panel: "channel c",
              im2col_grad_panel: "sample n"}  # fmt: skip
    for make, whose in shares.items():
        panel = make(ms, link)
        assert panel.title.endswith(f"{whose}'s share") and "share" not in panel.subtitle
    one = ConvSpec.create((1, 1, 4, 4), (1, 1, 3, 3))
    ms = matrix.matrix_slice(one, x[:1, :1], w[:1, :1], np.ones(one.output_shape), 0, 0, 0)
    assert "share" not in matrix_panel(ms, link_of(ms, "M", 0, 0)).title

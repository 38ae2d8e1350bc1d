"""The two-layer page's figures and fields: the grid handed from layer 2 to layer 1 holds the
engine's ∂L/∂h and lands as its ∂L/∂y after the gate (shut cells outlined); layer 2's fields are
read by the state's one strict reader and refused with a reason when they cannot work."""

from __future__ import annotations

import numpy as np
import pytest

from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.learning.chain import two_layer_pass
from convviz.learning.training import layer_macs
from convviz.model.fields import (
    CHAIN_DEFAULTS,
    CHAIN_FIELDS,
    PAGE_FIELDS,
    URL_FIELDS,
    parse_field,
    preset_state,
)
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import MAX_MACS, chain_spec, chain_values, values_of
from convviz.render.geometry import DIGIT_EM
from convviz.render.motion.frames import motion_figure
from convviz.render.motion.gif import motion_gif
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.story.chain import (
    GAP,
    PANELS,
    SHUT_WORDS,
    ChainSlice,
    forward_panels,
    gate_panels,
    handover_motion,
    layer_one_motion,
    weight_panels,
)
from convviz.render.theme import GATE_COLOR, THEME, theme_for


def chain_of(preset: str = "recitation-s2", **own):
    """The page's pass for a preset's layer 1 and the page's fields (defaults overridden)."""
    state = preset_state(PRESETS_BY_KEY[preset])
    spec, x, w1, _ = values_of(state)
    stack, (b1, w2, t) = chain_values(spec, CHAIN_DEFAULTS | own, state["seed"], state["draw"])
    return two_layer_pass(stack, x, w1, b1, w2, None, t)


def placed(cells, shape) -> tuple[np.ndarray, np.ndarray]:
    """(values, covered) of a group of cells laid on a grid of `shape` at their (row, col)."""
    grid, covered = np.zeros(shape), np.zeros(shape, bool)
    r, c = cells.row.astype(int), cells.col.astype(int)
    grid[r, c], covered[r, c] = cells.value, True
    return grid, covered


# --- the handover ---------------------------------------------------------------------------------


@pytest.mark.parametrize("b1", [0, -200, -240])
def test_the_handed_grid_is_the_engines_grad_h_and_lands_gated(b1):
    p, s = chain_of(b1=b1), ChainSlice()
    motion = handover_motion(p, s)
    first, landed, gated = motion.scenes
    H, W = p.grad_h.shape[-2:]
    # it starts on layer 2's side (left of layer 1's grid) holding ∂L/∂h …
    for name in ("open", "gated"):
        assert (first.groups[name].col < -GAP + 0.5).all()
    start = {n: first.groups[n] for n in ("open", "gated")}
    shifted = [g.at(col=g.col + W + GAP) for g in start.values()]
    values = sum(placed(g, (H, W))[0] for g in shifted)
    np.testing.assert_array_equal(values, p.grad_h[0, 0])
    # … lands on layer 1's grid unchanged, then the gate zeroes the shut cells
    landed_values = sum(placed(landed.groups[n], (H, W))[0] for n in ("open", "gated"))
    np.testing.assert_array_equal(landed_values, p.grad_h[0, 0])
    after = sum(placed(gated.groups[n], (H, W))[0] for n in ("open", "gated"))
    np.testing.assert_array_equal(after, p.grad_pre[0, 0])
    np.testing.assert_array_equal(after, p.first.input_grad.grad_out[0, 0])  # layer 1's ∂L/∂y
    # the outlines: exactly the shut cells, unseen until the gate acts
    outlines = gated.groups["shut"]
    _, marked = placed(outlines, (H, W))
    np.testing.assert_array_equal(marked, ~p.gate[0, 0])
    assert (outlines.opacity == 1).all() and (first.groups["shut"].opacity == 0).all()
    assert set(outlines.color) <= {GATE_COLOR}


def test_the_recitation_with_a_negative_bias_shuts_a_gate():
    """The page's example of the gate: b₁ = −200 shuts one of h's four cells (pre = −5)."""
    p = chain_of(b1=-200)
    assert (~p.gate).sum() == 1 and p.pre[~p.gate][0] == -5
    assert p.grad_h[~p.gate][0] != 0 and p.grad_pre[~p.gate][0] == 0


def test_without_a_relu_the_grid_is_handed_unchanged():
    p = chain_of(relu=False, b1=-200)
    motion = handover_motion(p, ChainSlice())
    assert len(motion.scenes) == 2 and not len(motion.scenes[-1].groups["gated"].value)
    np.testing.assert_array_equal(p.grad_pre, p.grad_h)


def test_the_handover_draws_as_a_player_figure():
    p = chain_of(b1=-200)
    fig = motion_figure(handover_motion(p, ChainSlice()), THEME)
    assert len(fig.frames) > 3
    assert "ReLU gate shut" in str(fig.layout.annotations)  # its legend says the outline


def test_the_handover_and_layer_1s_motions_draw_as_gifs():
    p = chain_of(b1=-200)
    assert motion_gif(handover_motion(p, ChainSlice()).coarser(2))[:6] == b"GIF89a"
    mask = layer_one_motion(p, "chain-mask", ChainSlice())
    assert mask.names == {"mask": "8 · mask"}  # named as this page's stage, not the storyboard's
    np.testing.assert_array_equal(  # its ∂L/∂y is the gated ∂L/∂h
        layer_one_motion(p, "chain-dilate", ChainSlice()).scenes[0].groups["grad_out"].value,
        p.grad_pre[0, 0].ravel(),
    )


def test_a_motions_widest_number_fits_its_cells():
    """Layer 1's ∂L/∂x here has 4-digit numbers: the motion writes them smaller than its
    cells' usual font, as the still grids do (they ran into their neighbours on a projector)."""
    p = chain_of(b1=-200)
    theme = theme_for(True, (1280, 720))
    fig = motion_figure(layer_one_motion(p, "chain-mask", ChainSlice()), theme)
    sizes = [t.textfont.size for t in fig.data if t.mode and "text" in t.mode]
    cell = min(px for px, _, _ in cell_widths(fig))
    assert sizes and max(sizes) * DIGIT_EM * 4 <= 0.9 * cell + 1
    assert max(sizes) < theme.cell_font(round(cell))  # smaller than a 1-digit grid's


# --- the still grids ------------------------------------------------------------------------------


def test_the_gate_panels_mark_the_shut_cells_cell_by_cell():
    p = chain_of(b1=-200)
    pre, grad_h, grad_y1 = gate_panels(p, ChainSlice())
    np.testing.assert_array_equal(pre.highlight, ~p.gate[0, 0])
    np.testing.assert_array_equal(grad_y1.highlight, ~p.gate[0, 0])
    np.testing.assert_array_equal(grad_h.values, p.grad_h[0, 0])
    np.testing.assert_array_equal(grad_y1.values, np.where(p.gate[0, 0], p.grad_h[0, 0], 0))
    fig = panels_figure([pre, grad_h, grad_y1], THEME, highlight=SHUT_WORDS)
    assert SHUT_WORDS in str(fig.layout.annotations)


def test_an_open_gate_marks_nothing():
    pre, _, grad_y1 = gate_panels(chain_of(), ChainSlice())
    assert pre.highlight is None and grad_y1.highlight is None


def test_the_forward_and_weight_grids_are_the_engines():
    p = chain_of("classroom")
    s = ChainSlice(0, 0, 0)
    by_key = {panel.key: panel.values for panel in forward_panels(p, s)}
    np.testing.assert_array_equal(by_key["h"], p.h[0, 0])
    np.testing.assert_array_equal(by_key["y2"], p.y[0, 0])
    np.testing.assert_array_equal(by_key["pre"], p.pre[0, 0])
    grads = {panel.key: panel.values for panel in weight_panels(p, s)}
    np.testing.assert_array_equal(grads["grad_w1"], p.grads["w1"][0, 0])
    np.testing.assert_array_equal(grads["grad_w2"], p.grads["w2"][0, 0])
    for draw in PANELS.values():  # every still draws
        panels_figure(draw(p, s), THEME, highlight=SHUT_WORDS)


# --- the fields -----------------------------------------------------------------------------------


def test_the_fields_are_one_block_of_the_page_fields_read_by_the_one_reader():
    assert set(CHAIN_FIELDS) <= set(PAGE_FIELDS) and set(CHAIN_FIELDS) <= set(URL_FIELDS)
    names = list(PAGE_FIELDS)
    at = names.index(next(iter(CHAIN_FIELDS)))
    assert names[at : at + len(CHAIN_FIELDS)] == list(CHAIN_FIELDS)  # contiguous
    assert parse_field("kH2", "3") == (3, None)
    assert parse_field("relu", "0") == (False, None)
    assert parse_field("b1", "-200") == (-200, None)
    for name, raw in (("kH2", "0"), ("kH2", "12"), ("kH2", "3.0"), ("kH2", " 3"), ("sh2", "x"),
                      ("pad2", "-1"), ("relu", "yes"), ("b1", "1000"), ("b1", "+5")):  # fmt: skip
        value, problem = parse_field(name, raw)
        assert value is None and f"{name}=" in problem, (name, raw, problem)


def test_a_layer_2_that_cannot_work_is_refused_naming_layer_2():
    spec = PRESETS_BY_KEY["recitation-s2"].spec()  # h is 2×2
    with pytest.raises(ConvSpecError, match="layer 2"):
        chain_spec(spec, CHAIN_DEFAULTS | {"kH2": 5, "pad2": 0})
    assert chain_spec(spec, CHAIN_DEFAULTS).second.out_size == (3, 3)


def test_the_work_limit_counts_both_layers():
    """Layer 1 alone is within the limit; with layer 2 both are not: refused, both counted."""
    spec = ConvSpec.create((8, 16, 128, 128), (16, 16, 3, 3))
    big = CHAIN_DEFAULTS | {"kH2": 11, "kW2": 11, "pad2": 0}
    assert layer_macs(spec) <= MAX_MACS
    with pytest.raises(ConvSpecError, match=r"the two layers need .*\(layer 1 .*, layer 2 .*\)"):
        chain_spec(spec, big)
    assert chain_spec(spec, CHAIN_DEFAULTS).macs <= MAX_MACS


def cell_widths(fig) -> list[tuple[float, float, float]]:
    """(px of a cell, columns, rows) of each panel's axes in a figure."""
    lay, out = fig.layout, []
    plot_w = lay.width - lay.margin.l - lay.margin.r
    for name in [k for k in lay if k.startswith("xaxis")]:
        ax = lay[name]
        if ax.range is not None:
            cols = abs(ax.range[1] - ax.range[0])
            out.append(((ax.domain[1] - ax.domain[0]) * plot_w / cols, cols, 0))
    return out

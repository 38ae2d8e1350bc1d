"""The visible checks (convviz.engine.checks): they pass on every preset, and they catch a wrong
engine."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from quick import examples
from test_matrix import layers

from convviz.engine import checks, reference
from convviz.engine.arrays import layer
from convviz.engine.conv import conv2d
from convviz.model.presets import PRESETS


def preset_layer(p):
    spec = p.spec()
    x, w = p.values()
    y = conv2d(
        x,
        w,
        stride=spec.stride,
        padding=spec.padding,
        dilation=spec.dilation,
        padding_mode=spec.padding_mode,
    )
    return layer(spec, x, w, p.grad_out_for(y))


def broken(lay, where: str, cell: tuple | None = None):
    """The layer with one gradient cell off by 1: what a buggy engine would show.

    By default the cell where x (or w) is largest, so the adjoint's inner product moves too.
    """
    if where == "grad_x":
        g = lay.input_grad.grad_x.copy()
        cell = cell or np.unravel_index(np.abs(lay.forward.x).argmax(), g.shape)
        g[cell] += 1.0
        return replace(lay, input_grad=replace(lay.input_grad, grad_x=g))
    g = lay.weight_grad.grad_w.copy()
    cell = cell or np.unravel_index(np.abs(lay.forward.w).argmax(), g.shape)
    g[cell] += 1.0
    return replace(lay, weight_grad=replace(lay.weight_grad, grad_w=g))


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_every_check_passes_on_every_preset(p):
    found = checks.all_checks(preset_layer(p))
    assert [c.name for c in found] == [
        "Plain-loop reference",
        "Finite differences",
        "Adjoint identity",
        "PyTorch autograd",
    ]
    for c in found:
        assert c.skipped or c.passed, (c.name, c.worst, c.tolerance, c.rows)
    fd = found[1]
    assert len(fd.rows) >= 4  # a few x cells and a few w cells, each with both numbers
    for row in fd.rows:
        assert row.difference <= fd.tolerance


def test_torch_is_run_or_said_skipped():
    c = checks.torch_check(preset_layer(PRESETS[0]))
    try:
        import torch  # noqa: F401
    except ImportError:
        assert c.skipped and not c.passed and "not installed" in c.note
    else:
        assert c.passed


@pytest.mark.parametrize("where", ["grad_x", "grad_w"])
@pytest.mark.parametrize("key", ["recitation-s2", "reflect"])
def test_a_wrong_gradient_is_caught(key, where):
    lay = broken(preset_layer(next(p for p in PRESETS if p.key == key)), where)
    assert not checks.reference_check(lay).passed
    assert not checks.adjoint_check(lay).passed
    first = broken(preset_layer(next(p for p in PRESETS if p.key == key)), where, (0, 0, 0, 0))
    assert not checks.finite_difference_check(first).passed  # it looks at cell [0, 0, 0, 0]


def test_large_layers_are_sampled_and_say_so(monkeypatch):
    monkeypatch.setattr(reference, "MAX_LIVE_TERMS", 0)
    lay = preset_layer(next(p for p in PRESETS if p.key == "classroom"))
    c = checks.reference_check(lay)
    assert c.passed and "sampled" in c.note
    assert len(c.rows) == 3 * checks.SAMPLED_CELLS
    wrong = broken(lay, "grad_w", (0, 0, 0, 0))  # the first cell is always sampled
    assert not checks.reference_check(wrong).passed


def test_large_layers_restrict_the_loss(monkeypatch):
    monkeypatch.setattr(checks, "FULL_LOSS_WORK", 0)
    lay = preset_layer(next(p for p in PRESETS if p.key == "channels-small"))
    c = checks.finite_difference_check(lay)
    assert c.passed and "only over the terms that move" in c.note
    assert not checks.finite_difference_check(broken(lay, "grad_w", (0, 0, 0, 0))).passed


@settings(max_examples=examples(60), deadline=None)
@given(layers())
def test_cell_loops_equal_the_loop_reference(case):
    spec, x, w, g = case
    kw = dict(
        stride=spec.stride,
        padding=spec.padding,
        dilation=spec.dilation,
        padding_mode=spec.padding_mode,
    )
    y = reference.conv2d_loop(x, w, **kw)
    gx = reference.conv2d_input_loop(x.shape, w, g, **kw)
    gw = reference.conv2d_weight_loop(x, w.shape, g, **kw)
    for cell in checks.sample_cells(y.shape, 3):
        assert checks.y_cell_loop(spec, x, w, *cell) == pytest.approx(y[cell], abs=1e-9)
    for cell in checks.sample_cells(gx.shape, 3):
        assert checks.grad_x_cell_loop(spec, w, g, *cell) == pytest.approx(gx[cell], abs=1e-9)
    for cell in checks.sample_cells(gw.shape, 3):
        assert checks.grad_w_cell_loop(spec, x, g, *cell) == pytest.approx(gw[cell], abs=1e-9)

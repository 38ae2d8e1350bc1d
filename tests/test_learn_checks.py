"""The learning checks (convviz.learning.checks): they pass on every preset, through the ReLU's
kinks included, and they catch a wrong gradient."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import convviz
from convviz.engine.arrays import layer
from convviz.engine.checks import Check
from convviz.engine.spec import ConvSpec
from convviz.learning import checks as learn_checks
from convviz.learning.chain import TwoLayerSpec
from convviz.model.presets import PRESETS, PRESETS_BY_KEY


def preset_step(p, lr: float = 1e-4, reduction: str = "sum") -> convviz.Step:
    """One step of the preset's layer towards a Sobel target where it fits, else the random one."""
    spec = p.spec()
    x, w = p.values()
    source = "sobel x" if spec.kernel_size == (3, 3) else "random"
    target = convviz.make_target(spec, x, source, seed=p.seed).t
    return convviz.learning_step(spec, x, w, None, target, lr, reduction=reduction)


def preset_chain(p, relu: bool = True) -> convviz.TwoLayerPass:
    """The preset's layer, then a 2×2 layer of two filters on its output (1×1 if it is smaller)."""
    first = p.spec()
    x, w1 = p.values()
    k = 2 if min(first.out_size) >= 2 else 1
    spec = TwoLayerSpec.create(first, (2, first.out_channels, k, k), relu=relu)
    w2 = np.random.default_rng(p.seed).integers(-2, 3, spec.second.weight_shape).astype(float)
    t = convviz.two_layer_target(spec, x, "random", seed=p.seed).t
    return convviz.two_layer_pass(spec, x, w1, None, w2, None, t)


def assert_passes(check: Check) -> None:
    assert check.passed, (check.name, check.worst, check.tolerance, check.rows, check.note)
    assert all(r.difference <= check.tolerance for r in check.rows)


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_the_loss_check_passes_on_every_preset(p, reduction):
    check = learn_checks.loss_gradient_check(preset_step(p, reduction=reduction))
    assert_passes(check)
    assert len(check.rows) >= 2 and any("∂L/∂b" in r.label for r in check.rows)


@pytest.mark.parametrize("relu", [True, False], ids=["ReLU", "linear"])
@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_the_two_layer_check_passes_on_every_preset(p, relu):
    check = learn_checks.two_layer_check(preset_chain(p, relu))
    assert_passes(check)
    labels = " ".join(r.label for r in check.rows)
    for name in ("∂L/∂w₂", "∂L/∂b₂", "∂L/∂w₁", "∂L/∂x"):
        assert name in labels, f"{name} not checked: {check.note}"


def test_a_cell_at_the_relus_kink_is_compared_with_the_gate_held_and_said_so():
    """pre[0, 0, 0, 0] = 0 exactly: moving x[0, 0, 0, 0] or b₁ either way crosses the kink, so
    L has no derivative there; the engine's ReLU′(0) = 0 is the slope with the gate held shut."""
    first = ConvSpec.create((1, 1, 2, 2), (1, 1, 1, 1))
    spec = TwoLayerSpec.create(first, (1, 1, 1, 1))
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    b1 = np.array([-1.0])  # pre = x − 1: 0 at [0, 0], the cell x = 1 feeds
    p = convviz.two_layer_pass(spec, x, np.ones((1, 1, 1, 1)), b1, np.ones((1, 1, 1, 1)), None,
                               np.zeros((1, 1, 2, 2)))  # fmt: skip
    check = learn_checks.two_layer_check(p)
    assert_passes(check)
    labels = [r.label for r in check.rows]
    assert "∂L/∂x[0, 0, 0, 0] (gate held)" in labels and "∂L/∂b₁[0] (gate held)" in labels
    assert "∂L/∂w₂[0, 0, 0, 0]" in labels, "layer 2 never crosses a kink"
    assert "gate held as it is there" in check.note and "ReLU′(0) = 0" in check.note
    wrong = replace(
        p,
        first=replace(
            p.first,
            input_grad=replace(
                p.first.input_grad, grad_x=p.first.input_grad.grad_x + np.eye(2)[None, None]
            ),
        ),
    )
    assert not learn_checks.two_layer_check(wrong).passed, "a held row still catches a wrong number"


def test_a_kink_within_h_holds_the_gate_and_says_so():
    first = ConvSpec.create((1, 1, 2, 2), (1, 1, 1, 1))
    spec = TwoLayerSpec.create(first, (1, 1, 1, 1))
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    b1 = np.array([-1.0 + 5e-4])  # pre[0, 0] = 5e-4: ±1e-3 on x[0, 0] or b₁ crosses 0
    p = convviz.two_layer_pass(spec, x, np.ones((1, 1, 1, 1)), b1, np.ones((1, 1, 1, 1)), None,
                               np.zeros((1, 1, 2, 2)))  # fmt: skip
    check = learn_checks.two_layer_check(p)
    assert_passes(check)
    assert "∂L/∂b₁[0] (gate held)" in [r.label for r in check.rows]
    assert "within h of 0" in check.note
    finer = learn_checks.two_layer_check(p, 1e-4)
    assert "(gate held)" not in " ".join(r.label for r in finer.rows)


def _with_grad(step: convviz.Step, name: str) -> convviz.Step:
    grad = getattr(step, name).copy()
    grad.flat[0] += 1.0
    return replace(step, **{name: grad})


@pytest.mark.parametrize("name", ["grad_w", "grad_b"])
@pytest.mark.parametrize("key", ["recitation-s2", "reflect", "channels-small"])
def test_the_loss_check_catches_a_wrong_gradient(key, name):
    check = learn_checks.loss_gradient_check(_with_grad(preset_step(PRESETS_BY_KEY[key]), name))
    assert not check.passed and check.worst >= 0.5


def test_the_two_layer_check_catches_a_missing_gate():
    """The classic bug: ∂L/∂h passed to layer 1 without the ReLU's gate."""
    p = preset_chain(PRESETS_BY_KEY["even-same"])
    assert not p.gate.all(), "the example needs a shut gate"
    one = p.first.forward
    ungated = layer(one.spec, one.x, one.w, p.grad_h, one.bias)
    check = learn_checks.two_layer_check(replace(p, first=ungated))
    assert not check.passed


def test_the_two_layer_check_catches_a_wrong_layer_2_gradient():
    p = preset_chain(PRESETS_BY_KEY["recitation-s2"])
    wg = p.second.weight_grad
    wrong = replace(p.second, weight_grad=replace(wg, grad_w=wg.grad_w + 1.0))
    assert not learn_checks.two_layer_check(replace(p, second=wrong)).passed


def test_the_training_check_is_run_or_said_skipped():
    p = PRESETS_BY_KEY["recitation-s2"]
    spec, (x, w) = p.spec(), p.values()
    target = convviz.make_target(spec, x, "sobel x").t
    run = convviz.train(spec, x, w, None, target, 1e-3, 30, momentum=0.9)
    check = learn_checks.training_torch_check(run)
    try:
        import torch  # noqa: F401
    except ImportError:
        assert check.skipped and "not installed" in check.note
    else:
        assert_passes(check)
        assert "lr 0.001, momentum 0.9" in check.claim and len(check.rows) == 3


def test_the_training_check_catches_a_wrong_step():
    pytest.importorskip("torch")
    p = PRESETS_BY_KEY["classroom"]
    spec, (x, w) = p.spec(), p.values()
    run = convviz.train(spec, x, w, None, convviz.make_target(spec, x, "box").t, 1e-4, 10)
    assert not learn_checks.training_torch_check(replace(run, lr=1.01e-4)).passed

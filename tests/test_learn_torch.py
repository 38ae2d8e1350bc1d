"""Learning against PyTorch (skipped where torch is not installed): autograd gives the same
∂L/∂y, ∂L/∂w, ∂L/∂b and the same chain through two layers; torch.optim.SGD, with and without
momentum, takes the same steps. float64 throughout, to ~1e-10."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import assert_array, conv_cases
from quick import examples
from test_chain import stacks

import convviz
from convviz.engine.spec import ConvSpec
from convviz.model.presets import PRESETS_BY_KEY

torch = pytest.importorskip("torch")
F = torch.nn.functional
TORCH_MODE = {"zeros": "constant", "reflect": "reflect", "replicate": "replicate"}
TORCH_MODE["circular"] = "circular"


def torch_conv(x, w, b, spec: ConvSpec):
    """One layer as PyTorch computes it, its per-side padding through F.pad."""
    (top, bottom), (left, right) = spec.padding
    x = F.pad(x, (left, right, top, bottom), mode=TORCH_MODE[spec.padding_mode])
    return F.conv2d(x, w, b, stride=spec.stride, dilation=spec.dilation)


def torch_loss(y, t, reduction: str):
    total = 0.5 * ((y - t) ** 2).sum()
    return total / y.shape[0] if reduction == "mean" else total


def torch_run(spec, x, w, b, t, lr, momentum, reduction, steps) -> dict:
    """torch.optim.SGD on the layer: the loss, w, b, y and ∂L/∂w at every step."""
    x, t = torch.tensor(x), torch.tensor(t)
    w, b = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=lr, momentum=momentum)
    out = {"loss": [], "w": [], "b": [], "y": [], "grad_w": [], "grad_b": []}
    for _ in range(steps + 1):
        opt.zero_grad()
        y = torch_conv(x, w, b, spec)
        loss = torch_loss(y, t, reduction)
        loss.backward()
        for name, value in (("loss", loss), ("w", w), ("b", b), ("y", y)):
            out[name].append(value.detach().numpy().copy())
        out["grad_w"].append(w.grad.numpy().copy())
        out["grad_b"].append(b.grad.numpy().copy())
        opt.step()
    return {name: np.array(v) for name, v in out.items()}


def assert_same_run(run: convviz.Run, ref: dict, what: str) -> None:
    """Every kept array of the run against torch's, each relative to its own size."""
    for name in ("w", "y", "grad_w"):
        want = ref[name][run.kept]
        assert_array(getattr(run, name), want, f"{name}, {what}", rtol=1e-10,
                     atol=1e-10 * max(1.0, np.abs(want).max()))  # fmt: skip
    for name in ("loss", "b", "grad_b"):
        want = ref[name][: run.steps_done + 1]
        assert_array(getattr(run, name), want, f"{name}, {what}", rtol=1e-10,
                     atol=1e-10 * max(1.0, np.abs(want).max()))  # fmt: skip


@settings(max_examples=examples(40), deadline=None)
@given(
    conv_cases(max_k=3, max_channels=2),
    st.sampled_from([0.0, 0.5, 0.9]),
    st.sampled_from(["sum", "mean"]),
)
def test_a_run_is_torch_optim_sgd(case, momentum, reduction):
    t = np.random.default_rng(case.seed + 1).standard_normal(case.grad_out.shape)
    curvature = convviz.curvature(case.spec, case.x, reduction=reduction)
    lr = 0.5 * curvature.critical_lr(momentum)  # converging, each step still moves a lot
    run = convviz.train(
        case.spec, case.x, case.w, case.bias, t, lr, 8, momentum=momentum, reduction=reduction
    )
    ref = torch_run(case.spec, case.x, case.w, case.bias, t, lr, momentum, reduction, 8)
    assert run.steps_done == 8
    assert_same_run(run, ref, f"{case!r}, μ={momentum}, {reduction}")


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("momentum", [0.0, 0.9], ids=["plain", "momentum"])
@pytest.mark.parametrize("key", ["recitation-s2", "classroom", "channels-small", "reflect"])
def test_200_steps_of_a_preset_are_torchs(key, momentum, reduction):
    p = PRESETS_BY_KEY[key]
    spec, (x, w) = p.spec(), p.values()
    target = convviz.make_target(spec, x, "sobel x").t
    lr = 0.4 * convviz.curvature(spec, x, reduction=reduction).critical_lr(momentum)
    b = np.zeros(spec.out_channels)
    run = convviz.train(spec, x, w, b, target, lr, 200, momentum=momentum, reduction=reduction)
    assert run.steps_done == 200
    assert_same_run(run, torch_run(spec, x, w, b, target, lr, momentum, reduction, 200), key)


def test_a_diverging_run_is_torchs_until_it_stops():
    p = PRESETS_BY_KEY["recitation-s2"]
    spec, (x, w) = p.spec(), p.values()
    target = convviz.make_target(spec, x, "sobel x").t
    lr = 1.05 * convviz.curvature(spec, x).critical_lr()
    run = convviz.train(spec, x, w, None, target, lr, 200)
    assert run.diverged
    ref = torch_run(spec, x, w, np.zeros(1), target, lr, 0.0, "sum", run.steps_done)
    assert_same_run(run, ref, "diverging")


@settings(max_examples=examples(60), deadline=None)
@given(stacks())
def test_the_chain_is_torch_autograds(stack):
    spec, (x, w1, b1, w2, b2, t), reduction = stack
    p = convviz.two_layer_pass(spec, x, w1, b1, w2, b2, t, reduction=reduction)
    leaves = [torch.tensor(a, requires_grad=True) for a in (x, w1, b1, w2, b2)]
    tx, tw1, tb1, tw2, tb2 = leaves
    pre = torch_conv(tx, tw1, tb1, spec.first)
    h = F.relu(pre) if spec.relu else pre * 1.0
    y = torch_conv(h, tw2, tb2, spec.second)
    for a in (pre, h, y):
        a.retain_grad()
    loss = torch_loss(y, torch.tensor(t), reduction)
    loss.backward()
    engine = {"y": p.y, "∂L/∂y": p.loss.grad_out, "∂L/∂h": p.grad_h, "∂L/∂pre": p.grad_pre,
              "∂L/∂x": p.grad_x} | {f"∂L/∂{k}": v for k, v in p.grads.items()}  # fmt: skip
    reference = {"y": y.detach(), "∂L/∂y": y.grad, "∂L/∂h": h.grad, "∂L/∂pre": pre.grad}
    reference |= dict(zip(["∂L/∂x", "∂L/∂w1", "∂L/∂b1", "∂L/∂w2", "∂L/∂b2"],
                          (a.grad for a in leaves)))  # fmt: skip
    assert p.loss.value == pytest.approx(loss.item(), rel=1e-12, abs=1e-12)
    for name, want in reference.items():
        assert_array(engine[name], want.numpy(), f"{name}, {spec}")

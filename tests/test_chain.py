"""Two stacked convolutions (convviz.learning.chain): ∂L/∂h from layer 2 is layer 1's ∂L/∂y.

Oracles: a plain loop of the chain rule (the loop reference of each layer, the ReLU gate and
∂L/∂y cell by cell) over random configurations; finite differences of the two-layer loss; each
layer's own stages; PyTorch's autograd in test_learn_torch.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from oracles import assert_array, conv_cases, numeric_grad, read_only
from quick import examples

import convviz
from convviz.engine.ops import dilate, pad
from convviz.engine.reference import conv2d_input_loop, conv2d_loop, conv2d_weight_loop
from convviz.engine.spec import PADDING_MODES, ConvSpec, ConvSpecError
from convviz.engine.values import example_w
from convviz.learning.chain import TwoLayerSpec, two_layer_forward
from convviz.model.presets import PRESETS_BY_KEY


def chain_loop(spec: TwoLayerSpec, x, w1, b1, w2, b2, t, reduction: str) -> dict:
    """Every array of the two-layer pass by plain loops: the oracle of the chain rule."""
    kw1, kw2 = spec.first.kwargs(), spec.second.kwargs()
    pre = conv2d_loop(x, w1, b1, **kw1)
    gate, h = np.ones(pre.shape, dtype=bool), pre.copy()
    for cell in np.ndindex(pre.shape):
        if spec.relu and not pre[cell] > 0:
            gate[cell], h[cell] = False, 0.0
    y = conv2d_loop(h, w2, b2, **kw2)
    scale = 1 / x.shape[0] if reduction == "mean" else 1.0
    grad_y, loss = np.zeros(y.shape), 0.0
    for cell in np.ndindex(y.shape):
        grad_y[cell] = scale * (y[cell] - t[cell])
        loss += scale * 0.5 * (y[cell] - t[cell]) ** 2
    grad_h = conv2d_input_loop(h.shape, w2, grad_y, **kw2)
    grad_pre = np.zeros(pre.shape)
    for cell in np.ndindex(pre.shape):
        grad_pre[cell] = grad_h[cell] if gate[cell] else 0.0
    return {
        "pre": pre, "gate": gate, "h": h, "y": y, "L": loss, "grad_y": grad_y, "grad_h": grad_h,
        "grad_pre": grad_pre, "w2": conv2d_weight_loop(h, w2.shape, grad_y, **kw2),
        "b2": _channel_sums(grad_y), "w1": conv2d_weight_loop(x, w1.shape, grad_pre, **kw1),
        "b1": _channel_sums(grad_pre), "x": conv2d_input_loop(x.shape, w1, grad_pre, **kw1),
    }  # fmt: skip


def _channel_sums(g: np.ndarray) -> np.ndarray:
    out = np.zeros(g.shape[1])
    for n, k, i, j in np.ndindex(g.shape):
        out[k] += g[n, k, i, j]
    return out


def engine_arrays(p: convviz.TwoLayerPass) -> dict:
    """The pass's arrays under chain_loop's names."""
    return p.grads | {
        "pre": p.pre, "gate": p.gate, "h": p.h, "y": p.y, "L": p.loss.value,
        "grad_y": p.loss.grad_out, "grad_h": p.grad_h, "grad_pre": p.grad_pre, "x": p.grad_x,
    }  # fmt: skip


@st.composite
def stacks(draw):
    """A random layer 1 (conv_cases: stride, per-side padding, dilation, modes, channels,
    batch) and a random layer 2 on its output, with values, a target, ReLU on or off."""
    case = draw(conv_cases(max_k=3, max_channels=2, max_batch=2))
    k2 = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    sides = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(2))
    geometry = {
        "stride": (draw(st.integers(1, 2)), draw(st.integers(1, 2))),
        "dilation": draw(st.integers(1, 2)),
        "padding": sides,
        "padding_mode": draw(st.sampled_from(PADDING_MODES)),
    }
    c2 = draw(st.integers(1, 2))
    try:
        spec = TwoLayerSpec.create(
            case.spec, (c2, case.spec.out_channels, *k2), relu=draw(st.booleans()), **geometry
        )
    except ConvSpecError:
        assume(False)
    rng = np.random.default_rng(case.seed)
    w2, b2 = rng.standard_normal(spec.second.weight_shape), rng.standard_normal(c2)
    t = rng.standard_normal(spec.second.output_shape)
    reduction = draw(st.sampled_from(["sum", "mean"]))
    return spec, (case.x, case.w, case.bias, w2, b2, t), reduction


@settings(max_examples=examples(120), deadline=None)
@given(stacks())
def test_the_chain_matches_a_plain_loop(stack):
    spec, values, reduction = stack
    p = convviz.two_layer_pass(spec, *values, reduction=reduction)
    want = chain_loop(spec, *values, reduction)
    got = engine_arrays(p)
    for name, expected in want.items():
        assert_array(got[name], expected, f"{name}, {spec}")


FD_STACKS = [
    # layer 1 (x shape, w shape, geometry), layer 2 (w shape, geometry), ReLU, reduction
    pytest.param(
        ((1, 1, 5, 5), (1, 1, 3, 3), {"stride": 2}), ((1, 1, 2, 2), {"padding": 1}), True, "sum",
        id="recitation s2, then 2×2 padded",
    ),
    pytest.param(
        ((2, 2, 6, 5), (3, 2, 3, 2), {"padding": ((1, 0), (0, 2)), "dilation": 2}),
        ((2, 3, 2, 2), {"stride": 2, "padding_mode": "reflect", "padding": 1}), True, "mean",
        id="channels, batch, per-side, dilation, reflect, mean",
    ),
    pytest.param(
        ((1, 2, 4, 4), (2, 2, 2, 2), {"padding": "same"}),
        ((1, 2, 3, 3), {"padding": "full"}), False, "sum", id="no ReLU, same then full",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("one", "two", "relu", "reduction"), FD_STACKS)
def test_the_chain_matches_finite_differences(one, two, relu, reduction):
    first = ConvSpec.create(one[0], one[1], **one[2])
    spec = TwoLayerSpec.create(first, two[0], relu=relu, **two[1])
    rng = np.random.default_rng(5)
    x, w1, w2 = (rng.standard_normal(s) for s in (one[0], one[1], two[0]))
    b1, b2 = rng.standard_normal(one[1][0]), rng.standard_normal(two[0][0])
    t = rng.standard_normal(spec.second.output_shape)
    values = {"x": x, "w1": w1, "b1": b1, "w2": w2, "b2": b2}
    p = convviz.two_layer_pass(spec, x, w1, b1, w2, b2, t, reduction=reduction)
    grads = p.grads | {"x": p.grad_x}
    for name, a in values.items():

        def loss(v, name=name):
            y = two_layer_forward(spec, **(values | {name: v}))
            return convviz.mse_loss(y, t, reduction=reduction).value

        assert_array(grads[name], numeric_grad(loss, a, h=1e-5), f"∂L/∂{name} vs FD", rtol=1e-6,
                     atol=1e-7)  # fmt: skip


def test_the_relu_gate_is_shut_at_zero_as_in_pytorch():
    """pre = [[2, 0], [−1, 3]]: the gate passes ∂L/∂h at 2 and 3, drops it at 0 and −1."""
    first = ConvSpec.create((1, 1, 2, 2), (1, 1, 1, 1))
    spec = TwoLayerSpec.create(first, (1, 1, 1, 1))
    x = np.array([[[[2.0, 0.0], [-1.0, 3.0]]]])
    one = np.ones((1, 1, 1, 1))
    p = convviz.two_layer_pass(spec, x, one, None, 2 * one, None, np.ones((1, 1, 2, 2)))
    assert p.gate.tolist() == [[[[True, False], [False, True]]]]
    assert_array(p.h, [[[[2.0, 0.0], [0.0, 3.0]]]], "h = ReLU(pre)")
    # y = 2h = [[4, 0], [0, 6]], ∂L/∂y = y − 1 = [[3, −1], [−1, 5]], ∂L/∂h = 2·∂L/∂y
    assert_array(p.grad_h, [[[[6.0, -2.0], [-2.0, 10.0]]]], "∂L/∂h")
    assert_array(p.grad_pre, [[[[6.0, 0.0], [0.0, 10.0]]]], "∂L/∂pre: the gate drops 0 and −1")
    assert_array(p.grads["w1"], [[[[6 * 2 + 10 * 3.0]]]], "∂L/∂w₁ = Σ ∂L/∂pre·x = 42")
    assert_array(p.grads["b1"], [16.0], "∂L/∂b₁ = Σ ∂L/∂pre")
    linear = TwoLayerSpec.create(first, (1, 1, 1, 1), relu=False)
    q = convviz.two_layer_pass(linear, x, one, None, 2 * one, None, np.zeros((1, 1, 2, 2)))
    assert q.gate.all() and np.array_equal(q.h, q.pre) and np.array_equal(q.grad_pre, q.grad_h)


def test_each_layer_draws_its_own_stages_from_what_the_other_hands_it():
    """Layer 2's input is h and its ∂L/∂x is ∂L/∂h; layer 1's ∂L/∂y is ∂L/∂h after the gate,
    and layer 1 dilates, pads, rotates and masks it with its own stride, kernel and padding."""
    p_ = PRESETS_BY_KEY["classroom"]
    first = p_.spec()
    x, w1 = p_.values()
    spec = TwoLayerSpec.create(first, (1, 1, 2, 2), padding=1)
    w2 = np.array([[[[1.0, -1.0], [2.0, 0.5]]]])
    t = convviz.two_layer_target(spec, x, "random", seed=1).t
    p = convviz.two_layer_pass(spec, x, w1, None, w2, None, t)
    assert np.array_equal(p.second.forward.x, p.h)
    assert np.array_equal(p.second.input_grad.grad_out, p.loss.grad_out)
    assert np.array_equal(p.second.input_grad.grad_x, p.grad_h)
    ig = p.first.input_grad
    assert np.array_equal(ig.grad_out, p.grad_pre)
    assert np.array_equal(ig.dilated, dilate(p.grad_pre, first.stride))
    assert np.array_equal(ig.padded, pad(ig.dilated, first.full_padding))
    assert np.array_equal(ig.w_rot, w1[..., ::-1, ::-1].transpose(1, 0, 2, 3))
    assert ig.pad_mask.any(), "layer 1's padding ring is there to mask"


def test_a_kernel_target_runs_the_named_kernel_through_both_layers():
    first = PRESETS_BY_KEY["recitation-s2"].spec()
    x, _ = PRESETS_BY_KEY["recitation-s2"].values()
    spec = TwoLayerSpec.create(first, (1, 1, 3, 3), padding=1)
    target = convviz.two_layer_target(spec, x, "sobel x")
    sobel = example_w(first, 0, "sobel x")
    assert_array(target.t, two_layer_forward(spec, x, sobel, None, sobel, None), "t")
    assert len(target.kernels) == 2
    random = convviz.two_layer_target(spec, x, "random", seed=4).t
    assert random.shape == spec.second.output_shape
    typed = convviz.two_layer_target(spec, x, "typed", values=np.ones((1, 1, 2, 2))).t
    assert_array(typed, np.ones((1, 1, 2, 2)), "typed")


BAD_STACKS = [
    pytest.param((1, 1, 3, 3), {}, "layer 2 \\(its input is h, layer 1's 2×2 output\\): the 3×3 "
                 "kernel", id="kernel wider than h"),
    pytest.param((1, 2, 1, 1), {}, "layer 2 .*the input has 1 channels", id="channels"),
    pytest.param((1, 1, 1, 1), {"stride": 0}, "layer 2 .*stride `0` is too small", id="stride"),
    pytest.param((1, 1, 2, 2), {"padding": 2, "padding_mode": "reflect"}, "layer 2 .*reflect",
                 id="reflect wider than h"),
    pytest.param((16, 1, 1, 1), {"max_macs": 99}, "need 100 multiply-adds per pass \\(layer 1 "
                 "36, layer 2 64\\)", id="work of both layers"),
]  # fmt: skip


@pytest.mark.parametrize(("w_shape", "kwargs", "message"), BAD_STACKS)
def test_a_bad_second_layer_is_refused_naming_layer_2(w_shape, kwargs, message):
    first = PRESETS_BY_KEY["recitation-s2"].spec()  # 5×5 → 2×2, 36 multiply-adds
    with pytest.raises(ConvSpecError, match=message):
        TwoLayerSpec.create(first, w_shape, **kwargs)


def test_the_work_limit_counts_both_layers():
    first = PRESETS_BY_KEY["recitation-s2"].spec()
    assert TwoLayerSpec.create(first, (16, 1, 1, 1), max_macs=100).macs == 36 + 64


def test_layer_2_must_sit_on_layer_1s_output():
    first = PRESETS_BY_KEY["recitation-s2"].spec()
    with pytest.raises(ConvSpecError, match="layer 2's input must be layer 1's output"):
        TwoLayerSpec(first, ConvSpec.create((1, 1, 3, 3), (1, 1, 1, 1)))


def test_a_pass_refuses_values_of_the_wrong_shape_and_never_mutates():
    first = PRESETS_BY_KEY["recitation-s2"].spec()
    spec = TwoLayerSpec.create(first, (1, 1, 2, 2))
    x, w1 = PRESETS_BY_KEY["recitation-s2"].values()
    w2, t = np.ones((1, 1, 2, 2)), np.zeros((1, 1, 1, 1))
    with pytest.raises(ConvSpecError, match="the kernel w must have the shape \\(1, 1, 2, 2\\)"):
        convviz.two_layer_pass(spec, x, w1, None, w1, None, t)
    with pytest.raises(ConvSpecError, match="the target must have y's shape \\(1, 1, 1, 1\\)"):
        convviz.two_layer_pass(spec, x, w1, None, w2, None, np.zeros((1, 1, 2, 2)))
    frozen = read_only(x, w1, w2, t)
    convviz.two_layer_pass(spec, frozen[0], frozen[1], None, frozen[2], None, frozen[3])

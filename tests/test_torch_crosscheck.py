"""Optional cross-check against PyTorch (skipped where torch is not installed, e.g. in CI).

PyTorch is the contract's reference: same layout, same names, same padding modes. Asymmetric
padding goes through F.pad, so every padding form and mode is checked through torch's autograd;
torch's own conv2d_input / conv2d_weight and padding='same' are checked where they apply.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from oracles import assert_array, conv_cases
from quick import examples

from convviz import conv2d, conv2d_bias, conv2d_input, conv2d_weight

torch = pytest.importorskip("torch")
F = torch.nn.functional

TORCH_MODE = {
    "zeros": "constant",
    "reflect": "reflect",
    "replicate": "replicate",
    "circular": "circular",
}


def torch_conv_and_grads(case):
    """y, grad_x, grad_w, grad_b by torch autograd, padding applied with F.pad."""
    (top, bottom), (left, right) = case.spec.padding
    x = torch.tensor(case.x, requires_grad=True)
    w = torch.tensor(case.w, requires_grad=True)
    b = torch.tensor(case.bias, requires_grad=True)
    x_pad = F.pad(x, (left, right, top, bottom), mode=TORCH_MODE[case.spec.padding_mode])
    y = F.conv2d(x_pad, w, b, stride=case.spec.stride, dilation=case.spec.dilation)
    y.backward(torch.tensor(case.grad_out))
    return (t.detach().numpy() for t in (y, x.grad, w.grad, b.grad))


@settings(max_examples=examples(150), deadline=None)
@given(conv_cases(max_k=4))
def test_matches_torch_autograd(case):
    y, grad_x, grad_w, grad_b = torch_conv_and_grads(case)
    kw = case.kwargs
    assert_array(conv2d(case.x, case.w, case.bias, **kw), y, f"conv2d vs torch, {case!r}")
    assert_array(
        conv2d_input(case.x.shape, case.w, case.grad_out, **kw),
        grad_x,
        f"conv2d_input vs torch, {case!r}",
    )
    assert_array(
        conv2d_weight(case.x, case.w.shape, case.grad_out, **kw),
        grad_w,
        f"conv2d_weight vs torch, {case!r}",
    )
    assert_array(conv2d_bias(case.grad_out), grad_b, f"conv2d_bias vs torch, {case!r}")


TORCH_GRAD_ROWS = [
    pytest.param(
        (2, 3, 7, 6), (4, 3, 3, 2), {"stride": 2, "padding": 1, "dilation": 1}, id="s2 p1"
    ),
    pytest.param(
        (1, 2, 9, 8),
        (2, 2, 3, 3),
        {"stride": (2, 3), "padding": (2, 1), "dilation": 2},
        id="s(2,3) p(2,1) d2",
    ),
    pytest.param(
        (1, 1, 6, 6), (1, 1, 3, 3), {"stride": 2, "padding": 0, "dilation": 1}, id="remainder"
    ),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "kw"), TORCH_GRAD_ROWS)
def test_matches_torch_nn_grad(x_shape, w_shape, kw):
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    y = F.conv2d(torch.tensor(x), torch.tensor(w), **kw).numpy()
    g = rng.standard_normal(y.shape)
    assert_array(conv2d(x, w, **kw), y, "conv2d vs F.conv2d")
    want_x = torch.nn.grad.conv2d_input(x_shape, torch.tensor(w), torch.tensor(g), **kw).numpy()
    assert_array(conv2d_input(x_shape, w, g, **kw), want_x, "vs torch.nn.grad.conv2d_input")
    want_w = torch.nn.grad.conv2d_weight(torch.tensor(x), w_shape, torch.tensor(g), **kw).numpy()
    assert_array(conv2d_weight(x, w_shape, g, **kw), want_w, "vs torch.nn.grad.conv2d_weight")


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")
@pytest.mark.parametrize("kernel", [(3, 3), (4, 2), (2, 5)], ids=lambda k: f"k{k[0]}x{k[1]}")
@pytest.mark.parametrize("dilation", [1, 2])
def test_same_matches_torch_at_stride_1(kernel, dilation):
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((1, 2, 7, 6)), rng.standard_normal((3, 2, *kernel))
    want = F.conv2d(torch.tensor(x), torch.tensor(w), padding="same", dilation=dilation).numpy()
    assert_array(conv2d(x, w, padding="same", dilation=dilation), want, "'same' vs torch")


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_padding_mode_matches_torch_conv2d_module(mode):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 2, 5, 6))
    layer = torch.nn.Conv2d(
        2,
        3,
        (3, 2),
        stride=(1, 2),
        padding=(2, 1),
        padding_mode=mode,
        bias=True,
        dtype=torch.float64,
    )
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    want = layer(torch.tensor(x)).detach().numpy()
    got = conv2d(x, w, b, stride=(1, 2), padding=(2, 1), padding_mode=mode)
    assert_array(got, want, f"nn.Conv2d(padding_mode={mode!r})")

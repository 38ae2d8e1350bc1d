"""How a layer learns (convviz.learning.loss, learn, training): the loss and ∂L/∂y, an SGD step, a
run.

Oracles: hand-worked steps; today's `gout=mse` numbers (old links keep them); the public API
(conv2d, conv2d_weight, conv2d_bias) stepped by hand; finite differences; the least-squares
solution of the layer (numpy.linalg) for where a run must end; bad input refused with a message.
PyTorch's autograd and torch.optim.SGD are in test_learn_torch.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import assert_array, conv_cases, grid, numeric_grad, read_only
from quick import examples

import convviz
from convviz.engine.conv import conv2d, conv2d_bias, conv2d_weight
from convviz.engine.matrix import im2col
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.engine.values import example_grad_out, example_w, layer_values
from convviz.learning import training
from convviz.learning.loss import REDUCTIONS
from convviz.model.presets import PRESETS, PRESETS_BY_KEY

RECITATION = PRESETS_BY_KEY["recitation-s2"]
CLASSROOM = PRESETS_BY_KEY["classroom"]


def preset_layer(key: str):
    p = PRESETS_BY_KEY[key]
    return (p.spec(), *p.values())


# =================================================================================================
# 1. The loss and ∂L/∂y
# =================================================================================================


def test_loss_by_hand():
    # y − t = [[−1, 1], [3, 5]]: L = ½(1 + 1 + 9 + 25) = 18, ∂L/∂y = y − t
    loss = convviz.mse_loss(grid([[2, 4], [6, 8]]), grid([[3, 3], [3, 3]]))
    assert_array(loss.diff, grid([[-1, 1], [3, 5]]), "y − t")
    assert_array(loss.grad_out, loss.diff, "∂L/∂y = y − t for the sum")
    assert (loss.value, loss.scale, loss.reduction) == (18.0, 1.0, "sum")
    assert_array(loss.per_sample, [18.0], "½‖y₀ − t₀‖²")


def test_mean_loss_divides_by_the_batch_by_hand():
    # two samples: ½‖y₀ − t₀‖² = ½(1 + 4) = 2.5, ½‖y₁ − t₁‖² = ½·9 = 4.5; L = (2.5 + 4.5)/2 = 3.5
    y = np.array([[[[1.0, 2.0]]], [[[3.0, 0.0]]]])  # (2, 1, 1, 2)
    t = np.array([[[[0.0, 0.0]]], [[[0.0, 0.0]]]])
    loss = convviz.mse_loss(y, t, reduction="mean")
    assert loss.scale == 0.5 and loss.value == 3.5
    assert_array(loss.per_sample, [2.5, 4.5], "per sample")
    assert_array(loss.grad_out, y / 2, "∂L/∂y = (y − t)/N")
    assert convviz.mse_loss(y, t).value == 7.0


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_random_target_is_todays_gout_mse(p):
    """An old `gout=mse` link keeps its numbers: y − random target is exactly today's ∂L/∂y."""
    spec = p.spec()
    x, w = p.values()
    y = conv2d(x, w, **spec.kwargs())
    target = convviz.make_target(spec, x, "random", seed=p.seed, y=y)
    today = example_grad_out(spec, y, p.seed, "mse")
    assert np.array_equal(convviz.mse_loss(y, target.t).grad_out, today)
    _, _, g = layer_values(spec, p.seed, p.kernel, "mse", x=x, w=w)  # the app's route
    assert np.array_equal(g, today)


KERNEL_TARGETS = [
    ("recitation-s2", "sobel x"),
    ("recitation-s2", "laplacian"),
    ("classroom", "box"),
    ("dilation-2", "identity"),
    ("reflect", "sharpen"),
    ("channels-small", "sobel y"),
    ("even-same", "box"),
]


@pytest.mark.parametrize(("key", "name"), KERNEL_TARGETS)
def test_a_kernel_target_is_that_kernel_on_the_same_input_and_geometry(key, name):
    spec, x, _ = preset_layer(key)
    target = convviz.make_target(spec, x, name)
    kernel = example_w(spec, 0, name)
    assert_array(target.t, conv2d(x, kernel, **spec.kwargs()), f"{name} target of {key}")
    assert len(target.kernels) == 1
    assert_array(target.kernels[0], kernel, "the kernel that made it")


def test_a_typed_target_is_kept_as_typed():
    spec, x, _ = preset_layer("recitation-s2")
    t = convviz.make_target(spec, x, "typed", values=grid([[1, -2], [3, 0.5]]))
    assert_array(t.t, grid([[1, -2], [3, 0.5]]), "typed")
    assert t.kernels == ()


BAD_TARGETS = [
    pytest.param("typed", [[1, 2, 3]], "y's shape (1, 1, 2, 2), got (1, 3)", id="wrong shape"),
    pytest.param("typed", grid([[1, np.nan], [0, 0]]), "NaN", id="NaN"),
    pytest.param("typed", None, "y's shape", id="nothing typed"),
    pytest.param("typed", [["a", "b"]], "array of numbers", id="not numbers"),
    pytest.param("gaussian", None, "not known: use one of random, typed", id="unknown source"),
]


@pytest.mark.parametrize(("source", "values", "message"), BAD_TARGETS)
def test_a_bad_target_is_refused_with_its_fix(source, values, message):
    spec, x, _ = preset_layer("recitation-s2")
    with pytest.raises(ConvSpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        convviz.make_target(spec, x, source, values=values)


def test_a_kernel_without_the_layers_size_names_the_ones_that_fit():
    spec = ConvSpec.create((1, 1, 3, 3), (1, 1, 2, 2))
    with pytest.raises(ConvSpecError) as err:
        convviz.make_target(spec, np.ones(spec.input_shape), "sobel x")
    assert "'sobel x' kernel is 3×3" in str(err.value) and "'identity' or 'box'" in str(err.value)


def test_the_loss_refuses_a_target_of_another_shape():
    with pytest.raises(ConvSpecError, match="y's shape"):
        convviz.mse_loss(np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 3, 3)))
    with pytest.raises(ConvSpecError, match="reduction 'max' is not known"):
        convviz.mse_loss(np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 2, 2)), reduction="max")


# =================================================================================================
# 2. One step, by hand
# =================================================================================================
# A 1×1 kernel on x = [[1, 2], [3, 4]], w = 2, b = 0, t = 3 everywhere, η = 0.01:
# y = 2x, y − t = [[−1, 1], [3, 5]], L = 18, ∂L/∂w = Σ (y − t)·x = −1 + 2 + 9 + 20 = 30,
# ∂L/∂b = Σ (y − t) = 8; w ← 2 − 0.3 = 1.7, b ← −0.08; y' = 1.7x − 0.08 = [[1.62, 3.32],
# [5.02, 6.72]], y' − t = [[−1.38, 0.32], [2.02, 3.72]], L' = ½(1.9044 + 0.1024 + 4.0804 +
# 13.8384) = 9.9628.
# Second step: ∂L/∂w = −1.38 + 0.64 + 6.06 + 14.88 = 20.2, ∂L/∂b = 4.68. Plain SGD: w = 1.498,
# b = −0.1268; momentum 0.9: v = 0.9·30 + 20.2 = 47.2, v_b = 0.9·8 + 4.68 = 11.88,
# w = 1.7 − 0.472 = 1.228, b = −0.08 − 0.1188 = −0.1988.
TINY = ConvSpec.create((1, 1, 2, 2), (1, 1, 1, 1))
TINY_X, TINY_W, TINY_T = grid([[1, 2], [3, 4]]), grid([[2]]), grid([[3, 3], [3, 3]])


def test_one_step_by_hand():
    step = convviz.learning_step(TINY, TINY_X, TINY_W, None, TINY_T, 0.01)
    assert step.before.value == 18.0
    assert_array(step.grad_w, grid([[30]]), "∂L/∂w")
    assert_array(step.grad_b, [8], "∂L/∂b")
    assert_array(step.w_after, grid([[1.7]]), "w after")
    assert_array(step.delta_w, grid([[-0.3]]), "Δw per tap")
    assert_array(step.b_after, [-0.08], "b after")
    assert_array(step.after.y, grid([[1.62, 3.32], [5.02, 6.72]]), "y after")
    assert step.after.value == pytest.approx(9.9628, abs=1e-12)


@pytest.mark.parametrize(
    ("momentum", "w2", "b2"),
    [pytest.param(0.0, 1.498, -0.1268, id="plain"), pytest.param(0.9, 1.228, -0.1988, id="μ=0.9")],
)
def test_two_steps_by_hand(momentum, w2, b2):
    one = convviz.learning_step(TINY, TINY_X, TINY_W, None, TINY_T, 0.01, momentum=momentum)
    assert_array(one.velocity[0], grid([[30]]), "v = g on the first step")
    two = convviz.learning_step(
        TINY, TINY_X, one.w_after, one.b_after, TINY_T, 0.01, momentum=momentum,
        velocity=one.velocity,
    )  # fmt: skip
    assert_array(two.grad_w, grid([[20.2]]), "∂L/∂w at step 1")
    assert_array(two.w_after, grid([[w2]]), "w after two steps")
    assert_array(two.b_after, [b2], "b after two steps")


def test_sgd_step_is_pytorchs_rule():
    rng = np.random.default_rng(0)
    w, g_w, v_w = (rng.standard_normal((2, 3, 2, 2)) for _ in range(3))
    b, g_b, v_b = (rng.standard_normal(2) for _ in range(3))
    frozen = read_only(w, b, g_w, g_b, v_w, v_b)
    w1, b1, (u_w, u_b) = convviz.sgd_step(*frozen[:4], 0.1)
    assert_array(w1, w - 0.1 * g_w, "plain: w − η·g")
    assert_array(b1, b - 0.1 * g_b, "plain: b − η·g")
    assert_array(u_w, g_w, "v = g when there is no velocity yet")
    assert_array(u_b, g_b, "for b too")
    w2, b2, (u_w, _) = convviz.sgd_step(*frozen[:4], 0.1, momentum=0.5, velocity=frozen[4:])
    assert_array(u_w, 0.5 * v_w + g_w, "v ← μ·v + g")
    assert_array(w2, w - 0.1 * (0.5 * v_w + g_w), "p ← p − η·v")
    assert_array(b2, b - 0.1 * (0.5 * v_b + g_b), "the bias too")
    w3, _, _ = convviz.sgd_step(*frozen[:4], 0.1, momentum=0.0, velocity=frozen[4:])
    assert_array(w3, w1, "μ = 0 forgets the velocity")


BAD_RATES = [
    pytest.param(0, "lr `0` is too small: lr must be a number above 0, up to 1000", id="0"),
    pytest.param(-0.1, "lr `-0.1` is too small", id="negative"),
    pytest.param(float("nan"), "lr `nan` is not a finite number", id="NaN"),
    pytest.param(1e9, "lr `1000000000.0` is too large", id="1e9"),
    pytest.param(float("inf"), "not a finite number", id="inf"),
    pytest.param("0.1", "is not a number \\(a str", id="text"),
    pytest.param(True, "is not a number \\(a bool", id="bool"),
]


@pytest.mark.parametrize(("lr", "message"), BAD_RATES)
def test_a_bad_learning_rate_is_refused_everywhere(lr, message):
    spec, x, w = preset_layer("recitation-s2")
    target = np.zeros(spec.output_shape)
    calls = [
        lambda: convviz.sgd_step(w, np.zeros(1), w, np.zeros(1), lr),
        lambda: convviz.learning_step(spec, x, w, None, target, lr),
        lambda: convviz.train(spec, x, w, None, target, lr, 5),
    ]
    for call in calls:
        with pytest.raises(ConvSpecError, match=message):
            call()


BAD_STEP_ARGS = [
    pytest.param(
        {"momentum": 1.0},
        "momentum `1.0` is too large: momentum must be a number in 0…0.999",
        id="μ = 1",
    ),
    pytest.param({"momentum": -0.5}, "momentum `-0.5` is too small", id="μ < 0"),
    pytest.param({"momentum": float("nan")}, "momentum `nan` is not a finite number", id="μ NaN"),
    pytest.param({"grad_w": np.zeros((1, 1, 2, 2))}, "∂L/∂w must have w's shape", id="∂L/∂w"),
    pytest.param({"grad_b": np.zeros(2)}, "∂L/∂b must have b's shape", id="∂L/∂b"),
    pytest.param({"velocity": (np.zeros((1, 1, 3, 3)), np.zeros(3))}, "velocity of b", id="v"),
]


@pytest.mark.parametrize(("change", "message"), BAD_STEP_ARGS)
def test_bad_step_arguments_are_refused(change, message):
    args = {"w": np.ones((1, 1, 3, 3)), "b": np.zeros(1), "grad_w": np.ones((1, 1, 3, 3))}
    args |= {"grad_b": np.ones(1), "lr": 0.1} | change
    with pytest.raises(ConvSpecError, match=message):
        convviz.sgd_step(**args)


def test_a_step_never_mutates_its_inputs():
    spec, x, w = preset_layer("channels-small")
    b, t = np.ones(spec.out_channels), np.zeros(spec.output_shape)
    frozen = read_only(x, w, b, t)
    step = convviz.learning_step(spec, *frozen, 0.001, momentum=0.9)
    convviz.train(spec, *frozen, 0.001, 3, momentum=0.9)
    assert step.w_before is not step.w_after and np.array_equal(step.w_before, w)


@settings(max_examples=examples(60), deadline=None)
@given(conv_cases(), st.sampled_from([0.0, 0.5, 0.9]), st.sampled_from(REDUCTIONS))
def test_a_step_is_the_public_api_stepped_by_hand(case, momentum, reduction):
    """learning_step == conv2d, ∂L/∂y, conv2d_weight, conv2d_bias and the SGD rule by hand."""
    kw, t = case.kwargs, np.zeros(case.grad_out.shape) + 0.5
    step = convviz.learning_step(
        case.spec, case.x, case.w, case.bias, t, 0.01, momentum=momentum, reduction=reduction
    )
    scale = 1 / case.x.shape[0] if reduction == "mean" else 1.0
    g = scale * (conv2d(case.x, case.w, case.bias, **kw) - t)
    grad_w, grad_b = conv2d_weight(case.x, case.w.shape, g, **kw), conv2d_bias(g)
    assert_array(step.before.grad_out, g, f"∂L/∂y, {case!r}")
    assert_array(step.grad_w, grad_w, f"∂L/∂w, {case!r}")
    assert_array(step.w_after, case.w - 0.01 * grad_w, f"w after, {case!r}")
    assert_array(step.b_after, case.bias - 0.01 * grad_b, f"b after, {case!r}")
    y_after = conv2d(case.x, step.w_after, step.b_after, **kw)
    assert_array(step.after.y, y_after, f"y after, {case!r}")


FD_LAYERS = [
    pytest.param((1, 1, 5, 5), (1, 1, 3, 3), {"stride": 2}, "sum", id="recitation s2"),
    pytest.param((2, 2, 5, 4), (3, 2, 3, 3), {"padding": 1}, "mean", id="channels, batch, mean"),
    pytest.param(
        (1, 2, 6, 7),
        (2, 2, 2, 3),
        {"stride": (2, 3), "padding": ((1, 0), (2, 1)), "dilation": 2, "padding_mode": "reflect"},
        "sum",
        id="per-side reflect, s, d",
    ),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "kwargs", "reduction"), FD_LAYERS)
def test_loss_gradients_match_finite_differences(x_shape, w_shape, kwargs, reduction):
    spec = ConvSpec.create(x_shape, w_shape, **kwargs)
    rng = np.random.default_rng(11)
    x, w, b = rng.standard_normal(x_shape), rng.standard_normal(w_shape), rng.standard_normal(3)
    b, t = b[: w_shape[0]], rng.standard_normal(spec.output_shape)
    step = convviz.learning_step(spec, x, w, b, t, 0.1, reduction=reduction)

    def loss(w_, b_):
        return convviz.mse_loss(conv2d(x, w_, b_, **kwargs), t, reduction=reduction).value

    assert_array(step.grad_w, numeric_grad(lambda v: loss(v, b), w), "∂L/∂w vs FD", rtol=1e-7)
    assert_array(step.grad_b, numeric_grad(lambda v: loss(w, v), b), "∂L/∂b vs FD", rtol=1e-7)
    assert_array(step.before.grad_out, numeric_grad(
        lambda y: convviz.mse_loss(y, t, reduction=reduction).value, step.before.y
    ), "∂L/∂y vs FD", rtol=1e-7)  # fmt: skip


# =================================================================================================
# 3. A training run
# =================================================================================================


def lam_max(spec, x, reduction="sum") -> float:
    """The Hessian's largest eigenvalue from numpy.linalg on the im2col matrix: the oracle."""
    a = np.hstack([im2col(spec, x).reshape(-1, np.prod(spec.weight_shape[1:])),
                   np.ones((spec.batch * np.prod(spec.out_size), 1))])  # fmt: skip
    scale = 1.0 if reduction == "sum" else 1 / spec.batch
    return float(np.linalg.eigvalsh(scale * a.T @ a)[-1])


def nearest_solution(spec, x, w0, t) -> np.ndarray:
    """Of all (w, b) with y = t, the one nearest (w0, 0): where SGD from (w0, 0) ends up."""
    a = np.hstack([im2col(spec, x).reshape(-1, w0.size), np.ones((t.size, 1))])
    theta0 = np.append(w0.ravel(), 0.0)
    return theta0 - np.linalg.pinv(a) @ (a @ theta0 - t.ravel())


def test_a_run_is_its_steps():
    """Step s holds w[s] and everything the forward and backward passes give there."""
    spec, x, w = preset_layer("channels-small")
    t = convviz.make_target(spec, x, "sobel x").t
    run = convviz.train(spec, x, w, None, t, 5e-5, 6, momentum=0.9)
    assert run.steps_done == 6 and not run.diverged and run.message == ""
    assert np.array_equal(run.kept, np.arange(7))
    velocity = None
    w_s, b_s = w, np.zeros(spec.out_channels)
    for s in range(7):
        step = convviz.learning_step(spec, x, w_s, b_s, t, 5e-5, momentum=0.9, velocity=velocity)
        assert_array(run.w[s], w_s, f"w[{s}]")
        assert_array(run.y[s], step.before.y, f"y[{s}]")
        assert_array(run.grad_w[s], step.grad_w, f"∂L/∂w[{s}]")
        assert_array(run.grad_b[s], step.grad_b, f"∂L/∂b[{s}]")
        assert run.loss[s] == pytest.approx(step.before.value, rel=1e-12)
        if s:
            assert_array(run.w[s], run.w[s - 1] - 5e-5 * run.velocity_w[s], "w ← w − η·v")
        w_s, b_s, velocity = step.w_after, step.b_after, step.velocity
    assert not run.velocity_w[0].any(), "no velocity before the first step"


def test_the_recitation_layer_falls_at_every_step_below_2_over_lambda_max():
    """Plain SGD on a quadratic loss falls at every step for any η < 2/λ_max, and diverges
    above it; the run says where it stopped, in words, and keeps only finite numbers."""
    spec, x, w = preset_layer("recitation-s2")
    t = convviz.make_target(spec, x, "sobel x").t
    lam = lam_max(spec, x)
    assert convviz.curvature(spec, x).critical_lr() == pytest.approx(2 / lam, rel=1e-9)
    for lr in (0.5 / lam, 1 / lam, 1.9 / lam):
        run = convviz.train(spec, x, w, None, t, lr, 200)
        assert run.steps_done == 200 and not run.diverged
        assert (np.diff(run.loss) < 0).all(), f"η = {lr:g}: the loss rose at {run.rises}"
    run = convviz.train(spec, x, w, None, t, 2.1 / lam, 200)
    assert run.diverged and run.stopped_at == run.steps_done + 1 < 200
    assert f"at step {run.stopped_at} the loss reached" in run.message
    assert "too large" in run.message and f"below {2 / lam:.3g}" in run.message
    assert all(np.isfinite(a).all() for a in (run.loss, run.w, run.b, run.y, run.grad_w))
    assert run.loss[-1] <= training.GROWTH_LIMIT * run.loss[0]


def test_the_recitation_layer_learns_a_kernel_that_fits_not_the_target_kernel():
    """4 output cells cannot pin down 9 taps and a bias: SGD only ever moves (w, b) along the
    4 directions the windows span, so it heads for the kernel nearest its start that gives the
    target's y, and Sobel is not that kernel."""
    spec, x, w = preset_layer("recitation-s2")
    target = convviz.make_target(spec, x, "sobel x")
    c = convviz.curvature(spec, x)
    assert (c.rank, c.unknowns, c.determined) == (4, 10, False)
    run = convviz.train(spec, x, w, None, target.t, 1.9 / c.eigenvalues[-1], 200)
    assert run.loss[-1] < 1e-5 * run.loss[0]
    a = np.hstack([im2col(spec, x).reshape(4, 9), np.ones((4, 1))])
    null = np.eye(10) - np.linalg.pinv(a) @ a  # projects onto what the windows cannot see
    moved = np.hstack([run.w.reshape(len(run.kept), 9), run.b]) - np.append(w.ravel(), 0)
    assert np.abs(moved @ null).max() < 1e-9, "SGD moved w where no window looks"
    nearest = nearest_solution(spec, x, w, target.t)
    sobel = np.append(target.kernels[0].ravel(), 0.0)
    assert np.abs(a @ sobel - a @ nearest).max() < 1e-9, "both give the target's y"
    assert np.abs(sobel - nearest).max() > 1, "SGD's end is not the Sobel kernel"
    learned = np.append(run.w[-1].ravel(), run.b[-1])
    assert np.abs(learned - nearest).max() < np.abs(np.append(w.ravel(), 0) - nearest).max() / 2


def test_the_classroom_layer_learns_the_target_kernel():
    """16 output cells for 10 unknowns: only Sobel (and b = 0) fits, and SGD finds it (its
    curvatures span ~1300×: 200 steps bring every tap within 0.01)."""
    spec, x, w = preset_layer("classroom")
    target = convviz.make_target(spec, x, "sobel x")
    c = convviz.curvature(spec, x)
    assert c.determined
    run = convviz.train(spec, x, w, None, target.t, 1 / c.eigenvalues[-1], 200, momentum=0.9)
    assert run.loss[-1] < 1e-6 * run.loss[0]
    assert np.abs(run.w[-1] - target.kernels[0]).max() < 1e-2
    assert np.abs(run.b[-1]).max() < 0.1


def test_the_mean_is_the_sum_at_a_rate_n_times_smaller():
    spec, x, w = preset_layer("channels-small")  # batch 2
    t = convviz.make_target(spec, x, "random", seed=3).t
    mean = convviz.train(spec, x, w, None, t, 1e-4, 20, momentum=0.5, reduction="mean")
    total = convviz.train(spec, x, w, None, t, 5e-5, 20, momentum=0.5)
    assert_array(mean.w, total.w, "same path", rtol=1e-9)
    assert_array(mean.loss, total.loss / 2, "L_mean = L_sum / N", rtol=1e-9)
    assert lam_max(spec, x, "mean") == pytest.approx(
        convviz.curvature(spec, x, reduction="mean").eigenvalues[-1], rel=1e-9
    )


@pytest.mark.parametrize("lr", [5.0, 1e3], ids=["5", "1000"])
@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_a_huge_rate_stops_the_run_without_overflowing(lr, momentum):
    spec, x, w = preset_layer("classroom")
    t = convviz.make_target(spec, x, "box").t
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow RuntimeWarning escapes
        run = convviz.train(spec, x, w, None, t, lr, 200, momentum=momentum)
    assert run.diverged and run.stopped_at < 10, run.loss
    assert all(np.isfinite(a).all() for a in (run.loss, run.w, run.b, run.y, run.grad_w))
    assert run.message.startswith("Stopped: ") and f"{lr:g} is too large" in run.message


def test_an_overflow_is_reported_as_one():
    spec = ConvSpec.create((1, 1, 3, 3), (1, 1, 2, 2))
    x = np.full(spec.input_shape, 1e100)  # L = 3.2e201 at the start; past 1e308 at step 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = convviz.train(spec, x, np.ones((1, 1, 2, 2)), None, np.zeros((1, 1, 2, 2)), 1e3, 9)
    assert run.stopped_at == 1 and "the numbers overflowed at step 1" in run.message
    assert "rate 10 times smaller" not in run.message  # the layer is small: the bound is known


def test_a_step_that_overflows_is_refused_in_words():
    spec = ConvSpec.create((1, 1, 3, 3), (1, 1, 2, 2))
    x, w, t = np.full(spec.input_shape, 1e100), np.ones((1, 1, 2, 2)), np.zeros((1, 1, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ConvSpecError, match="one step at the learning rate 1000 overflows"):
            convviz.learning_step(spec, x, w, None, t, 1e3)


def test_a_momentum_run_may_rise_and_says_where():
    spec, x, w = preset_layer("recitation-s2")
    t = convviz.make_target(spec, x, "sobel x").t
    run = convviz.train(spec, x, w, None, t, 1e-3, 50, momentum=0.9)
    assert not run.diverged and len(run.rises) > 0
    assert all(run.loss[s] > run.loss[s - 1] for s in run.rises)


def test_a_big_layer_keeps_evenly_spaced_steps():
    spec, x, w = preset_layer("qa-channels")
    t = convviz.make_target(spec, x, "random").t
    kept = training.kept_steps(spec, 200)
    assert kept[0] == 0 and kept[-1] == 200 and 2 <= len(kept) < 201
    per_step = 3 * np.prod(spec.weight_shape) + np.prod(spec.output_shape)
    assert len(kept) * per_step <= training.KEPT_VALUES
    run = convviz.train(spec, x, w, None, t, 1e-8, 20)
    assert np.array_equal(run.kept, training.kept_steps(spec, 20)) and len(run.loss) == 21
    missing = sorted(set(range(21)) - set(run.kept.tolist()))
    assert missing and run.index(missing[0]) is None
    assert [run.index(int(s)) for s in run.kept] == list(range(len(run.kept)))


def test_a_run_stopped_early_keeps_its_last_step():
    spec, x, w = preset_layer("qa-channels")
    t = convviz.make_target(spec, x, "random").t
    run = convviz.train(spec, x, w, None, t, 1e-3, 200)
    assert run.diverged and run.kept[-1] == run.steps_done
    assert run.w.shape[0] == len(run.kept) == run.y.shape[0]


BAD_RUNS = [
    pytest.param(
        {"steps": 0}, "steps `0` is too small: steps must be a whole number in 1…200", id="0 steps"
    ),
    pytest.param({"steps": 201}, "steps `201` is too large", id="201 steps"),
    pytest.param({"steps": 2.5}, "whole number", id="2.5 steps"),
    pytest.param({"target": np.zeros((1, 1, 3, 3))}, "y's shape \\(1, 1, 2, 2\\)", id="target"),
    pytest.param({"b": np.zeros(2)}, "the bias b must have the shape \\(1,\\)", id="bias"),
    pytest.param({"reduction": "avg"}, "reduction 'avg'", id="reduction"),
    pytest.param({"max_macs": 500}, "take at most 5 steps", id="work limit"),
    pytest.param({"max_macs": 10}, "make the layer smaller", id="work limit, no step fits"),
]


@pytest.mark.parametrize(("change", "message"), BAD_RUNS)
def test_a_bad_run_is_refused_with_its_fix(change, message):
    spec, x, w = preset_layer("recitation-s2")  # 36 multiply-adds per pass
    args = {"w": w, "b": None, "target": np.zeros(spec.output_shape), "lr": 1e-3, "steps": 10}
    with pytest.raises(ConvSpecError, match=message):
        convviz.train(spec, x, **(args | change))


def test_layer_macs_is_the_apps_count():
    from convviz.model.state import macs

    for p in PRESETS:
        assert training.layer_macs(p.spec()) == macs(p.spec()), p.key
        assert training.max_steps(p.spec(), None) == training.MAX_STEPS


def test_curvature_is_none_beyond_its_bound():
    spec, x, _ = preset_layer("qa-channels")
    assert convviz.curvature(spec, x) is None
    spec, x, _ = preset_layer("recitation-s1")
    zero = convviz.curvature(spec, np.zeros(spec.input_shape))  # only the bias is seen
    assert zero.rank == 1 and zero.eigenvalues[-1] == pytest.approx(4.0)

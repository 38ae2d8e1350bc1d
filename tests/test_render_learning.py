"""The Learning page's figures show the engine's numbers: the loss's terms, a step's taps (each
keeping its colour), a run's w, y and ∂L/∂w at a step, and its loss curve (plotly, matplotlib,
GIF)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from convviz.engine.text import number
from convviz.learning import sgd
from convviz.learning.experiment import Settings, experiment, largest_curvature_bound, safe_rate
from convviz.learning.loss import REDUCTIONS
from convviz.model.fields import preset_state
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import values_of
from convviz.render.plotly.frames import stepwise
from convviz.render.story.learning import (
    loss_curve,
    loss_curve_static,
    loss_panels,
    loss_sum_text,
    run_gif,
    run_panels,
    step_panels,
)
from convviz.render.story.learning_frames import (
    RUN_FRAMES,
    STEP_FRAMES,
    run_figure,
    shown_steps,
    step_motion,
)
from convviz.render.theme import SELECTED_COLOR


def layer(key: str):
    spec, x, w, _ = values_of(preset_state(PRESETS_BY_KEY[key]))
    return spec, x, w


@pytest.fixture(scope="module")
def recitation():
    spec, x, w = layer("recitation-s2")
    return experiment(spec, x, w, Settings(steps=20))


def test_the_loss_panels_are_y_t_and_their_gap(recitation):
    loss = recitation.step.before
    y, t, g = loss_panels(loss)
    assert np.array_equal(y.values, loss.y[0, 0]) and np.array_equal(t.values, loss.target[0, 0])
    assert np.array_equal(g.values, y.values - t.values) and g.title == "∂L/∂y = y − t"
    assert loss_sum_text(loss).endswith(f"= {number(loss.value)}")


def test_the_mean_divides_by_the_batch_and_says_so():
    spec, x, w = layer("channels-small")
    mean = experiment(spec, x, w, Settings(steps=2, reduction="mean")).step.before
    _, _, g = loss_panels(mean, n=1, k=2)
    assert g.title == f"∂L/∂y = (y − t)/{spec.batch}"
    assert np.allclose(g.values, (mean.y[1, 2] - mean.target[1, 2]) / spec.batch)
    assert loss_sum_text(mean).startswith(f"L = 1/{spec.batch} · ½·(")


def test_a_step_moves_each_tap_by_its_delta_keeping_its_colour(recitation):
    step = recitation.step
    before, delta, after = step_panels(step)
    assert np.array_equal(before.taps, delta.taps) and np.array_equal(before.taps, after.taps)
    assert len(np.unique(before.taps)) == before.values.size  # every tap its own colour
    assert np.allclose(after.values - before.values, delta.values)
    assert np.allclose(delta.values, -step.lr * step.grad_w[0, 0])
    assert before.subtitle == f"L = {number(step.before.value)}"
    assert after.subtitle == f"L = {number(step.after.value)}"


def test_a_runs_step_shows_w_y_and_its_gradient_there(recitation):
    run, kernel = recitation.run, recitation.target.kernels[0]
    panels = run_panels(run, 7, target_kernel=kernel)
    assert [p.key for p in panels] == ["w", "target_w", "y", "target", "grad_w"]
    assert np.array_equal(panels[0].values, run.w[7, 0, 0])
    assert np.array_equal(panels[1].values, kernel[0, 0])
    assert np.array_equal(panels[2].values, run.y[7, 0, 0])
    assert np.array_equal(panels[4].values, run.grad_w[7, 0, 0])
    with pytest.raises(ValueError):
        run_panels(run, run.steps_done + 1)


def test_the_loss_curve_is_the_runs_loss_with_the_shown_step_and_the_rises():
    spec, x, w = layer("classroom")
    curv = sgd.curvature(spec, x)
    rate = 1.9 / curv.eigenvalues[-1]  # below 2/λ_max: the stiff direction swings, L rises
    swinging = experiment(spec, x, w, Settings(lr=rate, steps=30, momentum=0.9))
    run = swinging.run
    fig = loss_curve(run, log=True, at=12)
    traces = {t["name"]: t for t in fig.traces}
    assert np.allclose(traces["L"]["y"], run.loss) and list(traces["L"]["x"]) == list(range(31))
    assert traces["shown"]["x"] == [12] and traces["shown"]["y"] == [run.loss[12]]
    assert len(run.rises) and list(traces["L rose"]["x"]) == list(run.rises)
    assert fig.layout_dict["yaxis"]["type"] == "log"
    assert loss_curve(run).layout_dict["yaxis"]["type"] == "linear"


def test_a_safe_rate_never_lets_the_loss_rise(recitation):
    assert recitation.lr == safe_rate(recitation.curvature) < recitation.curvature.critical_lr()
    assert not len(recitation.run.rises)


def test_a_too_large_rate_stops_the_run_with_the_engines_message():
    spec, x, w = layer("recitation-s2")
    run = experiment(spec, x, w, Settings(lr=5.0, steps=50)).run
    assert run.diverged and run.message.startswith("Stopped")
    assert np.isfinite(loss_curve(run).traces[0]["y"]).all()


@pytest.mark.encoder  # the run as a GIF of every step: ~6 s, the quick tier's slowest test
def test_the_static_curve_and_the_gif(recitation):
    fig = loss_curve_static(recitation.run, log=True)
    assert fig.axes[0].get_yscale() == "log"
    assert np.allclose(fig.axes[0].lines[0].get_ydata(), recitation.run.loss)
    gif = Image.open(
        io.BytesIO(run_gif(recitation.run, target_kernel=recitation.target.kernels[0]))
    )
    assert gif.format == "GIF" and gif.n_frames == len(recitation.run.kept)  # 21 ≤ GIF_FRAMES


def framed(fig, frame: dict, name: str) -> dict:
    """What frame `frame` sets on the trace named `name` (its changing entries), {} if nothing."""
    index = next(i for i, t in enumerate(fig.traces) if t["name"] == name)
    return frame["data"][frame["traces"].index(index)] if index in frame["traces"] else {}


def test_the_step_in_motion_counts_each_tap_from_its_old_value_to_its_new_one(recitation):
    step = recitation.step
    fig = step_motion(step)
    frames = fig.frame_dicts
    assert len(frames) == STEP_FRAMES + 1 and stepwise(fig)  # the page's player applies them

    def moving(frame) -> np.ndarray:
        return np.asarray(framed(fig, frame, "w_after:values")["z"], dtype=float)

    assert np.allclose(moving(frames[0]), step.w_before[0, 0])
    assert np.allclose(moving(frames[-1]), step.w_after[0, 0])
    half = frames[STEP_FRAMES // 2]
    assert np.allclose(moving(half), step.w_before[0, 0] + 0.5 * step.delta_w[0, 0])
    # the figure opens on the result; its taps keep their colours in every frame (no frame
    # changes them)
    moved = next(t for t in fig.traces if t["name"] == "w_after:values")
    assert np.allclose(np.asarray(moved["z"], dtype=float), step.w_after[0, 0])
    assert all("z" not in framed(fig, f, "w_after:taps") for f in frames)
    meta = fig.meta["player"]
    assert meta["keys"] == [0, STEP_FRAMES] and meta["labels"][-1] == "w after"


def test_a_selected_tap_is_outlined_in_every_kernel_grid_and_its_update_written(recitation):
    step, tap = recitation.step, (1, 2)
    fig = step_motion(step, selected=("delta_w", *tap))
    w0, g, w1 = (a[0, 0][tap] for a in (step.w_before, step.grad_w, step.w_after))
    assert np.isclose(w0 - step.lr * g, w1)
    line = fig.meta["player"]["captions"][-1][0]
    assert line == (f"w₁₂ ← w₁₂ − η·∂L/∂w₁₂ = {number(w0)} − {number(step.lr)}·({number(g)}) = "
                    f"{number(w1)}")  # fmt: skip
    red = SELECTED_COLOR
    outlined = [s for s in fig.layout_dict["shapes"] if s.get("line", {}).get("color") == red]
    assert {s["xref"].split()[0] for s in outlined} == {"x", "x2", "x3"}  # before, Δw, after


def test_the_run_plays_its_steps_in_the_browser_with_the_curve_under_them(recitation):
    run = recitation.run
    kernel = recitation.target.kernels[0]
    fig = run_figure(run, target_kernel=kernel, selected=("w", 0, 1))
    steps = shown_steps(run.kept)
    meta = fig.meta["player"]
    assert stepwise(fig) and len(fig.frame_dicts) == len(steps) <= RUN_FRAMES
    assert steps[0] == 0 and steps[-1] == run.steps_done and {1, 2, 5, 10} <= set(steps)
    assert meta["labels"] == [f"step {s}" for s in steps]
    assert "keys" not in meta  # ← → and the scrub rest on any shown step
    for frame, s in zip(fig.frame_dicts, steps):
        i = run.index(s)
        w = np.asarray(framed(fig, frame, "w:values")["z"], dtype=float)
        assert np.allclose(w, run.w[i, 0, 0])
        y = np.asarray(framed(fig, frame, "y:values")["z"], dtype=float)
        assert np.allclose(y, run.y[i, 0, 0])
        shown = framed(fig, frame, "shown")
        assert shown["x"] == [s] and np.isclose(shown["y"][0], run.loss[s])
    i = run.index(steps[-1])
    assert meta["captions"][-1] == [
        f"step {steps[-1]}: L = {number(run.loss[-1])} · max |w − target kernel| = "
        f"{number(np.abs(run.w[i, 0, 0] - kernel[0, 0]).max())}",
        f"w₀₁ = {number(run.w[i, 0, 0, 0, 1])}, ∂L/∂w₀₁ = {number(run.grad_w[i, 0, 0, 0, 1])}",
    ]
    # the curve lies under the grids, on its own axes
    lay = fig.layout_dict
    curve = next(t for t in fig.traces if t["name"] == "L")
    ya = "yaxis" + curve["yaxis"][1:]
    tops = [ax["domain"][0] for k, ax in lay.items() if k.startswith("yaxis") and k != ya]
    assert lay[ya]["domain"][1] < min(tops)


@pytest.mark.parametrize("key", ["recitation-s2", "classroom", "channels-small", "dilation-2"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_the_big_layers_bound_is_the_hessians_trace(key, reduction):
    """Where the curvature is computed, the bound a big layer's safe rate uses is the sum of the
    Hessian's eigenvalues (its trace), so never below λ_max."""
    spec, x, _ = layer(key)
    curv = sgd.curvature(spec, x, reduction=reduction)
    bound = largest_curvature_bound(spec, x, reduction)
    assert np.isclose(bound, curv.eigenvalues.sum()) and bound >= curv.eigenvalues[-1]


def test_a_layer_too_big_for_its_curvature_learns_at_a_rate_that_never_diverges():
    spec, x, w = layer("qa-channels")
    big = experiment(spec, x, w, Settings(steps=5, target="box"), max_macs=None)
    assert big.curvature is None and not big.run.diverged
    assert (np.diff(big.run.loss) < 0).all()


def test_the_step_exports_as_png_and_svg_with_its_numbers(recitation):
    from convviz.render.mpl import static

    step = recitation.step
    fig = static.panels_figure(step_panels(step), title="one step")
    png, svg = static.to_png(fig), static.to_svg(fig).decode()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    for v in (step.w_before[0, 0, 0, 0], step.delta_w[0, 0, 1, 1], step.w_after[0, 0, 2, 2]):
        assert number(v) in svg  # the numbers stay text in the SVG


def test_settings_are_equal_by_value_typed_targets_included():
    a = Settings(target="typed", typed=np.array([[[[1.0, 2.0]]]]))
    b = Settings(target="typed", typed=np.array([[[[1.0, 2.0]]]]))
    c = Settings(target="typed", typed=np.array([[[[1.0], [2.0]]]]))  # same bytes, another shape
    assert a == b and hash(a) == hash(b) and a != c and a != Settings()

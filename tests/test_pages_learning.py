"""The Learning page in AppTest: its three stages draw the engine's numbers; bad input (a rate
of 0, below 0, 1e9 or NaN, 0 steps, a typed target of the wrong shape, a named kernel of another
size) is refused with a short message and the last valid view stays; a diverging run stops with
the engine's message."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from apptest_pages import assert_clean, figures, open_page, query, state, z_of

from convviz.engine.text import count
from convviz.learning.experiment import Settings, experiment
from convviz.model.fields import preset_state
from convviz.model.lecture import LEARN_PAGE, LECTURE
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import values_of

pytestmark = pytest.mark.apptest

PAGE = LEARN_PAGE
STEP = {s.key: str(LECTURE.step_of(s)) for s in LECTURE.on_page(PAGE)}


def engine(key: str = "recitation-s2", **settings):
    spec, x, w, _ = values_of(preset_state(PRESETS_BY_KEY[key]))
    return experiment(spec, x, w, Settings(**settings))


def array(sent) -> np.ndarray:
    """A trace's array as sent: a list, or plotly's base64 typed array."""
    if isinstance(sent, dict) and "shape" not in sent:  # a 1-D typed array
        return np.frombuffer(base64.b64decode(sent["bdata"]), dtype=sent["dtype"])
    return z_of({"z": sent})


def said(at) -> str:
    return "\n".join(m.value for kind in (at.warning, at.error, at.info) for m in kind)


def values_of_trace(fig: dict, name: str) -> np.ndarray:
    return z_of(next(t for t in fig["data"] if t.get("name") == name))


def w_before_of(at) -> np.ndarray:
    """w before the step, as the step's figure draws it."""
    return values_of_trace(figures(at)[0], "w_before:values")


def test_the_three_stages_draw_the_engines_numbers():
    want = engine()
    at = open_page(PAGE, preset="recitation-s2", step=STEP["loss"])
    assert_clean(at)
    fig = figures(at)[0]
    assert np.array_equal(values_of_trace(fig, "y:values"), want.step.before.y[0, 0])
    assert np.array_equal(values_of_trace(fig, "grad_out:values"), want.step.before.grad_out[0, 0])
    at = open_page(PAGE, preset="recitation-s2", step=STEP["step"])
    assert_clean(at)
    fig = figures(at)[0]
    assert np.allclose(values_of_trace(fig, "w_after:values"), want.step.w_after[0, 0])
    at = open_page(PAGE, preset="recitation-s2", step=STEP["train"])
    assert_clean(at)
    (run,) = figures(at)  # its grids and, under them, the loss curve
    assert np.allclose(values_of_trace(run, "w:values"), want.run.w[-1, 0, 0])
    assert np.allclose(array(curve_of(run)["y"]), want.run.loss)
    assert "equations for" in said(at)  # the stride-2 layer cannot pin w down: said plainly


def test_the_classroom_layer_learns_its_kernel_and_says_nothing_of_underdetermination():
    at = open_page(PAGE, preset="classroom", step=STEP["train"], mom="0.9", steps="200")
    assert_clean(at)
    want = engine("classroom", momentum=0.9, steps=200)
    assert want.kernel_error[-1] < 0.05 and not want.underdetermined
    assert "equations for" not in said(at)


@pytest.mark.parametrize(
    ("lr", "words"),
    [("0", "is too small"), ("-0.01", "is too small"), ("1e9", "is too large"),
     ("nan", "not a finite number"), ("fast", "not a number")],
)  # fmt: skip
def test_a_bad_rate_in_a_link_is_named_and_the_safe_rate_kept(lr, words):
    at = open_page(PAGE, preset="recitation-s2", step=STEP["step"], lr=lr)
    assert not at.exception
    assert f"lr={lr}" in said(at) and words in said(at)
    assert state(at)["lr"] == "" and "lr" not in query(at)
    assert np.allclose(w_before_of(at), engine().step.w_before[0, 0])


@pytest.mark.parametrize(
    ("typed", "words"),
    [("0", "η `0` is too small: η must be a number above 0, up to 1000"),
     ("-1", "η `-1` is too small"), ("1e9", "η `1e9` is too large"),
     ("nan", "η `nan` is not a finite number"), ("abc", "η `abc` is not a number"),
     ("٣", "η `٣` is not a number"), ("1_0", "η `1_0` is not a number")],
)  # fmt: skip
def test_a_bad_rate_typed_in_is_refused_and_the_last_one_kept(typed, words):
    at = open_page(PAGE, preset="recitation-s2", step=STEP["step"], lr="0.0005")
    at.text_input(key="ctl_lr").set_value(typed).run()
    assert not at.exception
    assert words in said(at), said(at)
    assert state(at)["lr"] == 0.0005 and query(at)["lr"] == "0.0005"
    assert at.text_input(key="ctl_lr").value == "0.0005"  # the field shows the rate in use


def test_zero_steps_are_refused():
    at = open_page(PAGE, preset="recitation-s2", step=STEP["train"], steps="0")
    assert "steps=0" in said(at) and state(at)["steps"] == 100
    at.number_input(key="ctl_steps").set_value(0).run()
    assert "Steps `0` is too small: Steps must be a whole number in 1…200" in said(at)
    assert state(at)["steps"] == 100
    assert_no_exception_and_a_curve(at)


def curve_of(fig: dict) -> dict:
    """The loss curve's line under a run's grids."""
    return next(t for t in fig["data"] if t.get("name") == "L")


def assert_no_exception_and_a_curve(at) -> None:
    assert not at.exception
    (run,) = figures(at)
    assert len(array(curve_of(run)["y"])) == 101


def test_a_typed_target_of_the_wrong_shape_is_refused_and_a_right_one_taken():
    at = open_page(PAGE, preset="recitation-s2", step=STEP["loss"], tgt="typed")
    assert "Type 4 target values" in said(at)  # until then: the random target
    at.text_input(key="ctl_t").set_value("1, 2, 3").run()
    assert "has 3 values but its shape 1×1×2×2 needs 4" in said(at) and state(at)["t"] == ""
    at.text_input(key="ctl_t").set_value("1, −2, 3 4").run()
    assert not at.exception and state(at)["t"] == "1,-2,3,4"
    target = values_of_trace(figures(at)[0], "target:values")
    assert np.array_equal(target, [[1, -2], [3, 4]])


def test_a_typed_target_takes_a_decimal_comma_and_refuses_400_digits_keeping_the_last():
    """A 400-digit value was refused as "holds NaN or infinity"; '1,5 2,5' is two values."""
    at = open_page(PAGE, preset="recitation-s2", step=STEP["loss"], tgt="typed")
    at.text_input(key="ctl_t").set_value("1,5 2,5 −3 4").run()
    assert not at.exception and state(at)["t"] == "1.5,2.5,-3,4"
    at.text_input(key="ctl_t").set_value(f"1, 2, 3, {'9' * 400}").run()
    assert not at.exception and "target value `999" in said(at) and "is too long" in said(at)
    assert "NaN" not in said(at) and state(at)["t"] == "1.5,2.5,-3,4"
    assert at.text_input(key="ctl_t").value == "1.5, 2.5, -3, 4"  # the field shows the target kept
    target = values_of_trace(figures(at)[0], "target:values")
    assert np.array_equal(target, [[1.5, 2.5], [-3, 4]])


@pytest.mark.parametrize("t", ["1_0,2,3,4", "١,2,3,4", "1," * 15_000])
def test_a_bad_typed_target_in_a_link_is_named_and_not_written_back(t):
    """`t` was kept unchecked (up to 25,600 characters) and written back into every link."""
    at = open_page(PAGE, preset="recitation-s2", step=STEP["loss"], tgt="typed", t=t)
    assert not at.exception and not at.error
    assert "`t=" in said(at) and ("is not a number" in said(at) or "is too long" in said(at))
    assert state(at)["t"] == "" and "t" not in query(at)
    assert "Type 4 target values" in said(at)  # the random target until one is typed
    assert len(figures(at)) == 1


@pytest.mark.parametrize("lr", ["5", "0.5"])  # stopped after 0 steps, after 1 step
def test_a_diverging_run_stops_with_the_engines_message_and_finite_numbers(lr):
    at = open_page(PAGE, preset="recitation-s2", step=STEP["train"], lr=lr)
    assert not at.exception
    run = engine(lr=float(lr)).run
    assert run.message in [e.value for e in at.error]
    assert np.isfinite(array(curve_of(figures(at)[0])["y"])).all()
    # what happened, and nothing a stopped run did not do: no "the loss can reach 0"
    assert "can reach 0" not in said(at) and "equations for" not in said(at)
    words = " ".join(m.value for m in at.markdown)
    assert f"in {count(run.steps_done, 'step')}." in words and " 1 steps" not in words


def test_a_named_kernel_of_another_size_becomes_the_box_kernel_with_a_note():
    at = open_page(PAGE, preset="recitation-s1", step=STEP["train"])
    assert_clean(at)
    assert "not 2×2 like this layer's: the target is made with the box kernel" in said(at)

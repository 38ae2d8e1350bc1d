"""The Learning page's controls and its experiment: the rate, momentum, steps, target and reduction.

They live in the state (URL fields lr, mom, steps, tgt, red, t: `convviz.model.fields`) like every
other control; a value that cannot work is refused with a short message and the last valid one
kept. The experiment itself is the engine's (`convviz.learning.experiment`), computed once per layer
and settings.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import streamlit as st

from convviz.engine.numbers import take
from convviz.engine.spec import ConvSpecError
from convviz.engine.text import number, shape_text
from convviz.export.training_snippet import numpy_training_snippet, torch_training_snippet
from convviz.export.video import gif_frames, mp4_bytes
from convviz.learning import sgd, training
from convviz.learning.experiment import Experiment, Settings, experiment
from convviz.model.fields import (
    FIELDS,
    VALUE_FIELDS,
    encode_array,
    number_text,
    typed_field,
    typed_values,
)
from convviz.model.lecture import LECTURE
from convviz.model.state import MAX_MACS, learning_settings
from convviz.render.mpl import static
from convviz.render.story.learning import loss_curve_static, run_gif, step_panels
from convviz.ui.compute import _cached, compute_layer, layer_inputs
from convviz.ui.controls import STATE, Context, widget_key

PROBLEM = "cv_learn_problem"  # the last refused value's message, until the next change
LOG_SCALE = "cv_learn_log"  # the loss curve on a log scale (the reader's view, not the link's)
SOURCE_WORDS = {"random": "random integers", "typed": "typed in"}


def _refuse(message: str) -> None:
    st.session_state[PROBLEM] = message


def _set(name: str, value) -> None:
    st.session_state[PROBLEM] = ""
    st.session_state[STATE][name] = value


def _take_rate() -> None:
    """The rate typed in: a number in (0, MAX_LR], or empty for the layer's safe rate."""
    raw = st.session_state["ctl_lr"]
    if raw.strip() in ("", "auto"):
        _set("lr", "")
        return
    try:
        _set("lr", typed_field("lr", raw, "η"))
    except ConvSpecError as exc:
        _refuse(f"{exc} (or leave it empty for the safe rate)")


def _take_number(name: str, label: str, empty: float | None = None) -> None:
    """Steps or μ from its number field, checked by the one reader (an emptied field: `empty`)."""
    value = st.session_state[widget_key(name)]
    try:
        _set(name, take(empty if value is None else value, label, FIELDS[name].range))
    except ConvSpecError as exc:
        _refuse(str(exc))


def _take_choice(name: str) -> None:
    value = st.session_state[widget_key(name)]
    if value is not None:
        _set(name, value)


def _take_typed(shape: tuple[int, ...]) -> None:
    """The typed target: one number per cell of y, as `fields.typed_values` reads them (empty:
    none, the random target until there is one)."""
    if not st.session_state["ctl_t"].strip():
        _set("t", "")
        return
    try:
        values = typed_values(st.session_state["ctl_t"], shape, "target")
    except ConvSpecError as exc:
        _refuse(f"Target refused: {str(exc).replace(': edits were reset', '')}")
        return
    _set("t", encode_array(values))


def rate_text(lr: float | str) -> str:
    """The rate as its field shows it: "" for the layer's safe rate."""
    return "" if lr == "" else number_text(lr)


def learn_controls(ctx: Context) -> None:
    """The target, the loss's reduction, η, μ and the number of steps, in one row."""
    state, spec = ctx.state, ctx.spec
    ss = st.session_state
    ss["ctl_tgt"], ss["ctl_red"] = state["tgt"], state["red"]
    ss["ctl_lr"], ss["ctl_mom"], ss["ctl_steps"] = (
        rate_text(state["lr"]),
        state["mom"],
        state["steps"],
    )
    with st.container(horizontal=True, vertical_alignment="bottom", key="cv_learn_controls"):
        st.selectbox(
            "Target t",
            FIELDS["tgt"].choices,
            key="ctl_tgt",
            on_change=_take_choice,
            args=("tgt",),
            format_func=lambda s: SOURCE_WORDS.get(s, f"{s} kernel"),
            help="What y is pulled towards: a named kernel's output on the same x "
            "(so w has a kernel to learn), random integers, or numbers you type",
        )
        st.segmented_control(
            "Loss",
            FIELDS["red"].choices,
            key="ctl_red",
            on_change=_take_choice,
            args=("red",),
            help="sum: L = ½‖y − t‖²; mean: the same ÷ N (the batch size)",
        )
        st.text_input(
            "Learning rate η",
            key="ctl_lr",
            on_change=_take_rate,
            placeholder="safe",
            help="Empty: the layer's safe rate 1/λ_max. Too large overshoots; "
            f"beyond 2(1 + μ)/λ_max the run diverges. At most {sgd.MAX_LR:g}",
        )
        st.number_input(
            "Momentum μ",
            key="ctl_mom",
            on_change=_take_number,
            args=("mom", "Momentum μ", 0.0),
            step=0.1,
            format="%.3g",
            help="0: plain SGD; 0.9 the usual choice",
        )
        st.number_input(
            "Steps",
            key="ctl_steps",
            on_change=_take_number,
            args=("steps", "Steps"),
            step=10,
            help=f"1 to {training.MAX_STEPS}",
        )
        ss.setdefault(LOG_SCALE, True)
        st.toggle("log scale", key=LOG_SCALE, help="The loss curve on a log scale")
    if state["tgt"] == "typed":
        ss["ctl_t"] = ", ".join(state["t"].split(",")) if state["t"] else ""
        st.text_input(
            f"Target values, {shape_text(spec.output_shape)} (N, C_out, oH, oW), row by row",
            key="ctl_t",
            on_change=_take_typed,
            args=(spec.output_shape,),
            placeholder=f"{math.prod(spec.output_shape)} numbers separated by commas or spaces",
        )


def problem() -> str:
    return st.session_state.get(PROBLEM, "")


def settings_of(ctx: Context) -> tuple[Settings, list[str]]:
    """The settings the state asks for, made to fit the layer (`state.learning_settings`)."""
    return learning_settings(ctx.state, ctx.spec)


@_cached("experiment")
def experiment_of(key: tuple, settings: Settings) -> Experiment:
    """The layer's experiment under `settings` (ConvSpecError if they cannot work)."""
    spec, x, w, _ = layer_inputs(key)
    y = np.asarray(compute_layer(key).forward.y)  # the layer's own y: the random target's draw
    seed = dict(zip(VALUE_FIELDS, key))["seed"]
    return experiment(spec, x, w, settings, seed=seed, y=y, max_macs=MAX_MACS)


def update_rule(momentum: float) -> str:
    """The update rule the run takes, written out."""
    if not momentum:
        return "Plain SGD: w ← w − η·∂L/∂w and b ← b − η·∂L/∂b at every step."
    return (
        f"SGD with momentum μ = {number(momentum)}: v ← μ·v + ∂L/∂w (v = ∂L/∂w on the first "
        "step), w ← w − η·v; the same for b."
    )


STEP, RUN = LECTURE.stage("step"), LECTURE.stage("train")  # their downloads' names


def _file(ctx: Context, name: str, ext: str) -> str:
    return f"convviz-{ctx.state['preset']}-{name}.{ext}"


def learning_exports(ctx: Context, experiment: Experiment) -> None:
    """Downloads, each made when clicked: the step as PNG/SVG, the loss curve as SVG, the run as
    a GIF, and NumPy / PyTorch snippets that train the same layer for the same steps."""
    step, run = experiment.step, experiment.run
    kernels = experiment.target.kernels[0] if experiment.target.kernels else None
    title = f"One step, η = {number(step.lr)}: L {number(step.before.value)} → " + number(
        step.after.value
    )

    def still(fmt: str) -> bytes:
        fig = static.panels_figure(step_panels(step, ctx.k, ctx.c), ctx.theme, title=title)
        return static.to_png(fig) if fmt == "png" else static.to_svg(fig)

    def curve() -> bytes:
        return static.to_svg(loss_curve_static(run, log=st.session_state.get(LOG_SCALE, True)))

    def gif() -> bytes:
        return run_gif(run, ctx.theme, n=ctx.n, k=ctx.k, c=ctx.c, target_kernel=kernels)

    w0 = run.w[0]
    rows = (
        ("⬇ step PNG", partial(still, "png"), STEP.export, "png", "image/png"),
        ("⬇ step SVG", partial(still, "svg"), STEP.export, "svg", "image/svg+xml"),
        ("⬇ loss curve SVG", curve, "learn-loss-curve", "svg", "image/svg+xml"),
        ("⬇ training GIF", gif, RUN.export, "gif", "image/gif"),
        ("⬇ MP4", lambda: mp4_bytes(gif_frames(gif())), RUN.export, "mp4", "video/mp4"),
        ("⬇ NumPy", partial(numpy_training_snippet, run, w0), "learn-numpy", "py", "text/x-python"),
        (
            "⬇ PyTorch",
            partial(torch_training_snippet, run, w0),
            "learn-torch",
            "py",
            "text/x-python",
        ),
    )
    with st.container(horizontal=True, key="cv_exports_learning"):
        for label, data, name, ext, mime in rows:
            st.download_button(
                label,
                data,
                file_name=_file(ctx, name, ext),
                mime=mime,
                on_click="ignore",
                key=f"dl_{name}_{ext}",
            )

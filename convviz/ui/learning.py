"""The Learning page's controls and its lesson: the rate, momentum, steps, target and reduction.

They live in the state (URL fields lr, mom, steps, tgt, red, t: `convviz.fields`) like every
other control; a value that cannot work is refused with a short message and the last valid one
kept. The lesson itself is the engine's (`convviz.lesson`), computed once per layer and settings.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import streamlit as st

from convviz import learn, training
from convviz.export.learn_snippet import numpy_training_snippet, torch_training_snippet
from convviz.export.video import gif_frames, mp4_bytes
from convviz.fields import FIELDS, VALUE_FIELDS, decode_array, encode_array, number_text
from convviz.lesson import Lesson, Settings, lesson
from convviz.loss import TARGET_SOURCES
from convviz.render import static
from convviz.render.learning import loss_curve_static, run_gif, step_panels
from convviz.spec import ConvSpecError
from convviz.state import MAX_MACS
from convviz.text import count, echo, number, shape_text
from convviz.ui.compute import _cached, compute_layer, layer_inputs
from convviz.ui.controls import STATE, Context
from convviz.values import named_kernel

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
    raw = st.session_state["w_lr"].strip().replace("−", "-").replace(",", ".")
    if raw == "" or raw.lower() == "auto":
        _set("lr", "")
        return
    try:
        value = float(raw)
    except ValueError:
        _refuse(
            f"η {echo(raw)} is not a number: type e.g. 0.001 (or leave it empty for the safe rate)"
        )
        return
    try:
        _set("lr", learn.check_learning_rate(value))
    except ConvSpecError as exc:
        _refuse(f"η refused: {exc}")


def _take_steps() -> None:
    value = st.session_state["w_steps"]
    try:
        _set("steps", training.check_steps(value if value is None else int(value)))
    except ConvSpecError as exc:
        _refuse(f"Steps refused: {exc}")


def _take_momentum() -> None:
    value = st.session_state["w_mom"]
    try:
        _set("mom", learn.check_momentum(0.0 if value is None else float(value)))
    except ConvSpecError as exc:
        _refuse(f"Momentum refused: {exc}")


def _take_choice(name: str) -> None:
    value = st.session_state[f"w_{name}"]
    if value is not None:
        _set(name, value)


def _take_typed(shape: tuple[int, ...]) -> None:
    """The typed target: numbers separated by commas or spaces, one per cell of y."""
    raw = st.session_state["w_t"].replace("−", "-").replace(";", ",").replace("\n", ",")
    parts = [p for chunk in raw.split(",") for p in chunk.split()]
    try:
        values = decode_array(",".join(parts), shape, "target")
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
    ss["w_tgt"], ss["w_red"] = state["tgt"], state["red"]
    ss["w_lr"], ss["w_mom"], ss["w_steps"] = rate_text(state["lr"]), state["mom"], state["steps"]
    with st.container(horizontal=True, vertical_alignment="bottom", key="cv_learn_controls"):
        st.selectbox(
            "Target t",
            FIELDS["tgt"].choices,
            key="w_tgt",
            on_change=_take_choice,
            args=("tgt",),
            format_func=lambda s: SOURCE_WORDS.get(s, f"{s} kernel"),
            help="What y is pulled towards: a named kernel's output on the same x "
            "(so w has a kernel to learn), random integers, or numbers you type",
        )
        st.segmented_control(
            "Loss",
            FIELDS["red"].choices,
            key="w_red",
            on_change=_take_choice,
            args=("red",),
            help="sum: L = ½‖y − t‖²; mean: the same ÷ N (the batch size)",
        )
        st.text_input(
            "Learning rate η",
            key="w_lr",
            on_change=_take_rate,
            placeholder="safe",
            help="Empty: the layer's safe rate 1/λ_max. Too large overshoots; "
            f"beyond 2(1 + μ)/λ_max the run diverges. At most {learn.MAX_LR:g}",
        )
        st.number_input(
            "Momentum μ",
            key="w_mom",
            on_change=_take_momentum,
            step=0.1,
            format="%.3g",
            help="0: plain SGD; 0.9 the usual choice",
        )
        st.number_input(
            "Steps",
            key="w_steps",
            on_change=_take_steps,
            step=10,
            help=f"1 to {training.MAX_STEPS}",
        )
        ss.setdefault(LOG_SCALE, True)
        st.toggle("log scale", key=LOG_SCALE, help="The loss curve on a log scale")
    if state["tgt"] == "typed":
        ss["w_t"] = ", ".join(state["t"].split(",")) if state["t"] else ""
        st.text_input(
            f"Target values, {shape_text(spec.output_shape)} (N, C_out, oH, oW), row by row",
            key="w_t",
            on_change=_take_typed,
            args=(spec.output_shape,),
            placeholder=f"{math.prod(spec.output_shape)} numbers separated by commas",
        )


def problem() -> str:
    return st.session_state.get(PROBLEM, "")


def settings_of(ctx: Context) -> tuple[Settings, list[str]]:
    """The settings the state asks for, made to fit the layer: a named kernel of another size
    becomes the box kernel, steps beyond the work limit the most it allows (and a typed target
    of another shape a random one): each with a note saying so."""
    state, spec = ctx.state, ctx.spec
    notes = []
    target = state["tgt"]
    if target in TARGET_SOURCES[2:] and named_kernel(target, spec.kernel_size) is None:
        notes.append(
            f"The {target} kernel is not {shape_text(spec.kernel_size)} like this "
            "layer's: the target is made with the box kernel"
        )
        target = "box"
    typed = None
    if target == "typed":
        try:
            typed = decode_array(state["t"], spec.output_shape, "target") if state["t"] else None
        except ConvSpecError as exc:
            notes.append(str(exc).replace(": edits were reset", ""))
        if typed is None:
            notes.append(
                f"Type {math.prod(spec.output_shape)} target values (y is "
                f"{shape_text(spec.output_shape)}); until then the target is random"
            )
            target = "random"
    steps, most = state["steps"], training.max_steps(spec, MAX_MACS)
    if steps > most >= 1:
        notes.append(
            f"{steps} steps of this layer are beyond the app's work limit: {count(most, 'step')} "
            "are taken"
        )
        steps = most
    settings = Settings(
        lr=None if state["lr"] == "" else state["lr"],
        steps=steps,
        momentum=state["mom"],
        target=target,
        reduction=state["red"],
        typed=typed,
    )
    return settings, notes


@_cached("lesson")
def lesson_of(key: tuple, settings: Settings) -> Lesson:
    """The layer's lesson under `settings` (ConvSpecError if they cannot work)."""
    spec, x, w, _ = layer_inputs(key)
    y = np.asarray(compute_layer(key).forward.y)  # the layer's own y: the random target's draw
    seed = dict(zip(VALUE_FIELDS, key))["seed"]
    return lesson(spec, x, w, settings, seed=seed, y=y, max_macs=MAX_MACS)


def update_rule(momentum: float) -> str:
    """The update rule the run takes, written out."""
    if not momentum:
        return "Plain SGD: w ← w − η·∂L/∂w and b ← b − η·∂L/∂b at every step."
    return (
        f"SGD with momentum μ = {number(momentum)}: v ← μ·v + ∂L/∂w (v = ∂L/∂w on the first "
        "step), w ← w − η·v; the same for b."
    )


def _file(ctx: Context, name: str, ext: str) -> str:
    return f"convviz-{ctx.state['preset']}-{name}.{ext}"


def learning_exports(ctx: Context, lesson: Lesson) -> None:
    """Downloads, each made when clicked: the step as PNG/SVG, the loss curve as SVG, the run as
    a GIF, and NumPy / PyTorch snippets that train the same layer for the same steps."""
    step, run = lesson.step, lesson.run
    kernels = lesson.target.kernels[0] if lesson.target.kernels else None
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
        ("⬇ step PNG", partial(still, "png"), "learn-step", "png", "image/png"),
        ("⬇ step SVG", partial(still, "svg"), "learn-step", "svg", "image/svg+xml"),
        ("⬇ loss curve SVG", curve, "learn-loss-curve", "svg", "image/svg+xml"),
        ("⬇ training GIF", gif, "learn-run", "gif", "image/gif"),
        ("⬇ MP4", lambda: mp4_bytes(gif_frames(gif())), "learn-run", "mp4", "video/mp4"),
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

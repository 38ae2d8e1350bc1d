"""How the layer learns: a loss and its ∂L/∂y, one gradient step on w and b, a training run."""

from dataclasses import replace

import streamlit as st

import convviz.ui.boot  # noqa: F401  (first: see its docstring)
from convviz.engine.spec import ConvSpecError
from convviz.engine.text import count, number
from convviz.model.lecture import LEARN_PAGE
from convviz.render.story.learning import bias_text, loss_sum_text, signed
from convviz.ui.clicker import stage_bar, stage_heading
from convviz.ui.controls import controls, page_config
from convviz.ui.learning import (
    LOG_SCALE,
    experiment_of,
    learn_controls,
    learning_exports,
    problem,
    settings_of,
    update_rule,
)
from convviz.ui.stage_view import stage_view, subject_of
from convviz.ui.views import (
    page_body,
    page_end,
    page_header,
)

PAGE = LEARN_PAGE
LAST = "cv_learn_last"  # (layer key, settings) of the last experiment shown
STAGE_PX, STAGE_PRES_PX = 200, 60  # the stage bar, the controls and the heading above a figure
LOSS_WORDS_PX = 70  # a cell's ∂L/∂y and L, under the loss's grids on a projector
page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "How the layer learns",
    "A loss says how far y is from a target t; its gradient ∂L/∂y starts the backward pass; "
    "∂L/∂w then moves every weight a little against it. Step after step, the layer learns.",
)


def the_experiment(ctx):
    """The experiment of the settings asked for, or (with a message) the last valid one."""
    settings, notes = settings_of(ctx)
    for note in notes:
        st.info(f"{note}.", icon=":material/info:")
    try:
        experiment = experiment_of(ctx.key, settings)
    except ConvSpecError as exc:
        key, last = st.session_state.get(LAST, (None, None))
        st.error(
            f"**Cannot learn with these settings:** {exc}. Showing the last valid ones.", icon="⚠️"
        )
        if key != ctx.key:  # another layer: its defaults
            last = replace(
                settings,
                lr=None,
                steps=min(settings.steps, 50),
                momentum=0.0,
                target="random" if settings.target == "typed" else settings.target,
            )
        return experiment_of(ctx.key, last)
    st.session_state[LAST] = (ctx.key, settings)
    return experiment


def loss_words(ctx, experiment) -> None:
    """Under the loss's grids: L written out, the target, the mean's 1/N."""
    if not ctx.theme.show_secondary:
        return
    loss, N = experiment.step.before, ctx.spec.batch
    st.markdown(f"`{loss_sum_text(loss)}`")
    mean = (
        f" The mean over the batch divides it by N = {N}: L = (1/{N})·½Σₙ‖yₙ − tₙ‖², "
        f"∂L/∂y = (y − t)/{N}."
        if loss.scale != 1
        else ""
    )
    st.caption(
        f"Target: {target_words(experiment)}.{mean} Click a cell to see its gradient. From "
        "here the backward pass runs unchanged: this ∂L/∂y is dilated, padded and correlated "
        "as on the Input- and Weight-gradient pages."
    )


def target_words(experiment) -> str:
    source = experiment.target.source
    if experiment.target.kernels:
        return f"the {source} kernel's output on the same x (same stride, padding, dilation)"
    return "random integers in −5…5" if source == "random" else "typed in"


def step_words(ctx, experiment) -> None:
    """Under the step: the loss before and after, b's step, the rate and where it diverges."""
    step = experiment.step
    before, after = step.before.value, step.after.value
    safe = " (the safe rate 1/λ_max)" if experiment.curvature else " (a safe rate: 1/Σλ)"
    rate = f"η = {number(step.lr)}" + (safe if experiment.auto_rate else "")
    st.markdown(
        f"**L: {number(before)} → {number(after)}** ({signed(after - before)}) · {rate}  \n"
        f"{bias_text(step, ctx.k)}"
    )
    if after > before:
        st.warning(
            f"The loss rose: η = {number(step.lr)} overshoots, each tap jumps past its minimum. "
            + rate_hint(experiment),
            icon=":material/trending_up:",
        )
    elif ctx.theme.show_secondary:
        st.caption(
            update_rule(experiment.settings.momentum)
            + " Click a tap for its own update. "
            + rate_hint(experiment)
        )


def rate_hint(experiment) -> str:
    """Where this layer's runs start to diverge (when its curvature is known)."""
    curv, mu = experiment.curvature, experiment.settings.momentum
    if curv is None:
        return ""
    words = f"For this layer plain SGD converges below η = {number(curv.critical_lr())} (2/λ_max)"
    if mu:
        words += f", with μ = {number(mu)} below {number(curv.critical_lr(mu))}"
    return words + "."


def train_words(ctx, experiment) -> None:
    """Under the run: how it ended, what w reached, the update rule."""
    run = experiment.run
    if run.diverged:
        st.error(run.message, icon=":material/warning:")
    if ctx.theme.show_secondary:
        st.markdown(
            f"L: {number(run.loss[0])} → {number(run.loss[-1])} in "
            f"{count(run.steps_done, 'step')}. Click a cell of w, ∂L/∂w or y to follow it "
            "step by step."
        )
    if experiment.underdetermined and not run.diverged:  # a run that stopped reached nothing
        c, kernel = experiment.curvature, experiment.target.source
        short = f"L → 0, yet w ≠ the {kernel} kernel: {c.rank} equations for {c.unknowns} unknowns."
        st.info(
            f"The loss can reach 0 while w is not the {kernel} kernel: this layer's "
            f"{count(ctx.spec.batch * run.y.shape[-1] * run.y.shape[-2], 'output cell')} give "
            f"{c.rank} independent equations for {c.unknowns} unknowns (the taps and the bias), "
            "so many kernels make the same y, and SGD ends at the one nearest its start. "
            "A bigger input (the classroom preset) pins w down."
            if ctx.theme.show_secondary
            else short,
            icon=":material/lightbulb:",
        )
    if ctx.theme.show_secondary:
        st.caption(update_rule(experiment.settings.momentum))


WORDS = {"loss": loss_words, "step": step_words, "train": train_words}


@page_body
def learning(ctx):
    """The stage bar, the learning controls and the stage."""
    stage = stage_bar(PAGE, ctx)
    if ctx.theme.show_secondary:
        learn_controls(ctx)
    if problem():
        st.warning(problem(), icon=":material/block:")
    experiment = the_experiment(ctx)
    ctx = stage_heading(stage, ctx, STAGE_PX, STAGE_PRES_PX)
    log = st.session_state.get(LOG_SCALE, True)
    subject = subject_of(ctx, experiment=experiment)
    stage_view(ctx, stage, subject, extra=(experiment.settings,), options={"log": log}
               if stage.key == "train" else None)  # fmt: skip
    WORDS[stage.key](ctx, experiment)
    if ctx.theme.show_secondary:
        learning_exports(ctx, experiment)
    else:  # on a projector, under the stage: the stage stays where the clicker left it
        with st.expander("Learning settings"):
            learn_controls(ctx)


learning(ctx)
page_end(ctx, PAGE, keys=False)

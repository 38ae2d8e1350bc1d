"""How the layer learns: a loss and its ∂L/∂y, one gradient step on w and b, a training run."""

from dataclasses import replace

import streamlit as st

from convviz.engine.spec import ConvSpecError
from convviz.engine.text import count, number
from convviz.model.lecture import LEARN_PAGE
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.story.learning import bias_text, loss_panels, loss_sum_text, signed
from convviz.render.story.learning_frames import STEP_FRAMES, run_figure, shown_steps, step_motion
from convviz.ui.clicker import stage_bar, stage_heading
from convviz.ui.compute import shared_view
from convviz.ui.controls import controls, page_config
from convviz.ui.described import stage_in_words
from convviz.ui.learning import (
    LOG_SCALE,
    experiment_of,
    learn_controls,
    learning_exports,
    problem,
    settings_of,
    update_rule,
)
from convviz.ui.views import (
    animated_chart,
    chart,
    motion_start,
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


def loss_view(ctx, experiment, stage) -> None:
    """y, t and ∂L/∂y side by side; L written out; the selected cell's gradient."""
    loss = experiment.step.before
    N = ctx.spec.batch
    sel = ctx.selection
    oH, oW = ctx.spec.out_size
    picked = bool(sel) and sel[0] in ("y", "target", "grad_out") and sel[1] < oH and sel[2] < oW
    i, j = (sel[1], sel[2]) if picked else (0, 0)
    panels = loss_panels(loss, ctx.n, ctx.k)
    if picked:  # the clicked cell outlined in y, t and ∂L/∂y
        panels = [replace(p, selected=(i, j)) for p in panels]
    pres = not ctx.theme.show_secondary
    theme = ctx.theme.reserve(LOSS_WORDS_PX) if pres else ctx.theme
    key = ("loss", ctx.key, experiment.settings, ctx.n, ctx.k, picked and (i, j), theme)
    fig = shared_view(key, lambda: panels_figure(panels, theme))
    y, t, g = (a[ctx.n, ctx.k, i, j] for a in (loss.y, loss.target, loss.grad_out))
    over = "" if loss.scale == 1 else f"/{N}"
    with st.container(key="cv_screen_still"):  # on a projector, it ends the first screen
        chart(fig, "learn_loss")
        st.markdown(
            f"**∂L/∂y[{i}, {j}] = (y[{i}, {j}] − t[{i}, {j}]){over} = ({number(y)} − {term(t)})"
            f"{over} = {number(g)}**"
        )
        st.markdown(f"`{loss_sum_text(loss)}`" if not pres else f"L = {number(loss.value)}")
    if ctx.theme.show_secondary:
        mean = (
            (
                f" The mean over the batch divides it by N = {N}: L = (1/{N})·½Σₙ‖yₙ − tₙ‖², "
                f"∂L/∂y = (y − t)/{N}."
            )
            if loss.scale != 1
            else ""
        )
        st.caption(
            f"Target: {target_words(experiment)}.{mean} Click a cell to see its gradient. From "
            "here the backward pass runs unchanged: this ∂L/∂y is dilated, padded and correlated "
            "as on the Input- and Weight-gradient pages."
        )


def term(v: float) -> str:
    """A number as a term after a minus sign: a negative one in parentheses."""
    return f"({number(v)})" if v < 0 else number(v)


def target_words(experiment) -> str:
    source = experiment.target.source
    if experiment.target.kernels:
        return f"the {source} kernel's output on the same x (same stride, padding, dilation)"
    return "random integers in −5…5" if source == "random" else "typed in"


def step_view(ctx, experiment, stage) -> None:
    """w before, each tap's move and w after, played by the page's player; b's step; the loss
    before and after."""
    step = experiment.step
    start = motion_start(ctx, STEP_FRAMES + 1)
    view = (ctx.key, experiment.settings, ctx.k, ctx.c, ctx.selection, ctx.theme, start)
    fig = shared_view(("step", *view), lambda: step_motion(
        step, ctx.theme, ctx.k, ctx.c, start=start, selected=ctx.selection))  # fmt: skip
    animated_chart(fig, "learn_step", ctx, None, stage=stage)
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


def train_view(ctx, experiment, stage) -> None:
    """The run's steps played by the page's player (in the browser): w, y and ∂L/∂w at each,
    and under them the loss curve with the step shown."""
    run = experiment.run
    kernels = experiment.target.kernels[0] if experiment.target.kernels else None
    log = st.session_state.get(LOG_SCALE, True)
    start = motion_start(ctx, len(shown_steps(run.kept)))
    view = (ctx.key, experiment.settings, ctx.n, ctx.k, ctx.c, ctx.selection, log, ctx.theme, start)
    fig = shared_view(("run", *view), lambda: run_figure(
        run, ctx.theme, n=ctx.n, k=ctx.k, c=ctx.c, target_kernel=kernels, log=log,
        start=start, selected=ctx.selection))  # fmt: skip
    animated_chart(fig, "learn_run", ctx, None, stage=stage)
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


VIEWS = {"loss": loss_view, "step": step_view, "train": train_view}
CHARTS = {"loss": "chart_learn_loss", "step": "chart_learn_step", "train": "chart_learn_run"}


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
    VIEWS[stage.key](ctx, experiment, stage)
    stage_in_words(ctx, stage, CHARTS[stage.key], still=stage.key == "loss")
    if ctx.theme.show_secondary:
        learning_exports(ctx, experiment)
    else:  # on a projector, under the stage: the stage stays where the clicker left it
        with st.expander("Learning settings"):
            learn_controls(ctx)


learning(ctx)
page_end(ctx, PAGE, keys=False)

"""One stage view: any stage of the lecture drawn on its page from the storyboard.

`stage_view(ctx, stage)` looks the stage's drawing up (`convviz.render.story.board`) and draws
it as the lecture's view says: a sliding window or a motion with the page's player (its PNG, SVG
and GIF downloads under it), or still grids (on a projector, the sum written under them). What
the drawings read is the page's `Subject`: its layer, slice and selected cell, with the app's
shared sweeps and formulas. A page keeps only what is its own (its header, the formula box, the
scatter route, close-ups, the gate's words).
"""

from __future__ import annotations

import streamlit as st

from convviz.model.lecture import LECTURE, Stage
from convviz.render.motion.frames import motion_figure
from convviz.render.motion.gif import motion_gif
from convviz.render.motion.model import gif_fits
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.story.board import StillDrawing, drawing
from convviz.render.story.subject import Subject
from convviz.ui.clicker import page_stages, stage_words
from convviz.ui.compute import formula_at, input_grad_formula_of, shared_view, sweeps_for
from convviz.ui.controls import Context
from convviz.ui.views import (
    FORMULA_LINES_PX,
    animated_chart,
    animation,
    chart,
    export_buttons,
    formula_lines,
    motion_captions,
    motion_start,
)


def subject_of(ctx: Context) -> Subject:
    """What the page's stages are drawn from: its layer, slice and selection, with the sweeps and
    formulas every session shares (`ui.compute`)."""

    def formula_of(kind: str, cell: tuple[int, int]):
        if kind == "grad_x_padded":
            return input_grad_formula_of(ctx.key, ctx.n, ctx.c, *cell, True)
        return formula_at(ctx.key, (kind, *cell), ctx.n, ctx.k, ctx.c)

    sweeps = sweeps_for(ctx.key, ctx.n, ctx.k, ctx.c)
    return Subject(ctx.layer, ctx.n, ctx.k, ctx.c, ctx.selection, state=ctx.state,
                   sweeps=sweeps, formula_of=formula_of)  # fmt: skip


def _view_key(ctx: Context, stage: Stage, *more) -> tuple:
    """What a stage's figure depends on: the layer, the slice, the selection, the screen."""
    return (stage.key, ctx.key, ctx.n, ctx.k, ctx.c, ctx.selection, ctx.theme, *more)


def _still_view(ctx: Context, stage: Stage, still: StillDrawing) -> None:
    """Still grids; on a projector the sum under them, as a player writes it under a figure."""
    said = still.said or still.formula
    pres = not ctx.theme.show_secondary and said is not None
    theme = ctx.theme.reserve(FORMULA_LINES_PX) if pres else ctx.theme
    panels = still.screen or still.panels
    build = lambda: panels_figure(panels, theme, highlight=still.highlight)  # noqa: E731
    fig = shared_view(("still", *_view_key(ctx, stage)), build)
    with st.container(key="cv_screen_still"):  # on a projector, it ends the first screen
        chart(fig, f"stage_{stage.key}")
        if pres:
            formula_lines(said, ctx)
    export_buttons(still.panels, ctx, stage.export, stage_words(stage, ctx)[0], still.formula,
                   highlight=still.highlight)  # fmt: skip


def _sweep_view(ctx: Context, stage: Stage, subject: Subject) -> None:
    """A sliding window and its player, each frame's sum under it; its picture the still's."""
    drawn = drawing(subject, stage)
    sweep, still = drawn.sweep(subject), drawn.still(subject)
    start = sweep.start if sweep.start is not None else motion_start(ctx, sweep.sweep.steps)
    animation(ctx, sweep.sweep, list(sweep.panels), stage.export, stage_words(stage, ctx)[0],
              channel=sweep.channel, start=start, formula=still.formula,
              formula_of=sweep.formula_of, cell=sweep.cell, still=still.panels,
              stage=stage)  # fmt: skip


def _follow(ctx: Context, stage: Stage) -> dict[str, int] | None:
    """For a motion through stages: each covered stage's button in the page's stage bar."""
    if not stage.covers:
        return None
    bar = [LECTURE.label(s) for s in page_stages(stage.page, ctx)]
    labels = [LECTURE.label(LECTURE.stage(key)) for key in stage.covers]
    return {label: bar.index(label) for label in labels}


def _motion_view(ctx: Context, stage: Stage, subject: Subject) -> None:
    """Cells that move, with the player; the stage's picture (or its GIF) to download."""
    drawn = drawing(subject, stage)
    motion, start = drawn.motion(subject), motion_start(ctx)
    key = ("motion", *_view_key(ctx, stage, start))
    fig = shared_view(key, lambda: motion_figure(motion.build(), ctx.theme, start=start))
    captions = motion_captions(fig, ctx, motion.cell_formula) if motion.cell_formula else None
    animated_chart(fig, f"stage_{stage.key}", ctx, captions, follow=_follow(ctx, stage),
                   stage=stage)  # fmt: skip
    if drawn.still is not None:
        still = drawn.still(subject)
        export_buttons(still.panels, ctx, stage.export, stage_words(stage, ctx)[0],
                       still.formula, highlight=still.highlight)  # fmt: skip
    elif gif_fits(ctx.spec):
        st.download_button(
            "⬇ GIF of this stage",
            lambda: motion_gif(motion.build().coarser(3)),
            file_name=f"convviz-{ctx.state['preset']}-{stage.export}.gif",
            mime="image/gif",
            on_click="ignore",
            key=f"gif_{stage.key}",
        )


def stage_view(ctx: Context, stage: Stage, subject: Subject | None = None) -> Subject:
    """Draw one stage of the lecture on its page, as its view says; the subject it drew."""
    subject = subject or subject_of(ctx)
    drawn = drawing(subject, stage)
    if stage.view == "sweep":
        _sweep_view(ctx, stage, subject)
    elif stage.view == "motion" and drawn.motion is not None:
        _motion_view(ctx, stage, subject)
    else:
        _still_view(ctx, stage, drawn.still(subject))
    return subject

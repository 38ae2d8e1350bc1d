"""The storyboard: what every stage of the lecture draws, in one registry keyed by its stage keys.

For each stage (`convviz.model.lecture`) its `Drawing` says how to draw it from a `Subject`: its
still (grids and the sum written under them: the PNG/SVG, the handout's page, the deck's still),
its sliding window (`sweep`), its motion, an animated figure of its own (`figure`: the Learning
page's step and run), and, for a stage that the whole backward pass plays through, its keyframes.
The pages (`convviz.ui.stage_view`), every export and the notebook view read it; none composes a
stage itself. `check` holds the board against a lecture: a stage without the drawing its view
needs, or a drawing without a stage, is an error that names it (run at import on `LECTURE`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from convviz.engine.arrays import InputGradArrays
from convviz.engine.formulas import Formula
from convviz.engine.sweeps import Sweep
from convviz.engine.text import number
from convviz.model.lecture import LECTURE, Lecture, Stage
from convviz.render.motion import motions
from convviz.render.motion.model import MAX_WINDOW_STOPS, Motion, Scene
from convviz.render.motion.scenes import (
    GRAD_OUT,
    correlate_keys,
    dilate_keys,
    mask_keys,
    pad_keys,
    rotate_keys,
)
from convviz.render.panel import Panel, SweepPanels
from convviz.render.plotly.frames import writes_captions
from convviz.render.plotly.spoken import Sums
from convviz.render.selection import step_of
from convviz.render.story import chain, input_grad, learning, learning_frames
from convviz.render.story.input_grad import Focus
from convviz.render.story.panels import (
    channel_grids,
    followed_only,
    forward_panels,
    weight_grad_panels,
    written_out,
)
from convviz.render.story.subject import Subject

# --- what a drawing gives ------------------------------------------------------------------------


@dataclass(frozen=True)
class StillDrawing:
    """A stage as still grids (its PNG, SVG, handout page and deck slide) and their sum.

    highlight : what a lit cell means in the legend (the ReLU gate's shut cells), if not the
        selection's links;
    screen : the grids as the page shows them, where they differ from the picture's (the cells
        linked to the followed cell lit); said : the sum the page writes under them on a
        projector, where the picture has none of its own.
    """

    panels: list[Panel]
    formula: Formula | None = None
    highlight: str | None = None
    screen: list[Panel] | None = None
    said: Formula | None = None
    words: str = ""  # the selected cell's numbers, written under the grids


@dataclass(frozen=True)
class SweepDrawing:
    """A sliding window: its steps over three grids, the channel it stacks, each cell's sum.

    start : the step it opens on for the selected cell (None: where the playback policy says);
    cell : the output cell whose sum the page writes out (a big layer's close-up centres on it).
    """

    sweep: Sweep
    panels: SweepPanels
    channel: int
    formula_of: Callable[[int, int], Formula]
    start: int | None = None
    cell: tuple[int, int] | None = None
    words: str = ""  # the selected cell's numbers, after each frame's sum


@dataclass(frozen=True)
class MotionDrawing:
    """Cells that move (`render.motion`), built when asked; the sum of a frame's cell.

    follows : what the motion outlines beyond the layer and slice (part of its cache key);
    dressed : what the drawn figure needs beyond the motion (the handover's clicks);
    words : the selected cell's numbers, after each frame's sum.
    """

    build: Callable[[], Motion]
    cell_formula: Callable[[tuple], Formula] | None = None
    follows: tuple = ()
    dressed: Callable[[object], object] | None = None
    words: str = ""


@dataclass(frozen=True)
class FigureDrawing:
    """An animated figure a renderer of its own makes, played by the page's player: figure(theme,
    start, **options) → a plotly figure opened on frame `start` (None: its last); its GIF."""

    figure: Callable[..., object]
    gif: Callable[[], bytes] | None = None


# The keyframes a stage adds to the whole backward pass: (the input gradient's arrays, the full
# correlation's sweep, n, k, c, the groups as the stage before left them) → [(scene, frames
# spent reaching it)]
Keyframes = Callable[[InputGradArrays, Sweep, int, int, int, dict], list[tuple[Scene, int]]]


@dataclass(frozen=True)
class Drawing:
    """Everything one stage draws; a part is None where the stage has none."""

    still: Callable[[Subject], StillDrawing] | None = None
    sweep: Callable[[Subject], SweepDrawing] | None = None
    motion: Callable[[Subject], MotionDrawing] | None = None
    figure: Callable[[Subject], FigureDrawing] | None = None
    keyframes: Keyframes | None = None
    grids: Callable[[Subject], list] | None = None  # the channels' tiles (their page's alone)
    # the layer whose own arrays its grids are (their sums said cell by cell in words: `sums_of`);
    # None where they are not one layer's (a run's steps, two layers' chain)
    layer: Callable[[Subject], Subject] | None = None

    @property
    def animated(self) -> bool:
        return bool(self.sweep or self.motion or self.figure)


class BoardError(LookupError):
    """A stage without its drawing, or a drawing without its stage (the message names it)."""


# --- the layer's stages ------------------------------------------------------------------------


def _forward_still(s: Subject) -> StillDrawing:
    """The cell whose sum is written, lit with its window (a selected input cell marked)."""
    reading = s.selected(("x",), s.spec.padded_size)
    panels = forward_panels(s.layer.forward, s.sweeps["forward"], s.n, s.k, s.c,
                            s.forward_cell, reading)  # fmt: skip
    if s.selected(("y",), s.spec.out_size) is None:
        panels = written_out(panels)  # lit for its sum below, not selected
    return StillDrawing(list(panels), s.forward_formula)


def _forward_sweep(s: Subject) -> SweepDrawing:
    fw, sweep = s.layer.forward, s.sweeps["forward"]
    y_cell = s.selected(("y",), s.spec.out_size)
    reading = s.selected(("x",), s.spec.padded_size)
    panels = forward_panels(fw, sweep, s.n, s.k, s.c, selected=y_cell, reading=reading)
    start = step_of(sweep, s.forward_cell) if y_cell or reading else None
    return SweepDrawing(sweep, panels, s.c, lambda r, q: s.formula("y", (r, q)), start,
                        s.forward_cell)  # fmt: skip


def _weight_still(s: Subject) -> StillDrawing:
    panels = weight_grad_panels(s.layer.weight_grad, s.sweeps["weight_grad"], s.n, s.k, s.c,
                                s.weight_grad_cell)  # fmt: skip
    if s.selected(("grad_w",), s.spec.kernel_size) is None:
        panels = written_out(panels)
    return StillDrawing(list(panels), s.weight_grad_formula)


def _weight_sweep(s: Subject) -> SweepDrawing:
    sweep = s.sweeps["weight_grad"]
    w_cell = s.selected(("grad_w",), s.spec.kernel_size)
    panels = weight_grad_panels(s.layer.weight_grad, sweep, s.n, s.k, s.c, selected=w_cell)
    start = step_of(sweep, w_cell) if w_cell else None
    return SweepDrawing(sweep, panels, s.n, lambda r, q: s.formula("grad_w", (r, q)), start,
                        s.weight_grad_cell)  # fmt: skip


def _weight_window(s: Subject) -> MotionDrawing:
    """∂L/∂y spreads into the window, which steps over x̃; each window's sum, for windows of a
    size to write out (a huge ∂L/∂y: the words alone)."""
    wg, sweep = s.layer.weight_grad, s.sweeps["weight_grad"]
    sums = writes_captions(sweep, MAX_WINDOW_STOPS)
    return MotionDrawing(
        lambda: motions.weight_motion(wg, sweep, s.n, s.k, s.c),
        (lambda cell: s.formula("grad_w", cell[1:])) if sums else None,
    )


# the input gradient's stages: each drawn on the cell the page follows (`Subject.focus`)


def focus(s: Subject) -> Focus:
    return Focus(s.n, s.k, s.c, s.input_grad_cell, s.feeding)


def _grad_x_sum(s: Subject) -> Callable[[tuple], Formula]:
    """A motion frame's sum: the followed ∂L/∂x cell, or a cell of ∂L/∂x̃ (padded indices)."""
    return lambda cell: (
        s.input_grad_formula if cell == ("grad_x",) else s.formula("grad_x_padded", cell[1:])
    )


def _input_still(key: str) -> Callable[[Subject], StillDrawing]:
    def still(s: Subject) -> StillDrawing:
        screen = panels = input_grad.PANELS[key](s.layer.input_grad, focus(s))
        if not s.selected(("grad_x", "grad_x_padded"), s.spec.padded_size):
            panels = followed_only(panels)  # the followed cell outlined, nothing linked
        # every slide of the storyboard writes the sum of the cell the page follows
        return StillDrawing(panels, s.input_grad_formula, screen=screen)

    return still


def _input_motion(key: str) -> Callable[[Subject], MotionDrawing]:
    def motion(s: Subject) -> MotionDrawing:
        ig, f = s.layer.input_grad, focus(s)
        follows = f.selected if s.lecture.stage(key).formula else ()  # it outlines that cell
        if s.lecture.stage(key).covers:
            build = partial(whole_motion, s)
        else:
            build = partial(input_grad.stage_motion, key, ig, s.sweeps["input_grad"], f)
        return MotionDrawing(build, _grad_x_sum(s), follows)

    return motion


def _correlate_still(s: Subject) -> StillDrawing:
    """The formula's cell of ∂L/∂x̃, its window lit."""
    ig, cell = s.layer.input_grad, s.padded_input_grad_cell
    panels = input_grad.input_grad_animation(ig, s.sweeps["input_grad"], s.n, s.k, s.c, cell)
    if s.input_grad_cell[0] != "grad_x_padded":
        panels = written_out(panels)
    return StillDrawing(list(panels), s.formula("grad_x_padded", cell))


def _correlate_sweep(s: Subject) -> SweepDrawing:
    ig, sweep = s.layer.input_grad, s.sweeps["input_grad"]
    pad_cell = s.selected(("grad_x_padded",), s.spec.padded_size)
    panels = input_grad.input_grad_animation(ig, sweep, s.n, s.k, s.c, pad_cell)
    start = step_of(sweep, pad_cell) if pad_cell else None
    return SweepDrawing(sweep, panels, s.k, lambda r, q: s.formula("grad_x_padded", (r, q)),
                        start, s.padded_input_grad_cell)  # fmt: skip


def _keys(make: Callable[..., list[Scene]], tweens: int) -> Keyframes:
    """Keyframes made by a scene maker, each reached in `tweens` frames."""
    return lambda *args: [(scene, tweens) for scene in make(*args)]


def _first(ig, sweep, n: int, k: int, c: int, groups: dict) -> list[tuple[Scene, int]]:
    return [(Scene(GRAD_OUT, f"∂L/∂y[n={n}, k={k}] arrives from the next layer.", groups), 1)]


def _correlate_keys(ig, sweep, n: int, k: int, c: int, groups: dict) -> list[tuple[Scene, int]]:
    scenes = correlate_keys(ig, sweep, n, c, groups)
    done = motions.hide_window(scenes[-1].groups if scenes else groups)
    return [*((scene, 2) for scene in scenes), (done, 3)]


def backward_pass(
    ig: InputGradArrays,
    sweep: Sweep,
    n: int = 0,
    k: int = 0,
    c: int = 0,
    selected: np.ndarray | None = None,
    *,
    lecture: Lecture = LECTURE,
    board: Mapping[str, Drawing] | None = None,
) -> Motion:
    """The whole backward pass of (n, k, c): the keyframes of the stages it covers, in the
    lecture's order (`motions.backward_motion`); selected: padded cells it outlines."""
    whole = next(stage for stage in lecture.stages if stage.covers)
    covered = [stage for stage in lecture.stages if stage.key in whole.covers]
    board = board or BOARD
    plan = [partial(board[stage.key].keyframes, ig, sweep, n, k, c) for stage in covered]
    names = {stage.key: lecture.label(stage) for stage in covered}
    return motions.backward_motion(ig, sweep, n, k, c, plan, names, selected=selected)


def whole_motion(s: Subject) -> Motion:
    """The whole backward pass the page draws: its slice, the followed cell outlined."""
    ig = s.layer.input_grad
    selected = input_grad.outlined(ig, s.input_grad_cell)
    return backward_pass(ig, s.sweeps["input_grad"], s.n, s.k, s.c, selected,
                         lecture=s.lecture, board=board_of(s))  # fmt: skip


# --- how the layer learns --------------------------------------------------------------------


def _loss_still(s: Subject) -> StillDrawing:
    """y, t and ∂L/∂y, a clicked cell outlined in each of them; its ∂L/∂y worked out and L
    under them."""
    loss = s.experiment.step.before
    panels = learning.loss_panels(loss, s.n, s.k)
    cell = s.selected(("y", "target", "grad_out"), s.spec.out_size)
    words = learning.cell_gradient_text(loss, s.n, s.k, cell or (0, 0))
    return StillDrawing([replace(p, selected=cell) for p in panels] if cell else panels,
                        words=f"**{words}**  \nL = {number(loss.value)}")  # fmt: skip


def _step_still(s: Subject) -> StillDrawing:
    return StillDrawing(learning.step_panels(s.experiment.step, s.k, s.c))


def _step_figure(s: Subject) -> FigureDrawing:
    """w before, each tap's move and w after, as the player's frames (the selected tap's own
    update under it)."""
    step = s.experiment.step
    return FigureDrawing(
        lambda theme, start=None: learning_frames.step_motion(
            step, theme, s.k, s.c, start=start, selected=s.selection),
        lambda: learning.step_gif(step, k=s.k, c=s.c),
    )  # fmt: skip


def _target_kernel(s: Subject):
    kernels = s.experiment.target.kernels
    return kernels[0] if kernels else None


def _train_still(s: Subject) -> StillDrawing:
    run = s.experiment.run
    return StillDrawing(learning.run_panels(run, int(run.kept[-1]), s.n, s.k, s.c,
                                            _target_kernel(s)))  # fmt: skip


def _train_figure(s: Subject) -> FigureDrawing:
    """The run's steps as the player's frames, the loss curve under them (log scale unless the
    page asks otherwise); its GIF."""
    run, target = s.experiment.run, _target_kernel(s)
    return FigureDrawing(
        lambda theme, start=None, log=True: learning_frames.run_figure(
            run, theme, n=s.n, k=s.k, c=s.c, target_kernel=target, log=log, start=start,
            selected=s.selection),
        lambda: learning.run_gif(run, n=s.n, k=s.k, c=s.c, target_kernel=target),
    )  # fmt: skip


# --- two layers ----------------------------------------------------------------------------------


def _chain_slice(s: Subject) -> chain.ChainSlice:
    return chain.ChainSlice(s.n, s.k, s.c)


def _chain_cell(s: Subject) -> tuple[str, int, int] | None:
    """The selected cell as a cell of the page's grids (`chain.selected_cell`)."""
    return chain.selected_cell(s.chain, _chain_slice(s), s.selection)


def _chain_words(s: Subject) -> str:
    return chain.cell_words(s.chain, _chain_slice(s), _chain_cell(s))


def _chain_still(key: str) -> Callable[[Subject], StillDrawing]:
    """A still of the Two layers page: the selected cell outlined in each grid of its shape, its
    numbers along the chain under them."""

    def still(s: Subject) -> StillDrawing:
        panels = chain.outlined(chain.PANELS[key](s.chain, _chain_slice(s)), _chain_cell(s))
        return StillDrawing(panels, highlight=chain.SHUT_WORDS, words=_chain_words(s))

    return still


def _handover(s: Subject) -> MotionDrawing:
    p, sl = s.chain, _chain_slice(s)
    return MotionDrawing(
        lambda: chain.handover_motion(p, sl), _grad_x_sum(s.layer_one),
        dressed=lambda fig: chain.handed_over(fig, p), words=_chain_words(s),
    )  # fmt: skip


def _on_layer_one(own: Drawing, key: str) -> Drawing:
    """Layer 1's stage `key` on the Two layers page: the input gradient's own drawing of it
    (`own`) on layer 1, whose ∂L/∂y is the gated ∂L/∂h; its motion named as this page's stage,
    the selected cell's numbers along the chain under it."""

    def still(s: Subject) -> StillDrawing:
        return replace(own.still(s.layer_one), words=_chain_words(s))

    def sweep(s: Subject) -> SweepDrawing:
        return replace(own.sweep(s.layer_one), words=_chain_words(s))

    def motion(s: Subject) -> MotionDrawing:
        drawn = own.motion(s.layer_one)
        names = {key.removeprefix("chain-"): s.lecture.label(s.lecture.stage(key))}
        return replace(drawn, build=lambda: replace(drawn.build(), names=names),
                       words=_chain_words(s))  # fmt: skip

    return Drawing(
        still=own.still and still,
        sweep=own.sweep and sweep,
        motion=own.motion and motion,
        layer=lambda s: s.layer_one,
    )


# --- the board -----------------------------------------------------------------------------------


BOARD: dict[str, Drawing] = {
    "forward": Drawing(still=_forward_still, sweep=_forward_sweep),
    "grad-out": Drawing(still=_input_still("grad-out"), keyframes=_first),
    "dilate": Drawing(
        still=_input_still("dilate"), motion=_input_motion("dilate"),
        keyframes=_keys(lambda ig, sweep, n, k, c, b: dilate_keys(ig, n, k, b), 8),
    ),
    "pad": Drawing(
        still=_input_still("pad"), motion=_input_motion("pad"),
        keyframes=_keys(lambda ig, sweep, n, k, c, b: pad_keys(ig, n, k, b), 7),
    ),
    "rotate": Drawing(
        still=_input_still("rotate"), motion=_input_motion("rotate"),
        keyframes=_keys(lambda ig, sweep, n, k, c, b: rotate_keys(ig, k, c, b), 2),
    ),
    "correlate": Drawing(still=_correlate_still, sweep=_correlate_sweep,
                         keyframes=_correlate_keys),
    "mask": Drawing(
        still=_input_still("mask"), motion=_input_motion("mask"),
        keyframes=_keys(lambda ig, sweep, n, k, c, b: mask_keys(ig, n, c, b), 7),
    ),
    "whole": Drawing(motion=_input_motion("whole")),
    "weight-grad": Drawing(still=_weight_still, sweep=_weight_sweep),
    "weight-window": Drawing(motion=_weight_window),
    "loss": Drawing(still=_loss_still),
    "step": Drawing(still=_step_still, figure=_step_figure),
    "train": Drawing(still=_train_still, figure=_train_figure),
    "chain-forward": Drawing(still=_chain_still("chain-forward")),
    "chain-grad-h": Drawing(still=_chain_still("chain-grad-h")),
    "handover": Drawing(motion=_handover),
    "chain-weights": Drawing(still=_chain_still("chain-weights")),
    "channels": Drawing(grids=lambda s: channel_grids(s.layer, s.n, s.c, None, s.k)),
}  # fmt: skip
# layer 1's own backward pass on the Two layers page: the input gradient's stages on layer 1
BOARD |= {
    f"chain-{key}": _on_layer_one(BOARD[key], f"chain-{key}")
    for key in ("dilate", "pad", "rotate", "correlate", "mask")
}
# the layer's own stages: their grids are the subject's arrays (set after layer 1's copies, which
# show layer 1's)
BOARD |= {
    key: replace(BOARD[key], layer=lambda s: s)
    for key in ("forward", "grad-out", "dilate", "pad", "rotate", "correlate", "mask", "whole",
                "weight-grad", "weight-window")
}  # fmt: skip


def sums_of(s: Subject, stage: Stage) -> Sums | None:
    """The sums of the cells of the stage's grids, where they are one layer's own arrays; None
    elsewhere (their cells are said by their numbers alone)."""
    layer = drawing(s, stage).layer
    if layer is None:
        return None
    shown = layer(s)
    return Sums(shown.spec, shown.formula, shown.sums_in_words)


def board_of(s: Subject) -> Mapping[str, Drawing]:
    """The subject's board (a copy with a stage of its own), else the app's."""
    return s.board or BOARD


def needs(stage: Stage, lecture: Lecture) -> list[str]:
    """The parts of a drawing a stage needs: its view's, its picture's, the whole pass's."""
    view = {"still": "still", "sweep": "sweep", "grids": "grids"}.get(stage.view)
    parts = [view] if view else []
    if stage.still and "still" not in parts:
        parts.append("still")
    if any(stage.key in other.covers for other in lecture.stages):
        parts.append("keyframes")
    return parts


def missing(stage: Stage, drawing: Drawing | None, lecture: Lecture) -> str | None:
    """What a stage lacks of its drawing, in words; None when it has everything."""
    if drawing is None:
        return f"the stage {stage.key!r} has no drawing"
    lacks = [part for part in needs(stage, lecture) if getattr(drawing, part) is None]
    if stage.view in ("motion", "run") and not (drawing.motion or drawing.figure):
        lacks.append("motion")
    if stage.animated and not drawing.animated:
        lacks.append("an animation")
    if lacks:
        return f"the stage {stage.key!r} has no {', '.join(lacks)} in its drawing"
    return None


def check(lecture: Lecture = LECTURE, board: Mapping[str, Drawing] = BOARD) -> None:
    """BoardError unless every stage of the lecture has the drawing it needs and every drawing
    has a stage."""
    problems = [missing(s, board.get(s.key), lecture) for s in lecture.stages]
    keys = {s.key for s in lecture.stages}
    problems += [
        f"the drawing {key!r} has no stage in the lecture" for key in board if key not in keys
    ]
    problems = [p for p in problems if p]
    if problems:
        raise BoardError("; ".join(problems))


def drawing(s: Subject, stage: Stage) -> Drawing:
    """The stage's drawing on the subject's board."""
    return board_of(s)[stage.key]


check()

"""The story of one layer as exports see it: its stills and its animations, in lecture order.

A `Story` is the storyboard's `Subject` (the layer, the slice (n, k, c), the selected cell, the
lecture) made from a preset or a share link, with the app's file names. Every export (HTML,
video, LaTeX, snippet, handout, the command line) walks the lecture's stages and draws each from
the storyboard (`render.story.board`), so each names, orders and draws the stages as the app
does: the file names are the app's download names, `convviz-{preset}-{name}.{ext}`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import parse_qsl, urlsplit

import numpy as np

from convviz.engine.arrays import Layer, layer
from convviz.engine.formulas import Formula
from convviz.engine.spec import ConvSpecError
from convviz.engine.sweeps import Sweep
from convviz.engine.text import echo
from convviz.model.fields import CHAIN_FIELDS, URL_FIELDS, parse_field, preset_state
from convviz.model.lecture import CHAIN_PAGE, LEARN_PAGE, LECTURE, Lecture, Stage
from convviz.model.pages import label
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import from_query, selection_of, slice_of, spec_of, values_of
from convviz.render.motion.model import gif_fits
from convviz.render.panel import Panel
from convviz.render.story.board import Drawing, FigureDrawing, drawing
from convviz.render.story.subject import Subject

# The animations of `Story.animations`, in lecture order (the app asks without building them).
ANIMATIONS = tuple(s.export for s in LECTURE.stages if s.animated)


class ExportError(ValueError):
    """A layer that cannot be exported (an unknown preset, a bad link), with what to fix."""


@dataclass(frozen=True)
class Still:
    """One stage as still grids: what the app's PNG/SVG buttons export under `name`.

    highlight : what a lit cell means (the legend's words), where it is not the selection's.
    """

    name: str
    title: str
    caption: str
    panels: list[Panel]
    formula: Formula | None = None
    stage: Stage | None = None
    highlight: str | None = None


@dataclass(frozen=True)
class Animation:
    """One animation: a sliding window (`sweep`, drawn over `panels`), a `motion`, or a
    `figure` its stage's renderer animates itself.

    formula_of(row, col) : the formula of an output cell of the sweep (the player's lines).
    """

    name: str
    title: str
    caption: str
    sweep: Sweep | None = None
    panels: list[Panel] = field(default_factory=list)
    channel: int = 0
    formula_of: Callable[[int, int], Formula] | None = None
    motion: Callable[[], object] | None = None  # builds a render.motion.Motion
    cell_formula: Callable[[tuple], Formula] | None = None  # of a motion frame's Scene.cell
    stage: Stage | None = None
    figure: FigureDrawing | None = None
    dressed: Callable[[object], object] | None = None  # the drawn motion's figure, finished


def link_query(link: str) -> dict[str, str]:
    """The query of the app's share link (http or https), or of its query string alone
    ('?preset=…&H=…'); ExportError if it is not one: another scheme, no query, or a parameter
    that no page of the app reads."""
    parts = urlsplit(link.strip())
    if parts.scheme not in ("", "http", "https") or (parts.scheme and not parts.netloc):
        raise ExportError(f"{echo(link)} is not a convviz link (http://… or https://…)")
    text = parts.query if parts.scheme or "?" in link else link.strip()
    try:
        pairs = parse_qsl(text, strict_parsing=True)
    except ValueError:
        pairs = []
    if not pairs:
        raise ExportError(
            f"{echo(link)} has no query that says which layer (copy the page's 'Share this "
            "view' link, or name a --preset)"
        )
    unknown = [name for name, _ in pairs if name not in URL_FIELDS]
    if unknown:
        raise ExportError(f"{echo(unknown[0])} in the link is not a parameter of convviz")
    return dict(pairs)


def state_of(preset: str | None = None, link: str | None = None) -> dict:
    """The app's state from a preset name or a share link (or its query string).

    Raises ExportError naming what is wrong: an unknown preset, a value the link cannot hold,
    or a layer that cannot work.
    """
    if preset is not None and preset not in PRESETS_BY_KEY:
        raise ExportError(f"unknown preset {echo(preset)} (one of {', '.join(PRESETS_BY_KEY)})")
    query = link_query(link) if link is not None else {}
    if preset is not None:
        query.setdefault("preset", preset)
    if "preset" in query and query["preset"] not in (*PRESETS_BY_KEY, "custom"):
        raise ExportError(f"unknown preset {echo(query['preset'])} in the link")
    state, problems = from_query(query, preset_state(PRESETS_BY_KEY["classroom"]))
    real = [p for p in problems if "this is a custom layer" not in p]
    if real:
        raise ExportError(re.sub(r"; (so |kept |edits reset|the last edits kept).*$", "", real[0]))
    try:
        spec_of(state)
    except ConvSpecError as exc:
        raise ExportError(str(exc)) from None
    return state


def chain_of(query: Mapping[str, str]) -> dict:
    """Layer 2's fields of a Two layers link (the defaults for those it leaves out); ExportError
    naming a value it cannot hold."""
    own = {}
    for name in CHAIN_FIELDS:
        if name in query:
            value, problem = parse_field(name, str(query[name]))
            if problem:
                raise ExportError(problem)
            own[name] = value
    return own


def layer_of(state: dict) -> Layer:
    """Every stage of the state's layer, from its seed, kernel, grad_out kind and edits."""
    return layer(*values_of(state))


class Story(Subject):
    """The exports' view of one layer: its arrays, slice, selection, stills and animations."""

    def __init__(
        self,
        state: dict,
        lay: Layer | None = None,
        slice_: tuple[int, int, int] | None = None,
        selection: tuple[str, int, int] | None = None,
        *,
        chain: Mapping | None = None,
        lecture: Lecture = LECTURE,
        board: Mapping[str, Drawing] | None = None,
    ):
        lay = lay if lay is not None else layer_of(state)
        spec = lay.forward.spec
        n, k, c = slice_ or slice_of(state, spec)
        selection = selection if selection is not None else selection_of(state, spec)
        super().__init__(lay, n, k, c, selection, state=state, chain_fields=chain, lecture=lecture,
                         board=board)  # fmt: skip

    @classmethod
    def of(cls, preset: str | None = None, link: str | None = None, **kwargs) -> Story:
        """The story of a preset or a share link; ExportError naming what the link cannot hold
        (layer 2's fields of a Two layers link included, when layer 2 cannot work)."""
        query = link_query(link) if link is not None else {}
        story = cls(state_of(preset, link), chain=chain_of(query), **kwargs)
        if set(query) & set(CHAIN_FIELDS) and CHAIN_PAGE in story.left_out:
            raise ExportError(story.left_out[CHAIN_PAGE])
        return story

    @property
    def preset(self) -> str:
        return self.state["preset"]

    def file_name(self, name: str, ext: str) -> str:
        """The app's download name of an export."""
        return f"convviz-{self.preset}-{name}.{ext}"

    # the arrays a snippet reproduces
    @property
    def x(self) -> np.ndarray:
        return self.layer.forward.x

    @property
    def w(self) -> np.ndarray:
        return self.layer.forward.w

    @property
    def grad_out(self) -> np.ndarray:
        return self.layer.input_grad.grad_out

    # --- stills and animations, in lecture order (the lecture's stages, the board's drawings) ---

    @cached_property
    def left_out(self) -> dict[str, str]:
        """{page: why} for a page whose stages cannot be drawn for this layer: layer 2 that
        cannot work on it (Two layers), settings it cannot learn with (Learning)."""
        out = {}
        for page, make in ((CHAIN_PAGE, lambda: self.chain), (LEARN_PAGE, lambda: self.experiment)):
            try:
                make()
            except ConvSpecError as exc:
                out[page] = f"{label(page)}: {exc}"
        return out

    def stages(self) -> tuple[Stage, ...]:
        """The stages this layer has, in lecture order (but those of a page left out)."""
        return tuple(s for s in self.lecture.of(self.spec) if s.page not in self.left_out)

    def stills(self) -> list[Still]:
        """Every stage that has a picture, in lecture order."""
        return [self.still(stage) for stage in self.stages() if stage.still]

    def still(self, stage: Stage) -> Still:
        """A stage's picture, as its drawing makes it."""
        drawn = drawing(self, stage).still(self)
        return Still(stage.export, *self.words(stage), drawn.panels, drawn.formula, stage,
                     drawn.highlight)  # fmt: skip

    def drawable(self, anim: Animation) -> bool:
        """Whether the animation is drawn as a GIF and MP4: a sliding window always, a motion
        when the layer is narrow enough to draw in seconds (`render.motion.gif_fits`, the app's
        rule), a figure when its renderer makes a GIF."""
        if anim.figure is not None:
            return anim.figure.gif is not None
        return anim.sweep is not None or gif_fits(self.spec)

    def animations(self) -> list[Animation]:
        """Every animation of the lecture, in its order."""
        return [self.animation(s) for s in self.stages() if s.animated]

    def animation(self, stage: Stage) -> Animation:
        """A stage's animation, as its drawing makes it."""
        drawn, (heading, caption) = drawing(self, stage), self.words(stage)
        if drawn.sweep is not None:
            sw = drawn.sweep(self)
            return Animation(stage.export, heading, caption, sw.sweep, list(sw.panels),
                             sw.channel, sw.formula_of, stage=stage)  # fmt: skip
        if drawn.motion is not None:
            mo = drawn.motion(self)
            return Animation(stage.export, heading, caption, motion=mo.build,
                             cell_formula=mo.cell_formula, stage=stage,
                             dressed=mo.dressed)  # fmt: skip
        return Animation(stage.export, heading, caption, stage=stage, figure=drawn.figure(self))

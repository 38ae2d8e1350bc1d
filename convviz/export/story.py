"""The story of one layer as exports see it: its stills and its animations, in lecture order.

A `Story` holds a layer (the engine's stages), the slice (n, k, c) and the selected cell, the same
things a page reads from its context. Every export (HTML, video, LaTeX, snippet, handout, the
command line) draws from it, so each names and orders the stages as the app does: the file
names are the app's download names, `convviz-{preset}-{name}.{ext}`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import parse_qsl, urlsplit

import numpy as np

from convviz.engine.arrays import Layer, layer
from convviz.engine.formulas import (
    Formula,
    forward_formula,
    input_grad_formula,
    weight_grad_formula,
)
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.engine.sweeps import Sweep, forward_sweep, input_grad_sweep, weight_grad_sweep
from convviz.engine.text import echo
from convviz.model.fields import URL_FIELDS, preset_state
from convviz.model.lecture import LECTURE, Seen, Stage
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import from_query, selection_of, slice_of, spec_of, values_of
from convviz.render.motion.model import gif_fits
from convviz.render.panel import Panel
from convviz.render.selection import centre, feeding_cells, opening
from convviz.render.story.input_grad import (
    MOTIONS,
    PANELS,
    Focus,
    input_grad_animation,
    stage_motion,
)
from convviz.render.story.panels import (
    followed_only,
    forward_panels,
    weight_grad_panels,
    window_motion,
    written_out,
)

# The animations of `Story.animations`, in lecture order (the app asks without building them).
ANIMATIONS = tuple(s.export for s in LECTURE.stages if s.animated)


class ExportError(ValueError):
    """A layer that cannot be exported (an unknown preset, a bad link), with what to fix."""


@dataclass(frozen=True)
class Still:
    """One stage as still grids: what the app's PNG/SVG buttons export under `name`."""

    name: str
    title: str
    caption: str
    panels: list[Panel]
    formula: Formula | None = None
    stage: Stage | None = None


@dataclass(frozen=True)
class Animation:
    """One animation: a sliding window (`sweep`, drawn over `panels`) or a `motion`.

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
        raise ExportError(real[0].split("; so ")[0].split("; kept ")[0])
    try:
        spec_of(state)
    except ConvSpecError as exc:
        raise ExportError(str(exc)) from None
    return state


def layer_of(state: dict) -> Layer:
    """Every stage of the state's layer, from its seed, kernel, grad_out kind and edits."""
    return layer(*values_of(state))


class Story:
    """The exports' view of one layer: its arrays, slice, selection, stills and animations."""

    def __init__(
        self,
        state: dict,
        lay: Layer | None = None,
        slice_: tuple[int, int, int] | None = None,
        selection: tuple[str, int, int] | None = None,
    ):
        self.state = state
        self.layer = lay if lay is not None else layer_of(state)
        self.spec: ConvSpec = self.layer.forward.spec
        self.n, self.k, self.c = slice_ or slice_of(state, self.spec)
        self.selection = selection if selection is not None else selection_of(state, self.spec)

    @classmethod
    def of(cls, preset: str | None = None, link: str | None = None) -> Story:
        return cls(state_of(preset, link))

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

    @cached_property
    def sweeps(self) -> dict[str, Sweep]:
        fw, ig, wg = self.layer.forward, self.layer.input_grad, self.layer.weight_grad
        return {
            "forward": forward_sweep(fw, self.n, self.k),
            "input_grad": input_grad_sweep(ig, self.n, self.c),
            "weight_grad": weight_grad_sweep(wg, self.k, self.c),
        }

    def _selected(self, keys: tuple[str, ...], shape) -> tuple[int, int] | None:
        if self.selection is None or self.selection[0] not in keys:
            return None
        _, r, c = self.selection
        return (r, c) if r < shape[0] and c < shape[1] else None

    # --- the formulas of the selected cells (as the pages choose them) ---

    @cached_property
    def _forward_cell(self) -> tuple[int, int]:
        """The Forward page's cell: the selected output cell, else the last (`opening`)."""
        return opening(self.sweeps["forward"], self._selected(("y",), self.spec.out_size))[1]

    @cached_property
    def _weight_grad_cell(self) -> tuple[int, int]:
        """The Weight gradient page's cell: the selected ∂L/∂w cell, else the last."""
        selected = self._selected(("grad_w",), self.spec.kernel_size)
        return opening(self.sweeps["weight_grad"], selected)[1]

    @cached_property
    def forward_formula(self) -> Formula:
        return forward_formula(self.layer.forward, self.n, self.k, *self._forward_cell)

    @cached_property
    def _input_grad_cell(self) -> tuple[str, int, int]:
        """The input-gradient page's cell: the selected ∂L/∂x̃ or ∂L/∂x cell, else the centre."""
        spec = self.spec
        pad_cell = self._selected(("grad_x_padded",), spec.padded_size)
        if pad_cell:
            return ("grad_x_padded", *pad_cell)
        return ("grad_x", *(self._selected(("grad_x",), spec.in_size) or centre(spec.in_size)))

    @cached_property
    def _padded_input_grad_cell(self) -> tuple[int, int]:
        """That cell in ∂L/∂x̃'s (padded) indices, where the full correlation writes it."""
        key, *cell = self._input_grad_cell
        return tuple(cell) if key == "grad_x_padded" else self.spec.padded_index(cell)

    @cached_property
    def input_grad_formula(self) -> Formula:
        key, r, q = self._input_grad_cell
        padded = key == "grad_x_padded"
        return input_grad_formula(self.layer.input_grad, self.n, self.c, r, q, padded=padded)

    @cached_property
    def weight_grad_formula(self) -> Formula:
        return weight_grad_formula(self.layer.weight_grad, self.k, self.c, *self._weight_grad_cell)

    def selected_formula(self) -> Formula:
        """The selected cell's formula (∂L/∂x's centre when nothing is selected)."""
        key = self.selection[0] if self.selection else "grad_x"
        if key == "y":
            return self.forward_formula
        if key == "grad_w":
            return self.weight_grad_formula
        return self.input_grad_formula

    # --- stills and animations, in lecture order (the lecture's stages) ---

    def words(self, stage: Stage) -> tuple[str, str]:
        """(heading, caption) of a stage for this layer and slice."""
        seen = Seen(self.spec, self.n, self.k, self.c)
        return stage.heading_for(seen), stage.caption_for(seen)

    @cached_property
    def focus(self) -> Focus:
        """The slice and the cell the input gradient's stages follow, as the page's."""
        feeding = feeding_cells(self.input_grad_formula, self.k, self.spec.out_size)
        return Focus(self.n, self.k, self.c, self._input_grad_cell, feeding)

    def stills(self) -> list[Still]:
        """Every stage that has a picture, in lecture order."""
        return list(self._stills)

    @cached_property
    def _stills(self) -> tuple[Still, ...]:
        out = []
        for stage in LECTURE.of(self.spec):
            if stage.still:
                panels, formula = self._still_of(stage)
                out.append(Still(stage.export, *self.words(stage), panels, formula, stage))
        return tuple(out)

    def _still_of(self, stage: Stage) -> tuple[list[Panel], Formula | None]:
        """A stage's grids and formula as the page's PNG / SVG draws them: the cell whose sum
        is written is lit with its window (and a selected input cell marked)."""
        n, k, c = self.n, self.k, self.c
        if stage.key == "forward":
            reading = self._selected(("x",), self.spec.padded_size)
            fwd = forward_panels(
                self.layer.forward, self.sweeps["forward"], n, k, c, self._forward_cell, reading
            )
            if self._selected(("y",), self.spec.out_size) is None:
                fwd = written_out(fwd)  # lit for its sum below, not selected
            return fwd, self.forward_formula
        if stage.key == "weight-grad":
            wg = self.layer.weight_grad
            panels = weight_grad_panels(
                wg, self.sweeps["weight_grad"], n, k, c, self._weight_grad_cell
            )
            if self._selected(("grad_w",), self.spec.kernel_size) is None:
                panels = written_out(panels)
            return panels, self.weight_grad_formula
        ig = self.layer.input_grad
        if stage.key == "correlate":  # the formula's cell of ∂L/∂x̃, its window lit
            cell = self._padded_input_grad_cell
            panels = input_grad_animation(ig, self.sweeps["input_grad"], n, k, c, cell)
            if self._input_grad_cell[0] != "grad_x_padded":
                panels = written_out(panels)
            return panels, input_grad_formula(ig, n, c, *cell, padded=True)
        panels = PANELS[stage.key](ig, self.focus)
        if not self._selected(("grad_x", "grad_x_padded"), self.spec.padded_size):
            panels = followed_only(panels)  # as the page's PNG / SVG
        return panels, self.input_grad_formula if stage.formula else None

    def drawable(self, anim: Animation) -> bool:
        """Whether the animation is drawn as a GIF and MP4: a sliding window always, a motion
        when the layer is narrow enough to draw in seconds (`render.motion.gif_fits`, the app's
        rule)."""
        return anim.sweep is not None or gif_fits(self.spec)

    def animations(self) -> list[Animation]:
        """Every animation of the lecture, in its order."""
        return [self._animation(s) for s in LECTURE.of(self.spec) if s.animated]

    def _animation(self, stage: Stage) -> Animation:
        fw, ig, wg = self.layer.forward, self.layer.input_grad, self.layer.weight_grad
        n, k, c, sw = self.n, self.k, self.c, self.sweeps
        heading, caption = self.words(stage)

        def grad_x_sum(cell: tuple) -> Formula:  # as the page writes a frame's sum
            if cell == ("grad_x",):
                return self.input_grad_formula
            return input_grad_formula(ig, n, c, *cell[1:], padded=True)

        sweeps = {  # a sliding window: (sweep, panels, channel, formula of an output cell)
            "forward": lambda: (
                sw["forward"], forward_panels(fw, sw["forward"], n, k, c), c,
                lambda r, q: forward_formula(fw, n, k, r, q),
            ),
            "correlate": lambda: (
                sw["input_grad"], input_grad_animation(ig, sw["input_grad"], n, k, c), k,
                lambda r, q: input_grad_formula(ig, n, c, r, q, padded=True),
            ),
            "weight-grad": lambda: (
                sw["weight_grad"], weight_grad_panels(wg, sw["weight_grad"], n, k, c), n,
                lambda r, q: weight_grad_formula(wg, k, c, r, q),
            ),
        }  # fmt: skip
        if stage.view == "sweep":
            sweep, panels, channel, formula_of = sweeps[stage.key]()
            return Animation(stage.export, heading, caption, sweep, panels, channel, formula_of,
                             stage=stage)  # fmt: skip
        if stage.key in MOTIONS:
            return Animation(
                stage.export, heading, caption,
                motion=lambda: stage_motion(stage.key, ig, sw["input_grad"], self.focus),
                cell_formula=grad_x_sum, stage=stage,
            )  # fmt: skip
        if stage.key != "weight-window":
            raise KeyError(f"no animation drawn for the stage {stage.key!r}")
        return Animation(  # the weight gradient's window
            stage.export, heading, caption,
            motion=lambda: window_motion(wg, sw["weight_grad"], n, k, c),
            cell_formula=lambda cell: weight_grad_formula(wg, k, c, *cell[1:]), stage=stage,
        )  # fmt: skip

"""One stage of the lecture drawn for a notebook: the app's figure and player, from the storyboard.

`View` looks the stage's drawing up on the board (`convviz.render.story.board`), as the app's
stage view does: a sliding window or a motion becomes the app's plotly figure with its frames and
the formula of each frame (the player writes it under the chart); an animated figure of its own
(the Learning page's step and run, once the board animates them) the same; a still stage its
grids and the sum under them. `page.py` writes it as HTML; `widget.py` sends it to a widget.
"""

from __future__ import annotations

import base64
import io
import itertools
from functools import cached_property, partial

from convviz.engine.numbers import Range, take
from convviz.engine.spec import ConvSpecError
from convviz.export.story import Story
from convviz.model.lecture import HINT, Stage, keys_hint
from convviz.player import player_data
from convviz.render.motion.frames import motion_figure
from convviz.render.motion.model import gif_fits
from convviz.render.plotly.adapter import Figure, wire
from convviz.render.plotly.frames import (
    cell_lines,
    formula_lines,
    player_meta,
    stepwise,
    writes_captions,
)
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.plotly.spoken import motion_says, say_sums
from convviz.render.plotly.sweeps import sweep_figure
from convviz.render.story.board import drawing, sums_of
from convviz.render.story.describe import describe
from convviz.render.theme import Theme, theme_for

# The keys a notebook's player takes (a notebook has no stages to page through, no whole pass)
NOTEBOOK_HINT = tuple(h for h in HINT if not {"next", "back", "whole"} & set(h[0]))
WITHIN = "[data-convviz-keys]"  # the keys act only in an output that has the keyboard
ANIMATED_VIEWS = ("sweep", "motion", "run")  # the views the app animates
PNG_DPI = 100  # the still for a front end that runs no script: light, still readable
PNG_COLOURS = 64
_VIEWS = itertools.count(1)  # a view's number: its long description's id on the page


def notebook_theme(width: int | None = None) -> Theme:
    """The app's theme on a laptop (normal mode), for an output `width` px wide (the app's main
    column at a 1280 px window when None)."""
    theme = theme_for(False)
    if width is None:
        return theme
    return theme.fitted(take(width, "width", Range(320, 3840, whole=True)), 720)


class View:
    """A stage of one layer (a `Story`) as a notebook shows it.

    kind : "sweep", "motion", "figure" (a renderer's own frames) or "still";
    note : what the notebook says besides the stage's words (a still where the app animates);
    told : the stage's two descriptions (its figure's short alternative, the long one under it),
        as the app and the deck say them; its cells carry their sums for the keyboard grid.
    """

    def __init__(self, story: Story, stage: Stage, *, step: int | None = None, width=None):
        if stage.view == "grids":
            raise ConvSpecError("the channels' tiles are drawn by the app's Channels page alone")
        self.story, self.stage, self.theme = story, stage, notebook_theme(width)
        self.heading, self.caption = story.words(stage)
        self.drawn = drawing(story, stage)
        self.note, self.formula, self._says = "", None, None
        self.number = next(_VIEWS)
        self.told = describe(story, stage)
        self.figure, captions = self._figure()
        sums = sums_of(story, stage)
        if sums is not None:
            say_sums(self.figure, sums)
        self.lines: list[str] = []
        self.player = self._player(captions) if self.kind != "still" else None
        self.frames = len(self.player["names"]) if self.player else 1
        self.step = None if step is None else self._step(step)

    # --- what it draws ---------------------------------------------------------------------

    def _figure(self) -> tuple[Figure, list[list[str]] | None]:
        stage, drawn, theme, story = self.stage, self.drawn, self.theme, self.story
        lines_of = partial(formula_lines, theme=theme)
        if stage.animated and drawn.sweep is not None:
            self.kind = "sweep"
            sw = drawn.sweep(story)
            fig = sweep_figure(sw.sweep, *sw.panels, theme, channel=sw.channel,
                               start=sw.sweep.steps - 1, title=self.heading)  # fmt: skip
            steps = player_meta(fig)["steps"]
            if not writes_captions(sw.sweep, len(steps)):
                return fig, None
            cells = sw.sweep.targets[steps]
            return fig, [lines_of(sw.formula_of(int(r), int(c))) for r, c in cells]
        if stage.animated and drawn.motion is not None:
            self.kind = "motion"
            mo = drawn.motion(story)
            fig = motion_figure(mo.build(), theme)
            self._says = motion_says(player_meta(fig), mo.cell_formula)
            if mo.cell_formula is None:
                return fig, None
            return fig, cell_lines(player_meta(fig), mo.cell_formula, lines_of, True)
        if stage.animated and drawn.figure is not None:
            self.kind = "figure"
            return drawn.figure(story).figure(theme), None
        self.kind = "still"
        if stage.view in ANIMATED_VIEWS:
            self.note = ("The app animates this stage; the storyboard has no animation for it "
                         "yet, so here is its still.")  # fmt: skip
        return self._still_figure(), None

    def _still_figure(self) -> Figure:
        still = self.drawn.still(self.story)
        self.formula = still.said or still.formula
        self.lines = formula_lines(self.formula, self.theme) if self.formula else []
        return panels_figure(still.screen or still.panels, self.theme, highlight=still.highlight)

    def _player(self, captions) -> dict:
        return player_data(
            self.figure, captions, chart="", find="", stage=self.stage.key, presentation=False,
            primary=False, hint=keys_hint(NOTEBOOK_HINT), strip=True, within=WITHIN,
            heavy=self.kind == "motion" and not gif_fits(self.story.spec),
            arrived=self.told.arrived, says=self._says,
        )  # fmt: skip

    def _step(self, step) -> int:
        return take(step, "step", Range(0, self.frames - 1, whole=True))

    # --- what a page is handed ---------------------------------------------------------------

    def data(self, key: str) -> dict:
        """What notebook.js mounts under the chart key `key` (unique on the page)."""
        player = None
        if self.player is not None:
            player = {**self.player, "chart": key, "find": f'[data-cv-chart="{key}"]'}
        return {
            "key": key,
            "figure": wire(self.figure, frames=not stepwise(self.figure)),
            "player": player,
            "lines": self.lines,
            "step": self.step,
        }

    @cached_property
    def png(self) -> bytes:
        """The stage's still as PNG (its picture; a motion's result where it has none)."""
        from convviz.render.mpl import static

        if self.drawn.still is not None:
            still = self.drawn.still(self.story)
            fig = static.stage_figure(still.panels, still.formula, title=self.heading,
                                      highlight=still.highlight)  # fmt: skip
            return _light(static.to_png(fig, dpi=PNG_DPI))
        return _light(_motion_png(self.drawn.motion(self.story).build()))

    @property
    def png_base64(self) -> str:
        return base64.b64encode(self.png).decode()

    def __repr__(self) -> str:
        return f"<convviz view: {self.stage.key} · {self.story.preset} · {self.kind}>"


def _light(png: bytes) -> bytes:
    """A PNG in PNG_COLOURS colours: a third of its size, its numbers as readable."""
    from PIL import Image

    rgb = Image.open(io.BytesIO(png)).convert("RGB")
    buf = io.BytesIO()
    few = rgb.quantize(colors=PNG_COLOURS, method=Image.Quantize.MEDIANCUT)
    few.save(buf, "PNG", optimize=True)
    return buf.getvalue()


def _motion_png(motion) -> bytes:
    """A motion's last keyframe, drawn as its GIF draws it, as PNG."""
    from dataclasses import replace

    from PIL import Image

    from convviz.render.motion.gif import motion_frames

    (rgb,) = motion_frames(replace(motion, scenes=motion.scenes[-1:], tweens=()))
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG", optimize=True)
    return buf.getvalue()

"""`convviz.Widget`: a stage of the lecture that Python and the browser both change (anywidget).

Set `stride`, `padding`, `dilation`, `padding_mode`, `stage` or `step` from Python (or link an
ipywidgets slider to them) and the stage is drawn again in place, with the same player; a cell
clicked in the browser is `selected` (grid, row, col) and its sum `formula`. Every value is read
as `convviz.show` reads it: a refused one raises ConvSpecError and the widget keeps its last view.
No server of convviz's own: the notebook's kernel and its comm (pip install convviz[notebook]).
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

from convviz.engine.spec import ConvSpecError
from convviz.notebook import page
from convviz.notebook.arguments import stage_of, story_of
from convviz.notebook.view import View

WIDGET_JS = Path(__file__).with_name("widget.js")
LAYER_TRAITS = ("stride", "padding", "dilation", "padding_mode")
# the grids whose cells have a sum (Subject.formula's kinds)
SUMS = ("y", "grad_x", "grad_x_padded", "grad_w")


class Widget(anywidget.AnyWidget):
    """A stage of one layer, two-way: `convviz.Widget("recitation-s2", stage="correlate")`.

    Takes `convviz.show`'s arguments. stride, padding, dilation, padding_mode : the layer's
    (None: the preset's); stage : the lecture's stage; step : the frame the player shows;
    selected : the cell last clicked, (grid, row, col); formula : its sum, symbols then numbers.
    """

    _esm = page.player_script() + WIDGET_JS.read_text()
    stage = traitlets.Unicode("forward").tag(sync=True)
    step = traitlets.Int(None, allow_none=True).tag(sync=True)
    selected = traitlets.List(None, allow_none=True).tag(sync=True)
    formula = traitlets.Unicode("").tag(sync=True)
    _view = traitlets.Dict().tag(sync=True)
    stride = traitlets.Any(None)
    padding = traitlets.Any(None)
    dilation = traitlets.Any(None)
    padding_mode = traitlets.Any(None)

    def __init__(self, preset=None, link=None, *, stage="forward", step=None, width=None, **args):
        own = {name: args.pop(name, None) for name in LAYER_TRAITS}
        self._args, self._where, self._width = args, (preset, link), width
        self._story = story_of(preset, link, **args, **_given(own))
        self._shown = View(self._story, stage_of(self._story, stage), width=width)
        super().__init__(stage=stage, **own)
        self._draw(step)
        self.on_msg(self._on_msg)

    # --- Python changes it -------------------------------------------------------------------

    @traitlets.validate(*LAYER_TRAITS)
    def _check_layer(self, proposal):
        own = {name: getattr(self, name) for name in LAYER_TRAITS} | {
            proposal["trait"].name: proposal["value"]
        }
        story = story_of(*self._where, **self._args, **_given(own))  # ConvSpecError: refused
        self._shown = View(story, stage_of(story, self.stage), width=self._width)
        self._story = story
        return proposal["value"]

    @traitlets.validate("stage")
    def _check_stage(self, proposal):
        if self._shown.stage.key != proposal["value"]:
            stage = stage_of(self._story, proposal["value"])
            self._shown = View(self._story, stage, width=self._width)
        return proposal["value"]

    @traitlets.observe(*LAYER_TRAITS, "stage")
    def _redraw(self, change):
        self._draw(None)

    @traitlets.validate("step")
    def _check_step(self, proposal):
        step = proposal["value"]
        return None if step is None else self._shown._step(step)

    def _draw(self, step) -> None:
        view = self._shown
        view.step = None if step is None else view._step(step)
        data = view.data("")
        data |= {"heading": view.heading, "caption": view.caption, "note": view.note}
        data |= {"short": view.told.short, "long": view.told.long}  # the stage in words
        with self.hold_sync():
            self._view = data
            self.step = view.step if view.step is not None else view.frames - 1
            self.selected, self.formula = None, ""

    # --- the browser changes it --------------------------------------------------------------

    @traitlets.observe("selected")
    def _clicked(self, change):
        cell = change["new"]
        if not cell or cell[0] not in SUMS:
            self.formula = ""
            return
        try:
            formula = self._shown.story.formula(cell[0], (int(cell[1]), int(cell[2])))
        except (ConvSpecError, IndexError):
            self.formula = ""
            return
        self.formula = "\n".join(formula.text(numeric=n) for n in (False, True))

    def _on_msg(self, widget, content, buffers) -> None:
        if content.get("kind") == "plotly":  # the first widget of a page asks for plotly.js
            self.send({"kind": "plotly"}, buffers=[page.plotly_script().encode()])

    @property
    def view(self) -> View:
        """What the widget draws now."""
        return self._shown


def _given(own: dict) -> dict:
    """The layer traits set (None: the preset's own)."""
    return {name: value for name, value in own.items() if value is not None}

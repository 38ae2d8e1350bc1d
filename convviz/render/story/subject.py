"""What a stage is drawn from: one layer, the slice drawn and the cell the reader follows.

A `Subject` is the same for a page (built from its context, with the app's shared sweeps and
formulas), the exports (from a preset or a share link) and the notebook; the storyboard's drawings
(`board.py`) read nothing else. What it derives (the sweeps of the slice, the followed cells and
their formulas, the two-layer pass, the Learning page's experiment) is computed once, when first
asked for; a host hands over what it already keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property

import numpy as np

from convviz.engine.arrays import Layer
from convviz.engine.formulas import (
    Formula,
    forward_formula,
    grid_words,
    input_grad_formula,
    weight_grad_formula,
)
from convviz.engine.spec import ConvSpec
from convviz.engine.sweeps import Sweep, forward_sweep, input_grad_sweep, weight_grad_sweep
from convviz.engine.values import DRAW
from convviz.learning.chain import TwoLayerPass, two_layer_pass
from convviz.learning.experiment import Experiment, experiment
from convviz.model.fields import CHAIN_DEFAULTS
from convviz.model.lecture import LECTURE, Lecture, Seen, Stage
from convviz.model.state import MAX_MACS, chain_values, learning_settings
from convviz.render.selection import centre, feeding_cells, first_reader, opening

# A host's formula of one cell: (kind, cell) → Formula, kind "y", "grad_x", "grad_x_padded" or
# "grad_w" (the app's are cached and shared by its sessions)
FormulaOf = Callable[[str, tuple[int, int]], Formula]
WordsOf = Callable[[str, int], np.ndarray | None]  # (kind, most) -> a grid's sums in words
SWEEPS = ("forward", "input_grad", "weight_grad")


class Sweeps(Mapping):
    """A subject's sweeps by name, each made when first asked for: forward (n, k), input_grad
    (n, c), weight_grad (k, c); build : the engine's sweep maker (`sweeps.sweep`, or a host's
    leaner one)."""

    def __init__(self, s: Subject, build: Callable | None = None):
        lay, n, k, c, kw = s.layer, s.n, s.k, s.c, ({"build": build} if build else {})
        self._make = {
            "forward": lambda: forward_sweep(lay.forward, n, k, **kw),
            "input_grad": lambda: input_grad_sweep(lay.input_grad, n, c, **kw),
            "weight_grad": lambda: weight_grad_sweep(lay.weight_grad, k, c, **kw),
        }
        self._made: dict[str, Sweep] = {}

    def __getitem__(self, name: str) -> Sweep:
        if name not in self._made:
            self._made[name] = self._make[name]()
        return self._made[name]

    def __iter__(self):
        return iter(SWEEPS)

    def __len__(self) -> int:
        return len(SWEEPS)


class Subject:
    """One layer seen as the pages see it: its arrays, the slice (n, k, c), the selected cell.

    state : the rest of the view (the preset, the Learning page's settings), as the URL-state
        holds it; chain_fields : layer 2's fields (`fields.CHAIN_FIELDS`); sweeps : the slice's
        "forward", "input_grad" and "weight_grad" sweeps, where the host keeps them; chain,
        experiment : the two layers' pass and the Learning page's experiment, where the host has
        made them (its last valid ones);
    key : what identifies the layer's numbers, for a host's cache; sweeper : a host's sweeps
        of a subject (this one's, and the layers it leads to: layer 1 of two);
    formula_of, words_of : the host's formula of a cell, its grid's sums in words (kept where
        the host keeps them: every figure of the layer says the same grids);
    lecture : the story's stages, in order;
    board : their drawings (`board.BOARD` when None; a copy with a stage of its own in a test).
    """

    def __init__(
        self,
        layer: Layer,
        n: int = 0,
        k: int = 0,
        c: int = 0,
        selection: tuple[str, int, int] | None = None,
        *,
        state: Mapping | None = None,
        chain_fields: Mapping | None = None,
        sweeps: Mapping[str, Sweep] | None = None,
        chain: TwoLayerPass | None = None,
        experiment: Experiment | None = None,
        formula_of: FormulaOf | None = None,
        words_of: WordsOf | None = None,
        lecture: Lecture = LECTURE,
        board: Mapping | None = None,
        key: tuple | None = None,
        sweeper: Callable[[Subject], Mapping[str, Sweep]] | None = None,
    ):
        self.layer = layer
        self.spec: ConvSpec = layer.forward.spec
        self.n, self.k, self.c = n, k, c
        self.selection = selection
        self.state = dict(state or {})
        self.chain_fields = {**CHAIN_DEFAULTS, **(chain_fields or {})}
        self.lecture, self.board = lecture, board
        self._formula_of, self._words_of = formula_of, words_of
        self.key, self._sweeper = key, sweeper
        # the host's parts (a cached_property reads its own name in __dict__ first)
        for name, given in (("sweeps", sweeps), ("chain", chain), ("experiment", experiment)):
            if given is not None:
                self.__dict__[name] = given

    # --- what it derives -------------------------------------------------------------------

    @cached_property
    def sweeps(self) -> Mapping[str, Sweep]:
        """The slice's sweeps: the host's, else made here when first asked for."""
        return self._sweeper(self) if self._sweeper else Sweeps(self)

    def formula(self, kind: str, cell: tuple[int, int]) -> Formula:
        """The sum of one cell: "y", "grad_x", "grad_x_padded" or "grad_w"."""
        if self._formula_of is not None:
            return self._formula_of(kind, tuple(cell))
        n, k, c = self.n, self.k, self.c
        if kind == "y":
            return forward_formula(self.layer.forward, n, k, *cell)
        if kind == "grad_w":
            return weight_grad_formula(self.layer.weight_grad, k, c, *cell)
        padded = kind == "grad_x_padded"
        return input_grad_formula(self.layer.input_grad, n, c, *cell, padded=padded)

    def sums_in_words(self, kind: str, most: int) -> np.ndarray | None:
        """Every cell of a sum grid in words, as its formula's `words(most)`, made for the whole
        grid at once (an array indexed as the grid); None for an operand's grid."""
        if self._words_of is not None:
            return self._words_of(kind, most)
        return grid_words(self.layer, kind, self.n, self.k, self.c, most)

    def selected(self, keys: tuple[str, ...], shape) -> tuple[int, int] | None:
        """The selected cell, if it is in one of these grids and inside `shape`."""
        if self.selection is None or self.selection[0] not in keys:
            return None
        _, r, c = self.selection
        return (r, c) if 0 <= r < shape[0] and 0 <= c < shape[1] else None

    # the cells whose sums the pages write: the selected one, else where a page opens
    @cached_property
    def forward_cell(self) -> tuple[int, int]:
        """The Forward page's cell: the selected output cell, else the first that reads a
        selected input cell (its window holds it), else the last (`opening`)."""
        sweep, spec = self.sweeps["forward"], self.spec
        chosen = self.selected(("y",), spec.out_size)
        chosen = chosen or first_reader(sweep, self.selected(("x",), spec.padded_size))
        return opening(sweep, chosen)[1]

    @cached_property
    def weight_grad_cell(self) -> tuple[int, int]:
        """The Weight gradient page's cell: the selected ∂L/∂w cell, else the last."""
        chosen = self.selected(("grad_w",), self.spec.kernel_size)
        return opening(self.sweeps["weight_grad"], chosen)[1]

    @cached_property
    def input_grad_cell(self) -> tuple[str, int, int]:
        """The input gradient's cell: the selected ∂L/∂x̃ or ∂L/∂x cell, else ∂L/∂x's centre."""
        spec = self.spec
        pad_cell = self.selected(("grad_x_padded",), spec.padded_size)
        if pad_cell:
            return ("grad_x_padded", *pad_cell)
        return ("grad_x", *(self.selected(("grad_x",), spec.in_size) or centre(spec.in_size)))

    @cached_property
    def padded_input_grad_cell(self) -> tuple[int, int]:
        """That cell in ∂L/∂x̃'s (padded) indices, where the full correlation writes it."""
        key, *cell = self.input_grad_cell
        return tuple(cell) if key == "grad_x_padded" else self.spec.padded_index(cell)

    @cached_property
    def forward_formula(self) -> Formula:
        return self.formula("y", self.forward_cell)

    @cached_property
    def input_grad_formula(self) -> Formula:
        key, *cell = self.input_grad_cell
        return self.formula(key, tuple(cell))

    @cached_property
    def weight_grad_formula(self) -> Formula:
        return self.formula("grad_w", self.weight_grad_cell)

    @cached_property
    def feeding(self) -> np.ndarray:
        """(oH, oW) bool: the ∂L/∂y[n, k] cells that reach the followed ∂L/∂x cell."""
        return feeding_cells(self.input_grad_formula, self.k, self.spec.out_size)

    def selected_formula(self) -> Formula:
        """The selected cell's formula (∂L/∂x's centre when nothing is selected)."""
        key = self.selection[0] if self.selection else "grad_x"
        if key == "y":
            return self.forward_formula
        if key == "grad_w":
            return self.weight_grad_formula
        return self.input_grad_formula

    def words(self, stage: Stage) -> tuple[str, str]:
        """(heading, caption) of a stage for this layer and slice."""
        seen = Seen(self.spec, self.n, self.k, self.c)
        return stage.heading_for(seen), stage.caption_for(seen)

    # --- the pages beyond one layer ------------------------------------------------------

    @cached_property
    def chain(self) -> TwoLayerPass:
        """The two layers of the Two layers page: this layer, then layer 2 of `chain_fields`
        (ConvSpecError if layer 2 cannot work on this layer's output)."""
        fw, seed = self.layer.forward, self.state.get("seed", 0)
        stack, (b1, w2, t) = chain_values(
            self.spec, self.chain_fields, seed, self.state.get("draw", DRAW)
        )
        return two_layer_pass(stack, fw.x, fw.w, b1, w2, None, t)

    @cached_property
    def layer_one(self) -> Subject:
        """Layer 1 of the two layers, whose ∂L/∂y is layer 2's ∂L/∂h after the ReLU's gate; it
        follows a selected cell of its ∂L/∂x or ∂L/∂x̃, as the Input gradient page does."""
        sel = self.selection
        followed = sel if sel is not None and sel[0] in ("grad_x", "grad_x_padded") else None
        key = None if self.key is None else (*self.key, "layer 1", *self.chain_fields.items())
        return Subject(self.chain.first, self.n, self.k, self.c, followed, state=self.state,
                       lecture=self.lecture, board=self.board, key=key,
                       sweeper=self._sweeper)  # fmt: skip

    @cached_property
    def experiment(self) -> Experiment:
        """The Learning page's experiment on this layer: its target, one step and a run."""
        settings, _ = learning_settings(self.state, self.spec)
        fw = self.layer.forward
        return experiment(self.spec, fw.x, fw.w, settings, seed=self.state.get("seed", 0),
                      y=np.asarray(fw.y), max_macs=MAX_MACS)  # fmt: skip

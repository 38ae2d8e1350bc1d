"""A stage in words, for a reader who cannot see it: two levels, as the W3C's tutorial on complex
images asks.

- short: what the figure is (the stage and its grids, their sizes);
- long: what the stage does and what to look at (the lecture's words for it,
  `convviz.model.descriptions`), then each grid's size and range of numbers and which cells have
  a role, and the cell the stage follows with its sum in words;
- arrived: what the announcer says when the stage is reached.

Read by the app's stage views, the offline deck and the notebook view alike, from the stage's
drawing on the board (`board.drawing`): the numbers are the ones drawn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from convviz.engine.text import count, number, shape_text
from convviz.model.descriptions import arrived, described
from convviz.model.lecture import Seen, Stage
from convviz.render.panel import ROLE_WORDS, Panel
from convviz.render.story.board import drawing
from convviz.render.story.subject import Subject

_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Description:
    """A stage's short text alternative, its long description and its arrival's words."""

    short: str
    long: str
    arrived: str


def grid_name(panel: Panel) -> str:
    return _TAG.sub("", panel.title)


def grid_words(panel: Panel) -> str:
    """One grid in a sentence: its size, the range of its numbers, its cells with a role."""
    values = np.asarray(panel.values, dtype=float)
    seen = values[np.isfinite(values)]
    said = f"{grid_name(panel)} is {shape_text(panel.shape)}"
    if seen.size and seen.min() == seen.max():
        said += f"; every number is {number(seen.min())}"
    elif seen.size:
        said += f"; its numbers run from {number(seen.min())} to {number(seen.max())}"
    roles = panel.roles()
    counts = {words: int((roles == letter).sum()) for letter, words in ROLE_WORDS.items()}
    marks = [f"{count(n, 'cell')} {'is' if n == 1 else 'are'} {words}"
             for words, n in counts.items() if n]  # fmt: skip
    return f"{said}{'; ' + ', '.join(marks) if marks else ''}."


def grids_short(panels: list[Panel]) -> str:
    """The grids of a figure by name and size: 'x̃ (5×5), w (3×3) and y (2×2)'."""
    names = [f"{grid_name(p)} ({shape_text(p.shape)})" for p in panels]
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def describe(s: Subject, stage: Stage) -> Description:
    """The stage of the lecture on this subject, described (see the module's docstring)."""
    seen = Seen(s.spec, s.n, s.k, s.c)
    drawn = drawing(s, stage)
    heading = stage.heading_for(seen)
    still = drawn.still(s) if drawn.still is not None else None
    panels = list(still.panels) if still is not None else []
    short = f"{heading}. Grids: {grids_short(panels)}." if panels else f"{heading}."
    parts = [described(stage, s.spec, s.n, s.k, s.c), *(grid_words(p) for p in panels)]
    formula = still.formula if still is not None else None
    if formula is not None:
        parts.append(f"The cell followed is {formula.said()} = {number(formula.value)}, "
                     f"{formula.words()}.")  # fmt: skip
    return Description(short, " ".join(parts), arrived(stage, seen, s.lecture))

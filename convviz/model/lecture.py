"""The lecture: every stage the app, the clicker and the exports show, in order, owned once.

A `Stage` is one screen of the story: its key, the page that shows it, its title (the stage bar's
button), its heading and caption (words that fit the layer), how it is drawn (a still, a sliding
window or a motion), the formula it writes, its export file name and whether the layer has it at
all (channels only where there are several). `LECTURE` holds them in the order a lecturer walks
them: Forward → the input gradient's six stages → the whole backward pass → the weight gradient
→ how the layer learns (the loss, one step, a training run) → two layers (→ the channels); past
the last stage a clicker goes on through the coda, Matrix → Checks → Quiz (`Lecture.walk`). A
stage's number is its place on its page, never written by hand.

Everything that orders or names the story reads this table: the pages and their stage bar, the
URL's `step=` range (`convviz.model.fields`), the clicker's keys, the quiz's order, every export
(PNG/SVG/GIF/MP4/HTML/.tex/PDF/CLI) and the offline lecture. What a stage draws is the
storyboard's (`convviz.render.story.board`, keyed by these keys): adding a stage is a row here,
its drawing there, and a `.tex` body where its still does not say it (`convviz.export.latex`).

No Streamlit, no plotting library: NumPy and the standard library only (the URL state reads it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

from convviz.engine.spec import ConvSpec
from convviz.engine.text import RECITATION_NOTE, count, shape_text, slice_name
from convviz.model.pages import (
    CHAIN_PAGE,
    CHANNELS_PAGE,
    CHECKS_PAGE,
    FORWARD_PAGE,
    INPUT_PAGE,
    LEARN_PAGE,
    MATRIX_PAGE,
    QUIZ_PAGE,
    WEIGHT_PAGE,
)

# After the layer's last stage a clicker goes on to these pages, a screen each, and stops at the
# last: the convolution as a matrix, the witnesses of its numbers, then the quiz
CODA = (MATRIX_PAGE, CHECKS_PAGE, QUIZ_PAGE)


@dataclass(frozen=True)
class Seen:
    """What a stage's words depend on: the layer's geometry and the slice drawn."""

    spec: ConvSpec
    n: int = 0
    k: int = 0
    c: int = 0


Words = str | Callable[[Seen], str]  # fixed words, or words that fit the layer


@dataclass(frozen=True)
class Stage:
    """One stage of the lecture (see the module's docstring).

    view : how the app draws it: "still" (grids), "sweep" (a sliding window), "motion" (cells
        that move), "grids" (the channels' tiles) or "run" (a training run's steps).
    still : it has a PNG/SVG picture (its grids); animated : a GIF/MP4/HTML of its animation.
    formula : the grid whose selected (or followed) cell's sum it writes: "y", "grad_x",
        "grad_x_padded", "grad_w", or None.
    covers : the stages a motion plays through one after the other (the whole backward pass);
        its number spans theirs (1–6).
    when : the layers that have this stage (None: every layer).
    """

    key: str
    page: str
    title: str
    heading: Words
    caption: Words
    view: str
    export: str | None
    still: bool = False
    animated: bool = False
    formula: str | None = None
    covers: tuple[str, ...] = ()
    when: Callable[[ConvSpec], bool] | None = None

    def heading_for(self, seen: Seen) -> str:
        return self.heading(seen) if callable(self.heading) else self.heading

    def caption_for(self, seen: Seen) -> str:
        return self.caption(seen) if callable(self.caption) else self.caption


# --- words that fit the layer ------------------------------------------------------------------


def _adds_cells(padding) -> bool:
    return any(side for sides in padding for side in sides)


def _several(spec: ConvSpec) -> bool:
    return spec.in_channels > 1 or spec.out_channels > 1


def _grad_out_caption(s: Seen) -> str:
    return f"∂L/∂y arrives from the next layer: {shape_text(s.spec.out_size)}."


def _spreads(spec: ConvSpec) -> bool:
    """Whether dilating ∂L/∂y inserts zeros: a stride > 1 along an axis with two cells."""
    return any(s > 1 and o > 1 for s, o in zip(spec.stride, spec.out_size))


def _dilate_caption(s: Seen) -> str:
    (sh, sw), shape = s.spec.stride, shape_text(s.spec.dilated_out_size)
    if sh == sw == 1:
        return f"Stride 1: there are no zeros to insert, ∂L/∂y stays {shape}."
    if not _spreads(s.spec):
        return (
            f"Stride {sh}×{sw}, but ∂L/∂y has no two neighbouring cells along a strided axis: "
            f"there are no zeros to insert, it stays {shape}."
        )
    return (
        f"Insert stride − 1 = {sh - 1}×{sw - 1} zeros between neighbouring cells, so each "
        f"gradient sits where its window started: {shape}."
    )


def padded_grad_size(spec: ConvSpec) -> tuple[int, int]:
    """The dilated ∂L/∂y padded for the full correlation: its (rows, cols)."""
    return tuple(d + lo + hi for d, (lo, hi) in zip(spec.dilated_out_size, spec.full_padding))


def _pad_caption(s: Seen) -> str:
    spec = s.spec
    (eh, ew), shape = spec.span, shape_text(padded_grad_size(spec))
    (gt, gb), (gl, gr) = spec.full_padding
    rH, rW = spec.remainder
    if not _adds_cells(spec.full_padding):  # a 1×1 kernel, no remainder
        return (
            "A 1×1 kernel reaches no further than its cell: nothing to pad, the grid stays "
            f"{shape}."
        )
    rest = (
        f", plus the remainder ({count(rH, 'row')}, {count(rW, 'column')}) at the bottom/right"
        if rH or rW
        else ""
    )
    return (
        f"Pad with zeros: dilation·(kernel − 1) = {count(eh - 1, 'row')} / "
        f"{count(ew - 1, 'column')} per side{rest}: ({gt}, {gb}) × ({gl}, {gr}) → {shape}."
    )


def _rotate_caption(s: Seen) -> str:
    words = "Flip up-down, then left-right; every tap keeps its colour, so you can follow it."
    if not _several(s.spec):
        return words
    return (
        f"{words} Channels swap: the kernel of filter k={s.k} on channel c={s.c} now carries "
        f"the gradient from output channel {s.k} back to input channel {s.c}."
    )


def _correlate_caption(s: Seen) -> str:
    spec = s.spec
    cells = (
        "every padded-input cell, ring included"
        if _adds_cells(spec.padding)
        else "every input cell (no padding, so no ring)"
    )
    text = (
        f"Slide the rotated kernel (dilation {spec.dilation[0]}×{spec.dilation[1]}) over the "
        f"padded grid one cell at a time: the gradient of {cells}: "
        f"{shape_text(spec.padded_size)}."
    )
    K = spec.out_channels
    if K > 1:
        text += (
            f" With {count(K, 'filter')}, {slice_name('∂L/∂x̃', n=s.n, c=s.c)} is the sum over "
            f"the filters of one such correlation each; this view shows filter k={s.k}."
        )
    return f"{text} {RECITATION_NOTE}"


def _mask_heading(s: Seen) -> str:
    if not _adds_cells(s.spec.padding):
        return "No ring to mask: ∂L/∂x̃ is ∂L/∂x"
    if s.spec.padding_mode == "zeros":
        return "Mask the padded ring, crop to ∂L/∂x"
    # the ring copied cells of x: its gradient goes back to them (what the numbers show)
    return f"Fold the ring's gradient back ({s.spec.padding_mode}), crop to ∂L/∂x"


def _mask_caption(s: Seen) -> str:
    """The mask in words that fit the layer: no ring, a ring of zeros, or a ring of copies."""
    mode = s.spec.padding_mode
    if not _adds_cells(s.spec.padding):
        return "This layer has no padding, so there is no ring to mask: ∂L/∂x̃ is ∂L/∂x."
    if mode == "zeros":
        return (
            "The gradient on the padded ring is dropped: the padded zeros are constants. "
            "What is left is ∂L/∂x."
        )
    return (
        f"The gradient on the padded ring is added back onto the cells the {mode} padding "
        "copied them from. What is left is ∂L/∂x. Outlined: the selected cell and its padded "
        "copies, whose gradients add up."
    )


# --- the stages --------------------------------------------------------------------------------

_INPUT_STAGES = (
    Stage("grad-out", INPUT_PAGE, "∂L/∂y", "∂L/∂y, the gradient from the next layer",
          _grad_out_caption, "still", "input-grad-step1", still=True),
    Stage("dilate", INPUT_PAGE, "dilate", "Dilate ∂L/∂y by the stride", _dilate_caption,
          "motion", "input-grad-step2", still=True, animated=True),
    Stage("pad", INPUT_PAGE, "pad", "Pad it for the full correlation", _pad_caption, "motion",
          "input-grad-step3", still=True, animated=True),
    Stage("rotate", INPUT_PAGE, "rotate 180°", "Rotate the kernel 180°", _rotate_caption,
          "motion", "input-grad-step4", still=True, animated=True),
    Stage("correlate", INPUT_PAGE, "correlate",
          "Full correlation at stride 1: rot180(w) over the padded, dilated ∂L/∂y",
          _correlate_caption, "sweep", "input-grad-step5", still=True, animated=True,
          formula="grad_x_padded"),
    Stage("mask", INPUT_PAGE, "mask", _mask_heading, _mask_caption, "motion",
          "input-grad-step6", still=True, animated=True, formula="grad_x"),
)  # fmt: skip

_LEARN_STAGES = (
    Stage("loss", LEARN_PAGE, "loss", "The loss L = ½‖y − t‖², and ∂L/∂y = y − t from it",
          "y is pulled towards a target t: L adds up half the squared gap of every cell, and "
          "its gradient at each cell of y is that cell's gap. This ∂L/∂y is what the backward "
          "pass starts from.",
          "still", "learn-loss", still=True),
    Stage("step", LEARN_PAGE, "one step", "One step: w ← w − η·∂L/∂w, b ← b − η·∂L/∂b",
          "Each tap moves against its gradient, η times it; the forward pass runs again with "
          "the new w and the loss falls (or, at too large a rate, overshoots).",
          "motion", "learn-step", still=True, animated=True),
    Stage("train", LEARN_PAGE, "training", "Many steps: the layer learns",
          "Step after step: the loss curve falls and w moves towards a kernel that makes the "
          "target. Scrub the steps to see w, y and ∂L/∂w at each.",
          "run", "learn-run", still=True, animated=True),
)  # fmt: skip


# The two-layer page: the sidebar's layer is layer 1 (its ∂L/∂y, which "arrives from the next
# layer" on the other pages, comes here from a real layer 2); layer 1's stages are drawn by the
# input gradient's own panels and motions, from ∂L/∂h after the ReLU's gate.
def _layer_one(words: Callable[[Seen], str]) -> Callable[[Seen], str]:
    def said(s: Seen) -> str:
        text = words(s)
        return f"Layer 1: {text[:1].lower()}{text[1:]}"

    return said


_CHAIN_STAGES = (
    Stage("chain-forward", CHAIN_PAGE, "x → h → y", "x → conv₁ → h → conv₂ → y, and the loss",
          "Layer 1 is the sidebar's layer; layer 2 runs on its output h (after a ReLU, when "
          "on). The loss is L = ½‖y − t‖² against a target t.",
          "still", "chain-forward", still=True),
    Stage("chain-grad-h", CHAIN_PAGE, "∂L/∂h", "Layer 2's backward pass ends in ∂L/∂h",
          "∂L/∂y = y − t arrives at layer 2; its input gradient (dilate, pad, rotate 180°, "
          "correlate, mask, as on the Input gradient page) is ∂L/∂h, the gradient of its "
          "input h.",
          "still", "chain-grad-h", still=True),
    Stage("handover", CHAIN_PAGE, "hand over", "∂L/∂h is layer 1's ∂L/∂y",
          "Layer 2's ∂L/∂x travels to layer 1: the gradient of h is the gradient of layer 1's "
          "output. A ReLU passes it only where layer 1's output before the ReLU was > 0; the "
          "other cells (outlined) become 0.",
          "motion", "chain-handover", animated=True),
    Stage("chain-dilate", CHAIN_PAGE, "dilate", "Layer 1: dilate its ∂L/∂y by its stride",
          _layer_one(_dilate_caption), "motion", "chain-dilate", still=True, animated=True),
    Stage("chain-pad", CHAIN_PAGE, "pad", "Layer 1: pad it for the full correlation",
          _layer_one(_pad_caption), "motion", "chain-pad", still=True, animated=True),
    Stage("chain-rotate", CHAIN_PAGE, "rotate 180°", "Layer 1: rotate its kernel 180°",
          _layer_one(_rotate_caption), "motion", "chain-rotate", still=True, animated=True),
    Stage("chain-correlate", CHAIN_PAGE, "correlate",
          "Layer 1: full correlation at stride 1, rot180(w₁) over its padded ∂L/∂y",
          _layer_one(_correlate_caption), "sweep", "chain-correlate", still=True, animated=True,
          formula="grad_x_padded"),
    Stage("chain-mask", CHAIN_PAGE, "mask", _layer_one(_mask_heading), _layer_one(_mask_caption),
          "motion", "chain-mask", still=True, animated=True, formula="grad_x"),
    Stage("chain-weights", CHAIN_PAGE, "∂L/∂w₁, ∂L/∂w₂", "Both layers' weight gradients",
          "Each layer's weight gradient from its own input and the gradient of its own output: "
          "∂L/∂w₂ = h̃ ⋆ dilate(∂L/∂y), ∂L/∂w₁ = x̃ ⋆ dilate(∂L/∂h after the gate).",
          "still", "chain-weights", still=True),
)  # fmt: skip

STAGES: tuple[Stage, ...] = (
    Stage("forward", FORWARD_PAGE, "forward", "y = x ⋆ w (cross-correlation)",
          "The kernel slides over the padded input with the stride; every output cell is the "
          "sum of the products under it.",
          "sweep", "forward", still=True, animated=True, formula="y"),
    *_INPUT_STAGES,
    Stage("whole", INPUT_PAGE, "whole pass",
          lambda s: "The whole backward pass: ∂L/∂y → "
          + " → ".join(s.title.split(" ")[0] for s in _INPUT_STAGES[1:]) + " → ∂L/∂x",
          "Every stage of the input gradient as one motion, with the engine's numbers.",
          "motion", "backward-pass", animated=True, formula="grad_x",
          covers=tuple(s.key for s in _INPUT_STAGES)),
    Stage("weight-grad", WEIGHT_PAGE, "∂L/∂w", "∂L/∂w = x̃ ⋆ dilate(∂L/∂y)",
          "Each weight's gradient adds up every input cell it met, times the gradient of the "
          "output it fed: the padded input correlated with ∂L/∂y spread by the stride.",
          "sweep", "weight-grad", still=True, animated=True, formula="grad_w"),
    Stage("weight-window", WEIGHT_PAGE, "stride → dilation",
          "The stride becomes the window's dilation",
          "∂L/∂y spreads by the stride into the window, which steps over x̃ by the dilation.",
          "motion", "weight-window", animated=True, formula="grad_w"),
    *_LEARN_STAGES,
    *_CHAIN_STAGES,
    Stage("channels", CHANNELS_PAGE, "channels", "Channels, filters and the batch",
          "∂L/∂w[k, c] = Σₙ x̃[n, c] ⋆ dilate(∂L/∂y[n, k]) for every filter k and channel c; "
          "∂L/∂x[n, c] = Σₖ full(dilate(∂L/∂y[n, k]), rot180 w[k, c]).",
          "grids", None, when=lambda spec: _several(spec) or spec.batch > 1),
)  # fmt: skip


# --- the clicker's keys (what a presenter remote sends, as slide software reads them) ---------

# action → the keys that do it; the browser is sent this table (ui/player.js holds no key name)
KEYS: dict[str, tuple[str, ...]] = {
    "next": ("PageDown", "n"),  # the next stage (past a page's last, the next page's first)
    "back": ("PageUp", "p"),
    "forth": ("ArrowRight",),  # a frame (a motion: a keyframe)
    "backstep": ("ArrowLeft",),
    "play": (" ",),
    "first": ("Home",),
    "last": ("End",),  # the stage's result
    "whole": ("a",),  # the whole backward pass (and back to the stage it was entered from)
    "blank": ("b", "."),  # a black screen, as slide software; again (or Esc) to come back
    "full": ("F5", "f"),  # full screen
    "leave": ("Escape",),
}
# The hint under a player: (the actions it names, what they do)
HINT = (
    (("backstep", "forth"), "step"),
    (("play",), "play"),
    (("first", "last"), "first/result"),
    (("back", "next"), "stage"),
    (("whole",), "whole pass"),
    (("blank",), "blank"),
    (("full",), "full screen"),
)
# On a projector, the keys a lecturer needs beyond the player's buttons, in few words (the bar
# keeps one row); the whole hint is its tooltip
SHORT_HINT = (
    (("back", "next"), "stage"),
    (("whole",), "whole pass"),
    (("blank",), "blank"),
    (("full",), "full screen"),
)
_KEY_NAMES = {"PageDown": "PgDn", "PageUp": "PgUp", "ArrowRight": "→", "ArrowLeft": "←",
              " ": "space"}  # fmt: skip
# Playback on arrival, a lecturer's choice (the URL's play=): "auto" plays a stage once when a
# projector enters it (from its first frame); "stills" opens each stage on its result. A reader's
# prefers-reduced-motion always wins (no autoplay, no gliding), in the browser.
PLAYBACK = ("auto", "stills")


def keys_hint(hint=HINT) -> str:
    """The line under a player that says its keys (each action's first key, from KEYS)."""
    parts = []
    for actions, words in hint:
        names = [_KEY_NAMES.get(KEYS[a][0], KEYS[a][0]) for a in actions]
        joint = " " if all(len(n) == 1 for n in names) else "/"
        parts.append(f"{joint.join(names)} {words}")
    return "keys: " + " · ".join(parts)


# --- the lecture -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stop:
    """Where a clicker's PageDown lands: a page and its `step=`; the stage shown (None on a page
    of the coda, which has no stages)."""

    page: str
    step: int = 1
    stage: Stage | None = None


@dataclass(frozen=True)
class Lecture:
    """The stages in lecture order, then the coda's pages, and what follows from their order."""

    stages: tuple[Stage, ...]
    coda: tuple[str, ...] = CODA

    def __post_init__(self):
        keys = [s.key for s in self.stages]
        if len(set(keys)) != len(keys):
            raise ValueError(f"two stages share a key: {keys}")

    def stage(self, key: str) -> Stage:
        return next(s for s in self.stages if s.key == key)

    def of(self, spec: ConvSpec | None = None) -> tuple[Stage, ...]:
        """The stages this layer has (every stage when no layer is given)."""
        return tuple(s for s in self.stages if spec is None or s.when is None or s.when(spec))

    def pages(self) -> tuple[str, ...]:
        """The pages of the lecture, in order."""
        return tuple(dict.fromkeys(s.page for s in self.stages))

    def on_page(self, page: str, spec: ConvSpec | None = None) -> tuple[Stage, ...]:
        """A page's stages, in order: its stage bar."""
        return tuple(s for s in self.of(spec) if s.page == page)

    @property
    def most_steps(self) -> int:
        """The most stages one page has: the range of the URL's `step=`."""
        return max(len(self.on_page(p)) for p in self.pages())

    def number(self, stage: Stage) -> str:
        """The stage's number on its page ('2'), a span for a stage that covers others ('1–6'),
        '' where the page has one stage."""
        mine = self.on_page(stage.page)
        if len(mine) < 2:
            return ""
        keys = [s.key for s in mine]
        if stage.covers:
            first, last = (keys.index(k) + 1 for k in (stage.covers[0], stage.covers[-1]))
            return f"{first}–{last}"
        return str(keys.index(stage.key) + 1)

    def label(self, stage: Stage) -> str:
        """The stage bar's and the player's name of a stage: its number on its page and its title
        (the title alone on a page of one stage)."""
        number = self.number(stage)
        return f"{number} · {stage.title}" if number else stage.title

    def named(self, stage: Stage) -> str:
        """The stage as a sentence names it: 'stage 6 (mask)' (its title alone on a page of one
        stage)."""
        number = self.number(stage)
        return f"stage {number} ({stage.title})" if number else stage.title

    def step_of(self, stage: Stage) -> int:
        """The stage's `step=` on its page (1-based)."""
        return self._steps[stage.key]

    @cached_property
    def _steps(self) -> dict[str, int]:
        """Each stage's `step=` on its page, by key (the clicker's walk asks for every one on
        every rerun)."""
        return {s.key: self.on_page(s.page).index(s) + 1 for s in self.stages}

    def at(self, page: str, step: int, spec: ConvSpec | None = None) -> Stage:
        """The stage `step=` names on a page (clipped to the page's stages)."""
        mine = self.on_page(page, spec)
        return mine[min(max(step, 1), len(mine)) - 1]

    def neighbours(self, stage: Stage, spec: ConvSpec | None = None):
        """(the stage before, the stage after) in the lecture, None past its ends."""
        order = list(self.of(spec))
        i = order.index(stage)
        return (order[i - 1] if i else None), (order[i + 1] if i + 1 < len(order) else None)

    def walk(self, spec: ConvSpec | None = None) -> tuple[Stop, ...]:
        """Every stop of a clicker's PageDown, in order: the stages this layer has (never a page
        with none for it: Channels only for several channels), then the coda's pages."""
        stages = tuple(Stop(s.page, self.step_of(s), s) for s in self.of(spec))
        return stages + tuple(Stop(page, 1) for page in self.coda)

    def counter(self, stage: Stage, spec: ConvSpec | None = None) -> tuple[int, int]:
        """(the stage's place in the lecture, 1-based; how many stages the layer's lecture has)."""
        order = self.of(spec)
        return order.index(stage) + 1, len(order)

    def exported(self) -> tuple[Stage, ...]:
        """The stages that write files, in lecture order."""
        return tuple(s for s in self.stages if s.export)

    def export_names(self, spec: ConvSpec | None = None) -> list[str]:
        """Every stage export's file stem: the PNG/SVG stills and the animations."""
        return [s.export for s in self.of(spec) if s.export and (s.still or s.animated)]

    def with_stage(self, stage: Stage, after: str) -> Lecture:
        """A copy with `stage` inserted after the stage keyed `after`."""
        i = [s.key for s in self.stages].index(after) + 1
        return replace(self, stages=(*self.stages[:i], stage, *self.stages[i:]))


LECTURE = Lecture(STAGES)

"""Each stage of the lecture described in words, for a reader who cannot see the figure.

A stage's long description says what the stage does, what changed and what to look at, in short
sentences for a first-year reader, with this layer's sizes (`Seen`). It is the lecture's words,
owned beside them: the app writes it under a stage, the offline deck and the notebook view give
it to a screen reader, and `convviz.render.story.describe` adds the grids' sizes and values.
Every stage of `LECTURE` has one (checked at import).

No Streamlit, no plotting library: the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable

from convviz.engine.spec import ConvSpec
from convviz.engine.text import RECITATION_NOTE, count, shape_text
from convviz.model.lecture import LECTURE, Lecture, Seen, Stage, padded_grad_size

Said = Callable[[Seen], str]


def _forward(s: Seen) -> str:
    spec = s.spec
    (kh, kw), (sh, sw) = spec.kernel_size, spec.stride
    return (
        f"The kernel w is a small grid of {kh}×{kw} numbers. It slides over the padded input x̃ "
        f"({shape_text(spec.padded_size)}), {count(sw, 'cell')} at a time across and "
        f"{count(sh, 'cell')} at a time down. At each stop, each number of w is multiplied by "
        "the number of x̃ under it, and the products are added up. That sum is one cell of the "
        f"output y. y has {shape_text(spec.out_size)} cells, one for each stop. Look at the "
        "window outlined on x̃ and the cell of y it writes."
    )


def _grad_out(s: Seen) -> str:
    return (
        f"∂L/∂y has one number for each cell of y: {shape_text(s.spec.out_size)}. Each number "
        "says how much the loss L changes when that cell of y changes a little. The backward "
        "pass starts from these numbers."
    )


def _dilate(s: Seen) -> str:
    spec = s.spec
    (sh, sw), before, after = spec.stride, spec.out_size, spec.dilated_out_size
    if before == after:
        return (
            f"Nothing is inserted here: ∂L/∂y stays {shape_text(after)}. Zeros go in only where "
            "the window jumped more than one cell (a stride above 1)."
        )
    return (
        f"In the forward pass the window jumped {sh} rows and {sw} columns at a time. So here "
        f"{count(sh - 1, 'zero')} {'goes' if sh == 2 else 'go'} between each pair of rows and "
        f"{count(sw - 1, 'zero')} between each pair of columns. ∂L/∂y grows from "
        f"{shape_text(before)} to {shape_text(after)}. The old cells keep their numbers, the new "
        "ones are 0. Each old cell now sits where its window started."
    )


def _pad(s: Seen) -> str:
    spec = s.spec
    (top, bottom), (left, right) = spec.full_padding
    grown = shape_text(padded_grad_size(spec))
    if not (top or bottom or left or right):
        return f"No ring is needed: a 1×1 kernel reaches only its own cell. It stays {grown}."
    return (
        f"A ring of zeros goes around the grid: {count(top, 'row')} on top, {bottom} below, "
        f"{count(left, 'column')} on the left and {right} on the right. It grows to {grown}. Now "
        "the kernel can stop anywhere, even half off the old edge. The ring's zeros add nothing "
        "to the sums."
    )


def _rotate(s: Seen) -> str:
    words = (
        "The kernel turns half a circle (180°). Its top-left number goes to the bottom-right, "
        "and its bottom-right number to the top-left. Each number keeps its colour and its name, "
        "so you can follow it."
    )
    if s.spec.in_channels > 1 or s.spec.out_channels > 1:
        words += f" This is the kernel of filter {s.k} on channel {s.c}."
    return words


def _correlate(s: Seen) -> str:
    return (
        "The turned kernel slides over the padded grid, one cell at a time. At each stop the "
        "products are added up, as in the forward pass. Each sum is one cell of ∂L/∂x̃ "
        f"({shape_text(s.spec.padded_size)}): the gradient of every cell of the padded input. "
        "Look at the window and the cell it writes."
    )


def _mask(s: Seen) -> str:
    spec = s.spec
    size = shape_text(spec.in_size)
    if not any(side for sides in spec.padding for side in sides):
        return f"This layer has no padding, so nothing is dropped: ∂L/∂x̃ is ∂L/∂x, {size}."
    if spec.padding_mode == "zeros":
        return (
            "∂L/∂x̃ has a ring where the padding was. Those cells were zeros added by the "
            "layer, not inputs, so their gradient is dropped. What is left is ∂L/∂x: one number "
            f"for each input cell, {size}."
        )
    return (
        f"The ring was copied from the input ({spec.padding_mode} padding). So the gradient on "
        "each ring cell is added back onto the input cell it was copied from. What is left is "
        f"∂L/∂x, {size}."
    )


def _whole(s: Seen) -> str:
    return (
        "The six steps as one motion: ∂L/∂y is dilated, then padded; the kernel turns; the "
        "window slides; the ring is masked. The numbers are the same as in the steps one by one."
    )


def _weight_grad(s: Seen) -> str:
    (kh, kw) = s.spec.kernel_size
    return (
        f"∂L/∂w has one number for each weight of the kernel: {kh}×{kw}. In the forward pass "
        "each weight met many input cells. Its gradient adds them up, each one times the ∂L/∂y "
        "of the output cell it helped to make. Here ∂L/∂y, spread out by the stride, slides "
        "over x̃. Each stop writes one cell of ∂L/∂w."
    )


def _weight_window(s: Seen) -> str:
    (sh, sw), (dh, dw) = s.spec.stride, s.spec.dilation
    return (
        f"∂L/∂y spreads out by the stride, {sh}×{sw}, into a window. The window steps over x̃ "
        f"by the dilation, {dh}×{dw}. Each stop gives one weight's gradient."
    )


_LEARNING = {
    "loss": "y is compared with a target t, cell by cell. The loss L adds up half of each "
    "squared gap. Its gradient ∂L/∂y is the gap itself, y − t: positive where y is above t, "
    "negative where it is below.",
    "step": "Each weight takes a small step against its gradient: w becomes w − η·∂L/∂w. Then "
    "the forward pass runs again with the new w. With a good rate η the loss falls.",
    "train": "The step is repeated many times. The loss curve shows L after each step; it "
    "usually falls. Move through the steps to see w, y and ∂L/∂w at each one.",
}

_CHAIN = {
    "chain-forward": "Two layers in a row. Layer 1, the sidebar's layer, turns x into pre. A "
    "ReLU keeps the positive cells of pre and sets the others to 0: that is h. Layer 2 turns "
    "h into y. The loss compares y with a target t.",
    "chain-grad-h": "Layer 2 runs its own backward pass. It ends with ∂L/∂h: how the loss "
    "changes when each cell of h changes.",
    "handover": "∂L/∂h moves over to layer 1: it is the gradient of layer 1's output. The ReLU "
    "lets it through only where pre was above 0. The other cells become 0.",
    "chain-weights": "Each layer's weight gradient comes from its own input and the gradient of "
    "its own output. ∂L/∂w₂ uses h and ∂L/∂y. ∂L/∂w₁ uses x̃ and ∂L/∂h after the gate.",
}


def _layer_one(said: Said) -> Said:
    return lambda s: f"Layer 1, on its ∂L/∂y from layer 2. {said(s)}"


def _fixed(words: str) -> Said:
    return lambda s: words


_CHANNELS = (
    "With several channels, filters or samples, each ∂L/∂w[k, c] adds up over the samples, and "
    "each ∂L/∂x[n, c] adds up over the filters. Each tile is one of them. Click a tile to show "
    "that filter or channel on the other pages."
)

DESCRIPTIONS: dict[str, Said] = {
    "forward": _forward,
    "grad-out": _grad_out,
    "dilate": _dilate,
    "pad": _pad,
    "rotate": _rotate,
    "correlate": _correlate,
    "mask": _mask,
    "whole": _whole,
    "weight-grad": _weight_grad,
    "weight-window": _weight_window,
    **{key: _fixed(words) for key, words in (_LEARNING | _CHAIN).items()},
    **{f"chain-{key}": _layer_one(said) for key, said in
       (("dilate", _dilate), ("pad", _pad), ("rotate", _rotate), ("correlate", _correlate),
        ("mask", _mask))},
    "channels": _fixed(_CHANNELS),
}  # fmt: skip


def described(stage: Stage, spec: ConvSpec, n: int = 0, k: int = 0, c: int = 0) -> str:
    """The stage's long description for this layer and slice (a stage of another lecture than
    `LECTURE`, which has none here: its caption)."""
    seen = Seen(spec, n, k, c)
    said = DESCRIPTIONS.get(stage.key)
    return said(seen) if said is not None else stage.caption_for(seen)


def arrived(stage: Stage, seen: Seen, lecture: Lecture = LECTURE) -> str:
    """What an announcer says when the stage is reached: its name and what it did (its caption,
    without the note for the recitation's readers)."""
    caption = stage.caption_for(seen).replace(RECITATION_NOTE, "").strip()
    return f"{lecture.named(stage)}: {caption}"


def check(lecture: Lecture = LECTURE) -> None:
    """LookupError unless every stage of the lecture has its description, and no other."""
    keys = {s.key for s in lecture.stages}
    if keys != set(DESCRIPTIONS):
        raise LookupError(
            f"descriptions without a stage: {sorted(set(DESCRIPTIONS) - keys)}; "
            f"stages without a description: {sorted(keys - set(DESCRIPTIONS))}"
        )


check()

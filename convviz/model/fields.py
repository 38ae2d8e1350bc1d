"""The URL-state's fields: one table of their kinds, bounds, URL keys, roles and defaults.

The state is a plain dict {field: value}. It lives in st.session_state between reruns and pages,
and is mirrored in the URL query so a copied link reproduces the view. Here: the table (the
layer's fields and the ones a page keeps of its own), the state a preset sets, and a field's
value as a link or a grid writes it and reads it back. The state as a whole (a link read over
the defaults, the layer it stands for) is `convviz.model.state`'s. No streamlit import.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from convviz.engine.numbers import Range, read
from convviz.engine.spec import PADDING_MODES, PADDING_WORDS, ConvSpecError, parse_padding
from convviz.engine.text import echo
from convviz.engine.values import DRAW, DRAWS, GRAD_OUT_KINDS, NAMED_KERNELS
from convviz.learning.loss import REDUCTIONS, TARGET_SOURCES
from convviz.learning.sgd import MAX_LR, MAX_MOMENTUM
from convviz.learning.training import MAX_STEPS
from convviz.model.lecture import LECTURE, PLAYBACK, Lecture
from convviz.model.presets import DEFAULT_PRESET, PRESETS_BY_KEY, Preset

EXPLICIT = "explicit"  # the padding kind of per-side amounts: the UI's word, not the engine's
PAD_KINDS = (EXPLICIT, *PADDING_WORDS)
KERNEL_CHOICES = ("random", *NAMED_KERNELS)
MAX_EDIT_VALUES = 1024  # edited arrays larger than this are not put in the URL
MAX_VALUE = 1e9  # typed-in or linked values: every sum of products stays finite


@dataclass(frozen=True)
class Field:
    """One field of the state: how a link writes it, what it is for, and where it starts."""

    kind: str  # "int", "float", "bool", "choice", "str"
    lo: float = 0
    hi: float = 0
    choices: tuple[str, ...] = ()
    # What the field is for: "shape" (a size of the layer's arrays), "layer" (the rest of the
    # geometry), "source" (where the numbers come from when none are typed in), "edit" (typed-in
    # numbers) or "view" (what is shown of the layer; the numbers stay).
    role: str = "view"
    default: object = None  # None: each preset decides it (`preset_state`)
    above: bool = False  # a "float" above lo, not at it (a learning rate of 0 is refused)

    @property
    def range(self) -> Range:
        """What an "int" or "float" field takes, as the one number reader checks it."""
        return Range(self.lo, self.hi, whole=self.kind == "int", above=self.above)


FIELDS: dict[str, Field] = {
    "preset": Field("choice", choices=(*PRESETS_BY_KEY, "custom")),
    "H": Field("int", 1, 128, role="shape"),
    "W": Field("int", 1, 128, role="shape"),
    "kH": Field("int", 1, 11, role="shape"),
    "kW": Field("int", 1, 11, role="shape"),
    "sh": Field("int", 1, 6, role="layer"),
    "sw": Field("int", 1, 6, role="layer"),
    "dh": Field("int", 1, 6, role="layer"),
    "dw": Field("int", 1, 6, role="layer"),
    "same_axes": Field("bool", role="layer"),
    "pad": Field("choice", choices=PAD_KINDS, role="layer"),
    "pt": Field("int", 0, 16, role="layer"),
    "pb": Field("int", 0, 16, role="layer"),
    "pl": Field("int", 0, 16, role="layer"),
    "pr": Field("int", 0, 16, role="layer"),
    "mode": Field("choice", choices=PADDING_MODES, role="layer"),
    "cin": Field("int", 1, 16, role="shape"),
    "cout": Field("int", 1, 16, role="shape"),
    "batch": Field("int", 1, 8, role="shape"),
    "n": Field("int", 0, 7, default=0),
    "k": Field("int", 0, 15, default=0),
    "c": Field("int", 0, 15, default=0),
    "seed": Field("int", 0, 999_999, role="source"),
    "kernel": Field("choice", choices=KERNEL_CHOICES, role="source"),
    "gout": Field("choice", choices=GRAD_OUT_KINDS, role="source"),
    # how the random values are drawn (values.DRAW); a link without it is older: draw 1
    "draw": Field("int", min(DRAWS), max(DRAWS), role="draw", default=DRAW),
    "sel": Field("str", default=""),
    "step": None,  # the stage of the page's stage bar: `step_field` (the lecture's model)
    # before the whole pass was a stage of its own: whole=1 is its step (`lecture_step`)
    "whole": Field("bool", default=False),
    "play": Field("choice", choices=PLAYBACK, default=PLAYBACK[0]),  # autoplay, or stills
    "pres": Field("bool", default=False),
    "hc": Field("bool", default=False),  # high contrast: every text 7:1 (a washed-out projector)
    "still": Field("bool", default=False),  # reduced motion for anyone: no gliding, no autoplay
    "x": Field("str", role="edit", default=""),  # input
    "w": Field("str", role="edit", default=""),  # kernel
    "g": Field("str", role="edit", default=""),  # grad_out
    # --- how the layer learns (the Learning page; every page keeps them in its links) ---
    # the learning rate η; "": the layer's safe rate (`experiment.safe_rate`; a link leaves it out)
    "lr": Field("float", 0, MAX_LR, above=True, default=""),
    "steps": Field("int", 1, MAX_STEPS, default=100),  # the training run's steps
    "mom": Field("float", 0, MAX_MOMENTUM, default=0.0),  # momentum μ (0: plain SGD)
    "tgt": Field("choice", choices=TARGET_SOURCES, default="sobel x"),  # where t comes from
    "red": Field("choice", choices=REDUCTIONS, default="sum"),  # L's sum, or its mean over N
    "t": Field("str", default=""),  # the typed target's values (y's shape), as `encode_array`
}


def step_field(lecture: Lecture = LECTURE) -> Field:
    """The URL's `step=`: a stage of a page's stage bar, up to the most stages a page has."""
    return Field("int", 1, lecture.most_steps, default=1)


FIELDS["step"] = step_field()
# How the reader reads (not what the layer is): kept when a preset or the last valid layer
# replaces the rest of the state.
READER_FIELDS = ("pres", "hc", "still")


def _fields(*roles: str) -> tuple[str, ...]:
    """The fields with one of these roles, in the table's order."""
    return tuple(name for name, f in FIELDS.items() if f.role in roles)


EDITABLE = _fields("edit")  # ("x", "w", "g")
LAYER_FIELDS = _fields("shape", "layer", "source")  # a change makes the view 'custom'
SOURCE_FIELDS = _fields("source", "edit")  # where the numbers come from, beside the geometry
# Fields that change the numbers (the cache key); the rest only change the view.
VALUE_FIELDS = _fields("shape", "layer", "source", "draw", "edit")


def preset_state(preset: Preset) -> dict:
    """The full state a preset sets in one click: what it decides over the fields' defaults."""
    return {name: f.default for name, f in FIELDS.items()} | _decided_by(preset)


def _decided_by(preset: Preset) -> dict:
    """The fields a preset decides: its name, its layer and where its numbers come from."""
    (N, C, H, W), (K, _, kH, kW) = preset.input_shape, preset.weight_shape
    (sh, sw), (dh, dw) = preset.stride, preset.dilation
    word = preset.padding if isinstance(preset.padding, str) else None
    if word is None:
        sides = parse_padding(preset.padding, (H, W), (kH, kW), preset.stride, preset.dilation)
    else:
        sides = ((0, 0), (0, 0))
    (pt, pb), (pl, pr) = sides
    decided = dict(
        preset=preset.key,
        H=H, W=W, kH=kH, kW=kW, cin=C, cout=K, batch=N,
        sh=sh, sw=sw, dh=dh, dw=dw, same_axes=sh == sw and dh == dw,
        pad=word or EXPLICIT, pt=pt, pb=pb, pl=pl, pr=pr, mode=preset.padding_mode,
        seed=preset.seed, kernel=preset.kernel, gout=preset.grad_out,
    )  # fmt: skip
    return decided | _preset_edits(preset)


def _preset_edits(preset: Preset) -> dict:
    """The preset's own numbers (hand-worked examples), encoded as typed-in values."""
    edits = {}
    x, w = preset.values()
    if preset.x is not None:
        edits["x"] = encode_array(x)
    if preset.w is not None:
        edits["w"] = encode_array(w)
    if preset.g is not None:
        edits["g"] = encode_array(preset.grad_out_for(None))
    return edits


DEFAULTS: dict = preset_state(DEFAULT_PRESET)


def number_text(v: float) -> str:
    """The shortest text that reads back as exactly `v` ('2', '-0.5', '1e-320'): how a link
    and a grid of typed-in values write a number."""
    return repr(float(v)).removesuffix(".0")


def encode_array(a: np.ndarray) -> str:
    """Compact text of an array's values (row-major), e.g. '1,2,-0.5', every digit kept."""
    return ",".join(map(number_text, np.asarray(a, float).ravel().tolist()))


# A value of x, w, g or t, typed in or linked: every sum of products stays finite.
VALUE_RANGE = Range(-MAX_VALUE, MAX_VALUE)
LIST_CHARS = MAX_EDIT_VALUES * 25  # "-1.2345678901234567e-123," is 25 characters
INT_PATTERN = re.compile(r"-?[0-9]+", re.ASCII)  # a selection's row and column


def typed_number(text: str, name: str) -> float:
    """A number as a person types it into a grid: '−2' (a minus sign), '1,5' (a decimal comma),
    ' 7 ', '1e3'; ConvSpecError naming the field, the value and the range if it is not one."""
    return read(text, name, VALUE_RANGE, typed=True)


def typed_field(name: str, text: str, label: str) -> int | float:
    """A number field's value as a person types it (the Learning page's η box: `lr`), read by
    the one reader with the field's range; ConvSpecError naming `label`, the value and the range."""
    return read(text, label, URL_FIELDS[name].range, typed=True)


def _list_values(text: str, items: list[str], name: str, typed: bool) -> np.ndarray:
    """The numbers of a list, each read by the one reader; ConvSpecError if one is refused, or
    if there are more than MAX_EDIT_VALUES."""
    _check_length(text, name)
    if len(items) > MAX_EDIT_VALUES:
        raise ConvSpecError(
            f"{name} {echo(text)} holds {len(items):,} values: {name} must be at most "
            f"{MAX_EDIT_VALUES} numbers, each {VALUE_RANGE}"
        )
    return np.array([read(v, name, VALUE_RANGE, typed=typed, each=True) for v in items], float)


def _check_length(text: str, name: str) -> None:
    """ConvSpecError if the text is longer than any list of MAX_EDIT_VALUES numbers."""
    if len(text) > LIST_CHARS:
        raise ConvSpecError(
            f"{name} {echo(text)} is too long ({len(text):,} characters): {name} must be at most "
            f"{MAX_EDIT_VALUES} numbers, each {VALUE_RANGE}"
        )


def _fitted(values: np.ndarray, shape: tuple[int, ...], name: str) -> np.ndarray:
    if values.size != math.prod(shape):
        raise ConvSpecError(
            f"the edited {name} has {values.size} values but its shape "
            f"{'×'.join(map(str, shape))} needs {math.prod(shape)}: edits were reset"
        )
    return values.reshape(shape)


def decode_array(text: str, shape: tuple[int, ...], name: str) -> np.ndarray:
    """Values from `encode_array` (a link's spelling) reshaped to `shape`; ConvSpecError if a
    value is refused or they do not fit."""
    return _fitted(_list_values(text, text.split(","), name, typed=False), shape, name)


def typed_values(text: str, shape: tuple[int, ...], name: str) -> np.ndarray:
    """Numbers a person types for an array, row by row: separated by commas, semicolons, spaces or
    line breaks, each read as `typed_number` reads it. A comma is a decimal comma where only
    that reading gives the array its number of values ('1,5 2,5' for two values)."""
    text = text.strip()
    _check_length(text, name)
    items = re.split(r"[,;\s]+", text)
    if len(items) != math.prod(shape):
        decimal = re.split(r"[;\s]+", text)
        items = decimal if len(decimal) == math.prod(shape) else items
    return _fitted(_list_values(text, items, name, typed=True), shape, name)


# --- the two-layer page's own fields (pages/5_Two_layers.py) ------------------------------------

CHAIN_FIELDS: dict[str, Field] = {
    "kH2": Field("int", 1, 11, default=2),  # layer 2's kernel
    "kW2": Field("int", 1, 11, default=2),
    "sh2": Field("int", 1, 6, default=1),  # layer 2's stride
    "sw2": Field("int", 1, 6, default=1),
    "pad2": Field("int", 0, 16, default=1),  # layer 2's zero padding, every side
    "relu": Field("bool", default=True),  # a ReLU between the layers
    "b1": Field("int", -999, 999, default=0),  # layer 1's bias (a negative one shuts ReLU gates)
}
CHAIN_DEFAULTS = {name: f.default for name, f in CHAIN_FIELDS.items()}


# Fields a page keeps in its link beside the layer's (the Quiz's seed and question): read by
# the same rule as the layer's, and not part of the state the other pages share.
PAGE_FIELDS: dict[str, Field] = {
    "quiz": Field("int", 0, 999_999, default=0),  # the quiz's seed
    "qn": Field("int", 0, 99, default=0),  # the quiz's question
    "qr": Field("int", 0, 9999, default=0),  # the quiz's score: questions answered right …
    "qd": Field("int", 0, 9999, default=0),  # … of those done (answered right or shown)
    # The two-layer page (pages/5_Two_layers.py): the sidebar's layer is layer 1; these are the
    # layer after it (conv₂ on h, one output channel, zero padding), its ReLU and layer 1's bias.
    **CHAIN_FIELDS,
}
URL_FIELDS: dict[str, Field] = FIELDS | PAGE_FIELDS  # every parameter any page reads
SEL_CHARS = 64  # a selection 'grid:row:col'


def parse_field(name: str, raw: str):
    """One URL value → (value, None) or (None, message): the one reader of every parameter a
    page takes from a link (numbers strictly, by `convviz.engine.numbers.read`)."""
    f, said = URL_FIELDS[name], echo(f"{name}={raw}")
    if f.kind in ("int", "float"):
        try:
            return read(raw, name, f.range, link=True), None
        except ConvSpecError as exc:
            return None, str(exc)
    if f.kind == "str" and name != "sel" and raw:  # typed-in values (x, w, g, t)
        try:
            _list_values(raw, raw.split(","), name, typed=False)
        except ConvSpecError as exc:
            return None, f"{said}: {exc}"
    if f.kind == "bool":
        if raw not in ("0", "1", "true", "false"):
            return None, f"{said} must be 0 or 1"
        return raw in ("1", "true"), None
    if f.kind == "choice":
        if raw not in f.choices:
            return None, f"{said} is not one of {', '.join(f.choices)}"
        return raw, None
    if name == "sel" and len(raw) > SEL_CHARS:
        return None, f"{said} is too long ({len(raw):,} characters; at most {SEL_CHARS})"
    return raw, None

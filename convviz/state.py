"""The app's state: one table of fields, their bounds, their URL keys and their defaults.

The state is a plain dict {field: value}. It lives in st.session_state between reruns and pages,
and is mirrored in the URL query so a copied link reproduces the view. This module has no
streamlit import: parsing and serialising are plain functions that the tests call directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from convviz.chain import TwoLayerSpec
from convviz.learn import MAX_LR, MAX_MOMENTUM
from convviz.lecture import LECTURE, PLAYBACK, Lecture
from convviz.loss import REDUCTIONS, TARGET_SOURCES
from convviz.presets import DEFAULT_PRESET, PRESETS_BY_KEY, Preset
from convviz.spec import PADDING_MODES, PADDING_WORDS, ConvSpec, ConvSpecError, parse_padding
from convviz.text import MINUS, count, echo
from convviz.training import MAX_STEPS
from convviz.values import (
    DRAW,
    DRAWS,
    GRAD_OUT_KINDS,
    NAMED_KERNELS,
    example_w,
    layer_values,
    mse_target,
)

EXPLICIT = "explicit"  # the padding kind of per-side amounts: the UI's word, not the engine's
PAD_KINDS = (EXPLICIT, *PADDING_WORDS)
KERNEL_CHOICES = ("random", *NAMED_KERNELS)
MAX_EDIT_VALUES = 1024  # edited arrays larger than this are not put in the URL
MAX_VALUE = 1e9  # typed-in or linked values: every sum of products stays finite
# Multiply-adds of one pass (forward, ∂L/∂x or ∂L/∂w each cost this many) the app takes on: each
# control's maximum is fine alone, all of them together (5.6e9) would cost a 2-core server a
# minute and ~1 GB per view. Measured: see tests/test_bounds.py.
MAX_MACS = 500_000_000


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
    # the learning rate η; "": the layer's safe rate (`lesson.safe_rate`; a link leaves it out)
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


# What a link may hold, ASCII only: Python's int()/float() also take '3_0', ' 5', '+5' and
# Unicode digits ('٣'), which a link then reads as something else than it shows.
_INT = re.compile(r"-?[0-9]+", re.ASCII)
_NUMBER = re.compile(r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)(e[-+]?[0-9]{1,3})?", re.ASCII | re.IGNORECASE)
_NON_FINITE = {"nan", "-nan", "inf", "-inf", "infinity", "-infinity"}


def _number(text: str, name: str) -> float:
    """One value of an edited array; ConvSpecError naming what is wrong with it."""
    if _NUMBER.fullmatch(text):
        return float(text)
    if text.strip().lower().lstrip("+") in _NON_FINITE:
        raise ConvSpecError(f"the edited {name} holds NaN or infinity")
    raise ConvSpecError(
        f"the edited {name} holds {echo(text)}, which is not a number (digits 0-9, '.', "
        "'-', 'e' only; no spaces, '+' or '_')"
    )


def typed_number(text: str, name: str) -> float:
    """A number as a person types it into a grid: '−2' (a minus sign), '1,5' (a decimal comma),
    '1e3'; ConvSpecError saying so if it is not one or is beyond ±MAX_VALUE."""
    plain = text.strip().replace(MINUS, "-").replace(",", ".")
    if plain[:1] == "+" and plain[1:2] not in ("-", "+"):  # '+2' and ' 2 ' are 2 here (a
        plain = plain[1:]  # link's reader, `_number`, refuses both)
    try:
        value = _number(plain, name)
    except ConvSpecError:
        raise ConvSpecError(
            f"{name}: {echo(text)} is not a number (type e.g. 12, −3.5, 1,5 or 1e3)"
        ) from None
    if abs(value) > MAX_VALUE:
        raise ConvSpecError(f"{name}: {echo(text)} is beyond ±{MAX_VALUE:g}; type a smaller number")
    return value


def decode_array(text: str, shape: tuple[int, ...], name: str) -> np.ndarray:
    """Values from `encode_array` reshaped to `shape`; ConvSpecError if they do not fit."""
    values = np.array([_number(v, name) for v in text.split(",")])
    if values.size != int(np.prod(shape)):
        raise ConvSpecError(
            f"the edited {name} has {values.size} values but its shape "
            f"{'×'.join(map(str, shape))} needs {int(np.prod(shape))}: edits were reset"
        )
    if not np.isfinite(values).all():
        raise ConvSpecError(f"the edited {name} holds NaN or infinity")
    if np.abs(values).max(initial=0) > MAX_VALUE:
        raise ConvSpecError(
            f"the edited {name} holds a value beyond ±{MAX_VALUE:g}: sums of such values "
            "overflow; type smaller numbers"
        )
    return values.reshape(shape)


# --- the two-layer page's own fields, and the stack they make (one block) -------------------

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


def chain_spec(spec: ConvSpec, own: dict) -> TwoLayerSpec:
    """The sidebar's layer (layer 1) followed by layer 2 as the page's fields say; ConvSpecError
    naming layer 2 when it cannot work, or when both layers together cost more than MAX_MACS."""
    return TwoLayerSpec.create(
        spec,
        (1, spec.out_channels, own["kH2"], own["kW2"]),
        stride=(own["sh2"], own["sw2"]),
        padding=own["pad2"],
        relu=own["relu"],
        max_macs=MAX_MACS,
    )


def chain_values(
    spec: ConvSpec, own: dict, seed: int, draw: int = DRAW
) -> tuple[TwoLayerSpec, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(stack, (b1, w2, t)) beside the sidebar's x and w₁: b₁ the page's, w₂ integers drawn from
    the seed, t the `gout=mse` target of y."""
    stack = chain_spec(spec, own)
    w2 = example_w(stack.second, seed + 2, draw=draw)
    b1 = np.full(spec.out_channels, float(own["b1"]))
    return stack, (b1, w2, mse_target(stack.second, None, seed))


# Fields a page keeps in its link beside the layer's (the Quiz's seed and question): read by
# the same rule as the layer's, and not part of the state the other pages share.
PAGE_FIELDS: dict[str, Field] = {
    "quiz": Field("int", 0, 999_999, default=0),  # the quiz's seed
    "qn": Field("int", 0, 99, default=0),  # the quiz's question
    "qr": Field("int", 0, 9999, default=0),  # the quiz's score: questions answered right …
    "qd": Field("int", 0, 9999, default=0),  # … of those done (answered right or shown)
    # The two-layer page (pages/9_Two_layers.py): the sidebar's layer is layer 1; these are the
    # layer after it (conv₂ on h, one output channel, zero padding), its ReLU and layer 1's bias.
    **CHAIN_FIELDS,
}
URL_FIELDS: dict[str, Field] = FIELDS | PAGE_FIELDS  # every parameter any page reads
# Longest text a "str" field takes from a link: a selection 'grid:row:col'; typed-in values
# ("-1.2345678901234567e-123," at most 25 characters each, as encode_array writes them).
STR_CHARS = {"sel": 64, **dict.fromkeys((*EDITABLE, "t"), MAX_EDIT_VALUES * 25)}
INT_DIGITS = 12  # a longer whole number is outside every field's range
FLOAT_CHARS = 24  # '0.0012345678901234567' or '1.2345678901234567e-05': longer is not a rate


def _float_field(f: Field, said: str, raw: str):
    """A "float" field's value from a link: (value, None) or (None, why), ASCII digits only."""
    if raw.strip().lower().lstrip("+") in _NON_FINITE:
        return None, f"{said} is not a finite number (type e.g. 0.01)"
    if len(raw) > FLOAT_CHARS or not _NUMBER.fullmatch(raw):
        return None, f"{said} is not a number (digits 0-9, '.', '-', 'e' only, e.g. 0.01)"
    value = float(raw)
    if f.above and value <= f.lo:
        return None, f"{said} must be above {f.lo:g}"
    if value < f.lo:
        return None, f"{said} must be at least {f.lo:g}"
    if value > f.hi:
        return None, f"{said} is beyond {f.hi:g}, the largest this app takes"
    return value, None


def parse_field(name: str, raw: str):
    """One URL value → (value, None) or (None, message): the one reader of every parameter a
    page takes from a link (ASCII digits only where a number is meant, bounded lengths)."""
    f, said = URL_FIELDS[name], echo(f"{name}={raw}")
    if f.kind == "int":
        if not _INT.fullmatch(raw):
            return None, f"{said} is not a whole number (digits 0-9 only)"
        if len(raw) > INT_DIGITS or not f.lo <= int(raw) <= f.hi:
            return None, f"{said} is outside {f.lo}…{f.hi}"
        return int(raw), None
    if f.kind == "float":
        return _float_field(f, said, raw)
    if f.kind == "bool":
        if raw not in ("0", "1", "true", "false"):
            return None, f"{said} must be 0 or 1"
        return raw in ("1", "true"), None
    if f.kind == "choice":
        if raw not in f.choices:
            return None, f"{said} is not one of {', '.join(f.choices)}"
        return raw, None
    if len(raw) > STR_CHARS[name]:
        return None, f"{said} is too long ({len(raw):,} characters; at most {STR_CHARS[name]:,})"
    return raw, None


def value_text(value) -> str:
    """A field's value as a message says it: on/off, not Python's True/False."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return echo(value) if isinstance(value, str) else str(value)


def from_query(query: dict[str, str], base: dict | None = None) -> tuple[dict, list[str]]:
    """State from URL query values over `base` (defaults); messages for the values ignored.

    A known preset in the URL sets the whole state first; other keys then override it. A link
    that changes the layer of its preset (or of the defaults) is a 'custom' layer, so the banner,
    the sidebar and the figures describe one layer; overrides that would make the preset's layer
    impossible are refused and the preset is kept, with a message saying why.
    """
    preset = PRESETS_BY_KEY.get(query.get("preset", ""))
    start = preset_state(preset) if preset else dict(base or DEFAULTS)
    if "seed" in query and "draw" not in query:  # a share link made before draws were named:
        start["draw"] = min(DRAWS)  # the numbers it showed
    state = dict(start)
    problems = []
    for name, raw in query.items():
        if name not in FIELDS:
            continue
        value, problem = parse_field(name, str(raw))
        if problem:
            unset = name == "lr" and state[name] == ""  # the layer's safe rate
            problems.append(
                f"{problem}; kept {'the safe rate' if unset else value_text(state[name])}"
            )
        elif name == "whole":  # an older link's whole pass: its stage now
            if value:
                state["step"] = LECTURE.step_of(LECTURE.stage("whole"))
        else:
            state[name] = value
    problems += _customise(state, start, preset)
    try:
        spec = spec_of(state)
    except ConvSpecError:
        return state, problems  # the page says why; nothing else can be checked
    return state, problems + _drop_misfits(state, spec)


def _layer_of(state: dict) -> tuple | None:
    """What makes the numbers: the geometry and the values' sources; None if impossible."""
    try:
        spec = spec_of(state)
    except ConvSpecError:
        return None
    return (spec, *(state[f] for f in SOURCE_FIELDS))


def preset_of(state: dict) -> str:
    """The preset whose layer the state draws (put back as it was, it is that preset again),
    else 'custom'."""
    return _preset_layers().get(_layer_of(state), "custom")


@cache
def _preset_layers() -> dict[tuple, str]:
    """Each preset's layer (`_layer_of` its state) → its key, the first preset where two match."""
    layers = {}
    for preset in PRESETS_BY_KEY.values():
        layers.setdefault(_layer_of(preset_state(preset)), preset.key)
    layers.pop(None, None)
    return layers


def _customise(state: dict, start: dict, preset: Preset | None) -> list[str]:
    """Mark a state whose layer differs from its preset's as 'custom'; refuse overrides that
    make a preset named in the link impossible. Returns what to tell the reader."""
    named = PRESETS_BY_KEY.get(state["preset"])
    if named is None:
        return []
    changed = [f for f in VALUE_FIELDS if state[f] != start[f]]
    asked = ", ".join(echo(f"{f}={state[f]}") for f in changed)
    if preset is not None and changed:
        try:
            spec_of(state)
        except ConvSpecError as exc:
            state.update({f: start[f] for f in changed})
            return [f"{exc}; so {asked} was not applied and the preset '{preset.title}' is shown"]
    if _layer_of(state) == _layer_of(preset_state(named)):
        return []
    state["preset"] = "custom"
    if preset is None:
        return []
    for name in EDITABLE:  # the preset's own numbers (not the reader's edits) may no longer fit
        if name not in changed and state[name] and _misfit(state, name):
            state[name] = ""
    return [f"{asked} changes the preset '{preset.title}': this is a custom layer"]


def drop_misfit_edits(state: dict) -> None:
    """Forget typed-in (or a preset's) values that a new stride, padding or size no longer fits.

    An impossible layer keeps them: the page shows the last valid one and says why.
    """
    for name in EDITABLE:
        try:
            if state[name] and _misfit(state, name):
                state[name] = ""
        except ConvSpecError:
            return


def _misfit(state: dict, name: str) -> bool:
    """True if the edited array `name` does not fit the state's layer."""
    spec = spec_of(state)
    shape = {"x": spec.input_shape, "w": spec.weight_shape, "g": spec.output_shape}[name]
    try:
        decode_array(state[name], shape, name)
    except ConvSpecError:
        return True
    return False


def cell_grids(spec: ConvSpec) -> dict[str, tuple[int, int]]:
    """The grids a cell can be selected in (panel keys of the pages) and their shapes."""
    return {
        "y": spec.out_size,
        "x": spec.padded_size,
        "grad_x": spec.in_size,
        "grad_x_padded": spec.padded_size,
        "grad_w": spec.kernel_size,
    }


def _drop_misfits(state: dict, spec: ConvSpec) -> list[str]:
    """Reset a slice, a selection or edited values that do not fit the layer; say what was
    reset."""
    problems = [
        f"{echo(f'{field}={was}')} is not a {SLICE_WORDS[field]} of this layer "
        f"({count(state[SLICE_COUNTS[field]], SLICE_WORDS[field])}); showing {field}={state[field]}"
        for field, was in clip_slice(state).items()
    ]
    if state["sel"] and selection_of(state, spec) is None:
        problems.append(
            f"{echo('sel=' + state['sel'])} is not a cell of this layer "
            f"(grid:row:col, grids {', '.join(cell_grids(spec))}); nothing selected"
        )
        state["sel"] = ""
    shapes = {"x": spec.input_shape, "w": spec.weight_shape, "g": spec.output_shape}
    for name, label in (("x", "input"), ("w", "kernel"), ("g", "grad_out")):
        if state[name]:
            try:
                decode_array(state[name], shapes[name], label)
            except ConvSpecError as exc:
                problems.append(str(exc).replace(": edits were reset", "") + "; edits reset")
                state[name] = ""
    return problems


def to_query(state: dict) -> dict[str, str]:
    """URL query of a state: every field, bools as 0/1, empty edits left out."""
    out = {}
    for name, value in state.items():
        if name not in FIELDS or value == "" or name == "whole":  # whole: read, never written
            continue
        if FIELDS[name].kind == "float":
            out[name] = number_text(value)
            continue
        if name in EDITABLE and len(value) > MAX_EDIT_VALUES * 6:
            continue
        out[name] = str(int(value)) if isinstance(value, bool) else str(value)
    return out


def padding_of(state: dict):
    """The padding argument ConvSpec parses: a word or ((top, bottom), (left, right))."""
    if state["pad"] != EXPLICIT:
        return state["pad"]
    return ((state["pt"], state["pb"]), (state["pl"], state["pr"]))


def tie_axes(state: dict) -> None:
    """With one stride and one dilation for both axes, the columns' are the rows' (in the state
    and so in links: 'sh=3&sw=2' under a tied 3 read as two strides)."""
    if state["same_axes"]:
        state["sw"], state["dw"] = state["sh"], state["dh"]


def spec_of(state: dict) -> ConvSpec:
    """The layer's geometry; ConvSpecError (with a fix) if the combination cannot work, or
    costs more than the app computes per rerun (`MAX_MACS`)."""
    sw, dw = (state["sh"], state["dh"]) if state["same_axes"] else (state["sw"], state["dw"])
    spec = ConvSpec.create(
        (state["batch"], state["cin"], state["H"], state["W"]),
        (state["cout"], state["cin"], state["kH"], state["kW"]),
        stride=(state["sh"], sw),
        padding=padding_of(state),
        dilation=(state["dh"], dw),
        padding_mode=state["mode"],
    )
    _check_work(spec)
    return spec


def values_of(state: dict) -> tuple[ConvSpec, np.ndarray, np.ndarray, np.ndarray]:
    """(spec, x, w, grad_out) of a state: its seed, kernel, grad_out kind and typed-in edits."""
    spec = spec_of(state)
    edits = {
        name: decode_array(state[name], shape, label) if state[name] else None
        for name, shape, label in (
            ("x", spec.input_shape, "input"),
            ("w", spec.weight_shape, "kernel"),
            ("g", spec.output_shape, "grad_out"),
        )
    }
    sources = (state["seed"], state["kernel"], state["gout"])
    return (spec, *layer_values(spec, *sources, draw=state["draw"], **edits))


def macs(spec: ConvSpec) -> int:
    """Multiply-adds of one pass: N · C_in · C_out · kH · kW · oH · oW."""
    (kH, kW), (oH, oW) = spec.kernel_size, spec.out_size
    return spec.batch * spec.in_channels * spec.out_channels * kH * kW * oH * oW


def _check_work(spec: ConvSpec) -> None:
    work = macs(spec)
    (kH, kW), (oH, oW) = spec.kernel_size, spec.out_size
    if work <= MAX_MACS:
        return
    raise ConvSpecError(
        f"this layer needs {work:,} multiply-adds per pass (batch {spec.batch} · C_in "
        f"{spec.in_channels} · C_out {spec.out_channels} · kernel {kH}×{kW} · output {oH}×{oW}); "
        f"the app computes up to {MAX_MACS:,} so that every view answers within 2 s: lower the "
        "batch, the channels, the kernel or the input size"
    )


# The slice fields and the count field that bounds each: sample n < batch, filter k < C_out,
# channel c < C_in.
SLICE_COUNTS = {"n": "batch", "k": "cout", "c": "cin"}
SLICE_WORDS = {"n": "sample", "k": "filter", "c": "channel"}


def clip_slice(state: dict) -> dict[str, int]:
    """Keep n, k, c inside the batch and channel counts; returns {field: value it had} of those
    it moved."""
    moved = {}
    for field, counted in SLICE_COUNTS.items():
        if state[field] >= state[counted]:
            moved[field], state[field] = state[field], state[counted] - 1
    return moved


def picked_slice(
    state: dict, fields: tuple[str | None, str | None], row: int, col: int
) -> dict[str, int]:
    """What a click on tile (row, col) of a grid of slices selects, as {field: index}.

    fields : the slice field ('n', 'k' or 'c') that the grid's rows and its columns stand for,
        None where an index stands for nothing (a grid of one row). An index outside the
        layer's count (or a field that is not a slice) picks nothing.
    """
    picks = {}
    for field, index in zip(fields, (row, col)):
        count = SLICE_COUNTS.get(field)
        if count is not None and 0 <= index < state[count]:
            picks[field] = index
    return picks


def slice_of(state: dict, spec: ConvSpec) -> tuple[int, int, int]:
    """(n, k, c) clipped to the layer's batch and channels."""
    return (
        min(state["n"], spec.batch - 1),
        min(state["k"], spec.out_channels - 1),
        min(state["c"], spec.in_channels - 1),
    )


def selection_of(state: dict, spec: ConvSpec | None = None) -> tuple[str, int, int] | None:
    """The selected cell 'key:row:col' as (key, row, col), or None.

    Only a cell of one of the layer's grids (`cell_grids`) is a selection: whatever a link or a
    crafted client sends, a page never gets a cell outside its grid.
    spec : the layer's geometry; the state's own when not given.
    """
    parts = str(state.get("sel", "")).split(":")
    if len(parts) != 3 or not all(_INT.fullmatch(p) and len(p) <= 12 for p in parts[1:]):
        return None
    if spec is None:
        try:
            spec = spec_of(state)
        except (ConvSpecError, KeyError, TypeError):
            return None
    key, row, col = parts[0], int(parts[1]), int(parts[2])
    shape = cell_grids(spec).get(key)
    if shape is None or not (0 <= row < shape[0] and 0 <= col < shape[1]):
        return None
    return key, row, col

"""What `convviz.show` and `convviz.Widget` are told: a layer (a preset, a share link or its query
string, keywords, arrays), the slice, a selected cell and the stage, read by the app's own readers.

A keyword becomes the link field it stands for (`stride=2` is `sh=2&sw=2`), each value read by the
one reader of a Python number (`convviz.engine.numbers.take`: an int for a whole number, never
2.0, '2' or True), then the whole is read as a link is (`convviz.model.state`), so a notebook gets
the layer the app and the command line would for the same words. Arrays (x, w, ∂L/∂y) set the
shapes they have and their values. Whatever is refused raises `ConvSpecError` (a ValueError)
naming the argument, the value and what it must be.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

import numpy as np

from convviz.engine.arrays import layer
from convviz.engine.conv import as_array
from convviz.engine.numbers import Range, refusal, take
from convviz.engine.spec import PADDING_WORDS, ConvSpecError
from convviz.engine.text import echo
from convviz.engine.values import GRAD_OUT_KINDS, layer_values
from convviz.export.story import ExportError, Story, chain_of, link_query, state_of
from convviz.model.fields import EXPLICIT, KERNEL_CHOICES, MAX_VALUE, URL_FIELDS, number_text
from convviz.model.lecture import CHAIN_PAGE, LECTURE, Stage
from convviz.model.state import cell_grids, spec_of, values_of

# A keyword → the link fields it sets (one value for both axes, or a pair: rows, then columns)
PAIRS = {"input_size": ("H", "W"), "kernel_size": ("kH", "kW"), "stride": ("sh", "sw"),
         "dilation": ("dh", "dw")}  # fmt: skip
SINGLE = {"in_channels": "cin", "out_channels": "cout", "batch": "batch", "seed": "seed",
          "padding_mode": "mode"}  # fmt: skip
# the Learning and Two layers pages' fields, by their link names (lr=0.1, steps=50, kH2=3, …)
PAGE_FIELDS = ("lr", "steps", "mom", "tgt", "red", "kH2", "kW2", "sh2", "sw2", "pad2", "relu", "b1")
ARRAYS = ("x", "w", "grad_out")
LAYER_ARGS = (*PAIRS, *SINGLE, "padding", "kernel", *ARRAYS, *PAGE_FIELDS)
VALUES = Range(-MAX_VALUE, MAX_VALUE)
# what conv2d assumes when it is not told: stride 1, no padding, no dilation
TORCH_DEFAULTS = {"sh": "1", "sw": "1", "dh": "1", "dw": "1", "same_axes": "1", "pad": EXPLICIT,
                  "pt": "0", "pb": "0", "pl": "0", "pr": "0", "mode": "zeros"}  # fmt: skip


def _word(value, name: str, choices) -> str:
    """A word spelt exactly as one of `choices`; ConvSpecError else."""
    if isinstance(value, str) and value in choices:
        return value
    raise ConvSpecError(f"{name} {echo(repr(value))} is not one of {', '.join(choices)}")


def _field(name: str, field: str, value) -> str:
    """A Python value of a link field, checked as that field is, in the link's spelling."""
    f = URL_FIELDS[field]
    if f.kind in ("int", "float"):
        return number_text(take(value, name, f.range))
    if f.kind == "bool":
        if not isinstance(value, bool):
            raise ConvSpecError(f"{name} {echo(repr(value))} must be True or False")
        return "1" if value else "0"
    return _word(value, name, f.choices)


def _pair(name: str, value) -> tuple:
    """One value for both axes, or a (rows, columns) pair."""
    if isinstance(value, tuple | list):
        if len(value) != 2:
            raise ConvSpecError(f"{name} {echo(repr(value))} must be one value or a pair")
        return tuple(value)
    return (value, value)


def _padding(value) -> dict[str, str]:
    """padding: an int, a (rows, columns) pair, ((top, bottom), (left, right)) or a word."""
    if isinstance(value, str):
        return {"pad": _word(value, "padding", PADDING_WORDS)}
    rows, cols = _pair("padding", value)
    (t, b), (l, r) = _pair("padding", rows), _pair("padding", cols)
    sides = dict(zip(("pt", "pb", "pl", "pr"), (t, b, l, r)))
    return {"pad": EXPLICIT, **{k: _field("padding", k, v) for k, v in sides.items()}}


def _array(value, name: str) -> np.ndarray:
    """An array of numbers as NCHW (a 2-D one is one sample, one channel), finite and in range."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged lists
        raise ConvSpecError(f"{name} is not a rectangular array of numbers: {exc}") from None
    arr = as_array(arr[None, None] if arr.ndim == 2 else arr, name, 4)
    if arr.size and np.abs(arr).max() > VALUES.hi:
        worst = float(arr.flat[np.abs(arr).argmax()])
        raise refusal(f"{name} holds {worst:g}, which", "is too large", f"each {name} value",
                      VALUES)  # fmt: skip
    return arr


def _shape_fields(name: str, arr: np.ndarray) -> dict[str, str]:
    """The link fields an array's shape sets, each read as that field (a 200-row x is refused)."""
    fields = {"x": ("batch", "cin", "H", "W"), "w": ("cout", "cin", "kH", "kW")}[name]
    return {f: _field(f"{name}.shape[{i}]", f, int(n)) for i, (f, n) in
            enumerate(zip(fields, arr.shape))}  # fmt: skip


def query_of(preset: str | None, link: str | None, args: Mapping) -> tuple[dict, dict]:
    """The link query that says the layer (the preset's or link's, the keywords over them) and
    the arrays given; ConvSpecError naming a refused argument."""
    unknown = [name for name in args if name not in LAYER_ARGS]
    if unknown:
        raise ConvSpecError(f"{unknown[0]!r} is not an argument of convviz.show (one of "
                            f"{', '.join(LAYER_ARGS)})")  # fmt: skip
    if preset is not None and not isinstance(preset, str):
        raise ConvSpecError(f"preset {echo(repr(preset))} must be a preset's name or a link")
    if preset is not None and ("?" in preset or "=" in preset):  # a link given as the first one
        preset, link = None, preset
    try:
        query = link_query(link) if link is not None else {}
    except ExportError as exc:
        raise ConvSpecError(str(exc)) from None
    if preset is not None:
        query["preset"] = preset
    elif link is None and args:  # a layer of keywords alone: PyTorch's defaults under them
        query |= TORCH_DEFAULTS
    arrays = {}
    for name, value in args.items():
        if value is None:
            continue
        if name in PAIRS:
            for field, v in zip(PAIRS[name], _pair(name, value)):
                query[field] = _field(name, field, v)
            if name in ("stride", "dilation"):
                query["same_axes"] = "0"
        elif name in SINGLE:
            query[SINGLE[name]] = _field(name, SINGLE[name], value)
        elif name in PAGE_FIELDS:
            query[name] = _field(name, name, value)
        elif name == "padding":
            query |= _padding(value)
        elif name == "kernel" and isinstance(value, str):
            query["kernel"] = _word(value, "kernel", KERNEL_CHOICES)
        elif name == "grad_out" and isinstance(value, str):
            query["gout"] = _word(value, "grad_out", GRAD_OUT_KINDS)
        else:  # an array: x, w (or kernel=), grad_out
            key = "w" if name == "kernel" else name
            arrays[key] = _array(value, name)
            if key != "grad_out":
                query |= _shape_fields(key, arrays[key])
    return query, arrays


def story_of(
    preset: str | None = None,
    link: str | None = None,
    *,
    n: int = 0,
    k: int = 0,
    c: int = 0,
    selected: tuple[str, int, int] | None = None,
    **args,
) -> Story:
    """The layer and view these arguments say, as every export sees it (a `Story`)."""
    query, arrays = query_of(preset, link, args)
    try:
        state = state_of(link=f"?{urlencode(query)}") if query else state_of("classroom")
    except ExportError as exc:
        raise ConvSpecError(str(exc)) from None
    spec = spec_of(state)
    given = {"x": arrays.get("x"), "w": arrays.get("w"), "g": arrays.get("grad_out")}
    if given["g"] is not None and given["g"].shape != spec.output_shape:
        raise ConvSpecError(f"grad_out must have the output's shape {spec.output_shape} for this "
                            f"layer, got {given['g'].shape}")  # fmt: skip
    if all(v is None for v in given.values()):  # the state's own numbers (a link's edits)
        values = values_of(state)[1:]
    else:
        sources = (state["seed"], state["kernel"], state["gout"])
        values = layer_values(spec, *sources, draw=state["draw"], **given)
    counts = {"n": spec.batch, "k": spec.out_channels, "c": spec.in_channels}
    slice_ = tuple(take(v, name, Range(0, counts[name] - 1, whole=True))
                   for name, v in (("n", n), ("k", k), ("c", c)))  # fmt: skip
    story = Story(state, layer(spec, *values), slice_, _selection(selected, spec),
                  chain=chain_of(query))  # fmt: skip
    if set(query) & {"kH2", "kW2", "sh2", "sw2", "pad2"} and CHAIN_PAGE in story.left_out:
        raise ConvSpecError(story.left_out[CHAIN_PAGE])
    return story


def _selection(selected, spec) -> tuple[str, int, int] | None:
    """A selected cell (grid, row, col) of one of the layer's grids; ConvSpecError else."""
    if selected is None:
        return None
    grids = cell_grids(spec)
    if not (isinstance(selected, tuple | list) and len(selected) == 3 and selected[0] in grids):
        raise ConvSpecError(f"selected {echo(repr(selected))} must be (grid, row, col), the grid "
                            f"one of {', '.join(grids)}")  # fmt: skip
    key, shape = selected[0], grids[selected[0]]
    row = take(selected[1], "selected row", Range(0, shape[0] - 1, whole=True))
    col = take(selected[2], "selected col", Range(0, shape[1] - 1, whole=True))
    return key, row, col


def stage_of(story: Story, key) -> Stage:
    """The lecture's stage `key` ('forward', 'dilate', …), if this layer has it."""
    keys = [s.key for s in LECTURE.stages]
    key = _word(key, "stage", keys)
    stage = LECTURE.stage(key)
    if stage.page in story.left_out:
        raise ConvSpecError(story.left_out[stage.page])
    if stage not in story.stages():
        have = ", ".join(s.key for s in story.stages())
        raise ConvSpecError(f"this layer has no stage {key!r} (its stages: {have})")
    return stage

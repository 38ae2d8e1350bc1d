"""The app's state as a whole: read from a link and written back, and the layer it stands for.

The state is a plain dict {field: value} over the table of `convviz.model.fields`. `from_query`
reads a link over the defaults (a preset kept or made 'custom', values that do not fit the layer
reset, each with a message), `to_query` writes one; `spec_of` and `values_of` give the layer and its
numbers, `slice_of` and `selection_of` what the pages show of it. This module has no streamlit
import: parsing and serialising are plain functions that the tests call directly.
"""

from __future__ import annotations

import math
from functools import cache, lru_cache
from urllib.parse import urlencode

import numpy as np

from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.engine.text import count, echo, shape_text
from convviz.engine.values import DRAW, DRAWS, example_w, layer_values, mse_target, named_kernel
from convviz.learning import training
from convviz.learning.chain import TwoLayerSpec
from convviz.learning.experiment import Settings
from convviz.learning.loss import TARGET_SOURCES
from convviz.model.fields import (
    CHAIN_FIELDS,
    DEFAULTS,
    EDITABLE,
    EXPLICIT,
    FIELDS,
    INT_PATTERN,
    MAX_EDIT_VALUES,
    SOURCE_FIELDS,
    VALUE_FIELDS,
    decode_array,
    number_text,
    parse_field,
    preset_state,
)
from convviz.model.lecture import LECTURE, padded_grad_size
from convviz.model.presets import PRESETS_BY_KEY, Preset

# Multiply-adds of one pass (forward, ∂L/∂x or ∂L/∂w each cost this many) the app takes on: each
# control's maximum is fine alone, all of them together (5.6e9) would cost a 2-core server a
# minute and ~1 GB per view. Measured: see tests/test_bounds.py.
MAX_MACS = 500_000_000


# --- the two-layer stack the page's own fields (`fields.CHAIN_FIELDS`) make --------------------


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


def value_text(value) -> str:
    """A field's value as a message says it: on/off, not Python's True/False."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return echo(value) if isinstance(value, str) else str(value)


def _kept(name: str, value) -> str:
    """What a link's refused value leaves in its place, in words."""
    if name == "lr" and value == "":
        return "kept the safe rate"
    if name in (*EDITABLE, "t"):
        return "edits reset" if value == "" else "the last edits kept"
    return f"kept {value_text(value)}"


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
            problems.append(f"{problem}; {_kept(name, state[name])}")
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
    """The grids a cell can be selected in (panel keys of the pages) and their shapes: the
    layer's, the motions' (∂L/∂y dilated and padded, w turning), the Learning page's and the
    Two layers page's. Layer 2's grids depend on the page's own fields: they are bounded here by
    what those fields allow (the page keeps a cell of its grid: `chain_story.selected_cell`)."""
    out, kernel, inside = spec.out_size, spec.kernel_size, spec.in_size
    wide = CHAIN_FIELDS["pad2"].hi * 2  # layer 2's padding widens its output at most this much
    layer_two = (out[0] + wide, out[1] + wide)
    w2 = (CHAIN_FIELDS["kH2"].hi, CHAIN_FIELDS["kW2"].hi)
    grids = {
        "y": out,
        "x": spec.padded_size,
        "grad_x": inside,
        "grad_x_padded": spec.padded_size,
        "grad_w": kernel,
        # ∂L/∂y as it arrives, and spread into the weight gradient's window
        "grad_out": tuple(map(max, out, spec.dilated_out_size)),
        "dilated": spec.dilated_out_size,
        "padded": padded_grad_size(spec),
        "w_rot": kernel,
        "target": out,
        **dict.fromkeys(("w", "w_before", "delta_w", "w_after", "target_w", "w1", "grad_w1"),
                        kernel),
        "x_chain": inside,
        **dict.fromkeys(("pre", "h", "grad_h", "grad_pre"), out),
        **dict.fromkeys(("y2", "t", "grad_y2"), layer_two),
        **dict.fromkeys(("w2", "grad_w2"), w2),
    }  # fmt: skip
    return grids


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


# The longest link the app writes (characters of its query string, encoded): a share link, the
# address bar, the page links. The whole request head that opens a link holds it once (its
# request line, or the Referer of the page's own requests) beside ~1-2 kB of other headers, and
# must pass nginx (deploy/nginx.conf: 16k header buffers) and Streamlit's server (h11: a 16 KiB
# head): 12 KiB leaves room for the rest.
MAX_LINK = 12 * 1024
# What a link leaves out first, when it would be longer: typed and edited numbers, the longest
# first (the session keeps them; the link keeps the layer, its seed and everything else)
LEFT_OUT_FIRST = ("t", "g", "x", "w")


def encoded(query: dict[str, str]) -> str:
    """`urlencode(query)`, made once per query: a rerun writes the same link several times (the
    address bar, the share link, the page links), each ~40 fields quoted one by one."""
    return _encoded(tuple(query.items()))


@lru_cache(maxsize=1024)
def _encoded(items: tuple[tuple[str, str], ...]) -> str:
    return urlencode(items)


def bounded(query: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The query within MAX_LINK, and the fields left out to fit (longest edits first)."""
    out, left_out = dict(query), []
    while len(encoded(out)) > MAX_LINK:
        edits = [name for name in LEFT_OUT_FIRST if name in out]
        if not edits:
            break  # every other field is short: its bounds keep a link far under MAX_LINK
        name = max(edits, key=lambda n: len(out[n]))
        left_out.append(name)
        del out[name]
    return out, left_out


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
    return _spec(
        (state["batch"], state["cin"], state["H"], state["W"]),
        (state["cout"], state["cin"], state["kH"], state["kW"]),
        (state["sh"], sw),
        padding_of(state),
        (state["dh"], dw),
        state["mode"],
    )


@lru_cache(maxsize=1024)  # a rerun asks several times; a state's fields are checked scalars
def _spec(input_shape, weight_shape, stride, padding, dilation, mode: str) -> ConvSpec:
    spec = ConvSpec.create(
        input_shape,
        weight_shape,
        stride=stride,
        padding=padding,
        dilation=dilation,
        padding_mode=mode,
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
    if len(parts) != 3 or not all(INT_PATTERN.fullmatch(p) and len(p) <= 12 for p in parts[1:]):
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


def learning_settings(state: dict, spec: ConvSpec) -> tuple[Settings, list[str]]:
    """The Learning page's settings the state asks for, made to fit the layer: a named kernel of
    another size becomes the box kernel, steps beyond the work limit the most it allows (and a
    typed target of another shape a random one): each with a note saying so."""
    notes = []
    target = state["tgt"]
    if target in TARGET_SOURCES[2:] and named_kernel(target, spec.kernel_size) is None:
        notes.append(
            f"The {target} kernel is not {shape_text(spec.kernel_size)} like this "
            "layer's: the target is made with the box kernel"
        )
        target = "box"
    typed = None
    if target == "typed":
        try:
            typed = decode_array(state["t"], spec.output_shape, "target") if state["t"] else None
        except ConvSpecError as exc:
            notes.append(str(exc).replace(": edits were reset", ""))
        if typed is None:
            notes.append(
                f"Type {math.prod(spec.output_shape)} target values (y is "
                f"{shape_text(spec.output_shape)}); until then the target is random"
            )
            target = "random"
    steps, most = state["steps"], training.max_steps(spec, MAX_MACS)
    if steps > most >= 1:
        notes.append(
            f"{steps} steps of this layer are beyond the app's work limit: {count(most, 'step')} "
            "are taken"
        )
        steps = most
    settings = Settings(
        lr=None if state["lr"] == "" else state["lr"],
        steps=steps,
        momentum=state["mom"],
        target=target,
        reduction=state["red"],
        typed=typed,
    )
    return settings, notes

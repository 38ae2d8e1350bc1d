"""The state's field table is the one owner of its field sets and of what a preset sets."""

from __future__ import annotations

import pytest

from convviz.model.fields import (
    DEFAULTS,
    EDITABLE,
    FIELDS,
    LAYER_FIELDS,
    PAD_KINDS,
    SOURCE_FIELDS,
    VALUE_FIELDS,
    preset_state,
)
from convviz.model.presets import DEFAULT_PRESET, PRESETS
from convviz.model.state import from_query, to_query
from convviz.ui import sidebar

# The sets as they were written by hand before FIELDS owned them: a change to a field's role that
# moves a field in or out of a set (and so the cache key, 'custom' or the edits' reset) shows here.
# fmt: off
ORACLE = {
    "EDITABLE": ("x", "w", "g"),
    "VALUE_FIELDS": (
        "H", "W", "kH", "kW", "sh", "sw", "dh", "dw", "same_axes", "pad", "pt", "pb", "pl", "pr",
        "mode", "cin", "cout", "batch", "seed", "kernel", "gout", "draw", "x", "w", "g",
    ),
    "LAYER_FIELDS": (
        "H", "W", "kH", "kW", "sh", "sw", "dh", "dw", "same_axes", "pad", "pt", "pb", "pl", "pr",
        "mode", "cin", "cout", "batch", "seed", "kernel", "gout",
    ),
    "SOURCE_FIELDS": ("seed", "kernel", "gout", "x", "w", "g"),
}
# fmt: on
DERIVED = {
    "EDITABLE": EDITABLE,
    "VALUE_FIELDS": VALUE_FIELDS,
    "LAYER_FIELDS": LAYER_FIELDS,
    "SOURCE_FIELDS": SOURCE_FIELDS,
}
# What the view starts at whatever the preset: no slice, no selection, the first storyboard step.
VIEW_START = {"n": 0, "k": 0, "c": 0, "sel": "", "step": 1, "whole": False, "pres": False}


@pytest.mark.parametrize("name", ORACLE)
def test_derived_set_is_what_it_was(name):
    assert DERIVED[name] == ORACLE[name]


def test_pad_kinds_are_explicit_then_the_engines_words():
    assert PAD_KINDS == ("explicit", "valid", "same", "full")


def test_the_sidebar_uses_the_state_sets():
    assert sidebar.LAYER_FIELDS is LAYER_FIELDS


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_preset_state_covers_exactly_fields(p):
    state = preset_state(p)
    assert list(state) == list(FIELDS)  # the table's order is the URL's order
    assert None not in state.values(), [k for k, v in state.items() if v is None]
    assert state["preset"] == p.key
    assert {k: state[k] for k in VIEW_START} == VIEW_START


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_preset_state_round_trips_through_the_url(p):
    state = preset_state(p)
    assert from_query(to_query(state)) == (state, [])
    assert from_query({"preset": p.key}) == (state, [])


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_edits_only_where_the_preset_gives_numbers(p):
    state = preset_state(p)
    own = {"x": p.x, "w": p.w, "g": p.g}
    assert {n for n in EDITABLE if state[n]} == {n for n, v in own.items() if v is not None}


def test_defaults_are_the_default_preset():
    assert preset_state(DEFAULT_PRESET) == DEFAULTS

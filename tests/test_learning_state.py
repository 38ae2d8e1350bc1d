"""The Learning page's URL fields: the learning rate as a strict "float" field, steps, momentum,
the target's source and the loss's reduction; they round-trip through a link, an older link
keeps its numbers, and a value a link cannot use is named and the last one kept."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from convviz.learning import loss, sgd, training
from convviz.model.fields import DEFAULTS, FIELDS, parse_field
from convviz.model.state import from_query, to_query

LEARN_FIELDS = ("lr", "steps", "mom", "tgt", "red", "t")


def test_the_fields_are_the_engines_bounds():
    assert FIELDS["lr"].kind == FIELDS["mom"].kind == "float"
    assert (FIELDS["lr"].lo, FIELDS["lr"].hi, FIELDS["lr"].above) == (0, sgd.MAX_LR, True)
    assert (FIELDS["steps"].lo, FIELDS["steps"].hi) == (1, training.MAX_STEPS)
    assert (FIELDS["mom"].lo, FIELDS["mom"].hi) == (0, sgd.MAX_MOMENTUM)
    assert FIELDS["tgt"].choices == loss.TARGET_SOURCES
    assert FIELDS["red"].choices == loss.REDUCTIONS


@pytest.mark.parametrize(
    ("raw", "value"),
    [("0.01", 0.01), ("1e-3", 1e-3), ("2", 2.0), (".5", 0.5), ("1000", 1000.0), ("3E-05", 3e-5)],
)
def test_a_rate_in_a_link_is_read_exactly(raw, value):
    assert parse_field("lr", raw) == (value, None)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("0", "is too small: lr must be a number above 0, up to 1000"),
        ("0.0", "is too small"),
        ("-0.1", "is too small"),
        ("1e9", "is too large: lr must be a number above 0, up to 1000"),
        ("1000.5", "is too large"),
        ("nan", "not a finite number"),
        ("inf", "not a finite number"),
        ("-Infinity", "not a finite number"),
        ("abc", "not a number"),
        ("+0.1", "not a number"),
        ("0x10", "not a number"),
        ("1_0", "not a number"),
        (" 0.1", "not a number"),
        ("٠.١", "not a number"),
        ("0." + "1" * 40, "is too long (42 characters"),
        ("", "not a number"),
    ],
)
def test_a_rate_a_link_cannot_use_is_named_with_why(raw, words):
    value, problem = parse_field("lr", raw)
    assert value is None and words in problem and "lr=" in problem


@pytest.mark.parametrize(
    ("raw", "words"), [("-0.5", "is too small"), ("1", "is too large"), ("nan", "finite")]
)
def test_momentum_is_refused_outside_0_to_0999(raw, words):
    value, problem = parse_field("mom", raw)
    assert value is None and words in problem


def test_bad_values_keep_the_last_valid_ones_and_say_so():
    good, problems = from_query({"preset": "recitation-s2", "lr": "0.002", "steps": "30"})
    assert not problems and (good["lr"], good["steps"]) == (0.002, 30)
    state, problems = from_query(
        {"lr": "0", "steps": "0", "mom": "nan", "tgt": "sobel z", "red": "max"}, base=good
    )
    assert (state["lr"], state["steps"], state["mom"]) == (0.002, 30, 0.0)
    assert (state["tgt"], state["red"]) == (good["tgt"], good["red"])
    said = "\n".join(problems)
    for name in ("lr=0", "steps=0", "mom=nan", "tgt=sobel z", "red=max"):
        assert name in said, (name, said)
    assert "kept 0.002" in said and "kept 30" in said
    _, problems = from_query({"lr": "-1"})
    assert "kept the safe rate" in problems[0]


def test_an_older_link_keeps_its_numbers_and_the_safe_rate():
    old = {k: v for k, v in to_query(DEFAULTS).items() if k not in LEARN_FIELDS}
    state, problems = from_query(old)
    assert not problems
    assert {k: state[k] for k in LEARN_FIELDS} == {k: FIELDS[k].default for k in LEARN_FIELDS}
    assert "lr" not in to_query(state)  # the safe rate: left out of a link


@given(
    lr=st.floats(min_value=1e-12, max_value=sgd.MAX_LR),
    mom=st.floats(min_value=0, max_value=sgd.MAX_MOMENTUM),
    steps=st.integers(1, training.MAX_STEPS),
    tgt=st.sampled_from(loss.TARGET_SOURCES),
    red=st.sampled_from(loss.REDUCTIONS),
)
def test_the_learning_fields_round_trip_through_a_link(lr, mom, steps, tgt, red):
    state = dict(DEFAULTS, lr=lr, mom=mom, steps=steps, tgt=tgt, red=red, t="1,-2.5,3,4")
    back, problems = from_query(to_query(state))
    assert not problems
    assert {k: back[k] for k in LEARN_FIELDS} == {k: state[k] for k in LEARN_FIELDS}


@given(raw=st.text(max_size=30))
def test_any_text_is_a_rate_in_bounds_or_a_message(raw):
    value, problem = parse_field("lr", raw)
    assert (value is None) != (problem is None)
    if value is not None:
        assert math.isfinite(value) and 0 < value <= sgd.MAX_LR

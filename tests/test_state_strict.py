"""URL values are read strictly, and no selection outside the layer's grids reaches a page."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from convviz.engine.spec import ConvSpecError
from convviz.model.fields import DEFAULTS, decode_array, parse_field, typed_number
from convviz.model.state import from_query, selection_of

APP = str(Path(__file__).resolve().parents[1] / "app.py")


@pytest.mark.parametrize(
    "raw, words",
    [
        ("3_0", "not a whole number"),  # int() reads 30
        ("٣", "not a whole number"),  # int() reads Arabic-Indic digits
        ("３", "not a whole number"),  # and full-width ones
        ("+5", "not a whole number"),
        (" 5", "not a whole number"),
        ("5\n", "not a whole number"),
        ("5.0", "not a whole number"),
        ("", "not a whole number"),
        ("1" * 30, "is too large: H must be a whole number in 1…128"),
        ("9" * 100_000, "is too long (100,000 characters"),  # longer than int() converts
        ("-1", "`H=-1` is too small: H must be a whole number in 1…128"),
    ],
)
def test_lenient_whole_numbers_are_refused_with_a_message(raw, words):
    value, problem = parse_field("H", raw)
    assert value is None and words in problem


@pytest.mark.parametrize("raw, value", [("5", 5), ("05", 5), ("128", 128)])
def test_plain_whole_numbers_are_read(raw, value):
    assert parse_field("H", raw) == (value, None)


@pytest.mark.parametrize(
    "text, words",
    [
        ("1,2,+3", "input value `+3` is not a number"),
        ("1, 2,3", "input value `  2 ` is not a number"),
        ("1_0,2,3", "input value `1_0` is not a number"),
        ("٣,2,3", "input value `٣` is not a number"),
        ("nan,2,3", "`nan` is not a finite number"),
        ("1,-inf,3", "`-inf` is not a finite number"),
        ("1e999,2,3", "`1e999` is too large: each input value must be a number in -1e9…1e9"),
        ("1e10,2,3", "`1e10` is too large"),
    ],
)
def test_lenient_numbers_in_edits_are_refused(text, words):
    with pytest.raises(ValueError) as exc:  # the words are checked below
        decode_array(text, (3,), "input")
    assert words in str(exc.value)


@pytest.mark.parametrize("text", ["1,-2.5,3", "1e-05,0.5,.5", "1e+08,-0,7"])
def test_numbers_as_encode_array_writes_them_are_read(text):
    assert decode_array(text, (3,), "input").shape == (3,)


@pytest.mark.parametrize(
    "sel", ["y:-1:0", "y:0:-1", "y:99:0", "grad_w:3:3", "nope:0:0", "y:٠:0", "y:+0:0", "y:0"]
)
def test_a_selection_outside_the_grids_is_no_selection(sel):
    state = dict(DEFAULTS, sel=sel)  # 3×3 input, 2×2 kernel: y is 2×2
    assert selection_of(state) is None
    state, problems = from_query({"sel": sel})
    assert state["sel"] == "" and any("not a cell of this layer" in p for p in problems)


@pytest.mark.parametrize(
    "query, says",
    [
        ({"n": "7"}, "`n=7` is not a sample of this layer (1 sample); showing n=0"),
        ({"k": "15"}, "`k=15` is not a filter of this layer (1 filter); showing k=0"),
        ({"cin": "3", "c": "3"}, "`c=3` is not a channel of this layer (3 channels); showing c=2"),
    ],
)
def test_a_slice_past_the_layers_counts_is_said_and_clipped(query, says):
    """`?n=7&k=15&c=15` on a one-sample, one-filter, one-channel layer showed slice 0 silently."""
    state, problems = from_query(query)
    field = next(f for f in ("n", "k", "c") if f in says[:3])
    assert says in problems and state[field] == int(says[-1])
    assert not from_query({"cin": "3", "c": "2"})[1]  # a slice of the layer: nothing to say


def test_a_selection_inside_a_grid_is_kept():
    assert selection_of(dict(DEFAULTS, sel="y:1:1")) == ("y", 1, 1)
    assert selection_of(dict(DEFAULTS, sel="grad_x_padded:2:2")) == ("grad_x_padded", 2, 2)


@pytest.mark.apptest
@pytest.mark.parametrize(
    "page_file", ["pages/1_Forward.py", "pages/2_Input_gradient.py", "pages/3_Weight_gradient.py"]
)
def test_a_crafted_selection_never_breaks_a_session(page_file):
    """A client that sends a cell outside the grid (the old StreamlitValueBelowMinError)."""
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(page_file).run()
    for sel in ("y:-1:0", "grad_w:-2:-2", "x:999:0", "grad_x:0:-1", "grad_x_padded:-1:-1"):
        at.session_state["cv_state"]["sel"] = sel
        at.run()
        assert not at.exception, (sel, [e.value for e in at.exception])
    at.session_state["cv_state"]["sel"] = "y:0:0"
    at.run()
    assert not at.exception


@pytest.mark.parametrize(
    ("typed", "value"),
    [("1e3", 1000.0), ("1,5", 1.5), ("−2", -2.0), (" 7 ", 7.0), ("-0.25", -0.25)],
)
def test_a_typed_number_is_read_as_a_person_writes_it(typed, value):
    assert typed_number(typed, "input x") == value


@pytest.mark.parametrize(
    ("typed", "says"),
    [("abc", "`abc` is not a number"), ("", "input x is empty"), ("1e99", "is too large"),
     ("inf", "`inf` is not a finite number"), ("1,5,2", "is not a number")],
)  # fmt: skip
def test_a_typed_value_that_is_not_a_number_is_refused_with_its_name(typed, says):
    with pytest.raises(ConvSpecError, match="input x ") as caught:
        typed_number(typed, "input x")
    assert says in str(caught.value)


@pytest.mark.apptest
@pytest.mark.parametrize("param", ["quiz", "qn"])
@pytest.mark.parametrize("raw", ["²", "٣٣", "３", "1" * 5000, "²" * 5000, "-1", "+3", " 3"])
def test_the_quiz_reads_its_link_as_strictly_as_the_layer(param, raw):
    """`/Quiz?quiz=%C2%B2` broke the page (isdigit() accepts '²', int() refuses it) and
    `quiz=٣٣` was read as 33: the Quiz's own fields go through the state's one reader."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params[param] = raw
    at.switch_page("pages/9_Quiz.py").run()
    assert not at.exception, [e.value for e in at.exception]
    said = [w.value for w in at.warning]
    assert any(f"{param}=" in w and ("whole number" in w or "too " in w) for w in said), said
    assert at.query_params[param] == "0"  # the default, not a Unicode reading of the digits


@pytest.mark.apptest
def test_the_quiz_takes_a_plain_seed_from_its_link():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(quiz="42", qn="3")
    at.switch_page("pages/9_Quiz.py").run()
    assert not at.exception and not at.warning
    assert (at.query_params["quiz"], at.query_params["qn"]) == ("42", "3")

"""Fuzz of the URL surface: any query on any page gives a page, never an exception, and every
value the link cannot use is named in a message, in words (no Python literal in it).

Values mix valid ones (small sizes: the cost of big layers is measured in test_bounds.py),
malformed text, huge and non-finite numbers, Unicode digits and edited arrays. Pages come from
the app's own list, so a new page is fuzzed too.
"""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from convviz.model.fields import CHAIN_FIELDS, PAGE_FIELDS, URL_FIELDS, parse_field
from convviz.model.pages import PAGES

pytestmark = pytest.mark.apptest  # random links on every page, in AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
SMALL = {"H": 12, "W": 12, "cin": 3, "cout": 3, "batch": 2, "seed": 50}  # keep examples fast

NASTY = st.sampled_from(
    [
        "",
        " 3",
        "3 ",
        "+5",
        "3_0",
        "٣",
        "３",
        "-1",
        "0x10",
        "1e3",
        "nan",
        "inf",
        "-inf",
        "1e308",
        "9" * 400,
        "[click](https://example.com)",
        "![x](http://127.0.0.1/t.png)",
        "<script>alert(1)</script>",
        "y:-1:0",
        "grad_w:99:99",
        "x:0:0:0",
        "1,2,3",
        "1e308," * 8 + "1e308",
        "nan,nan,nan,nan",
        "1,,2",
        "a" * 5000,
        "²",
        "٣٣",
        "1" * 5000,
        "x\n===\ny",
        "x\n\n    code",
        "http://example.com/",
        "**b** _i_ `c`",
        "$x^2$ :red[r] :material/home:",
    ]
)


def valid(name: str) -> st.SearchStrategy[str]:
    f = URL_FIELDS[name]
    if f.kind == "int":
        hi = min(f.hi, SMALL.get(name, f.hi))
        return st.integers(f.lo, hi).map(str)
    if f.kind == "float":  # in bounds, at its edges, and just past them
        inside = st.floats(f.lo, f.hi, exclude_min=f.above).map(repr)
        return inside | st.sampled_from([repr(f.lo), repr(f.hi), "1e9", "-0.1", "nan", "1e-3"])
    if f.kind == "bool":
        return st.sampled_from(["0", "1", "true", "false"])
    if f.kind == "choice":
        return st.sampled_from(f.choices)
    if name == "sel":
        grids = ["y", "x", "grad_x", "grad_x_padded", "grad_w", "w"]
        cells = st.integers(-2, 6)
        return st.builds(lambda g, r, c: f"{g}:{r}:{c}", st.sampled_from(grids), cells, cells)
    numbers = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10, 10)
    return st.lists(numbers, min_size=1, max_size=30).map(lambda v: ",".join(map(str, v)))


@st.composite
def queries(draw) -> dict[str, str]:
    names = draw(st.lists(st.sampled_from(sorted(URL_FIELDS)), min_size=1, max_size=4, unique=True))
    text = st.text(alphabet=string.printable + "٣３é∞−", max_size=30)
    return {n: draw(valid(n) | NASTY | text) for n in names}


def shown(at: AppTest) -> str:
    return "\n".join(m.value for kind in (at.warning, at.info, at.error, at.toast) for m in kind)


QUIZ = "pages/9_Quiz.py"  # the pages that read the page fields (PAGE_FIELDS): the quiz's …
CHAIN = "pages/5_Two_layers.py"  # … and the two layers' (CHAIN_FIELDS)
READER = {name: CHAIN if name in CHAIN_FIELDS else QUIZ for name in PAGE_FIELDS}
PYTHON_WORDS = re.compile(r"\b(True|False|None)\b|\[\]|\{\}|\\x[0-9a-f]{2}")


def in_words(message: str) -> bool:
    """No Python literal in what the app says (what a reader sent is quoted in a code span)."""
    said = re.sub(r"(`+).*?\1", "", message)
    return not PYTHON_WORDS.search(said)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(query=queries(), page=st.sampled_from([path for path, _, _ in PAGES]))
def test_any_query_on_any_page(query, page):
    """The page is opened as a link opens it: its own run first."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query)
    if page != "app.py":
        at.switch_page(page)
    at.run()
    assert not at.exception, (query, page, [e.value for e in at.exception])
    messages = shown(at)
    assert all(map(in_words, messages.splitlines())), messages
    for name, raw in query.items():
        if name in PAGE_FIELDS and page != READER[name]:
            continue  # only its page reads it
        if parse_field(name, raw)[1]:  # a value the link cannot use is named in a message
            assert f"{name}=" in messages, (name, raw, messages)


@st.composite
def chain_queries(draw) -> dict[str, str]:
    """Links to the two layers' page: its own fields (valid, nasty or any text) over a layer."""
    names = draw(st.lists(st.sampled_from(sorted(CHAIN_FIELDS)), min_size=1, max_size=4,
                          unique=True))  # fmt: skip
    text = st.text(alphabet=string.printable + "٣３é∞−", max_size=30)
    query = {n: draw(valid(n) | NASTY | text) for n in names}
    return query | draw(st.sampled_from([{}, {"preset": "recitation-s2"}, {"H": "3", "W": "3"}]))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=chain_queries())
def test_any_query_on_the_two_layers_page(query):
    """Layer 2's fields from any link: no exception, a value it cannot use named; a layer 2 that
    cannot work said in words."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query)
    at.switch_page(CHAIN)
    at.run()
    assert not at.exception, (query, [e.value for e in at.exception])
    messages = shown(at)
    assert all(map(in_words, messages.splitlines())), messages
    for name, raw in query.items():
        if parse_field(name, raw)[1]:
            assert f"{name}=" in messages, (name, raw, messages)

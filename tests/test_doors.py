"""One parser, two spellings: every door a value enters by, tried with the spellings a student
(or a hostile link) sends, each with one expected verdict.

A door is strict (a link's field, the command line, a Python argument) or typed (a grid's cell,
the η box, the typed target, the Quiz's answer: also '1,5', '−2' and spaces). Every door refuses
other digits, '_', NaN, values past its range and over-long text, and '2.0' for a whole number,
with one message that names the field, the value and the range (`convviz.engine.numbers`).
"""

from __future__ import annotations

from urllib.parse import quote

import numpy as np
import pytest

import convviz
from convviz.engine.numbers import ConvSpecError
from convviz.export import cli
from convviz.model.fields import (
    URL_FIELDS,
    VALUE_RANGE,
    decode_array,
    parse_field,
    typed_field,
    typed_number,
    typed_values,
)

DIGITS_400 = "1" * 400
CHARS_30K = "1," * 15_000  # a pasted run of 15,000 values
SPELLINGS = {
    "arabic 3": "٣",
    "underscore": "1_0",
    "2.0": "2.0",
    "spaces": " 2 ",
    "decimal comma": "1,5",
    "minus sign": "−2",
    "nan": "nan",
    "400 digits": DIGITS_400,
    "30,000 characters": CHARS_30K,
}
# What a Python caller passes for a spelling: the number it spells where Python has one
PYTHON_VALUE = {"2.0": 2.0, "nan": float("nan"), DIGITS_400: int(DIGITS_400)}


class Refused(str):
    """An expected refusal: the words its message holds (besides the field, value and range)."""


W, N, F = Refused("is not a whole number"), Refused("is not a number"), Refused("is not a finite")
LONG, BIG, SMALL = Refused("is too long"), Refused("is too large"), Refused("is too small")

# Each door: the field as its message names it, and the range it says (None: a Python argument's,
# checked below). The command line's doors refuse every spelling here: one line, exit code 2.
DOORS = {
    "link H": ("H", URL_FIELDS["H"].range),  # a link's whole number (every page, the exports)
    "link lr": ("lr", URL_FIELDS["lr"].range),  # a link's number
    "link t": ("t", VALUE_RANGE),  # a link's list (t, as x, w, g): commas separate its values
    "cli --workers": ("--workers", cli.WORKERS),
    "cli --link H": ("H", URL_FIELDS["H"].range),
    "cli --link kH2": ("kH2", URL_FIELDS["kH2"].range),  # a Two layers link's layer 2
    "python stride": ("stride", None),  # conv2d(…, stride=)
    "python lr": ("lr", None),  # sgd_step(…, lr)
    "python show": ("stride", None),  # convviz.show(…, stride=), the notebook's
    "typed grid": ("input x", VALUE_RANGE),  # a grid's cell (the Quiz's answer reads so too)
    "typed η": ("η", URL_FIELDS["lr"].range),  # the Learning page's η box
    "typed target": ("target", VALUE_RANGE),  # the typed target, of a 1×1 y here
}
# fmt: off
VERDICTS = {  # one column per door, in DOORS' order: link H, lr, t; command line --workers,
    # H, kH2; python stride, lr, show(stride=); typed grid, η, target
    #                     H     lr    t       wk    H     kH2   str  lr   show grid  η      target
    "arabic 3":          (W,    N,    N,      W,    W,    W,    W,   N,   W,   N,    N,     N),
    "underscore":        (W,    N,    N,      W,    W,    W,    W,   N,   W,   N,    N,     N),
    "2.0":               (W,    2.0,  [2.0],  W,    W,    W,    W,   2.0, W,   2.0,  2.0,   [2.0]),
    "spaces":            (W,    N,    N,      W,    W,    W,    W,   N,   W,   2.0,  2.0,   [2.0]),
    "decimal comma":     (W,    N,    [1, 5], W,    W,    W,    W,   N,   W,   1.5,  1.5,   [1.5]),
    "minus sign":        (W,    N,    N,      W,    W,    W,    W,   N,   W,   -2.0, SMALL, [-2.0]),
    "nan":               (F,    F,    F,      F,    F,    F,    W,   F,   W,   F,    F,     F),
    "400 digits":        (LONG, LONG, LONG,   LONG, LONG, LONG, BIG, BIG, BIG, LONG, LONG,  LONG),
    "30,000 characters": (LONG, LONG, LONG,   LONG, LONG, LONG, W,   N,   W,   LONG, LONG,  LONG),
}
# fmt: on


def _link_list(text: str) -> list[float]:
    value, problem = parse_field("t", text)
    if problem:
        raise ConvSpecError(problem)
    return decode_array(value, (len(value.split(",")),), "t").tolist()


def _cli(args: list[str], capsys, tmp_path) -> str:
    """The command line's verdict: its one line on stderr (exit 2), or 'exit 0'."""
    try:
        code = cli.main([*args, "--formats", "py", "--quiet", "--out", str(tmp_path / "out")])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    if code == 0:
        return "exit 0"
    assert code == 2 and err.count("\n") == 1, (code, err)
    raise ConvSpecError(err)


X, W = np.ones((1, 1, 4, 4)), np.ones((1, 1, 2, 2))


def enter(door: str, text: str, capsys, tmp_path):
    """The value `text` becomes at `door`, or ConvSpecError with the door's message."""
    py = PYTHON_VALUE.get(text, text)
    link = f"?preset=recitation-s2&{{}}={quote(text)}"
    calls = {
        "link H": lambda: _unpack(parse_field("H", text)),
        "link lr": lambda: _unpack(parse_field("lr", text)),
        "link t": lambda: _link_list(text),
        "cli --workers": lambda: _cli(["--preset", "d2l", "--workers", text], capsys, tmp_path),
        "cli --link H": lambda: _cli(["--link", link.format("H")], capsys, tmp_path),
        "cli --link kH2": lambda: _cli(["--link", link.format("kH2")], capsys, tmp_path),
        "python stride": lambda: convviz.conv2d(X, W, stride=py).shape,
        "python lr": lambda: convviz.sgd_step(W, np.zeros(1), W, np.zeros(1), py)[0][0, 0, 0, 0],
        "python show": lambda: convviz.show("recitation-s2", stride=py).view.story.spec.stride,
        "typed grid": lambda: typed_number(text, "input x"),
        "typed η": lambda: typed_field("lr", text, "η"),
        "typed target": lambda: typed_values(text, (1, 1, 1, 1), "target").ravel().tolist(),
    }
    return calls[door]()


def _unpack(verdict):
    value, problem = verdict
    if problem:
        raise ConvSpecError(problem)
    return value


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_door_reads_every_spelling_as_the_table_says(door, spelling, capsys, tmp_path):
    text, (field, rng) = SPELLINGS[spelling], DOORS[door]
    want = VERDICTS[spelling][list(DOORS).index(door)]
    if not isinstance(want, Refused):
        got = enter(door, text, capsys, tmp_path)
        if door == "python lr":  # w − η·∂L/∂w of ones: 1 − η
            got = 1 - got
        assert got == want, (door, spelling, got)
        return
    with pytest.raises(ConvSpecError) as refused:
        enter(door, text, capsys, tmp_path)
    message = str(refused.value)
    assert want in message and field in message, message
    # the value, quoted (shortened) as the person or the program sent it
    sent = repr(PYTHON_VALUE.get(text, text)) if door.startswith("python") else text
    assert sent.strip()[:12] in message, message
    assert len(message) < 400, len(message)
    if rng is not None:  # the range it must lie in
        assert str(rng) in message, message


def test_the_table_has_a_verdict_for_every_door():
    assert (
        all(len(row) == len(DOORS) for row in VERDICTS.values())
        and VERDICTS.keys() == SPELLINGS.keys()
    )


@pytest.mark.parametrize("door", ["python stride", "python lr"])
def test_a_python_door_says_its_range(door, capsys, tmp_path):
    with pytest.raises(ConvSpecError) as refused:
        enter(door, "٣", capsys, tmp_path)
    said = "a whole number in 1…1000000" if "stride" in door else "a number above 0, up to 1000"
    assert said in str(refused.value)


def test_the_hostile_python_arguments_of_the_public_api_raise_conv_spec_error():
    """Strings, floats for ints, huge sizes and bad padding words reach no NumPy traceback."""
    g = np.ones((1, 1, 3, 3))
    calls = [
        lambda: convviz.conv2d(X, W, stride="2"),
        lambda: convviz.conv2d(X, W, padding=1.0),
        lambda: convviz.conv2d(X, W, padding=10**9),
        lambda: convviz.conv2d(X, W, padding=(100_000, 100_000)),  # a 298 GiB padded input
        lambda: convviz.conv2d(X, W, padding="Same"),
        lambda: convviz.conv2d(X, W, padding=" valid"),
        lambda: convviz.conv2d(X, W, padding_mode=np.array(["zeros"])),
        lambda: convviz.conv2d(X, W, dilation=np.float64(1.0)),
        lambda: convviz.conv2d_input((1, 1, 4.0, 4), W, g),
        lambda: convviz.conv2d_input((1, 1, 10**6, 10**6), W, np.ones((1, 1, 1, 1)), stride=10**6),
        lambda: convviz.conv2d_weight(X, (1, 1, "2", 2), g),
        lambda: convviz.conv2d_weight(X, "2x2", g),
        lambda: convviz.conv2d(X, W, stride=None),
        lambda: convviz.train(convviz.ConvSpec.create(X.shape, W.shape), X, W, None, g, 0.1, 2.0),
    ]
    for call in calls:
        with pytest.raises(ConvSpecError) as refused:
            call()
        assert isinstance(refused.value, ValueError) and len(str(refused.value)) < 400


@pytest.mark.parametrize(
    ("typed", "shape", "values"),
    [
        ("1,2,3,4", (4,), [1, 2, 3, 4]),
        ("1, −2; 3\n4", (4,), [1, -2, 3, 4]),
        ("1,5 2,5", (2,), [1.5, 2.5]),  # only a decimal comma gives two values
        ("1,5", (2,), [1, 5]),  # two values: the commas separate them
        ("1,5", (1,), [1.5]),
        (" +7 ", (1,), [7]),
    ],
)
def test_a_typed_list_reads_its_commas_as_its_count_asks(typed, shape, values):
    assert typed_values(typed, shape, "target").tolist() == values


def test_a_typed_list_of_the_wrong_count_says_so():
    with pytest.raises(ConvSpecError, match="has 5 values but its shape 2×2 needs 4"):
        typed_values("1,5 2,5 3", (2, 2), "target")  # neither reading gives 4 values

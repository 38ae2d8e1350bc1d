"""Bad input: each class of mistake raises ConvSpecError (a ValueError) naming it and a fix."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from quick import examples

from convviz import ConvSpec, ConvSpecError, conv2d, conv2d_input, conv2d_weight

X = np.ones((1, 1, 5, 5))
W = np.ones((1, 1, 3, 3))
G = np.ones((1, 1, 3, 3))  # grad_out of X ⋆ W, valid, stride 1


def spec(input_shape=(1, 1, 5, 5), weight_shape=(1, 1, 3, 3), **kw):
    return ConvSpec.create(input_shape, weight_shape, **kw)


def with_value(shape, index, value):
    a = np.ones(shape)
    a[index] = value
    return a


# Each row: the call, then fragments that must all appear in the message.
BAD_INPUT = [
    # --- sizes -----------------------------------------------------------------------------------
    pytest.param(
        lambda: spec((1, 1, 0, 5)), ["input size H", "`0` is too small", "in 1…"], id="size 0"
    ),
    pytest.param(
        lambda: conv2d_input((1, 1, 5, -2), W, G),
        ["input size W", "`-2` is too small", "in 1…"],
        id="negative size",
    ),
    pytest.param(
        lambda: conv2d_weight(X, (0, 1, 3, 3), G),
        ["kernel size C_out", "too small", "in 1…"],
        id="zero filters",
    ),
    pytest.param(
        lambda: conv2d(np.ones((1, 1, 0, 5)), W),
        ["input size H", "too small", "in 1…"],
        id="empty array",
    ),
    pytest.param(
        lambda: spec((1, 1, 2.5, 5)), ["input size H", "whole number", "2.5"], id="fractional size"
    ),
    pytest.param(lambda: spec((1, 1, "5", 5)), ["whole number", "'5'"], id="size as text"),
    # --- stride and dilation ---------------------------------------------------------------
    pytest.param(lambda: spec(stride=0), ["stride", "`0` is too small", "in 1…"], id="stride 0"),
    pytest.param(
        lambda: spec(stride=(1, 0)), ["stride (cols)", "too small", "in 1…"], id="stride cols 0"
    ),
    pytest.param(lambda: spec(stride=1.5), ["stride", "whole number", "1.5"], id="stride 1.5"),
    pytest.param(lambda: spec(stride=True), ["stride", "whole number"], id="stride bool"),
    pytest.param(lambda: spec(stride=(1, 2, 3)), ["stride", "(rows, cols) pair"], id="stride 3"),
    pytest.param(
        lambda: spec(dilation=0), ["dilation", "`0` is too small", "in 1…"], id="dilation 0"
    ),
    pytest.param(
        lambda: spec(dilation=(-1, 1)), ["dilation (rows)", "too small", "in 1…"], id="dilation -1"
    ),
    # --- padding ---------------------------------------------------------------------------------
    pytest.param(
        lambda: spec(padding=-1), ["padding", "`-1` is too small", "in 0…"], id="padding -1"
    ),
    pytest.param(
        lambda: spec(padding=((0, -1), (0, 0))),
        ["padding bottom", "too small", "in 0…"],
        id="bottom -1",
    ),
    pytest.param(
        lambda: spec(padding=(1, -2)), ["padding (cols)", "too small", "in 0…"], id="cols -2"
    ),
    pytest.param(
        lambda: spec(padding=((0, 1, 2), (0, 0))), ["side pair", "two numbers"], id="side of 3"
    ),
    pytest.param(
        lambda: spec(padding="half"), ["'half'", "not known", "valid, same, full"], id="word"
    ),
    pytest.param(
        lambda: conv2d(X, W, padding_mode="constant"),
        ["'constant'", "not known", "zeros, reflect, replicate, circular"],
        id="mode numpy name",
    ),
    pytest.param(
        lambda: spec(padding=1, padding_mode="mirror"), ["'mirror'", "not known"], id="mode word"
    ),
    # --- the kernel must fit the padded input ----------------------------------------------------
    pytest.param(
        lambda: spec((1, 1, 7, 7), (1, 1, 5, 5), dilation=2),
        [
            "the 5×5 kernel with dilation 2 spans 9 rows",
            "padded input has only 7",
            "pad 2 more rows (1 above, 1 below)",
        ],
        id="dilated kernel too tall",
    ),
    pytest.param(
        lambda: conv2d(np.ones((1, 1, 3, 3)), np.ones((1, 1, 7, 7)), padding=1),
        ["spans 7 rows", "only 5", "pad 2 more rows (1 above, 1 below)"],
        id="kernel wider than padded input",
    ),
    pytest.param(
        lambda: spec((1, 1, 5, 1), (1, 1, 1, 4)),
        [
            "the 1×4 kernel with dilation 1 spans 4 columns",
            "only 1",
            "pad 3 more columns (2 left, 1 right)",
        ],
        id="kernel too wide",
    ),
    # --- channels and ranks ----------------------------------------------------------------------
    pytest.param(
        lambda: conv2d(np.ones((1, 3, 5, 5)), np.ones((2, 2, 3, 3))),
        ["input has 3 channels", "kernel expects 2", "(C_out, 3, kH, kW)"],
        id="channel mismatch",
    ),
    pytest.param(
        lambda: conv2d_input((1, 3, 5, 5), np.ones((2, 2, 3, 3)), np.ones((1, 2, 3, 3))),
        ["input has 3 channels", "kernel expects 2"],
        id="channel mismatch, input grad",
    ),
    pytest.param(
        lambda: conv2d(np.ones((1, 5, 5)), W),
        ["input x", "4 dimensions", "(1, 5, 5)"],
        id="x rank 3",
    ),
    pytest.param(lambda: conv2d(X, np.ones((3, 3))), ["kernel w", "4 dimensions"], id="w rank 2"),
    pytest.param(
        lambda: conv2d_input((5, 5), W, G),
        ["input", "4 dimensions", "N, C, H, W"],
        id="input_shape of 2",
    ),
    pytest.param(
        lambda: conv2d_weight(X, (3, 3), G),
        ["kernel", "4 dimensions", "C_out, C_in, kH, kW"],
        id="weight_shape of 2",
    ),
    pytest.param(
        lambda: conv2d_input(X.shape, W, np.ones((3, 3))),
        ["grad_out", "4 dimensions"],
        id="grad_out rank 2",
    ),
    pytest.param(lambda: conv2d(X, W, np.ones((1, 1))), ["bias", "1 dimension"], id="bias rank 2"),
    # --- values ----------------------------------------------------------------------------------
    pytest.param(
        lambda: conv2d(with_value(X.shape, (0, 0, 2, 2), np.nan), W),
        ["input x", "NaN or infinity"],
        id="NaN in x",
    ),
    pytest.param(
        lambda: conv2d(X, with_value(W.shape, (0, 0, 0, 0), np.inf)),
        ["kernel w", "NaN or infinity"],
        id="inf in w",
    ),
    pytest.param(
        lambda: conv2d_weight(X, W.shape, with_value(G.shape, (0, 0, 1, 1), -np.inf)),
        ["grad_out", "NaN or infinity"],
        id="-inf in grad_out",
    ),
    pytest.param(
        lambda: conv2d(X, W, np.array([np.nan])), ["bias", "NaN or infinity"], id="NaN in bias"
    ),
    pytest.param(
        lambda: conv2d(np.full((1, 1, 5, 5), "a"), W), ["input x", "hold numbers"], id="text"
    ),
    pytest.param(
        lambda: conv2d(X, np.full((1, 1, 3, 3), None)),
        ["kernel w", "hold numbers", "object"],
        id="None cells",
    ),
    pytest.param(
        lambda: conv2d(X, W.astype(complex)),
        ["kernel w", "hold numbers", "complex"],
        id="complex",
    ),
    pytest.param(
        lambda: conv2d([[[[1, 2], [3]]]], W), ["input x", "not a rectangular array"], id="ragged"
    ),
    # --- padding modes need enough input ---------------------------------------------------------
    pytest.param(
        lambda: spec((1, 1, 3, 5), padding=3, padding_mode="reflect"),
        ["reflect padding of 3 rows", "it has 3", "at most 2", "'replicate'"],
        id="reflect as wide as input",
    ),
    pytest.param(
        lambda: conv2d(
            np.ones((1, 1, 5, 2)),
            np.ones((1, 1, 1, 1)),
            padding=((0, 0), (0, 2)),
            padding_mode="reflect",
        ),
        ["reflect padding of 2 columns", "it has 2", "at most 1"],
        id="reflect columns",
    ),
    pytest.param(
        lambda: spec((1, 1, 3, 3), padding=4, padding_mode="circular"),
        ["circular padding of 4 rows", "whole input of 3", "at most 3", "'zeros'"],
        id="circular wider than input",
    ),
    # --- gradients and bias of the wrong shape ---------------------------------------------------
    pytest.param(
        lambda: conv2d_input(X.shape, W, np.ones((1, 1, 2, 2))),
        ["grad_out", "shape (1, 1, 3, 3)", "got (1, 1, 2, 2)"],
        id="grad_out spatial, input grad",
    ),
    pytest.param(
        lambda: conv2d_weight(X, W.shape, np.ones((1, 2, 3, 3))),
        ["grad_out", "shape (1, 1, 3, 3)", "got (1, 2, 3, 3)"],
        id="grad_out channels, weight grad",
    ),
    pytest.param(
        lambda: conv2d_weight(X, W.shape, np.ones((2, 1, 3, 3))),
        ["grad_out", "got (2, 1, 3, 3)"],
        id="grad_out batch",
    ),
    pytest.param(
        lambda: conv2d(X, np.ones((2, 1, 3, 3)), np.ones(3)),
        ["bias", "shape (2,)", "got (3,)"],
        id="bias length",
    ),
]


@pytest.mark.parametrize(("call", "fragments"), BAD_INPUT)
def test_bad_input_is_explained(call, fragments):
    with pytest.raises(ConvSpecError) as info:
        call()
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    missing = [f for f in fragments if f not in message]
    assert not missing, f"message {message!r} lacks {missing}"


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda: conv2d_input(5, W, G), id="input_shape an int"),
        pytest.param(lambda: conv2d_weight(X, 3, G), id="weight_shape an int"),
    ],
)
def test_shape_that_is_not_a_sequence(call):
    with pytest.raises(ConvSpecError, match="4 dimensions"):
        call()


# Just inside each limit: these must work, so the checks above are not over-eager.
EDGE_CASES = [
    pytest.param({"padding": 2, "padding_mode": "reflect"}, (1, 1, 3, 3), id="reflect = size-1"),
    pytest.param({"padding": 3, "padding_mode": "circular"}, (1, 1, 3, 3), id="circular = size"),
    pytest.param({"padding": 5, "padding_mode": "replicate"}, (1, 1, 3, 3), id="replicate any"),
    pytest.param({"dilation": 2}, (1, 1, 5, 5), id="span 5 = input 5"),
    pytest.param({"padding": ((0, 1), (1, 0)), "stride": 9}, (1, 1, 2, 2), id="span = padded"),
]


@pytest.mark.parametrize(("kwargs", "input_shape"), EDGE_CASES)
def test_edges_are_accepted(kwargs, input_shape):
    y = conv2d(np.ones(input_shape), W, **kwargs)
    assert y.shape[2:] == ConvSpec.create(input_shape, W.shape, **kwargs).out_size


@settings(max_examples=examples(100), deadline=None)
@given(
    st.integers(1, 6), st.integers(1, 5), st.integers(1, 4), st.integers(0, 2), st.integers(0, 2)
)
def test_span_error_advice_is_right(H, k, d, lo, hi):
    """'pad M more rows (a above, b below)' fits the kernel, and one row fewer would not."""
    span = d * (k - 1) + 1
    padding = ((lo, hi), (0, 0))
    if span <= H + lo + hi:
        ConvSpec.create((1, 1, H, 1), (1, 1, k, 1), dilation=(d, 1), padding=padding)
        return
    with pytest.raises(ConvSpecError) as info:
        ConvSpec.create((1, 1, H, 1), (1, 1, k, 1), dilation=(d, 1), padding=padding)
    message = str(info.value)
    assert f"spans {span} rows" in message and f"has only {H + lo + hi}" in message, message
    more = int(message.split(" or pad ")[1].split()[0])
    if more == 1:
        assert message.endswith("pad 1 more row (on either side)"), message
        above, below = 1, 0
    else:
        above, below = map(int, re.search(r"\((\d+) above, (\d+) below\)", message).groups())
    assert above + below == more and above - below in (0, 1)
    fixed = ((lo + above, hi + below), (0, 0))
    ConvSpec.create((1, 1, H, 1), (1, 1, k, 1), dilation=(d, 1), padding=fixed)
    too_little = ((lo + above - 1, hi + below), (0, 0))
    with pytest.raises(ConvSpecError):
        ConvSpec.create((1, 1, H, 1), (1, 1, k, 1), dilation=(d, 1), padding=too_little)

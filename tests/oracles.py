"""Shared oracles for the engine tests: one helper per oracle, plus the hypothesis case generator.

Oracles, each independent of the vectorized engine:
- `assert_array`: a hand-written or loop-computed expectation, with a message naming what broke;
- `numeric_grad`: central finite differences of a scalar function of one array;
- `inner`: the Frobenius inner product used by the adjoint identities;
- `conv_cases`: random valid convolutions (geometry, padding form and mode, channels, batch,
  values).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from convviz.engine.spec import PADDING_MODES, ConvSpec, ConvSpecError


def grid(rows) -> np.ndarray:
    """A hand-written 2D table as a float64 (1, 1, H, W) array (one image, one channel)."""
    a = np.asarray(rows, dtype=np.float64)
    return a.reshape(1, 1, *a.shape)


def assert_array(actual, expected, what: str, *, rtol=1e-10, atol=1e-10) -> None:
    """Shape, then values; the message says which quantity of which case broke."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def inner(a, b) -> float:
    """⟨a, b⟩ = Σ a·b over every element, in float64."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, f"inner product of shapes {a.shape} and {b.shape}"
    return float(np.sum(a * b))


def numeric_grad(f, a: np.ndarray, h: float = 1e-4) -> np.ndarray:
    """Central differences (f(a + h·e) - f(a - h·e)) / 2h for every element e of a (float64)."""
    a = np.array(a, dtype=np.float64)
    grad = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        old = a[idx]
        a[idx] = old + h
        up = f(a)
        a[idx] = old - h
        down = f(a)
        a[idx] = old
        grad[idx] = (up - down) / (2 * h)
    return grad


def read_only(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Copies that raise on any in-place write, so a mutating function fails loudly."""
    out = []
    for a in arrays:
        c = np.array(a)
        c.setflags(write=False)
        out.append(c)
    return tuple(out)


@dataclass
class Case:
    """One random convolution: arrays plus the keyword arguments every API function takes."""

    x: np.ndarray  # (N, C_in, H, W)
    w: np.ndarray  # (C_out, C_in, kH, kW)
    grad_out: np.ndarray  # (N, C_out, oH, oW)
    bias: np.ndarray  # (C_out,)
    kwargs: dict
    spec: ConvSpec = field(repr=False)
    seed: int = 0

    def __repr__(self) -> str:  # hypothesis prints this for a failing example
        return (
            f"Case(x{self.x.shape}, w{self.w.shape}, grad_out{self.grad_out.shape}, "
            f"{self.kwargs}, seed={self.seed})"
        )


PADDING_FORMS = ("valid", "same", "full", "int", "pair", "sides")


def _one_or_pair(a: int, b: int):
    """An int when both axes agree (exercises the short form), else a (rows, cols) pair."""
    return a if a == b else (a, b)


@st.composite
def conv_cases(draw, modes=PADDING_MODES, max_k=3, max_channels=3, max_batch=2) -> Case:
    """A valid convolution: stride 1–3, dilation 1–3, rectangular kernels and inputs, any padding
    form and mode, C_in/C_out 1–max_channels, batch 1–max_batch, remainders included."""
    form = draw(st.sampled_from(PADDING_FORMS))
    mode = draw(st.sampled_from(modes))
    k = [draw(st.integers(1, max_k)) for _ in range(2)]
    s = [draw(st.integers(1, 3)) for _ in range(2)]
    d = [draw(st.integers(1, 3)) for _ in range(2)]
    if form == "int":
        p = draw(st.integers(0, 2))
        sides, padding = [(p, p)] * 2, p
    elif form == "pair":
        ph, pw = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        sides, padding = [(ph, ph), (pw, pw)], (ph, pw)
    elif form == "sides":
        sides = [(draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(2)]
        padding = tuple(sides)
    else:
        sides, padding = [(0, 0)] * 2, form
    size = []
    for ax in range(2):
        span = d[ax] * (k[ax] - 1) + 1
        low = 1 if form in ("same", "full") else max(1, span - sum(sides[ax]))
        size.append(draw(st.integers(low, low + 4)))
    n, c_in, c_out = (
        draw(st.integers(1, max_batch)),
        draw(st.integers(1, max_channels)),
        draw(st.integers(1, max_channels)),
    )
    kwargs = {
        "stride": _one_or_pair(*s),
        "padding": padding,
        "dilation": _one_or_pair(*d),
        "padding_mode": mode,
    }
    try:
        spec = ConvSpec.create((n, c_in, *size), (c_out, c_in, *k), **kwargs)
    except ConvSpecError:
        assume(False)  # e.g. reflect padding as wide as the input: not a valid case
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    return Case(
        x=rng.standard_normal(spec.input_shape),
        w=rng.standard_normal(spec.weight_shape),
        grad_out=rng.standard_normal(spec.output_shape),
        bias=rng.standard_normal(spec.out_channels),
        kwargs=kwargs,
        spec=spec,
        seed=seed,
    )

"""The cached engine calls the pages make: one layer per set of values, sweeps per slice."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from convviz import reference
from convviz.stages import Layer, layer
from convviz.sweeps import (
    channel_contributions,
    forward_sweep,
    input_grad_sweep,
    scatter,
    weight_grad_sweep,
)
from convviz.ui.state import VALUE_FIELDS, decode_array, spec_of
from convviz.values import layer_values

MAX_SCATTER_STEPS = 1024
T = TypeVar("T")


def value_key(state: dict) -> tuple:
    return tuple(state[f] for f in VALUE_FIELDS)


@st.cache_data(max_entries=32, show_spinner=False)
def compute_layer(key: tuple) -> Layer:
    """Every stage of the layer for one set of values; raises ConvSpecError if impossible."""
    state = dict(zip(VALUE_FIELDS, key))
    spec = spec_of(state)
    edits = {
        name: decode_array(state[name], shape, label) if state[name] else None
        for name, shape, label in (
            ("x", spec.input_shape, "input"),
            ("w", spec.weight_shape, "kernel"),
            ("g", spec.output_shape, "grad_out"),
        )
    }
    x, w, g = layer_values(spec, state["seed"], state["kernel"], state["gout"], **edits)
    return layer(spec, x, w, g)


@st.cache_data(max_entries=64, show_spinner=False)
def sweeps_for(key: tuple, n: int, k: int, c: int) -> dict:
    """The slice's sweeps: forward (n, k), input gradient (n, c), weight gradient (k, c)."""
    lay = compute_layer(key)
    spec = lay.forward.spec
    # the scatter route keeps one padded grid per step: only for sizes a browser can animate
    small = spec.out_size[0] * spec.out_size[1] <= MAX_SCATTER_STEPS
    return {
        "forward": forward_sweep(lay.forward, n, k),
        "input_grad": input_grad_sweep(lay.input_grad, n, c),
        "weight_grad": weight_grad_sweep(lay.weight_grad, k, c),
        "scatter": scatter(lay.forward, lay.input_grad.grad_out, n, c) if small else None,
    }


@st.cache_data(max_entries=32, show_spinner=False)
def reference_check(key: tuple) -> str | None:
    """The engine compared live with the plain-loop reference; None when too large to loop."""
    lay = compute_layer(key)
    fw = lay.forward
    worst = reference.largest_difference(
        fw.spec,
        fw.x,
        fw.w,
        lay.input_grad.grad_out,
        fw.y,
        lay.input_grad.grad_x,
        lay.weight_grad.grad_w,
    )
    if worst is None:
        return None
    verdict = "agree with" if worst < 1e-9 else "DIFFER from"
    return (
        f"Independent check: y, ∂L/∂x and ∂L/∂w {verdict} a plain-loop reference of the "
        f"chain-rule sums (largest difference {worst:.1e})."
    )


@st.cache_data(max_entries=32, show_spinner=False)
def contributions_for(key: tuple, n: int, c: int):
    """Each filter's share of grad_x[n, c], shape (C_out, H, W)."""
    return channel_contributions(compute_layer(key).input_grad, n, c)


@st.cache_resource(max_entries=64, show_spinner=False)
def shared_view(key: tuple, _build: Callable[[], T]) -> T:
    """What `_build` makes for the view `key`, built once and shared by every session.

    For figures: most students open the same preset, and a figure costs more to build (plotly
    validates every property) than the layer does to compute. Callers only read the result.
    """
    return _build()

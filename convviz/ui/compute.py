"""The cached engine calls the pages make: one layer per set of values, sweeps per slice.

Everything here is computed once per key and shared by every session of the server process, in
one cache bounded in bytes (`CACHE_MB`), not only in entries: a lecture hall on one preset shares
one copy, and a student at the largest sizes cannot fill the server's memory. Only what a page
draws is computed: a layer's three stages are computed when a page first reads them, a sweep
keeps its per-step sums but computes a step's products only for the steps a figure shows.
Cached values are shared, so their arrays are made read-only.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import TypeVar

import numpy as np

from convviz.engine import _threads, reference
from convviz.engine.arrays import (
    ForwardArrays,
    InputGradArrays,
    Layer,
    WeightGradArrays,
    forward_arrays,
    input_grad_arrays,
    weight_grad_arrays,
)
from convviz.engine.formulas import (
    Formula,
    forward_formula,
    grid_words,
    input_grad_formula,
    weight_grad_formula,
)
from convviz.engine.spec import ConvSpec
from convviz.engine.sweeps import (
    Scatter,
    Sweep,
    filter_shares,
    forward_sweep,
    input_grad_sweep,
    scatter,
    sweep,
    weight_grad_sweep,
)
from convviz.model.fields import VALUE_FIELDS
from convviz.model.state import values_of
from convviz.render.plotly.adapter import Figure, parts

T = TypeVar("T")
# per server process: with 512 MB a process peaked at ~0.9 GB over 20 of the largest layers
# (scripts/memory.py), within the README's ~1 GB a process; 768 peaked at 1.1 GB
CACHE_MB = int(os.environ.get("CONVVIZ_CACHE_MB", "512"))
_threads.pin_blas_to_one_thread()  # sessions compute at once: see convviz/engine/_threads.py
MAX_SCATTER_STEPS = 1024
MAX_SCATTER_BYTES = 64 << 20  # the scatter route keeps one padded grid per step


_PLAIN = frozenset((str, int, float, bool, bytes, type(None)))
_NUMBERS = (int, float, bool)


def nbytes(obj, seen: set | None = None) -> int:
    """Roughly the memory `obj` holds: arrays (each buffer once), strings, containers, figures.
    Each object is counted once; the plain ones (a figure's dicts, lists and scalars: most of
    what a cache holds) without a call each."""
    seen = set() if seen is None else seen
    total, todo = 0, [obj]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        kind = type(obj)
        if kind in _PLAIN:
            total += sys.getsizeof(obj)
        elif kind is dict:
            total += sys.getsizeof(obj)
            todo += obj.keys()
            todo += obj.values()
        elif (kind is list or kind is tuple) and not (obj and type(obj[0]) is list):
            total += _sequence(obj, todo)
        else:
            total += _other(obj, seen)
    return total


def _sequence(obj: list | tuple, todo: list) -> int:
    """A list or tuple's own size, its numbers and texts counted in place; the rest left to do."""
    size = sys.getsizeof(obj)
    if obj and type(obj[0]) in _NUMBERS:
        return size + 32 * len(obj)  # a figure's numbers: not walked one by one
    if obj and type(obj[0]) is str:  # a figure's texts
        return size + sum(map(sys.getsizeof, obj))
    todo += obj
    return size


def _other(obj, seen: set) -> int:
    """What `nbytes` does not count in place: arrays, formulas, rows of cells, objects."""
    if isinstance(obj, np.ndarray):
        owner = obj
        while isinstance(owner.base, np.ndarray):  # a view: count the buffer it looks into
            owner = owner.base
        if owner is not obj and id(owner) in seen:
            return 0
        seen.add(id(owner))
        if owner.dtype == object:  # a grid of sentences: its strings too
            return owner.nbytes + 112 + sum(map(sys.getsizeof, owner.ravel().tolist()))
        return owner.nbytes + 112
    if isinstance(obj, Formula):  # walking its terms one by one is slow
        return obj.nbytes
    if isinstance(obj, (str, bytes, bytearray, int, float, bool, type(None), np.generic)):
        return sys.getsizeof(obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(nbytes(k, seen) + nbytes(v, seen) for k, v in obj.items())
    if isinstance(obj, list) and obj and all(type(v) is list for v in obj):  # cells' customdata
        return sys.getsizeof(obj) + len(obj) * nbytes(obj[0], seen)  # rows alike: one for all
    if isinstance(obj, (list, tuple)) and obj and type(obj[0]) in _NUMBERS:
        return sys.getsizeof(obj) + 32 * len(obj)
    if isinstance(obj, (list, tuple)) and obj and type(obj[0]) is str:
        return sys.getsizeof(obj) + sum(map(sys.getsizeof, obj))
    if isinstance(obj, (list, tuple, set, frozenset)):
        return sys.getsizeof(obj) + sum(nbytes(v, seen) for v in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sys.getsizeof(obj) + sum(
            nbytes(getattr(obj, f.name, None), seen) for f in dataclasses.fields(obj)
        )
    if isinstance(obj, Figure):  # its traces, layout and frames, twice: a shared figure
        # also keeps the copy Streamlit is sent (controls.converted), made later
        return sys.getsizeof(obj) + 2 * sum(nbytes(p, seen) for p in parts(obj))
    if hasattr(obj, "__dict__"):
        return sys.getsizeof(obj) + nbytes(vars(obj), seen)
    return sys.getsizeof(obj)


def _read_only(obj) -> None:
    """Make the arrays of a cached value read-only: sessions share it, none may change it."""
    if isinstance(obj, np.ndarray):
        obj.flags.writeable = False
    elif isinstance(obj, Formula):  # frozen terms of floats: nothing to lock, much to walk
        return
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            _read_only(getattr(obj, f.name))
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _read_only(v)


class ByteCache:
    """A least-recently-used cache shared by the process's sessions, bounded in bytes.

    One computation per key at a time: a class opening the same link at once computes it once.
    A value larger than the whole budget is returned without being kept.
    """

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.used = 0
        self._entries: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._making: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """The value cached under `key`, made by `make()` (once) when missing."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key][0]
            making = self._making.setdefault(key, threading.Lock())
        with making:
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    return self._entries[key][0]
            try:
                value = make()
                self._put(key, value)  # kept before the key is free: no one makes it twice
            finally:
                with self._lock:
                    self._making.pop(key, None)
            return value

    def _put(self, key: Hashable, value) -> None:
        size = nbytes(value)
        with self._lock:
            if size > self.max_bytes:
                return
            self._entries[key] = (value, size)
            self.used += size
            while self.used > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.used -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.used = 0

    def __len__(self) -> int:
        return len(self._entries)

    def values(self) -> list:
        """What the cache holds now."""
        with self._lock:
            return [value for value, _ in self._entries.values()]


CACHE = ByteCache(CACHE_MB << 20)


def _cached(kind: str):
    """Decorator: the function's result cached in CACHE under (kind, *args)."""

    def wrap(fn):
        def cached(*args):
            def make():
                value = fn(*args)
                _read_only(value)
                return value

            return CACHE.get((kind, *args), make)

        cached.__doc__, cached.__name__, cached.__wrapped__ = fn.__doc__, fn.__name__, fn
        return cached

    return wrap


def value_key(state: dict) -> tuple:
    return tuple(state[f] for f in VALUE_FIELDS)


@_cached("values")
def layer_inputs(key: tuple) -> tuple[ConvSpec, np.ndarray, np.ndarray, np.ndarray]:
    """(spec, x, w, grad_out) of a set of values; raises ConvSpecError if impossible."""
    return values_of(dict(zip(VALUE_FIELDS, key)))


@_cached("forward")
def _forward(key: tuple) -> ForwardArrays:
    spec, x, w, _ = layer_inputs(key)
    return forward_arrays(spec, x, w)


@_cached("input_grad")
def _input_grad(key: tuple) -> InputGradArrays:
    spec, _, w, g = layer_inputs(key)
    return input_grad_arrays(spec, w, g)


@_cached("weight_grad")
def _weight_grad(key: tuple) -> WeightGradArrays:
    spec, x, _, g = layer_inputs(key)
    return weight_grad_arrays(spec, x, g)


class LazyLayer(Layer):
    """A Layer whose stages are computed when first read (each cached on its own)."""

    def __init__(self, key: tuple):  # no dataclass __init__: the fields are properties
        object.__setattr__(self, "key", key)

    forward = property(lambda self: _forward(self.key))
    input_grad = property(lambda self: _input_grad(self.key))
    weight_grad = property(lambda self: _weight_grad(self.key))


def compute_layer(key: tuple) -> Layer:
    """Every stage of the layer for one set of values; raises ConvSpecError if impossible.

    The values are checked now; each stage is computed when a page first reads it.
    """
    layer_inputs(key)
    return LazyLayer(key)


class LazyProducts:
    """A sweep's products (T, C, kh, kw), computed for the steps indexed, never held whole.

    products[t] = operand[:, rows[t]][:, :, cols[t]] · kernel, the product `sweep` computes.
    """

    def __init__(self, operand: np.ndarray, kernel: np.ndarray, rows, cols):
        self.operand, self.kernel, self.rows, self.cols = operand, kernel, rows, cols
        self.shape = (len(rows), *kernel.shape)
        self.dtype = np.result_type(operand, kernel)
        self.ndim = 4

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        t = np.arange(self.shape[0])[index[0]]  # the steps asked for: int, slice or array
        rows, cols = self.rows[t], self.cols[t]  # (..., kh), (..., kw)
        win = self.operand[:, rows[..., :, None], cols[..., None, :]]  # (C, ..., kh, kw)
        products = np.moveaxis(win, 0, np.ndim(t)) * self.kernel  # (..., C, kh, kw)
        return products[(slice(None),) * np.ndim(t) + index[1:]]

    def __array__(self, dtype=None, copy=None):
        whole = self[:]
        return whole if dtype is None else whole.astype(dtype)


def lean_sweep(
    operand: np.ndarray, kernel: np.ndarray, stride, dilation, offset: float = 0.0
) -> Sweep:
    """`sweep(...)` with the same steps, partial sums and sums, but products made on demand.

    One channel at a time: each channel's partial sums are the engine's own (same products,
    same order of addition), and at most one channel's products exist at once.
    """
    partials, first = [], None
    for c in range(kernel.shape[0]):  # one channel's products at a time, dropped once summed
        one = sweep(operand[c : c + 1], kernel[c : c + 1], stride, dilation)
        partials.append(one.partial[:, 0])
        first = first or dataclasses.replace(one, products=None, partial=None, sums=None)
    partial = np.stack(partials).T  # (T, C), laid out as sweep's
    return dataclasses.replace(
        first,
        operand=operand,
        kernel=kernel,
        products=LazyProducts(operand, kernel, first.rows, first.cols),
        partial=partial,
        sums=partial.sum(axis=1) + offset,
        offset=offset,
    )


@_cached("forward_sweep")
def forward_sweep_of(key: tuple, n: int, k: int) -> Sweep:
    """`sweeps.forward_sweep` with lean products; its result is y[n, k]."""
    return forward_sweep(_forward(key), n, k, build=lean_sweep)


@_cached("input_grad_sweep")
def input_grad_sweep_of(key: tuple, n: int, c: int) -> Sweep:
    """`sweeps.input_grad_sweep` with lean products; its result is grad_x_padded[n, c]."""
    return input_grad_sweep(_input_grad(key), n, c, build=lean_sweep)


@_cached("weight_grad_sweep")
def weight_grad_sweep_of(key: tuple, k: int, c: int) -> Sweep:
    """`sweeps.weight_grad_sweep` with lean products; its result is grad_w[k, c]."""
    return weight_grad_sweep(_weight_grad(key), k, c, build=lean_sweep)


@_cached("scatter")
def scatter_of(key: tuple, n: int, c: int) -> Scatter | None:
    """The scatter route's stamps for (n, c); None where a browser could not animate them."""
    spec = layer_inputs(key)[0]
    steps = spec.out_size[0] * spec.out_size[1] * spec.out_channels  # one per filter and cell
    grid = spec.padded_size[0] * spec.padded_size[1] * 8
    if steps > MAX_SCATTER_STEPS or steps * grid > MAX_SCATTER_BYTES:
        return None
    return scatter(_forward(key), _input_grad(key).grad_out, n, c)


class Sweeps(Mapping):
    """The slice's sweeps by name, each computed when a page first asks for it:
    forward (n, k), input_grad (n, c), weight_grad (k, c), scatter (n, c)."""

    def __init__(self, key: tuple, n: int, k: int, c: int):
        self._make = {
            "forward": lambda: forward_sweep_of(key, n, k),
            "input_grad": lambda: input_grad_sweep_of(key, n, c),
            "weight_grad": lambda: weight_grad_sweep_of(key, k, c),
            "scatter": lambda: scatter_of(key, n, c),
        }

    def __getitem__(self, name: str):
        return self._make[name]()

    def __iter__(self) -> Iterator[str]:
        return iter(self._make)

    def __len__(self) -> int:
        return len(self._make)


def sweeps_for(key: tuple, n: int, k: int, c: int) -> Mapping:
    """The slice's sweeps: forward (n, k), input gradient (n, c), weight gradient (k, c)."""
    return Sweeps(key, n, k, c)


@_cached("reference_check")
def reference_check(key: tuple) -> str | None:
    """The engine compared live with the plain-loop reference; None when too large to loop."""
    spec, x, w, g = layer_inputs(key)
    fw, ig, wg = _forward(key), _input_grad(key), _weight_grad(key)
    worst = reference.largest_difference(spec, x, w, g, fw.y, ig.grad_x, wg.grad_w)
    if worst is None:
        return None
    verdict = "agree with" if worst < 1e-9 else "DIFFER from"
    return (
        f"Independent check: y, ∂L/∂x and ∂L/∂w {verdict} a plain-loop reference of the "
        f"chain-rule sums (largest difference {worst:.1e})."
    )


@_cached("contributions")
def contributions_for(key: tuple, n: int, c: int) -> np.ndarray:
    """Each filter's share of grad_x[n, c], shape (C_out, H, W).

    Their sum over k is grad_x[n, c]: the Q&A's ∂E/∂X[c] = Σ_k full(∂E/∂O[k], rot180 F[k, c]).
    """
    return filter_shares(input_grad_sweep_of(key, n, c), layer_inputs(key)[0])


@_cached("forward_formula")
def forward_formula_of(key: tuple, n: int, k: int, i: int, j: int) -> Formula:
    """`formulas.forward_formula` of y[n, k, i, j], built once per layer and cell."""
    return forward_formula(_forward(key), n, k, i, j)


@_cached("input_grad_formula")
def input_grad_formula_of(
    key: tuple, n: int, c: int, row: int, col: int, padded: bool = False
) -> Formula:
    """`formulas.input_grad_formula` of ∂L/∂x[n, c, row, col] (or of ∂L/∂x̃ with padded)."""
    return input_grad_formula(_input_grad(key), n, c, row, col, padded)


@_cached("weight_grad_formula")
def weight_grad_formula_of(key: tuple, k: int, c: int, a: int, b: int) -> Formula:
    """`formulas.weight_grad_formula` of ∂L/∂w[k, c, a, b]: N·oH·oW terms, built once (a big
    layer's ∂L/∂w cell has up to ~200k of them, ~2 s to build)."""
    return weight_grad_formula(_weight_grad(key), k, c, a, b)


@_cached("words")
def words_of(key: tuple, kind: str, n: int, k: int, c: int, most: int) -> np.ndarray | None:
    """`formulas.grid_words` of the layer's grid `kind` in slice (n, k, c), made once."""
    return grid_words(compute_layer(key), kind, n, k, c, most)


def formula_at(key: tuple, cell: tuple[str, int, int], n: int, k: int, c: int) -> Formula | None:
    """The formula of a cell of y, ∂L/∂x or ∂L/∂w in slice (n, k, c); None for an operand's
    cell (x, w, ∂L/∂y hold values, not sums). `cell` is inside its grid (the pages check)."""
    name, r, q = cell
    if name == "y":
        return forward_formula_of(key, n, k, r, q)
    if name == "grad_x":
        return input_grad_formula_of(key, n, c, r, q)
    if name == "grad_w":
        return weight_grad_formula_of(key, k, c, r, q)
    return None


def shared_view(key: Hashable, _build: Callable[[], T]) -> T:
    """What `_build` makes for the view `key`, built once and shared by every session.

    For figures: most students open the same preset, and a figure costs more to build (plotly
    validates every property) than the layer does to compute. Callers only read the result.
    """
    return CACHE.get(("view", key), _build)

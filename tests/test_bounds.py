"""Bounded work and memory per rerun: the shared cache is bounded in bytes, only what a page
draws is computed, and a layer beyond the work budget is refused with the reason."""

from __future__ import annotations

import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest

from convviz.engine.formulas import forward_formula, input_grad_formula, weight_grad_formula
from convviz.engine.spec import ConvSpecError
from convviz.engine.sweeps import forward_sweep, sweep
from convviz.model.fields import DEFAULTS
from convviz.model.state import MAX_MACS, from_query, macs, spec_of
from convviz.ui import compute
from convviz.ui.compute import ByteCache, compute_layer, lean_sweep, nbytes, value_key

MB = 1 << 20


def test_the_cache_is_bounded_in_bytes_and_drops_the_least_recent():
    cache = ByteCache(10 * MB)
    for i in range(4):
        cache.get(i, lambda: np.zeros(3 * MB // 8))  # 3 MB each
    assert len(cache) == 3 and cache.used <= 10 * MB
    cache.get(1, lambda: pytest.fail("1 is cached"))  # 1 is now the most recent
    cache.get(4, lambda: np.zeros(3 * MB // 8))
    assert cache.get(2, lambda: "made again") == "made again"  # 2 was the least recent
    assert isinstance(cache.get(1, lambda: "made again"), np.ndarray)


def test_a_value_larger_than_the_budget_is_returned_not_kept():
    cache = ByteCache(1 * MB)
    assert cache.get("big", lambda: np.zeros(MB)).size == MB
    assert len(cache) == 0 and cache.used == 0


def test_one_computation_per_key_when_sessions_ask_at_once():
    cache, calls = ByteCache(10 * MB), []
    entered, release = threading.Event(), threading.Event()

    def make():
        calls.append(1)
        entered.set()
        release.wait(30)  # the others ask while it is being made (or just after: kept by then)
        return np.ones(10)

    threads = [threading.Thread(target=cache.get, args=("k", make)) for _ in range(8)]
    threads[0].start()
    assert entered.wait(30)
    for t in threads[1:]:
        t.start()
    release.set()
    for t in threads:
        t.join()
    assert len(calls) == 1


def test_nbytes_counts_a_buffer_once_however_many_views_hold_it():
    a = np.zeros((100, 1000))
    assert a.nbytes <= nbytes([a, a[1:], a.T, a[::2]]) < a.nbytes + 4096
    assert nbytes({"x": np.zeros(10), "y": "text"}) > 80


@pytest.mark.parametrize(
    "C, H, W, kh, kw, stride, dilation",
    [
        (3, 9, 8, 3, 2, (1, 2), (2, 1)),
        (5, 20, 20, 3, 3, (2, 2), (1, 1)),
        (4, 30, 31, 9, 9, (1, 1), (1, 2)),  # over 64 taps: the engine's broadcast branch
        (2, 12, 12, 1, 1, (3, 3), (1, 1)),
    ],
)
def test_a_lean_sweep_is_the_engines_sweep_to_the_last_bit(C, H, W, kh, kw, stride, dilation):
    rng = np.random.default_rng(0)
    op, k = rng.standard_normal((C, H, W)), rng.standard_normal((C, kh, kw))
    full, lean = sweep(op, k, stride, dilation, 0.5), lean_sweep(op, k, stride, dilation, 0.5)
    for field in ("targets", "rows", "cols", "partial", "sums"):
        assert np.array_equal(getattr(full, field), getattr(lean, field)), field
    assert lean.products.shape == full.products.shape and lean.out_size == full.out_size
    steps = np.array([0, 3, full.steps - 1])
    for index in ((steps, 1), (2, 0), (steps[:1], 1), 2, (slice(1, 4), slice(None), 0)):
        assert np.array_equal(full.products[index], lean.products[index]), index
    assert np.array_equal(full.products, np.asarray(lean.products))


def big_state(**fields) -> dict:
    base = dict(DEFAULTS, preset="custom", x="", w="", g="", sh=1, sw=1, pad="explicit")
    return base | fields


BIG = dict(H=96, W=96, kH=3, kW=3, cin=8, cout=8, batch=4, pt=1, pb=1, pl=1, pr=1)


def test_a_sweep_holds_its_sums_not_every_product():
    key = value_key(big_state(**(BIG | {"cin": 16, "H": 80, "W": 80})))
    fw = compute_layer(key).forward
    tracemalloc.start()
    lean = compute.forward_sweep_of(key, 1, 2)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    engine = forward_sweep(fw, 1, 2)
    assert np.array_equal(lean.sums, engine.sums)
    own = nbytes(lean) - nbytes((lean.operand, lean.kernel))  # the layer holds those
    assert own < engine.products.nbytes / 4
    assert peak < engine.products.nbytes / 2


def test_a_layer_computes_only_the_stages_a_page_reads():
    key = value_key(big_state(**BIG, seed=4242))
    lay = compute_layer(key)
    assert not any(k[0] in ("forward", "input_grad", "weight_grad") and k[1] == key for k in keys())
    assert lay.forward.y.shape == (4, 8, 96, 96)
    stages = {k[0] for k in keys() if k[1:] == (key,)}
    assert {"forward"} <= stages and not {"input_grad", "weight_grad"} & stages


def keys():
    with compute.CACHE._lock:
        return list(compute.CACHE._entries)


def test_cached_arrays_are_read_only():
    lay = compute_layer(value_key(big_state(**BIG, seed=7)))
    with pytest.raises(ValueError, match="read-only"):
        lay.forward.y[0, 0, 0, 0] = 1.0


def test_the_maxima_together_are_refused_with_the_reason():
    state = big_state(H=128, W=128, kH=11, kW=11, cin=16, cout=16, batch=8)
    state.update(pt=16, pb=16, pl=16, pr=16)
    with pytest.raises(ConvSpecError) as exc:
        spec_of(state)
    for words in ("multiply-adds per pass", "batch 8", "C_in 16", "11×11", "lower the"):
        assert words in str(exc.value)
    query = {k: str(v) for k, v in state.items() if k in ("H", "W", "kH", "kW", "cin", "cout")}
    state, _ = from_query(query | {"batch": "8", "sh": "1"})
    with pytest.raises(ConvSpecError):
        spec_of(state)


@pytest.mark.parametrize(
    "fields",
    [
        dict(H=128, W=128),
        dict(H=128, W=128, kH=11, kW=11, pt=16, pb=16, pl=16, pr=16),
        dict(H=16, W=16, kH=11, kW=11),
        dict(cin=16, cout=16),
        dict(batch=8),
        dict(pt=16, pb=16, pl=16, pr=16),
        dict(H=64, W=64, kH=3, kW=3, cin=16, cout=16, batch=8),
        dict(H=128, W=128, kH=3, kW=3, cin=4, cout=16, batch=8),
    ],
    ids=[
        "128x128",
        "128x128-k11-pad16",
        "k11",
        "channels16",
        "batch8",
        "pad16",
        "64-all",
        "128-cin4",
    ],
)
def test_each_maximum_alone_is_computed(fields):
    spec = spec_of(big_state(**fields))
    assert macs(spec) <= MAX_MACS


def test_a_weight_gradient_with_a_big_dy_is_computed_through_the_kernel_taps():
    """128×128 with 16 input channels and a 3×3 kernel was refused (the stage slid ∂L/∂y's
    126×126 cells as a kernel, a Python step per cell); through the 9 taps it is a GEMM."""
    state = big_state(H=128, W=128, kH=3, kW=3, cin=16, cout=16, batch=1, pt=0, pb=0, pl=0, pr=0)
    spec = spec_of(state)
    assert macs(spec) <= MAX_MACS
    assert compute_layer(value_key(state)).weight_grad.grad_w.shape == (16, 16, 3, 3)


def test_a_cells_formula_is_built_once_and_is_the_engines():
    key = value_key(big_state(H=12, W=12, kH=3, kW=3, cin=2, cout=2, batch=2, seed=31))
    lay = compute_layer(key)
    cached = compute.weight_grad_formula_of(key, 1, 0, 2, 1)
    assert compute.weight_grad_formula_of(key, 1, 0, 2, 1) is cached
    assert cached == weight_grad_formula(lay.weight_grad, 1, 0, 2, 1) and cached.adds_up()
    assert compute.forward_formula_of(key, 1, 1, 3, 4) == forward_formula(lay.forward, 1, 1, 3, 4)
    fresh = input_grad_formula(lay.input_grad, 0, 1, 0, 0, True)
    assert compute.input_grad_formula_of(key, 0, 1, 0, 0, True) == fresh
    assert nbytes(fresh) >= 330 * len(fresh.terms)  # counted (measured ~330 B a term), not walked
    # a ∂L/∂w cell keeps its terms as arrays: ~60 B a term
    assert cached.terms.nbytes <= nbytes(cached) <= 100 * len(cached.terms) + 1000


def test_a_server_process_collects_its_garbage_as_a_cache_server_should():
    """A page's first import (convviz.ui.boot) freezes what the imports made and sets the
    collector's thresholds: a full collection walked every cached figure's containers (~0.18 s
    holding every session, a dozen a minute under a class's load). In a process of its own."""
    code = (
        "import gc, convviz.ui.boot as boot\n"
        "assert gc.get_threshold() == boot.GC_THRESHOLDS, gc.get_threshold()\n"
        "assert gc.get_freeze_count() > 100_000, gc.get_freeze_count()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_nbytes_sizes_a_figures_cells_by_their_first_row():
    """A figure's customdata (one [key, row, col] list a cell) is sized from its first row: a
    matrix view's 279 kB of cells took 1.4 ms to walk, 0.2 ms now; the rows are alike."""
    cells = [["y", r, c] for r in range(40) for c in range(40)]
    walked = sys.getsizeof(cells) + sum(nbytes(row) for row in cells)
    assert abs(nbytes(cells) - walked) <= 0.05 * walked

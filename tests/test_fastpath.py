"""The fast path's blocks and threads against the plain-loop reference.

The API tests use small layers, which the engine runs as one block on one thread. Here the block
size and the threading threshold are forced down, so every route (many blocks, samples split
across threads, channels split across threads for a single sample) meets the loop oracle.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from oracles import assert_array, conv_cases
from quick import examples
from threadpoolctl import threadpool_info

from convviz import conv2d, conv2d_input, conv2d_weight
from convviz.engine import _threads, fastpath
from convviz.engine.reference import conv2d_input_loop, conv2d_loop, conv2d_weight_loop


@contextmanager
def fast_path(block_bytes: float, thread_flops: float, workers: int = fastpath.WORKERS):
    """Run the engine with another block size, threading threshold and thread count (threads
    split the work only once BLAS is pinned to one thread, as the app's server does)."""
    if thread_flops == 0:
        _threads.pin_blas_to_one_thread()
    saved = fastpath._BLOCK_BYTES, fastpath._THREAD_FLOPS, fastpath.WORKERS
    fastpath._BLOCK_BYTES, fastpath._THREAD_FLOPS, fastpath.WORKERS = (
        block_bytes,
        thread_flops,
        workers,
    )
    try:
        yield
    finally:
        fastpath._BLOCK_BYTES, fastpath._THREAD_FLOPS, fastpath.WORKERS = saved


ROUTES = [
    pytest.param(fastpath._BLOCK_BYTES, fastpath._THREAD_FLOPS, 2, id="defaults"),
    pytest.param(1, 0, 2, id="one output row per block, two threads"),
    pytest.param(2_000, 0, 2, id="a few rows per block, two threads"),
    pytest.param(1 << 30, 0, 2, id="one block, two threads"),
    pytest.param(1, 0, 3, id="one output row per block, three threads"),
    pytest.param(2_000, 0, 4, id="a few rows per block, four threads"),
]


@pytest.mark.parametrize(("block_bytes", "thread_flops", "workers"), ROUTES)
@given(case=conv_cases(max_channels=4, max_batch=3))
@settings(max_examples=examples(30), deadline=None)
def test_every_route_matches_the_loops(block_bytes, thread_flops, workers, case):
    x, w, g, kw = case.x, case.w, case.grad_out, case.kwargs
    with fast_path(block_bytes, thread_flops, workers):
        y = conv2d(x, w, **kw)
        grad_x = conv2d_input(x.shape, w, g, **kw)
        grad_w = conv2d_weight(x, w.shape, g, **kw)
    assert_array(y, conv2d_loop(x, w, **kw), f"forward {case}")
    assert_array(grad_x, conv2d_input_loop(x.shape, w, g, **kw), f"grad_x {case}")
    assert_array(grad_w, conv2d_weight_loop(x, w.shape, g, **kw), f"grad_w {case}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("block_bytes", "thread_flops", "workers"), ROUTES[:2])
def test_dtype_is_kept(dtype, block_bytes, thread_flops, workers):
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((3, 2, 9, 8)).astype(dtype), rng.standard_normal((4, 2, 3, 2))
    w = w.astype(dtype)
    kw = {"stride": (2, 1), "padding": 1, "padding_mode": "reflect"}
    with fast_path(block_bytes, thread_flops, workers):
        y = conv2d(x, w, **kw)
        g = np.ones_like(y)
        results = [y, conv2d_input(x.shape, w, g, **kw), conv2d_weight(x, w.shape, g, **kw)]
    assert [r.dtype for r in results] == [dtype] * 3
    tol = 1e-4 if dtype == np.float32 else 1e-10
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    assert_array(results[0], conv2d_loop(x64, w64, **kw), "forward", rtol=tol, atol=tol)
    assert_array(results[1], conv2d_input_loop(x.shape, w64, g, **kw), "grad_x", rtol=tol, atol=tol)
    assert_array(
        results[2], conv2d_weight_loop(x64, w.shape, g, **kw), "grad_w", rtol=tol, atol=tol
    )


def test_split_runs_every_part_in_order_and_never_changes_blas_while_a_call_runs():
    """BLAS is pinned once per process (the app's server) or never; a call changes nothing."""
    before = [i["num_threads"] for i in threadpool_info()]
    assert _threads.run_split(lambda part: sum(part), [[1, 2], [3, 4, 5]], split=True) == [3, 12]
    assert _threads.run_split(lambda part: len(part), [[1, 2]], split=True) == [2]
    parts = [[1], [2, 3], [4, 5, 6], [7]]  # more parts than two: each on a thread, in order
    assert _threads.run_split(lambda part: sum(part), parts, split=True) == [1, 5, 15, 7]
    assert [i["num_threads"] for i in threadpool_info()] == before

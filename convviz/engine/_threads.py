"""How the engine runs the blocks of a large convolution, and the server's one BLAS setting.

OpenBLAS spreads each GEMM over all cores, while NumPy's copies and additions run on one. Two
ways to use both cores, and the one that is safe in a server:
- a library user (a notebook, `make bench`): each GEMM on OpenBLAS's own threads, the blocks in
  order on the calling thread; nothing process-wide is touched;
- the app's server, where sessions compute at once: `pin_blas_to_one_thread()` is called once
  when the app starts (by `convviz.ui.compute`) and never undone, so no call changes what
  another call is using (an earlier version lowered OpenBLAS's thread count for the duration of
  each call: under concurrent sessions a race on process state). Then large work is split over
  WORKERS Python threads (the cores this process may use, at most 4), each with a one-thread
  GEMM; and OpenBLAS's threads, which spin while they wait, never fight the sessions for the
  cores (on a loaded 2-core machine a multi-threaded GEMM ran up to 30× slower than a one-thread
  one).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor


def _cores() -> int:
    """The cores this process may run on (its affinity where the OS says, else the count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


WORKERS = max(1, min(4, _cores()))  # beyond ~4, the copies and additions are memory bound

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_limits = None  # threadpoolctl's handle, kept for the life of the process once pinned


def pin_blas_to_one_thread() -> None:
    """BLAS on one thread for the rest of the process's life; large work then splits WORKERS ways.

    Call once, before any session computes (the app does so when it imports its compute layer).
    """
    global _limits
    from threadpoolctl import threadpool_limits

    with _lock:
        if _limits is None:
            _limits = threadpool_limits(limits=1, user_api="blas")


def run_split(work, parts: list, split: bool) -> list:
    """[work(part) for part in parts]; the parts run on threads of their own (the first on the
    calling thread) when `split` and BLAS is pinned to one thread, else in order here.

    parts : up to WORKERS lists of blocks of similar cost (or one list, run as is).
    """
    if not split or len(parts) < 2 or _limits is None:
        return [work(p) for p in parts]
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="convviz")
    others = [_pool.submit(work, p) for p in parts[1:]]
    return [work(parts[0]), *(o.result() for o in others)]

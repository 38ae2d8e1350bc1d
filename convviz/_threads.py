"""Two worker threads with one BLAS thread each, for the few large convolutions.

NumPy's copies and additions run on one core while OpenBLAS spreads each GEMM over all cores.
Splitting the blocks of a large convolution over two Python threads keeps both cores busy with
both, but only if each GEMM stays on its calling thread: two callers sharing OpenBLAS's worker
threads spin-wait on each other. So, for the duration of a split call, OpenBLAS is limited to
one thread through its own `openblas_set_num_threads` (what threadpoolctl does), found among the
process's loaded libraries. Without OpenBLAS the work runs unsplit on the calling thread.
"""

from __future__ import annotations

import ctypes
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

_SYMBOLS = ("scipy_openblas", "openblas")  # numpy's wheels prefix the names; system builds do not
_lock = threading.Lock()
_users = 0  # split calls in flight; the first one in limits OpenBLAS, the last one out restores
_saved = 0
_pool: ThreadPoolExecutor | None = None


def _load_openblas():
    """(get, set) of the loaded OpenBLAS thread count, or None without OpenBLAS (or /proc)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return None
    for path in sorted(paths, key=lambda p: "numpy" not in p):  # numpy's own copy first
        try:
            lib = ctypes.CDLL(path)  # already loaded by numpy: this only returns its handle
        except OSError:  # e.g. a mapping whose file was replaced
            continue
        for prefix in _SYMBOLS:
            for suffix in ("64_", ""):
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    put.argtypes, put.restype, get.restype = [ctypes.c_int], None, ctypes.c_int
                    return get, put
    return None


_openblas = _load_openblas()


@contextmanager
def _one_blas_thread():
    """OpenBLAS on one thread while any split call runs."""
    global _users, _saved
    get, put = _openblas
    with _lock:
        if _users == 0:
            _saved = get()
            put(1)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                put(_saved)


def run_split(work, parts: list, split: bool) -> list:
    """[work(part) for part in parts]; the parts run on two threads when `split` and it helps.

    parts : two lists of blocks of similar cost (or one list, run as is).
    """
    if not split or len(parts) < 2 or _openblas is None:
        return [work(p) for p in parts]
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="convviz")
    with _one_blas_thread():
        other = _pool.submit(work, parts[1])
        return [work(parts[0]), other.result()]

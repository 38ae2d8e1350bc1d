"""Server time of a page's first load and of a rerun after a control change, and the plotly payload.

Run: .venv/bin/python scripts/rerun_bench.py            (small layers, every page)
     .venv/bin/python scripts/rerun_bench.py --big      (the heaviest legal settings, the pages
                                                          that draw a layer's stages)
AppTest runs the whole script, figures and their JSON included, without a browser. The shared
cache is emptied before each first load, so "first" is a cold view (the first student on a
setting); "rerun" is the median after a seed change, a new set of values each time. Wall and CPU
seconds (CPU: every thread of this process). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: this checkout's convviz
from convviz.model.pages import PAGES as APP_PAGES  # noqa: E402
from convviz.ui import compute  # noqa: E402

APP = str(ROOT / "app.py")
PAGES = [path for path, _, _ in APP_PAGES]  # every page, as the sidebar lists them
CUSTOM = {"preset": "custom", "sh": "1", "sw": "1", "dh": "1", "dw": "1", "pad": "explicit"}
PAD16 = {"pt": "16", "pb": "16", "pl": "16", "pr": "16"}
# The heaviest settings the controls accept: the maxima together, each worst one alone, and the
# largest layers under the work limit (convviz/state.MAX_MACS).
BIG = {
    "maxima together": {"H": "128", "W": "128", "kH": "11", "kW": "11", "cin": "16"}
    | {"cout": "16", "batch": "8"}
    | PAD16,
    "128², 11×11, pad 16": {"H": "128", "W": "128", "kH": "11", "kW": "11"} | PAD16,
    "128², 3×3, C 16/16": {"H": "128", "W": "128", "kH": "3", "kW": "3", "cin": "16"}
    | {"cout": "16"},
    "128², 3×3, C_in 4, C_out 16, batch 8": {"H": "128", "W": "128", "kH": "3", "kW": "3"}
    | {"cin": "4", "cout": "16", "batch": "8"},
    "64², 3×3, C 16/16, batch 8": {"H": "64", "W": "64", "kH": "3", "kW": "3", "cin": "16"}
    | {"cout": "16", "batch": "8"},
    "128², 11×11, C 4/4, pad 16": {"H": "128", "W": "128", "kH": "11", "kW": "11", "cin": "4"}
    | {"cout": "4"}
    | PAD16,
}
BIG_PAGES = PAGES[:4]  # the pages that draw a whole layer's stages and sweeps


class Clock:
    """Wall and process-CPU seconds since start."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def measure(query: dict, page: str, repeats: int) -> tuple[tuple, tuple, float, str]:
    """((first wall, cpu), (median rerun wall, cpu), plotly payload MB, the first message)."""
    compute.CACHE.clear()
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params.update(query)
    clock = Clock()
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    first = clock.read()
    reruns = []
    for seed in range(1, repeats + 1):
        at.sidebar.number_input(key="ctl_seed").set_value(seed)
        clock = Clock()
        at.run()
        reruns.append(clock.read())
    if at.exception:
        raise RuntimeError(f"{page} {query}: {at.exception[0].value}")
    payload = sum(len(chart.proto.spec) for chart in at.get("plotly_chart"))
    said = [e.value for e in (*at.error, *at.warning)]
    median = tuple(statistics.median(r[i] for r in reruns) for i in (0, 1)) if reruns else (0, 0)
    return first, median, payload / 1e6, (said[0][:60] if said else "")


def report(cases: dict, pages: list, repeats: int) -> None:
    print(f"{'setting':38} {'page':28} {'first load':>17} {'rerun (median)':>17} {'payload':>8}")
    print(f"{'':38} {'':28} {'wall / CPU s':>17} {'wall / CPU s':>17} {'MB':>8}")
    for name, query in cases.items():
        for page in pages:
            try:
                first, rerun, mb, said = measure(query, page, repeats)
            except (KeyError, RuntimeError) as e:  # a page mid-edit, or a refused value
                print(f"{name:38} {page:28} failed: {str(e)[:80]}", flush=True)
                continue
            line = f"{name:38} {page:28} {first[0]:7.2f} / {first[1]:6.2f}  "
            line += f"{rerun[0]:7.2f} / {rerun[1]:6.2f}  {mb:7.2f}"
            print(line + (f"  [{said}]" if said else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--big", action="store_true", help="the heaviest legal settings")
    parser.add_argument("--case", action="append", help="only these --big settings (by name)")
    parser.add_argument("--page", action="append", help="only these pages (path)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    AppTest.from_file(APP, default_timeout=600).run()  # imports, outside the figures
    if args.big:
        cases = {k: CUSTOM | v for k, v in BIG.items() if not args.case or k in args.case}
        report(cases, args.page or BIG_PAGES, args.repeats)
    else:
        cases = {f"{s}×{s}": {"H": str(s), "W": str(s)} for s in (7, 16, 32)}
        report(cases, args.page or PAGES, args.repeats)


if __name__ == "__main__":
    main()

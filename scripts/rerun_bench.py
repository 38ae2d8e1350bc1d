"""Server time of one rerun after a control change, per page and size, and the plotly payload.

Run: .venv/bin/python scripts/rerun_bench.py   (AppTest: the whole script, figures and their
JSON included, without a browser). Prints medians; asserts nothing.
"""

import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: this checkout's convviz
from convviz.ui.controls import PAGES as APP_PAGES  # noqa: E402

APP = str(ROOT / "app.py")
PAGES = [path for path, _, _ in APP_PAGES]  # every page, as the sidebar lists them


def measure(size: int, page: str, repeats: int = 5) -> tuple[float, float]:
    """(median seconds of a rerun after a seed change, plotly payload in MB) for one page."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"H": str(size), "W": str(size)})
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    times = []
    for seed in range(1, repeats + 1):
        at.sidebar.number_input(key="w_seed").set_value(seed)
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
    if at.exception:
        raise RuntimeError(f"{page} at {size}×{size}: {at.exception[0].value}")
    payload = sum(len(chart.proto.spec) for chart in at.get("plotly_chart"))
    return statistics.median(times), payload / 1e6


def main() -> None:
    print(f"{'size':>7}  {'page':28}  {'rerun (median)':>14}  {'plotly payload':>14}")
    for size in (7, 16, 32):
        for page in PAGES:
            seconds, mb = measure(size, page)
            print(f"{size:>3}×{size:<3}  {page:28}  {seconds * 1e3:11.0f} ms  {mb:11.2f} MB")


if __name__ == "__main__":
    main()

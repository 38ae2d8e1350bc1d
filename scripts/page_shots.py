"""Screenshots of every page and every stage, in both modes and both projector sizes, for
looking at, and for comparing two versions of the app: artifacts/pages/TAG/.

    python scripts/page_shots.py --tag after                  # starts this checkout's app
    python scripts/page_shots.py --url http://127.0.0.1:8600 --tag before
    python scripts/page_shots.py --compare before after       # which shots changed, and by how much

Each shot is the viewport (what a projector shows) after the page has settled (tests/live.py):
PAGE-PRESET-MODE-WxH-stepN.png. --compare prints the share of pixels that differ per shot and
writes a side-by-side image of each changed pair (before | after) to artifacts/pages/diff/.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: this checkout's convviz
sys.path.insert(0, str(ROOT / "tests"))
from live import goto  # noqa: E402

from convviz.model.lecture import LECTURE  # noqa: E402
from convviz.model.pages import PAGES, url_path  # noqa: E402

OUT = ROOT / "artifacts" / "pages"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
SIZES = ((1280, 720), (1920, 1080))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve() -> tuple[subprocess.Popen, str]:
    """This checkout's app on a free loopback port, once it answers."""
    port = _free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.port", str(port),
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the app did not start")


def shots(url: str, tag: str, presets: list[str], pages: list[str]) -> None:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    out = OUT / tag
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for width, height in SIZES:
            for pres in (0, 1):
                if not pres and width > 1280:
                    continue  # a laptop's page: 1280 wide
                ctx = browser.new_context(viewport={"width": width, "height": height})
                page = ctx.new_page()
                for path in pages:
                    steps = max(1, len(LECTURE.on_page(path)))
                    for preset in presets:
                        for step in range(1, steps + 1):
                            query = f"preset={preset}&pres={pres}&step={step}&play=stills"
                            mode = "pres" if pres else "normal"
                            name = f"{Path(path).stem}-{preset}-{mode}-{width}x{height}-step{step}"
                            try:
                                goto(page, f"{url}/{url_path(path)}?{query}")
                            except PlaywrightError as exc:  # a busy machine: shot it as it is
                                print(f"{name}: not settled ({str(exc).splitlines()[0]})")
                                name += "-unsettled"
                            page.screenshot(path=str(out / f"{name}.png"))
                            print(out / f"{name}.png", flush=True)
                ctx.close()
        browser.close()


def compare(before: str, after: str, threshold: float = 0.002) -> None:
    """The share of pixels that differ in each pair of shots; a side by side of those over
    `threshold`."""
    import numpy as np
    from PIL import Image

    diff = OUT / "diff"
    diff.mkdir(parents=True, exist_ok=True)
    for b in sorted((OUT / before).glob("*.png")):
        a = OUT / after / b.name
        if not a.exists():
            print(f"{b.name}: missing in {after}")
            continue
        x, y = (np.asarray(Image.open(p).convert("RGB"), int) for p in (b, a))
        if x.shape != y.shape:
            print(f"{b.name}: sizes differ {x.shape} {y.shape}")
            continue
        share = float((np.abs(x - y).sum(axis=2) > 30).mean())
        if share > threshold:
            print(f"{b.name}: {share:.1%} of the pixels differ")
            Image.fromarray(np.concatenate([x, y], axis=1).astype(np.uint8)).save(diff / b.name)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--tag", default="now")
    p.add_argument("--url", help="a running app (default: start this checkout's)")
    p.add_argument("--presets", default="recitation-s2,classroom")
    p.add_argument("--pages", default="", help="page files, comma-separated (default: all)")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = p.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    pages = [s for s in args.pages.split(",") if s] or [path for path, _, _ in PAGES]
    proc, url = (None, args.url) if args.url else serve()
    try:
        shots(url, args.tag, args.presets.split(","), pages)
    finally:
        if proc is not None:
            os.killpg(proc.pid, signal.SIGTERM)


if __name__ == "__main__":
    main()

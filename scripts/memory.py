"""One server process's memory over 20 large layers: the figure the README plans a hall with.

Run: .venv/bin/python scripts/memory.py                 (the default cache, CONVVIZ_CACHE_MB)
     .venv/bin/python scripts/memory.py --cache-mb 384  (another budget)

Starts `streamlit run app.py` on 127.0.0.1 and opens, one after the other, 20 of the largest
legal layers (scripts/rerun_bench.py's big settings, each with its own seed, so none is cached
when it comes) on every page, as a student following a link and then the pages would, each in a
new session. After each layer: the process's resident memory (VmRSS) and its peak so far (VmHWM,
from /proc). A closed session stays in the process for server.disconnectedSessionTTL (120 s) in
case its browser reconnects: more layers in less time hold more. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]  # run as a script: this checkout's convviz
from load_class import Session  # noqa: E402
from load_measure import Server, tree  # noqa: E402
from rerun_bench import BIG, CUSTOM  # noqa: E402

from convviz.engine.spec import ConvSpecError  # noqa: E402
from convviz.model.state import from_query, spec_of  # noqa: E402

PAGES = (
    "",
    "Forward",
    "Input_gradient",
    "Weight_gradient",
    "Learning",
    "Two_layers",
    "Channels",
    "Matrix",
    "Checks",
    "Quiz",
)  # every page


def legal(query: dict) -> bool:
    try:
        spec_of(from_query(query)[0])
    except ConvSpecError:
        return False
    return True


def layers(count: int) -> list[tuple[str, dict]]:
    """`count` large layers: the legal big settings in turn, each time with a new seed."""
    big = [(name, CUSTOM | q) for name, q in BIG.items() if legal(CUSTOM | q)]
    return [(big[i % len(big)][0], big[i % len(big)][1] | {"seed": str(100 + i)})
            for i in range(count)]  # fmt: skip


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process and its children, in MB."""
    rss = hwm = 0
    for p in tree(pid):
        try:
            status = Path(f"/proc/{p}/status").read_text().splitlines()
        except OSError:
            continue
        fields = {line.split(":")[0]: line.split()[1] for line in status if line.startswith("Vm")}
        rss, hwm = rss + int(fields.get("VmRSS", 0)), hwm + int(fields.get("VmHWM", 0))
    return rss / 1024, hwm / 1024


async def walk(server: Server, args: argparse.Namespace) -> list[dict]:
    opts = argparse.Namespace(seed=0, mix="control", page="", pages=list(PAGES), query="")
    opts.timeout = args.timeout
    rows = []
    for i, (name, query) in enumerate(layers(args.layers)):
        opts.query = urlencode(query)
        session = Session(i, server.base, opts, None)
        start = time.perf_counter()
        await session.open()
        for page in PAGES:
            if page == "":
                await session.rerun(page_name="")
            else:
                await session.rerun(page_hash=session.pages[page])
        await session.ws.close()
        if session.errors:
            raise RuntimeError(f"{name}: {session.errors[:3]}")
        rss, hwm = memory_mb(server.proc.pid)
        rows.append({"layer": i + 1, "setting": name, "seconds": time.perf_counter() - start,
                     "rss_mb": rss, "peak_mb": hwm})  # fmt: skip
        print(f"{i + 1:3} {name:40} {rows[-1]['seconds']:6.1f} s  "
              f"RSS {rss:7.0f} MB  peak {hwm:7.0f} MB", flush=True)  # fmt: skip
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--layers", type=int, default=20, help="large layers to open (default 20)")
    ap.add_argument("--cache-mb", type=int, help="CONVVIZ_CACHE_MB (default: the app's own)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per page")
    args = ap.parse_args()
    if args.cache_mb is not None:
        os.environ["CONVVIZ_CACHE_MB"] = str(args.cache_mb)
    else:
        os.environ.pop("CONVVIZ_CACHE_MB", None)
    from convviz.ui.compute import CACHE_MB  # the default this checkout has

    budget = args.cache_mb if args.cache_mb is not None else CACHE_MB
    server = Server()
    try:
        server.wait_ready()
        rest = memory_mb(server.proc.pid)[0]
        print(f"cache {budget} MB; the process at rest: {rest:.0f} MB", flush=True)
        rows = asyncio.run(walk(server, args))
    finally:
        server.stop()
    peak = max(r["peak_mb"] for r in rows)
    print(f"peak RSS over {len(rows)} large layers, cache {budget} MB: {peak:.0f} MB "
          f"(at rest {rest:.0f} MB, after the last layer {rows[-1]['rss_mb']:.0f} MB)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Load test: N concurrent Streamlit sessions, a class exploring, against 127.0.0.1 only.

Run: .venv/bin/python scripts/load.py --sessions 50 --duration 60    (`make load`: 10, then 50)
     .venv/bin/python scripts/load.py --bare --sessions 50            the floor: a bare page
     .venv/bin/python scripts/load.py --through http://127.0.0.1:8080 --sessions 100
                                                  a running hall (deploy/hall.py) through nginx

Each session is one browser tab speaking Streamlit's websocket protocol (/_stcore/stream, the
protobufs that ship with streamlit): it loads the page's HTML (and so its nginx affinity
cookie), opens the websocket and runs the page with its query string; then, every --think
seconds, it does what a student does, by default a mix (`--mix class`): a new seed, another
stride, padding or kernel size, another preset, a click on a cell of a chart, a switch to
another page (of --pages). Each session keeps its own values: a leak is a run whose URL
(page_info_changed) or widget holds a value this session never had; a lost change, one whose URL
still holds what it had before (the app dropped the change). `--control LABEL` changes
that one control on --page instead (the old harness); `--bare` runs scripts/bare_page.py (one
number input, one plotly heatmap: what Streamlit itself costs per rerun) and changes its number.

Latency = BackMsg sent → script_finished. First load = the HTML's GET → the first run's end
(first chart: → its first plotly chart). `--arrive S` spreads the sessions' first loads over S
seconds (default: all at once). Through nginx, a session whose websocket closes (its process
died) reconnects as the browser does and rebuilds its view from its URL (a reconnect, counted;
checked for leaks like every run). Server CPU-seconds come from /proc: the server this script
started, or the processes of the hall's supervisord (--run-dir). Errors: exception elements, failed
runs, timeouts, closed sockets, tracebacks in the server's log. Bounded: at most 200 sessions,
600 s, 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import ipaddress
import json
import signal
import sys
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: this checkout's convviz
# a tab on the wire: load_wire.py; what each session does: load_class.py; the server under load,
# what is measured of it and the figures: load_measure.py
from load_class import CLASS_PAGES  # noqa: E402
from load_measure import Hall, Server, drive, report  # noqa: E402

LOOPBACK = ("127.0.0.1", "localhost")
# RFC 2544's benchmarking range: the addresses tests/netns.py gives the test hosts it makes, in
# network namespaces of their own (no route out of them)
TEST_HOSTS = ipaddress.ip_network("198.18.0.0/15")
MAX_SESSIONS, MAX_DURATION = 200, 600.0
HALL_RUN = ROOT / "deploy" / "run"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10, help="concurrent sessions (default 10)")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    ap.add_argument(
        "--think",
        type=float,
        nargs=2,
        default=(2.0, 6.0),
        metavar=("MIN", "MAX"),
        help="random pause before each change, seconds (default 2 6)",
    )
    ap.add_argument(
        "--mix",
        choices=("class", "control"),
        default="class",
        help="class: each session does a mix of what students do, on --pages (default);\n"
        "control: each changes --control on --page",
    )
    ap.add_argument(
        "--pages",
        type=lambda s: [p.strip("/") for p in s.split(",")],
        default=list(CLASS_PAGES),
        help="the pages (URL paths) the class opens and switches between\n"
        f"(default {','.join(CLASS_PAGES)}; '' is the Overview)",
    )
    ap.add_argument("--page", default="Forward", help="--mix control: the page (default Forward)")
    ap.add_argument("--control", help="the slider/number to change (implies --mix control)")
    ap.add_argument("--query", default="preset=recitation-s2", help="the page's query string")
    ap.add_argument(
        "--bare", action="store_true", help="the floor: scripts/bare_page.py, its number changed"
    )
    ap.add_argument(
        "--through",
        metavar="URL",
        help="drive a running hall (deploy/hall.py) at this address, e.g. http://127.0.0.1:8080,\n"
        "instead of a server of its own; 'nginx' means http://127.0.0.1:8080",
    )
    ap.add_argument(
        "--run-dir",
        type=Path,
        default=HALL_RUN,
        help=f"--through: the hall's run directory, for its processes' CPU and memory\n"
        f"(its supervisord's socket; default {HALL_RUN})",
    )
    ap.add_argument(
        "--arrive", type=float, default=0.0, help="spread the first loads over S seconds (0)"
    )
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds allowed per rerun")
    ap.add_argument("--seed", type=int, default=0, help="random seed of the think times/values")
    ap.add_argument(
        "--warmup", action="store_true", help="open the page once before the burst of sessions"
    )
    ap.add_argument("--events", type=Path, help="write every run as a JSON line to this file")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    ap.add_argument(
        "--ratio",
        action="store_true",
        help="the same load on the bare page (its own server) before and after, and the class's\n"
        "server CPU per rerun as a ratio to the bare page's (the mean of the two), all\n"
        "measured in this invocation",
    )
    args = ap.parse_args(argv)
    if not (1 <= args.sessions <= MAX_SESSIONS and 0 < args.duration <= MAX_DURATION):
        ap.error(f"--sessions must be 1..{MAX_SESSIONS}, --duration 0..{MAX_DURATION}")
    if not 0 <= args.think[0] <= args.think[1]:
        ap.error("--think needs 0 <= MIN <= MAX")
    if not 0 <= args.arrive <= MAX_DURATION:
        ap.error(f"--arrive must be 0..{MAX_DURATION}")
    if args.through == "nginx":
        args.through = "http://127.0.0.1:8080"
    if args.through and not allowed(urlsplit(args.through).hostname or ""):
        ap.error("--through: this harness sends load to 127.0.0.1 (or the test hosts) only")
    if args.ratio and args.bare:
        ap.error("--ratio compares the app's load with the bare page's: not with --bare")
    if args.bare:
        args.mix, args.control, args.page, args.query = "control", "Number", "", ""
    if args.control:
        args.mix = "control"
    args.control = args.control or "Stride"
    return args


def allowed(host: str) -> bool:
    if host in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host) in TEST_HOSTS
    except ValueError:
        return False


def measure(args: argparse.Namespace) -> dict:
    if args.through:
        server = Hall(args.through, args.run_dir)
    else:
        server = Server("scripts/bare_page.py" if args.bare else "app.py")
    events = open(args.events, "w") if args.events else None  # noqa: SIM115
    try:
        server.wait_ready()
        return asyncio.run(drive(server, args, events))
    finally:
        server.stop()
        if events is not None:
            events.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally below
    if not args.ratio:
        result = measure(args)
    else:  # the floor, measured before and after: the same sessions on the bare page
        bare = copy.copy(args)
        bare.through, bare.events, bare.bare = None, None, True
        bare.mix, bare.control, bare.page, bare.query = "control", "Number", "", ""
        before = measure(bare)
        result = measure(args)
        after = measure(bare)
        # the machine's speed drifts by ±10 % within minutes: the floor is the mean of the two
        floors = before["server_cpu_per_rerun_s"], after["server_cpu_per_rerun_s"]
        result["bare_server_cpu_per_rerun_s"] = sum(floors) / 2
        result["bare_before_s"], result["bare_after_s"] = floors
        result["bare_p95_s"] = max(before["p95_s"], after["p95_s"])
        result["bare_errors"] = before["errors"] + after["errors"]
        result["bare_load_avg_before"] = before["load_avg_before"]
        result["cpu_ratio_to_bare"] = (
            result["server_cpu_per_rerun_s"] / result["bare_server_cpu_per_rerun_s"]
        )
        result["errors"] += result["bare_errors"]
    print(json.dumps(result) if args.json else report(result))
    return 1 if result["errors"] or result["leaks"] or result["lost_changes"] else 0


if __name__ == "__main__":
    sys.exit(main())

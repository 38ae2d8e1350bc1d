"""Load test: N concurrent Streamlit sessions against a server this script starts on 127.0.0.1.

Run: .venv/bin/python scripts/load.py --sessions 10 --duration 60   (`make load`: 10, then 50).

Each session speaks Streamlit's websocket protocol (/_stcore/stream, the protobufs that ship
with streamlit) the way the browser does: it opens a page with a query string, then, after a
random think time, sets one sidebar control (found by its label) to a new value and sends a
rerun_script BackMsg, until --duration is over. Latency = BackMsg sent → script_finished.
A leak is a rerun whose echoed URL (page_info_changed) or widget value is not the value this
session set. Errors: exception elements, failed runs, timeouts, closed sockets, and
tracebacks in the server's log. Bounded: at most 200 sessions, 600 s, one server, 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
MAX_SESSIONS, MAX_DURATION = 200, 600.0
WS_OPTS = {"max_size": None, "ping_interval": None}  # no client pings: a busy server is data


def stream_url(port: int) -> str:
    return f"ws://{HOST}:{port}/_stcore/stream"


class Server:
    """`streamlit run app.py` on a free local port, in its own process group; always stopped."""

    def __init__(self) -> None:
        with socket.socket() as sock:
            sock.bind((HOST, 0))
            self.port = sock.getsockname()[1]
        fd, self.log = tempfile.mkstemp(prefix="convviz-load-", suffix=".log")
        cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
        cmd += ["--server.address", HOST, "--server.port", str(self.port)]
        cmd += ["--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=fd, stderr=subprocess.STDOUT, start_new_session=True
        )
        os.close(fd)

    def wait_ready(self, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"http://{HOST}:{self.port}/_stcore/health") as r:
                    if r.read() == b"ok":
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not start:\n{self.log_text()[-2000:]}")

    def log_text(self) -> str:
        return Path(self.log).read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
                try:
                    os.killpg(self.proc.pid, sig)
                    self.proc.wait(wait)
                    break
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    continue
        Path(self.log).unlink(missing_ok=True)


def tree(pid: int) -> list[int]:
    """The pid and its live descendants."""
    pids, i = [pid], 0
    while i < len(pids):
        for task in Path(f"/proc/{pids[i]}/task").glob("*"):
            with contextlib.suppress(OSError):
                pids += [int(c) for c in (task / "children").read_text().split()]
        i += 1
    return pids


def proc_stats(pid: int) -> tuple[int, float]:
    """(VmHWM in kB, user+system CPU seconds) of one process; zeros if it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0, 0.0
    hwm = next(
        (int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM")), 0
    )
    return hwm, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Session:
    """One browser tab: a websocket, the page's widgets by label, the values it set."""

    def __init__(self, idx: int, port: int, args: argparse.Namespace) -> None:
        self.idx, self.port, self.args = idx, port, args
        self.rng = random.Random(args.seed * 1000 + idx)
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.leaks: list[str] = []
        self.first_load: float | None = None
        self.page_hash = ""
        self.widgets: dict[str, tuple[str, object]] = {}  # label → (element type, proto)
        self.sent: dict[str, object] = {}  # widget id → WidgetState this session has set
        self.cache: dict[str, ForwardMsg] = {}  # hash → message, like the browser's cache

    async def rerun(self, ws, query: str, page_name: str = "") -> dict:
        """Send a rerun_script BackMsg; read until script_finished; return what came back."""
        msg = BackMsg()
        run = msg.rerun_script
        run.query_string, run.page_script_hash, run.page_name = query, self.page_hash, page_name
        run.widget_states.widgets.extend(self.sent.values())
        run.cached_message_hashes.extend(self.cache)
        seen: dict = {"query": None, "values": {}}
        start = time.perf_counter()
        await ws.send(msg.SerializeToString())
        async with asyncio.timeout(self.args.timeout):
            while True:
                fwd = ForwardMsg.FromString(await ws.recv())
                if fwd.HasField("ref_hash"):
                    fwd = self.cache[fwd.ref_hash]
                elif fwd.metadata.cacheable:
                    self.cache[fwd.hash] = fwd
                kind = fwd.WhichOneof("type")
                if kind == "navigation":
                    self.page_hash = fwd.navigation.page_script_hash
                elif kind == "page_info_changed":
                    seen["query"] = fwd.page_info_changed.query_string
                elif kind == "session_event" and fwd.session_event.HasField(
                    "script_compilation_exception"
                ):
                    self.errors.append("compile error")
                elif kind == "delta" and fwd.delta.HasField("new_element"):
                    self.element(fwd.delta.new_element, seen)
                elif kind == "script_finished":
                    if fwd.script_finished not in (0, 3):
                        self.errors.append(f"script_finished={fwd.script_finished}")
                    seen["latency"] = time.perf_counter() - start
                    return seen

    def element(self, element, seen: dict) -> None:
        kind = element.WhichOneof("type")
        proto = getattr(element, kind)
        if kind == "exception":
            self.errors.append(f"{proto.type}: {proto.message}"[:200])
        elif getattr(proto, "id", "") and getattr(proto, "label", ""):
            self.widgets[proto.label] = (kind, proto)
            if kind in ("slider", "number_input") and proto.set_value:
                seen["values"][proto.id] = list(proto.value) if kind == "slider" else [proto.value]

    def change(self, label: str) -> tuple[str, int]:
        """Set the control (found by its label) to a random other value in its range."""
        kind, proto = self.widgets[label]
        if kind not in ("slider", "number_input"):
            raise ValueError(f"control {label!r} is a {kind}; use a slider or number input")
        now = int(proto.value[0] if kind == "slider" else proto.value)
        value = self.rng.choice([v for v in range(int(proto.min), int(proto.max) + 1) if v != now])
        state = BackMsg().rerun_script.widget_states.widgets.add()
        state.id = proto.id
        if kind == "slider":
            state.double_array_value.data.append(value)
        else:
            state.int_value = value
        self.sent[state.id] = state
        return state.id, value

    def check(self, seen: dict, wid: str, value: int) -> None:
        """The value this session set must be the one echoed in its URL and widget."""
        key = wid.split("-", 2)[-1].removeprefix("w_")  # widget key w_<name> ↔ URL <name>
        query = parse_qs(seen["query"] or "").get(key, ["<none>"])[0]
        widget = seen["values"].get(wid, [value])
        if query != str(value) or [int(v) for v in widget] != [value]:
            self.leaks.append(f"set {key}={value}, got URL {query}, widget {widget}")

    async def run(self, loaded: asyncio.Barrier, go: asyncio.Event, window: dict) -> None:
        """Open the page, wait until every session has, then change the control until the end."""
        args, ws = self.args, None
        try:
            try:
                ws = await connect(stream_url(self.port), subprotocols=["streamlit"], **WS_OPTS)
                self.first_load = (await self.rerun(ws, args.query, args.page))["latency"]
                if args.control not in self.widgets:
                    raise LookupError(f"no control labelled {args.control!r} on {args.page}")
            finally:
                await loaded.wait()
                await go.wait()
            while True:
                think = self.rng.uniform(*args.think)
                if time.monotonic() + think >= window["deadline"]:
                    break
                await asyncio.sleep(think)
                wid, value = self.change(args.control)
                seen = await self.rerun(ws, args.query)
                self.latencies.append(seen["latency"])
                self.check(seen, wid, value)
        except Exception as exc:  # a timeout, a closed socket, a missing control: all errors
            self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
        finally:
            if ws is not None:
                await ws.close()


async def sample(pid: int, peaks: dict, stop: asyncio.Event) -> None:
    """Every 0.5 s: each server process's VmHWM (kept at its maximum) and the load average."""
    while True:
        for p in tree(pid):
            peaks[p] = max(peaks.get(p, 0), proc_stats(p)[0])
        peaks["load"] = max(peaks.get("load", 0.0), os.getloadavg()[0])
        if stop.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


async def drive(server: Server, args: argparse.Namespace) -> dict:
    """Warm up (optional), open every session at once, then the timed window; the figures."""
    if args.warmup:
        warm = Session(-1, server.port, args)
        async with connect(stream_url(server.port), subprotocols=["streamlit"], **WS_OPTS) as ws:
            await warm.rerun(ws, args.query, args.page)
    sessions = [Session(i, server.port, args) for i in range(args.sessions)]
    peaks: dict = {}
    stop, go, window = asyncio.Event(), asyncio.Event(), {}
    sampler = asyncio.create_task(sample(server.proc.pid, peaks, stop))
    load0 = os.getloadavg()[0]
    loaded = asyncio.Barrier(args.sessions + 1)
    runs = asyncio.gather(*(s.run(loaded, go, window) for s in sessions))
    await asyncio.wait_for(loaded.wait(), args.timeout + 10)  # every first load, all at once
    cpu0 = sum(proc_stats(p)[1] for p in tree(server.proc.pid))
    start = time.monotonic()
    window["deadline"] = start + args.duration
    go.set()
    await asyncio.wait_for(runs, args.duration + args.timeout + 10)
    wall = time.monotonic() - start
    cpu = sum(proc_stats(p)[1] for p in tree(server.proc.pid)) - cpu0
    stop.set()
    await sampler
    lat = sorted(x for s in sessions for x in s.latencies)
    firsts = sorted(s.first_load for s in sessions if s.first_load is not None) or [None]
    errors = [e for s in sessions for e in s.errors]
    errors += [f"server log: {x}" for x in server.log_text().splitlines() if "Traceback" in x]
    return {
        "sessions": args.sessions,
        "window_s": round(wall, 1),
        "reruns": len(lat),
        "fewest_reruns_per_session": min(len(s.latencies) for s in sessions),
        "p50_s": statistics.median(lat) if lat else None,
        "p95_s": lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else None,
        "max_s": lat[-1] if lat else None,
        "first_load_p50_s": firsts[len(firsts) // 2],
        "first_load_max_s": firsts[-1],
        "throughput_per_s": len(lat) / wall,
        "server_cpu_per_rerun_s": cpu / len(lat) if lat else None,
        "server_cpu_cores": cpu / wall,
        "peak_rss_mb": sum(v for k, v in peaks.items() if k != "load") / 1024,
        "load_avg_before": load0,
        "load_avg_peak": peaks["load"],
        "client_cpu_s": sum(resource.getrusage(resource.RUSAGE_SELF)[:2]),
        "errors": len(errors),
        "leaks": sum(len(s.leaks) for s in sessions),
        "error_samples": sorted(set(errors))[:5],
        "leak_samples": [x for s in sessions for x in s.leaks][:5],
    }


def report(r: dict) -> str:
    """One figure a line (names carry the unit: _s seconds, _mb megabytes)."""
    return "\n".join(f"{k:26} {round(v, 3) if isinstance(v, float) else v}" for k, v in r.items())


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
    ap.add_argument("--page", default="Forward", help="page's URL path (default Forward)")
    ap.add_argument("--query", default="preset=recitation-s2", help="the page's query string")
    ap.add_argument("--control", default="Stride", help="label of the slider/number to change")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds allowed per rerun")
    ap.add_argument("--seed", type=int, default=0, help="random seed of the think times/values")
    ap.add_argument(
        "--warmup", action="store_true", help="open the page once before the burst of sessions"
    )
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = ap.parse_args(argv)
    if not (1 <= args.sessions <= MAX_SESSIONS and 0 < args.duration <= MAX_DURATION):
        ap.error(f"--sessions must be 1..{MAX_SESSIONS}, --duration 0..{MAX_DURATION}")
    if not 0 <= args.think[0] <= args.think[1]:
        ap.error("--think needs 0 <= MIN <= MAX")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally below
    server = Server()
    try:
        server.wait_ready()
        result = asyncio.run(drive(server, args))
    finally:
        server.stop()
    print(json.dumps(result) if args.json else report(result))
    return 1 if result["errors"] or result["leaks"] else 0


if __name__ == "__main__":
    sys.exit(main())

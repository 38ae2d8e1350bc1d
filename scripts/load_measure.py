"""What scripts/load.py measures, and of what: the server under load (a `Server` of its own,
or a running `Hall` through nginx), its processes' CPU and peak memory from /proc, the timed
window the sessions (scripts/load_class.py) run in, and the figures it reports.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
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

from load_class import Session

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))
from hall_supervisord import RunDir, processes  # noqa: E402

HOST = "127.0.0.1"


class Server:
    """`streamlit run <script>` on a free local port, in its own process group; always stopped."""

    def __init__(self, script: str = "app.py") -> None:
        with socket.socket() as sock:
            sock.bind((HOST, 0))
            self.port = sock.getsockname()[1]
        fd, self.log = tempfile.mkstemp(prefix="convviz-load-", suffix=".log")
        cmd = [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true"]
        cmd += ["--server.address", HOST, "--server.port", str(self.port)]
        cmd += ["--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=fd, stderr=subprocess.STDOUT, start_new_session=True
        )
        os.close(fd)
        self.base = f"http://{HOST}:{self.port}"

    def wait_ready(self, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"{self.base}/_stcore/health") as r:
                    if r.read() == b"ok":
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not start:\n{self.log_text()[-2000:]}")

    def log_text(self) -> str:
        return Path(self.log).read_text(errors="replace")

    def pids(self) -> dict[str, list[int]]:
        return {"streamlit": [self.proc.pid], "nginx": []}

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


class Hall:
    """A hall that runs already (deploy/hall.py): its address, and its processes as its
    supervisord reports them (asked again at each sample: a restarted process has a new pid)."""

    def __init__(self, url: str, run_dir: Path) -> None:
        self.base, self.run = url.rstrip("/"), RunDir(run_dir)

    def wait_ready(self) -> None:
        with urllib.request.urlopen(f"{self.base}/_stcore/health", timeout=10) as r:
            if r.read() != b"ok":
                raise RuntimeError(f"{self.base} does not answer")

    def log_text(self) -> str:
        logs = sorted(self.run.path.glob("streamlit-*.log"))
        return "\n".join(p.read_text(errors="replace") for p in logs)

    def pids(self) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {"streamlit": [], "nginx": []}
        for p in processes(self.run):
            if p.role in found and p.pid:
                found[p.role].append(p.pid)
        return found

    def stop(self) -> None:
        pass


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


def cpu_of(server, role: str) -> dict[int, float]:
    """CPU seconds of each live process (and its children) of one role, by pid."""
    return {p: proc_stats(p)[1] for top in server.pids()[role] for p in tree(top)}


def spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two readings (a process gone since counts up to `before`)."""
    return sum(after.get(p, c) - c for p, c in before.items()) + sum(
        c for p, c in after.items() if p not in before
    )


def quantile(values: list[float], q: float) -> float | None:
    return values[min(len(values) - 1, int(q * len(values)))] if values else None


async def sample(server, peaks: dict, stop: asyncio.Event) -> None:
    """Every 0.5 s: each server process's VmHWM (kept at its maximum) and the load average."""
    while True:
        for top in server.pids()["streamlit"]:
            for p in tree(top):
                peaks[p] = max(peaks.get(p, 0), proc_stats(p)[0])
        peaks["load"] = max(peaks.get("load", 0.0), os.getloadavg()[0])
        if stop.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


def own_cpu() -> float:
    return sum(resource.getrusage(resource.RUSAGE_SELF)[:2])


async def drive(server, args: argparse.Namespace, events=None) -> dict:
    """Warm up (optional), open the sessions, then the timed window; the figures."""
    if args.warmup:
        warm = Session(-1, server.base, args, None)
        await warm.first()
        await warm.ws.close()
    sessions = [Session(i, server.base, args, events) for i in range(args.sessions)]
    peaks: dict = {}
    stop, go, window = asyncio.Event(), asyncio.Event(), {}
    sampler = asyncio.create_task(sample(server, peaks, stop))
    load0, client0 = os.getloadavg()[0], own_cpu()
    loaded = asyncio.Barrier(args.sessions + 1)
    runs = asyncio.gather(*(s.run(loaded, go, window) for s in sessions))
    await asyncio.wait_for(loaded.wait(), args.arrive + args.timeout + 10)  # every first load
    client1 = own_cpu()
    cpu0, nginx0 = cpu_of(server, "streamlit"), cpu_of(server, "nginx")
    start = time.monotonic()
    window["deadline"] = start + args.duration
    go.set()
    await asyncio.wait_for(runs, args.duration + args.timeout * 2 + 30)
    wall = time.monotonic() - start
    cpu = spent(cpu0, cpu_of(server, "streamlit"))
    nginx = spent(nginx0, cpu_of(server, "nginx"))
    client = own_cpu() - client1
    stop.set()
    await sampler
    lat = sorted(x for s in sessions for x in s.latencies)
    firsts = sorted(s.first_load for s in sessions if s.first_load is not None)
    charts = sorted(s.first_chart for s in sessions if s.first_chart is not None)
    by_action: dict[str, list[float]] = {}
    for s in sessions:
        for action, latency in zip(s.actions, s.latencies):
            by_action.setdefault(action, []).append(latency)
    errors = [e for s in sessions for e in s.errors]
    errors += [f"server log: {x}" for x in server.log_text().splitlines() if "Traceback" in x]
    return {
        "sessions": args.sessions,
        "mode": "bare" if args.bare else args.mix,
        "through": args.through or "its own server",
        "window_s": round(wall, 1),
        "reruns": len(lat),
        "fewest_reruns_per_session": min(len(s.latencies) for s in sessions),
        "p50_s": statistics.median(lat) if lat else None,
        "p95_s": quantile(lat, 0.95),
        "p99_s": quantile(lat, 0.99),
        "max_s": lat[-1] if lat else None,
        "first_load_p50_s": quantile(firsts, 0.5),
        "first_load_p95_s": quantile(firsts, 0.95),
        "first_load_max_s": firsts[-1] if firsts else None,
        "first_chart_max_s": charts[-1] if charts else None,
        "client_cpu_first_loads_s": client1 - client0,
        "throughput_per_s": len(lat) / wall,
        "server_cpu_per_rerun_s": cpu / len(lat) if lat else None,
        "server_cpu_cores": cpu / wall,
        "nginx_cpu_s": nginx,
        "peak_rss_mb": sum(v for k, v in peaks.items() if k != "load") / 1024,
        "load_avg_before": load0,
        "load_avg_peak": peaks["load"],
        "load_avg_after": os.getloadavg()[0],
        "client_cpu_s": client,
        "client_cpu_cores": client / wall,
        "client_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "p50_p95_by_action_s": {
            k: [len(v), round(statistics.median(v), 3), round(quantile(sorted(v), 0.95), 3)]
            for k, v in sorted(by_action.items())
        },
        "errors": len(errors),
        "leaks": sum(len(s.leaks) for s in sessions),
        "lost_changes": sum(len(s.lost) for s in sessions),
        "reconnects": sum(s.reconnects for s in sessions),
        "error_samples": sorted(set(errors))[:5],
        "leak_samples": [x for s in sessions for x in s.leaks][:5],
        "lost_samples": [x for s in sessions for x in s.lost][:5],
    }


def report(r: dict) -> str:
    """One figure a line (names carry the unit: _s seconds, _mb megabytes)."""
    return "\n".join(f"{k:26} {round(v, 3) if isinstance(v, float) else v}" for k, v in r.items())

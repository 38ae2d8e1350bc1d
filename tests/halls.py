"""A lecture hall for the tests: deploy/hall.py (supervisord, nginx, N Streamlit processes) on
127.0.0.1.

Started on free ports with its own run directory; always stopped, by `hall.py stop` and then,
whatever happened, by killing the process groups of every pid its supervisord reported.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HALL = ROOT / "deploy" / "hall.py"
sys.path.insert(0, str(ROOT / "deploy"))
from hall_supervisord import RunDir, processes  # noqa: E402

NGINX = "/usr/sbin/nginx"
START_S = 120.0  # two cold Streamlit processes on two busy cores


def need_nginx() -> None:
    if not Path(NGINX).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{NGINX} is missing: `make test` installs Debian's nginx")
        pytest.skip(f"{NGINX} is missing (`make nginx` installs Debian's package)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hall:
    """A running hall: its address, run directory, supervisor and the pids it wrote."""

    def __init__(self, run_dir: Path, processes: int = 2) -> None:
        need_nginx()
        self.run = run_dir
        self.run.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, str(HALL), "start", "--processes", str(processes)]
        cmd += ["--first-port", "0", "--port", str(self.port), "--run-dir", str(run_dir)]
        self.log = open(run_dir / "supervisor.log", "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.seen: set[int] = set()  # every pid the hall has had, for the clean-up
        try:
            self.wait_for(lambda: (run_dir / "hall.url").exists(), START_S, "the hall to answer")
        except BaseException:
            self.stop()
            raise

    def wait_for(self, ready, timeout: float, what: str) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if ready():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"the supervisor exited while waiting for {what}:\n{self.said()}"
                )
            time.sleep(0.2)
        raise TimeoutError(f"waited {timeout:.0f} s for {what}:\n{self.said()}")

    def said(self) -> str:
        """What hall.py and supervisord logged (the last lines of each)."""
        logs = (self.run / "supervisor.log", self.run / "supervisord.log")
        return "\n".join(f.read_text(errors="replace")[-3000:] for f in logs if f.exists())

    def pids(self) -> list[tuple[str, int, int]]:
        """(role, port, pid) of each running process, as the hall's supervisord says."""
        rows = [(p.role, p.port, p.pid) for p in processes(RunDir(self.run)) if p.pid]
        self.seen |= {pid for _, _, pid in rows}
        with contextlib.suppress(OSError, ValueError):  # supervisord itself
            self.seen.add(int((self.run / "supervisord.pid").read_text().split()[0]))
        return rows

    def streamlit(self) -> dict[int, int]:
        """port → pid of each Streamlit process."""
        return {port: pid for role, port, pid in self.pids() if role == "streamlit"}

    def access_log(self) -> list[str]:
        with contextlib.suppress(OSError):
            return (self.run / "nginx-access.log").read_text(errors="replace").splitlines()
        return []

    def pins(self) -> dict[int, str]:
        """port → the affinity cookie's value that pins a browser to it (p1, p2, …)."""
        conf = (self.run / "convviz.conf").read_text()
        return {int(p): n for p, n in re.findall(r'"~:(\d+)\$" "convviz_affinity=(p\d+);', conf)}

    def pin_of(self, headers) -> str | None:
        """The pin a response sets (None: it sets none)."""
        for cookie in headers.get_all("Set-Cookie") or []:
            if cookie.startswith("convviz_affinity="):
                return cookie.split(";")[0].split("=", 1)[1]
        return None

    def upstream_of(self, line: str) -> int | None:
        found = re.search(r"upstream=(?:[\d.]+:\d+, )*[\d.]+:(\d+) ", line)  # the last one tried
        return int(found.group(1)) if found else None

    def get(self, path: str = "/", cookie: str = "", agent: str = "convviz-tests"):
        request = urllib.request.Request(self.url + path, headers={"User-Agent": agent})
        if cookie:
            request.add_header("Cookie", f"convviz_affinity={cookie}")
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def stop(self) -> None:
        self.pids()
        try:
            subprocess.run(
                [sys.executable, str(HALL), "stop", "--run-dir", str(self.run)],
                cwd=ROOT, capture_output=True, timeout=60,
            )  # fmt: skip
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            pass
        finally:
            for pid in [self.proc.pid, *self.seen]:  # whatever is left, by its group
                if ours(pid):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
            self.log.close()


def ours(pid: int) -> bool:
    """Whether `pid` is still one of the hall's processes (not a pid reused since)."""
    with contextlib.suppress(OSError):
        line = Path(f"/proc/{pid}/cmdline").read_bytes()
        return any(word in line for word in (b"streamlit", b"nginx", b"hall.py", b"supervisord"))
    return False


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)

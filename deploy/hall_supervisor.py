"""The hall's supervisor (deploy/hall.py start): N Streamlit processes and nginx, watched.

`Hall.serve` checks the ports, writes the configs (deploy/hall_nginx.py) into the run directory,
starts every process in its own process group, waits until each answers on its port and nginx
for them all, then restarts whatever dies (with a growing delay when one crash-loops) until
SIGINT, SIGTERM or SIGHUP; then it stops nginx, then the processes. The run directory
(`RunDir`) keeps the pids (`role port pid`), the cookie secret all processes share, the address.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from hall_nginx import LOCAL, ROOT, nginx_paths, render_main, render_site, upstream_ports

STARTUP_S = 90.0  # a process (or the whole hall) that does not answer by then failed
QUICK_DEATH_S = 10.0  # a process that dies sooner than this after its start is crash-looping
NEEDLES = {"streamlit": "streamlit", "nginx": "nginx", "supervisor": "hall.py"}  # in cmdlines


def log(message: str) -> None:
    print(f"[hall {time.strftime('%H:%M:%S')}] {message}", flush=True)


# ---------------------------------------------------------------------------------- files


class RunDir:
    """The run directory: configs, logs, the cookie secret and the pids (one per line:
    `role port pid`)."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self.pids = self.path / "hall.pids"
        self.secret = self.path / "cookie-secret"
        self.url = self.path / "hall.url"  # written once the hall answers

    def cookie_secret(self) -> str:
        """The processes' shared cookie secret, made once and kept (0600)."""
        if not self.secret.exists():
            fd = os.open(self.secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
        return self.secret.read_text().strip()

    def write_pids(self, rows: list[tuple[str, int, int]]) -> None:
        tmp = self.pids.with_suffix(".tmp")
        tmp.write_text("".join(f"{role} {port} {pid}\n" for role, port, pid in rows))
        tmp.replace(self.pids)

    def read_pids(self) -> list[tuple[str, int, int]]:
        with contextlib.suppress(OSError):
            rows = [line.split() for line in self.pids.read_text().splitlines() if line.strip()]
            return [(role, int(port), int(pid)) for role, port, pid in rows]
        return []


def cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return ""


def alive(pid: int, needle: str) -> bool:
    """Whether `pid` runs and is the process we think (its command line has `needle`)."""
    with contextlib.suppress(OSError):
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z" and needle in cmdline(pid)
    return False


def answers(url: str, timeout: float = 2.0) -> bool:
    with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status == 200 and r.read() == b"ok"
    return False


def port_free(address: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def find_nginx() -> str:
    """Debian's nginx, installed with apt-get when it is missing."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else "")
    if found:
        return found
    log("nginx is missing: installing Debian's package (apt-get install nginx)")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([*sudo, "apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "nginx"], check=True, env=env)
    return shutil.which("nginx") or "/usr/sbin/nginx"


# ---------------------------------------------------------------------------------- supervisor


class Child:
    """One supervised process: how to start it, and its current Popen."""

    def __init__(self, role: str, port: int, start) -> None:
        self.role, self.port, self._start = role, port, start
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self.quick_deaths = 0
        self.due = 0.0  # when a crash-looping process may start again

    def start(self) -> None:
        self.proc = self._start()
        self.started = time.monotonic()

    def stop(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)

    def reap_group(self) -> None:
        """Whatever the dead process left in its group (an export's Chromium): gone too."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)


class Hall:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.run = RunDir(Path(args.run_dir))
        self.stopping = threading.Event()
        self.children: list[Child] = []

    # --- starting

    def streamlit(self, port: int):
        def start() -> subprocess.Popen:
            # Streamlit reads the cookie secret from the environment (not a flag): one file, read
            # at each start, so a restarted process signs as the others do. CONVVIZ_CACHE_MB, if
            # set, passes on (the app's default is planned for ~1 GB a process).
            env = os.environ | {"STREAMLIT_SERVER_COOKIE_SECRET": self.run.cookie_secret()}
            cmd = [sys.executable, "-m", "streamlit", "run", "app.py"]
            cmd += ["--server.headless", "true", "--server.address", LOCAL]
            cmd += ["--server.port", str(port), "--server.fileWatcherType", "none"]
            cmd += ["--browser.gatherUsageStats", "false"]
            out = open(self.run.path / f"streamlit-{port}.log", "ab")  # noqa: SIM115
            try:
                return subprocess.Popen(
                    cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True,
                )  # fmt: skip
            finally:
                out.close()

        return start

    def nginx(self, binary: str):
        def start() -> subprocess.Popen:
            cmd = [binary, *nginx_paths(self.run.path)]
            out = open(self.run.path / "nginx-stderr.log", "ab")  # noqa: SIM115
            try:
                return subprocess.Popen(
                    cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )  # fmt: skip
            finally:
                out.close()

        return start

    def prepare(self) -> tuple[str, list[int]]:
        """Check the ports, write the configs; return nginx's binary and the processes' ports."""
        args, run = self.args, self.run
        run.path.mkdir(parents=True, exist_ok=True)
        left = [row for row in run.read_pids() if alive(row[2], NEEDLES[row[0]])]
        if left:
            raise SystemExit(
                f"a hall still runs from {run.path} ({left[0][0]} pid {left[0][2]}): "
                f"`{stop_command(run.path)}` first"
            )
        if not port_free(args.address, args.port):
            raise SystemExit(f"{args.address}:{args.port} is taken: choose another --port")
        ports = upstream_ports(args.first_port, args.processes)
        taken = [p for p in ports if not port_free(LOCAL, p)]
        if taken:
            raise SystemExit(f"ports {taken} are taken: choose another --first-port")
        binary = find_nginx()
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (run.path / "tmp" / kind).mkdir(parents=True, exist_ok=True)
            if os.geteuid() == 0:  # the workers (nobody) write request bodies there
                who = pwd.getpwnam("nobody")
                os.chown(run.path / "tmp" / kind, who.pw_uid, who.pw_gid)
        (run.path / "convviz.conf").write_text(render_site(ports, args.address, args.port))
        (run.path / "nginx.conf").write_text(render_main(run.path))
        test = subprocess.run(
            [binary, "-t", "-q", *nginx_paths(run.path)], capture_output=True, text=True
        )
        if test.returncode:
            raise SystemExit(f"nginx refused the config:\n{test.stderr}")
        run.cookie_secret()
        run.url.unlink(missing_ok=True)
        return binary, ports

    def record(self) -> None:
        rows = [("supervisor", 0, os.getpid())]
        rows += [(c.role, c.port, c.proc.pid) for c in self.children if c.proc is not None]
        self.run.write_pids(rows)

    def public_url(self) -> str:
        host = self.args.address
        if host in ("0.0.0.0", "::"):
            host = socket.gethostname()  # what the hall types; no network look-up
        elif ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.args.port}/"

    def health_url(self) -> str:
        host = {"0.0.0.0": LOCAL, "::": "[::1]"}.get(self.args.address, self.args.address)
        host = f"[{host}]" if ":" in host and not host.startswith("[") else host
        return f"http://{host}:{self.args.port}/_stcore/health"

    def wait_ready(self) -> bool:
        """Every process answers on its own port, and nginx answers for them."""
        end = time.monotonic() + STARTUP_S
        pending = [c for c in self.children if c.role == "streamlit"]
        while time.monotonic() < end and not self.stopping.is_set():
            pending = [c for c in pending if not answers(f"http://{LOCAL}:{c.port}/_stcore/health")]
            dead = [c for c in self.children if c.proc is not None and c.proc.poll() is not None]
            if dead:
                log(f"{dead[0].role} on port {dead[0].port} exited while starting")
                return False
            if not pending and answers(self.health_url()):
                return True
            self.stopping.wait(0.2)
        return False

    # --- watching

    def watch(self) -> None:
        """Restart whatever dies, until told to stop."""
        while not self.stopping.wait(0.5):
            for child in self.children:
                if child.proc is None or child.proc.poll() is None:
                    if child.proc is None and time.monotonic() >= child.due:
                        child.start()
                        pid = child.proc.pid
                        log(f"{child.role} on port {child.port} started again (pid {pid})")
                        self.record()
                    continue
                code = child.proc.returncode
                child.reap_group()
                lived = time.monotonic() - child.started
                child.quick_deaths = child.quick_deaths + 1 if lived < QUICK_DEATH_S else 0
                delay = min(30.0, 2.0 ** (child.quick_deaths - 1)) if child.quick_deaths else 0.0
                log(
                    f"{child.role} on port {child.port} (pid {child.proc.pid}) exited with {code}; "
                    + (f"starting it again in {delay:.0f} s" if delay else "starting it again")
                )
                child.proc, child.due = None, time.monotonic() + delay

    def shutdown(self) -> None:
        """nginx first (no new requests), then the processes: TERM, then KILL after 10 s."""
        for group in (["nginx"], ["streamlit"]):
            mine = [c for c in self.children if c.role in group and c.proc is not None]
            for c in mine:
                c.stop(signal.SIGTERM)
            end = time.monotonic() + 10
            for c in mine:
                try:
                    c.proc.wait(max(0.1, end - time.monotonic()))
                except subprocess.TimeoutExpired:
                    c.stop(signal.SIGKILL)
                    c.proc.wait(5)
                c.reap_group()
        self.run.pids.unlink(missing_ok=True)
        self.run.url.unlink(missing_ok=True)
        log("stopped")

    def serve(self) -> int:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda *_: self.stopping.set())
        binary, ports = self.prepare()
        self.children = [Child("streamlit", p, self.streamlit(p)) for p in ports]
        self.children.append(Child("nginx", self.args.port, self.nginx(binary)))
        try:
            for child in self.children:
                child.start()
            self.record()
            log(f"{len(ports)} Streamlit processes on {LOCAL}:{', '.join(map(str, ports))}")
            if not self.wait_ready():
                if not self.stopping.is_set():
                    log(f"the hall did not answer: see the logs in {self.run.path}")
                return 1
            url = self.public_url()
            self.run.url.write_text(url + "\n")
            log(f"students open {url}")
            log(f"stop with Ctrl-C or `{stop_command(self.run.path)}`")
            self.watch()
            return 0
        finally:
            self.shutdown()


def stop_command(run: Path) -> str:
    default = run == (ROOT / "deploy" / "run").resolve()
    return "deploy/hall.py stop" + ("" if default else f" --run-dir {run}")

"""The hall's processes under supervisord (deploy/hall.py start): its config, written from the
hall's settings, and what hall.py asks it (the processes and their pids, a stop).

supervisord (PyPI's `supervisor`, in the project's environment; no system service) starts the N
Streamlit processes (deploy/serve.sh, each on its port) and nginx, and restarts whatever dies: a
process that was up restarts at once; one that dies within `STARTSECS` of its start waits 1 s,
then 2 s, 3 s, … (supervisord's back-off grows by a second a try) and is never given up for good
(`STARTRETRIES` tries: ~150 years of them, so no process is left FATAL). Everything it writes is
in the run directory (`RunDir`): its config, socket, pid file and logs, the processes' logs, and
the cookie secret all processes share (made once, 0600; each start reads it again, so a
restarted process signs as the others do).
"""

from __future__ import annotations

import contextlib
import getpass
import http.client
import os
import secrets
import socket
import sys
import time
import urllib.request
import xmlrpc.client
from dataclasses import dataclass
from pathlib import Path

from hall_nginx import LOCAL, ROOT, nginx_paths

STARTSECS = 5  # a process that dies sooner after its start is crash-looping: it backs off
STARTRETRIES = 100_000  # back-off n waits n s: these tries take ~160 years, never FATAL
STOPWAITSECS = 10  # TERM, then KILL after this long
STARTUP_S = 120.0  # a hall whose processes do not all answer by then failed to start
SERVE = ROOT / "deploy" / "serve.sh"


class RunDir:
    """The run directory: configs, logs, supervisord's socket and pid, the cookie secret."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self.conf = self.path / "supervisord.conf"
        self.socket = self.path / "supervisor.sock"
        self.pid = self.path / "supervisord.pid"
        self.secret = self.path / "cookie-secret"
        self.url = self.path / "hall.url"  # written once the hall answers

    def cookie_secret(self) -> str:
        """The processes' shared cookie secret, made once and kept (0600)."""
        if not self.secret.exists():
            fd = os.open(self.secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
        return self.secret.read_text().strip()

    def supervisord_pid(self) -> int:
        with contextlib.suppress(OSError, ValueError):
            pid = int(self.pid.read_text().split()[0])
            return pid if alive(pid, "supervisord") else 0
        return 0


@dataclass(frozen=True)
class Program:
    """One process supervisord keeps running."""

    name: str  # streamlit-8501, nginx
    command: list[str]
    log: Path
    environment: dict[str, str]
    priority: int = 500  # lower starts first, stops last


def streamlit_program(run: RunDir, port: int) -> Program:
    """One Streamlit process on 127.0.0.1:port (deploy/serve.sh reads the secret's file)."""
    env = {"CONVVIZ_COOKIE_SECRET_FILE": str(run.secret), "PYTHON": sys.executable}
    if "CONVVIZ_CACHE_MB" in os.environ:  # the app's default is planned for ~1 GB a process
        env["CONVVIZ_CACHE_MB"] = os.environ["CONVVIZ_CACHE_MB"]
    return Program(
        f"streamlit-{port}", ["/bin/sh", str(SERVE), LOCAL, str(port)],
        run.path / f"streamlit-{port}.log", env, priority=100,
    )  # fmt: skip


def nginx_program(run: RunDir, binary: str) -> Program:
    return Program(
        "nginx", [binary, *nginx_paths(run.path)], run.path / "nginx-stderr.log", {}, 900
    )


def quote(word: str) -> str:
    """A word of a supervisord `command=` (split like a shell line) or `environment=` value."""
    bad = any(c.isspace() or c in "\"'%\\" for c in word)
    return '"' + word.replace("%", "%%").replace('"', '\\"') + '"' if bad or not word else word


def render_supervisord(run: RunDir, programs: list[Program]) -> str:
    """supervisord's config for the hall: all its files in the run directory."""
    user = f"user={getpass.getuser()}\n" if os.geteuid() == 0 else ""  # root, and says so
    lines = [
        f"; Written by deploy/hall.py for this run ({run.path}); `deploy/hall.py stop` ends it.",
        "[unix_http_server]", f"file={run.socket}", "chmod=0700", "",
        "[supervisord]", f"logfile={run.path / 'supervisord.log'}", f"pidfile={run.pid}",
        f"childlogdir={run.path}", f"directory={ROOT}", f"{user}logfile_maxbytes=10MB", "",
        "[rpcinterface:supervisor]",
        "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface", "",
        "[supervisorctl]", f"serverurl=unix://{run.socket}",
    ]  # fmt: skip
    for p in programs:
        env = ",".join(f"{k}={quote(v)}" for k, v in p.environment.items())
        lines += [
            "", f"[program:{p.name}]", "command=" + " ".join(map(quote, p.command)),
            f"directory={ROOT}", f"priority={p.priority}", "autostart=true",
            "autorestart=true", f"startsecs={STARTSECS}", f"startretries={STARTRETRIES}",
            # a process's whole group: an export's helper processes go with it
            "stopasgroup=true", "killasgroup=true", f"stopwaitsecs={STOPWAITSECS}",
            f"stdout_logfile={p.log}", "redirect_stderr=true", "stdout_logfile_maxbytes=10MB",
        ]  # fmt: skip
        if env:
            lines.append(f"environment={env}")
    return "\n".join(lines) + "\n"


def supervisord_command(run: RunDir, foreground: bool) -> list[str]:
    return [sys.executable, "-m", "supervisor.supervisord", *(["-n"] if foreground else []),
            "-c", str(run.conf)]  # fmt: skip


# ---------------------------------------------------------------------------------- asking it


class _UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


class _UnixTransport(xmlrpc.client.Transport):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__()
        self.socket_path, self.timeout = path, timeout

    def make_connection(self, host):
        return _UnixHTTP(self.socket_path, self.timeout)


def rpc(run: RunDir, timeout: float = 10.0):
    """supervisord's XML-RPC interface, over the run directory's socket."""
    transport = _UnixTransport(str(run.socket), timeout)
    return xmlrpc.client.ServerProxy("http://localhost/RPC2", transport=transport).supervisor


@dataclass(frozen=True)
class Process:
    role: str  # streamlit, nginx
    port: int  # a Streamlit process's port; 0 for nginx
    pid: int  # 0 when it is not running
    state: str  # RUNNING, STARTING, BACKOFF, EXITED, …


def processes(run: RunDir) -> list[Process]:
    """Each supervised process as supervisord sees it ([] when no supervisord answers)."""
    try:
        infos = rpc(run, 5.0).getAllProcessInfo()
    except (OSError, xmlrpc.client.Error):
        return []
    found = []
    for info in infos:
        role, _, port = info["name"].partition("-")
        found.append(Process(role, int(port or 0), info["pid"], info["statename"]))
    return found


def shutdown(run: RunDir, timeout: float = 40.0) -> bool:
    """Ask supervisord to stop every process, then itself; whether it is gone in time."""
    pid = run.supervisord_pid()
    with contextlib.suppress(OSError, xmlrpc.client.Error):
        rpc(run).shutdown()
    end = time.monotonic() + timeout
    while pid and alive(pid, "supervisord") and time.monotonic() < end:
        time.sleep(0.1)
    return not (pid and alive(pid, "supervisord"))


# ---------------------------------------------------------------------------------- checks


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

"""A lecture hall: N Streamlit processes of convviz behind a real nginx, supervised.

    deploy/hall.py start [--processes N] [--address 127.0.0.1] [--port 8080] [--first-port 8501]
                         [--run-dir deploy/run] [--daemon]
    deploy/hall.py stop [--run-dir deploy/run]
    deploy/hall.py status [--run-dir deploy/run]
    deploy/hall.py conf [--processes N] [--address …] [--port …] [--first-port …]

`start` runs N `streamlit run app.py` on 127.0.0.1:first-port… (each in its own process group)
and nginx (Debian's package; installed with apt-get if missing) with its own prefix, config,
pid file, logs and temp paths in the run directory: /etc/nginx is never read nor touched. The
nginx config is deploy/nginx.conf filled in from the process count: a pin per process (the
affinity cookie p1, p2, … names the process that answered a browser), its upstream, the pool a
first visit goes to. It prints the address the students open once every process answers
through nginx, then watches: a Streamlit process (or nginx) that dies is started again on its
port, with the same cookie secret, kept in RUN/cookie-secret beside the pids (RUN/hall.pids), so
one process restarts alone. SIGINT or SIGTERM (Ctrl-C, `stop`) stops them all. `--daemon`
returns once the hall answers; `stop` ends it. `conf` prints the filled-in deploy/nginx.conf for
a system nginx (conf.d).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hall_nginx import LOCAL, ROOT, render_site, upstream_ports
from hall_supervisor import NEEDLES, STARTUP_S, Hall, RunDir, alive, answers, stop_command

# the config: hall_nginx.py; the processes, watched: hall_supervisor.py; the commands: here


# ---------------------------------------------------------------------------------- commands


def start_daemon(args: argparse.Namespace) -> int:
    """Start the supervisor in the background; return once the hall answers (or failed)."""
    run = RunDir(Path(args.run_dir))
    run.path.mkdir(parents=True, exist_ok=True)
    run.url.unlink(missing_ok=True)
    cmd = [sys.executable, str(Path(__file__).resolve()), "start", *forwarded(args)]
    with open(run.path / "hall.log", "ab") as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
    end = time.monotonic() + STARTUP_S + 30
    while time.monotonic() < end:
        if run.url.exists():
            print(f"students open {run.url.read_text().strip()}")
            print(f"stop: {stop_command(run.path)}")
            return 0
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    print(f"the hall did not start: see {run.path / 'hall.log'}", file=sys.stderr)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
    return 1


def forwarded(args: argparse.Namespace) -> list[str]:
    return [
        "--processes", str(args.processes), "--address", args.address, "--port", str(args.port),
        "--first-port", str(args.first_port), "--run-dir", str(Path(args.run_dir).resolve()),
    ]  # fmt: skip


def stop(args: argparse.Namespace) -> int:
    """TERM the supervisor (it stops the rest); if it is gone, stop what it left behind."""
    run = RunDir(Path(args.run_dir))
    rows = run.read_pids()
    if not rows:
        print(f"no hall runs from {run.path}")
        return 0
    sup = next((pid for role, _, pid in rows if role == "supervisor"), 0)
    if sup and alive(sup, "hall.py"):
        os.kill(sup, signal.SIGTERM)
        end = time.monotonic() + 40
        while time.monotonic() < end and alive(sup, "hall.py"):
            time.sleep(0.1)
    left = [(role, port, pid) for role, port, pid in rows if alive(pid, NEEDLES[role])]
    for role, port, pid in left:  # the supervisor was killed, or did not finish in time
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL) if role != "supervisor" else os.kill(pid, signal.SIGKILL)
        print(f"killed {role} on port {port} (pid {pid})")
    run.pids.unlink(missing_ok=True)
    run.url.unlink(missing_ok=True)
    print(f"the hall in {run.path} is stopped")
    return 0


def status(args: argparse.Namespace) -> int:
    run = RunDir(Path(args.run_dir))
    rows = run.read_pids()
    if not rows:
        print(f"no hall runs from {run.path}")
        return 1
    ok = True
    for role, port, pid in rows:
        up = alive(pid, NEEDLES[role])
        if role == "streamlit":
            up = up and answers(f"http://{LOCAL}:{port}/_stcore/health")
        ok &= up
        print(f"{role:10} {port or '':>5} pid {pid:>7}  {'up' if up else 'DOWN'}")
    if run.url.exists():
        print(f"students open {run.url.read_text().strip()}")
    return 0 if ok else 1


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    run_dir = {"default": str(ROOT / "deploy" / "run"), "help": "configs, logs, pids, secret"}
    for name in ("start", "conf"):
        p = sub.add_parser(name)
        p.add_argument(
            "--processes", type=int, default=os.cpu_count() or 1,
            help="Streamlit processes (default: one per core)",
        )  # fmt: skip
        p.add_argument("--address", default=LOCAL, help="nginx's address (default 127.0.0.1)")
        p.add_argument("--port", type=int, default=8080, help="nginx's port (default 8080)")
        p.add_argument(
            "--first-port", type=int, default=8501,
            help="the first process's port; the others follow (0: any free ports)",
        )  # fmt: skip
        p.add_argument("--run-dir", **run_dir)
        if name == "start":
            p.add_argument("--daemon", action="store_true", help="return once the hall answers")
    for name in ("stop", "status"):
        sub.add_parser(name).add_argument("--run-dir", **run_dir)
    args = ap.parse_args(argv)
    if args.command in ("start", "conf") and not 1 <= args.processes <= 64:
        ap.error("--processes must be 1..64")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.command == "conf":
        print(render_site(upstream_ports(args.first_port, args.processes), args.address, args.port))
        return 0
    if args.command == "start":
        return start_daemon(args) if args.daemon else Hall(args).serve()
    return stop(args) if args.command == "stop" else status(args)


if __name__ == "__main__":
    sys.exit(main())

"""A lecture hall: N Streamlit processes of convviz behind a real nginx, under supervisord.

    deploy/hall.py start [--processes N] [--address 127.0.0.1] [--port 8080] [--first-port 8501]
                         [--run-dir deploy/run] [--daemon]
    deploy/hall.py stop [--run-dir deploy/run]
    deploy/hall.py status [--run-dir deploy/run]
    deploy/hall.py conf [--processes N] [--address …] [--port …] [--first-port …]
                        [--hosts HOST:PORT,…]

`start` writes, into the run directory, nginx's config (deploy/nginx.conf filled in from the
process count: hall_nginx.py) and supervisord's (hall_supervisord.py), then runs supervisord: it
starts N `deploy/serve.sh` (Streamlit on 127.0.0.1:first-port…) and nginx (Debian's package;
installed with apt-get if missing) with its own prefix, pid file, logs and temp paths in the run
directory (/etc/nginx is never read nor touched), and restarts whatever dies, backing off while
one crash-loops, never giving up. It prints the address students open once every process
answers through nginx. In the foreground Ctrl-C stops them all; `--daemon` returns once the hall
answers, and `stop` ends it. `status` lists the processes as supervisord sees them. `conf`
prints the filled-in deploy/nginx.conf for a system nginx (conf.d); with `--hosts` the front of
several hosts, each running its own hall (hall_front.py).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from hall_front import render_front
from hall_nginx import (
    LOCAL,
    ROOT,
    find_nginx,
    make_temp_dirs,
    nginx_paths,
    render_main,
    render_site,
    upstream_ports,
)
from hall_supervisord import (
    STARTUP_S,
    RunDir,
    answers,
    nginx_program,
    port_free,
    processes,
    render_supervisord,
    shutdown,
    streamlit_program,
    supervisord_command,
)


def log(message: str) -> None:
    print(f"[hall {time.strftime('%H:%M:%S')}] {message}", flush=True)


def prepare(args: argparse.Namespace, run: RunDir) -> list[int]:
    """Check that nothing runs there and the ports are free, write the configs; the ports."""
    run.path.mkdir(parents=True, exist_ok=True)
    if run.supervisord_pid():
        raise SystemExit(f"a hall still runs from {run.path}: `{stop_command(run.path)}` first")
    if not port_free(args.address, args.port):
        raise SystemExit(f"{args.address}:{args.port} is taken: choose another --port")
    ports = upstream_ports(args.first_port, args.processes)
    taken = [p for p in ports if not port_free(LOCAL, p)]
    if taken:
        raise SystemExit(f"ports {taken} are taken: choose another --first-port")
    binary = find_nginx()
    make_temp_dirs(run.path)
    (run.path / "convviz.conf").write_text(render_site(ports, args.address, args.port))
    (run.path / "nginx.conf").write_text(render_main(run.path))
    test = subprocess.run(
        [binary, "-t", "-q", *nginx_paths(run.path)], capture_output=True, text=True
    )
    if test.returncode:
        raise SystemExit(f"nginx refused the config:\n{test.stderr}")
    run.cookie_secret()
    programs = [streamlit_program(run, p) for p in ports] + [nginx_program(run, binary)]
    run.conf.write_text(render_supervisord(run, programs))
    run.url.unlink(missing_ok=True)
    return ports


def public_url(args: argparse.Namespace) -> str:
    host = args.address
    if host in ("0.0.0.0", "::"):
        host = socket.gethostname()  # what the hall types; no network look-up
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{args.port}/"


def health_url(args: argparse.Namespace) -> str:
    host = {"0.0.0.0": LOCAL, "::": "[::1]"}.get(args.address, args.address)
    host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{host}:{args.port}/_stcore/health"


def wait_ready(args, run: RunDir, ports: list[int], supervisord: subprocess.Popen) -> bool:
    """Every process answers on its own port, and nginx answers for them."""
    began = time.monotonic()
    pending = set(ports)
    while time.monotonic() < began + STARTUP_S:
        gone = supervisord.poll()  # --daemon: its first process exits 0 once it has forked
        late = time.monotonic() > began + 10 and not run.supervisord_pid()
        if gone not in (None, 0) or (gone == 0 and late):
            return False  # supervisord itself failed (its log says why)
        pending = {p for p in pending if not answers(f"http://{LOCAL}:{p}/_stcore/health")}
        if not pending and answers(health_url(args)):
            return True
        time.sleep(0.2)
    return False


def start(args: argparse.Namespace) -> int:
    run = RunDir(Path(args.run_dir))
    ports = prepare(args, run)
    with open(run.path / "hall.log", "ab") as out:
        supervisord = subprocess.Popen(
            supervisord_command(run, foreground=not args.daemon), cwd=ROOT,
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=args.daemon,
        )  # fmt: skip
    if not args.daemon:  # Ctrl-C reaches supervisord too (one process group): it stops them all
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda s, _: supervisord.send_signal(signal.SIGTERM))
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    log(f"supervisord: {len(ports)} Streamlit processes on {LOCAL}:{', '.join(map(str, ports))}")
    if not wait_ready(args, run, ports, supervisord):
        print(f"the hall did not start: see the logs in {run.path}", file=sys.stderr)
        shutdown(run)
        return 1
    url = public_url(args)
    run.url.write_text(url + "\n")
    log(f"students open {url}")
    log(f"stop with {'Ctrl-C or ' if not args.daemon else ''}`{stop_command(run.path)}`")
    if args.daemon:
        return 0
    code = supervisord.wait()
    run.url.unlink(missing_ok=True)
    log("stopped")
    return code


def stop(args: argparse.Namespace) -> int:
    """supervisord stops nginx, then the processes (TERM, then KILL), then itself."""
    run = RunDir(Path(args.run_dir))
    if not run.supervisord_pid():
        print(f"no hall runs from {run.path}")
        return 0
    if not shutdown(run):
        print(f"supervisord in {run.path} did not stop: see {run.path / 'supervisord.log'}")
        return 1
    run.url.unlink(missing_ok=True)
    print(f"the hall in {run.path} is stopped")
    return 0


def status(args: argparse.Namespace) -> int:
    run = RunDir(Path(args.run_dir))
    found = processes(run)
    if not found:
        print(f"no hall runs from {run.path}")
        return 1
    ok = True
    for p in found:
        up = p.state in ("RUNNING", "STARTING")  # STARTING: up for less than STARTSECS
        if p.role == "streamlit":
            up = up and answers(f"http://{LOCAL}:{p.port}/_stcore/health")
        ok &= up
        print(f"{p.role:10} {p.port or '':>5} pid {p.pid:>7}  {'up' if up else 'DOWN'} ({p.state})")
    if run.url.exists():
        print(f"students open {run.url.read_text().strip()}")
    return 0 if ok else 1


def stop_command(run: Path) -> str:
    default = run == (ROOT / "deploy" / "run").resolve()
    return "deploy/hall.py stop" + ("" if default else f" --run-dir {run}")


def hosts(text: str) -> list[tuple[str, int]]:
    found = []
    for item in filter(None, text.split(",")):
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise argparse.ArgumentTypeError(f"{item!r}: a host is HOST:PORT (its hall's nginx)")
        found.append((host.strip("[]"), int(port)))
    return found


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    run_dir = {"default": str(ROOT / "deploy" / "run"), "help": "configs, logs, socket, secret"}
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
        if name == "start":
            p.add_argument("--run-dir", **run_dir)
            p.add_argument("--daemon", action="store_true", help="return once the hall answers")
        else:
            p.add_argument(
                "--hosts", type=hosts, default=[],
                help="the front of several hosts (HOST:PORT of each one's hall), not one hall",
            )  # fmt: skip
    for name in ("stop", "status"):
        sub.add_parser(name).add_argument("--run-dir", **run_dir)
    args = ap.parse_args(argv)
    if args.command in ("start", "conf") and not 1 <= args.processes <= 64:
        ap.error("--processes must be 1..64")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.command == "conf":
        if args.hosts:
            print(render_front(args.hosts, args.address, args.port))
        else:
            print(
                render_site(
                    upstream_ports(args.first_port, args.processes), args.address, args.port
                )
            )
        return 0
    if args.command == "start":
        return start(args)
    return stop(args) if args.command == "stop" else status(args)


if __name__ == "__main__":
    sys.exit(main())

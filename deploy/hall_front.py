"""The front of several hosts: one address for a course whose halls run on ≥ 2 machines.

    deploy/hall_front.py start --hosts HOST:PORT,… [--address 0.0.0.0] [--port 80]
                               [--run-dir deploy/front] [--daemon]
    deploy/hall_front.py stop [--run-dir deploy/front]
    deploy/hall_front.py check --run-dir DIR      (run by supervisord beside nginx)

Each host runs its own hall (`make hall HALL_ADDRESS=…`: its nginx pins a browser to one of its
processes); the front is one more nginx, under supervisord like a hall, that pins each browser
to one host with its own affinity cookie (`convviz_host`, naming the host that answered) and
sends a first visit to the host with the fewest open connections (websockets). All hosts share
one cookie secret (copy the first host's run-dir/cookie-secret to the others before they start).

Debian's nginx checks its upstreams passively only (a host that refuses or times out a
connection is skipped for a while): a host whose machine is gone answers nothing, and every new
request would first wait for its connect timeout. So the front checks actively, with the
smallest thing that works, ours: `check` asks each host's /_stcore/health every second and,
when the set of hosts that answer changes, rewrites the upstream lists with those hosts only
and reloads nginx (open websockets stay on the hosts they are on). HAProxy checks actively by
itself, but it would be a second proxy to configure, secure and learn beside the halls' nginx;
this keeps one proxy and one config style, and ~60 lines of ours.
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import time
from pathlib import Path

from hall_nginx import ROOT, find_nginx, make_temp_dirs, nginx_paths, render_main
from hall_supervisord import (
    Program,
    RunDir,
    answers,
    render_supervisord,
    shutdown,
    supervisord_command,
)

CHECK_EVERY_S = 1.0  # a host's health asked this often
CHECK_TIMEOUT_S = 1.0  # a host that does not answer within this is down

FRONT = """# The front of several hosts (deploy/hall_front.py), written for this run; up: {up}.
# Each host runs its own hall (nginx + processes, its own pin cookie); this pins a browser to a
# host (convviz_host) and sends a first visit to the host with the fewest open connections.
map $cookie_convviz_host $convviz_front {{
    default convviz_hosts;
{pinned}
}}
map $upstream_addr $convviz_host_pin {{
    default "";
{served}
}}
map $http_upgrade $convviz_connection {{
    default upgrade;
    ""      "";
}}
upstream convviz_hosts {{
    least_conn;
{pool}
    keepalive 32;
}}
{own}
server {{
    listen {listen};
    server_name _;
    server_tokens off;
    client_max_body_size 5001024;  # as each hall's (deploy/nginx.conf)
    proxy_request_buffering off;  # no temp file (deploy/nginx.conf says why)
    large_client_header_buffers 4 16k;  # a share link up to convviz.model.state.MAX_LINK
    location / {{
        proxy_pass http://$convviz_front;
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $convviz_connection;
        proxy_set_header Host $http_host;  # the halls pass it on: Streamlit's Origin check
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_read_timeout 3h;
        proxy_send_timeout 3h;
        proxy_buffering off;
        # a host that does not take a connection within 2 s is skipped (the next one tried)
        proxy_connect_timeout 2s;
        add_header Set-Cookie $convviz_host_pin always;
        # the security headers come from the hosts' halls (deploy/nginx.conf), passed on
    }}
}}
"""


def render_front(hosts: list[tuple[str, int]], address: str, port: int, up=None) -> str:
    """The front's nginx config: every host in `up` (default: all) in the pool, a pin each."""
    up = hosts if up is None else [h for h in hosts if h in up] or hosts  # none up: try all
    names = {h: f"h{i + 1}" for i, h in enumerate(hosts)}  # a host keeps its name when down
    addr = {h: f"[{h[0]}]:{h[1]}" if ":" in h[0] else f"{h[0]}:{h[1]}" for h in hosts}
    cookie = "Path=/; HttpOnly; SameSite=Lax"
    pool = [f"    server {addr[h]} max_fails=1 fail_timeout=5s;" for h in up]
    own = []
    for h in up:
        others = [f"    server {addr[o]} backup;" for o in up if o != h]
        lines = [f"upstream convviz_{names[h]} {{", f"    server {addr[h]};", *others]
        own.append("\n".join([*lines, "    keepalive 16;", "}"]))
    listen = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    return FRONT.format(
        up=", ".join(names[h] for h in up),
        pinned="\n".join(f"    {names[h]} convviz_{names[h]};" for h in up),
        served="\n".join(
            f'    "~(^|, ){addr[h]}$" "convviz_host={names[h]}; {cookie}";' for h in up
        ).replace(".", r"\."),
        pool="\n".join(pool),
        own="\n".join(own),
        listen=listen,
    )


# ---------------------------------------------------------------------------------- the checker


def read_hosts(run: RunDir) -> tuple[list[tuple[str, int]], str, int]:
    """The hosts, address and port `start` wrote into the run directory."""
    lines = (run.path / "front.hosts").read_text().split()
    address, port = lines[0].rsplit(":", 1)
    hosts = [(h.rsplit(":", 1)[0], int(h.rsplit(":", 1)[1])) for h in lines[1:]]
    return hosts, address, int(port)


def healthy(hosts: list[tuple[str, int]]) -> list[tuple[str, int]]:
    url = "http://{}/_stcore/health"
    return [h for h in hosts if answers(url.format(f"{h[0]}:{h[1]}"), CHECK_TIMEOUT_S)]


def check(run: RunDir) -> int:
    """Forever: when the set of hosts that answer changes, rewrite the pool, reload nginx."""
    hosts, address, port = read_hosts(run)
    conf, current = run.path / "convviz.conf", None
    while True:
        up = healthy(hosts)
        if up != current:
            conf.write_text(render_front(hosts, address, port, up))
            pid = run.path / "nginx.pid"
            if pid.exists():  # nginx runs: reload it (its old workers keep their websockets)
                reload = subprocess.run(
                    [find_nginx(), *nginx_paths(run.path), "-s", "reload"],
                    capture_output=True, text=True,
                )  # fmt: skip
                if reload.returncode:
                    print(f"nginx refused the reload: {reload.stderr}", flush=True)
            print(f"hosts up: {' '.join(f'{h}:{p}' for h, p in up) or 'none'}", flush=True)
            current = up
        time.sleep(CHECK_EVERY_S)


# ---------------------------------------------------------------------------------- commands


def start(args: argparse.Namespace) -> int:
    run = RunDir(Path(args.run_dir))
    run.path.mkdir(parents=True, exist_ok=True)
    if run.supervisord_pid():
        raise SystemExit(f"a front still runs from {run.path}: `hall_front.py stop` first")
    text = " ".join([f"{args.address}:{args.port}", *(f"{h}:{p}" for h, p in args.hosts)])
    (run.path / "front.hosts").write_text(text + "\n")
    make_temp_dirs(run.path)
    (run.path / "convviz.conf").write_text(render_front(args.hosts, args.address, args.port))
    (run.path / "nginx.conf").write_text(render_main(run.path))
    binary = find_nginx()
    checker = [sys.executable, str(Path(__file__).resolve()), "check", "--run-dir", str(run.path)]
    programs = [
        Program("checker", checker, run.path / "checker.log", {}, 100),
        Program("nginx", [binary, *nginx_paths(run.path)], run.path / "nginx-stderr.log", {}, 900),
    ]
    run.conf.write_text(render_supervisord(run, programs))
    supervisord = subprocess.Popen(
        supervisord_command(run, foreground=not args.daemon), cwd=ROOT,
        stdin=subprocess.DEVNULL, start_new_session=args.daemon,
    )  # fmt: skip
    url = f"http://{args.address}:{args.port}/_stcore/health"
    end = time.monotonic() + 30
    while time.monotonic() < end and not answers(url):
        if supervisord.poll() not in (None, 0):
            return 1
        time.sleep(0.2)
    if not answers(url):
        print(f"the front did not answer: see {run.path}", file=sys.stderr)
        shutdown(run)
        return 1
    print(f"students open http://{args.address}:{args.port}/", flush=True)
    return 0 if args.daemon else supervisord.wait()


def main(argv: list[str] | None = None) -> int:
    from hall import hosts as parse_hosts

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    run_dir = {"default": str(ROOT / "deploy" / "front"), "help": "configs, logs, socket"}
    p = sub.add_parser("start")
    p.add_argument("--hosts", type=parse_hosts, required=True, help="HOST:PORT of each hall")
    p.add_argument("--address", default="0.0.0.0", help="the front's address (default 0.0.0.0)")
    p.add_argument("--port", type=int, default=80, help="the front's port (default 80)")
    p.add_argument("--run-dir", **run_dir)
    p.add_argument("--daemon", action="store_true", help="return once the front answers")
    for name in ("stop", "check"):
        sub.add_parser(name).add_argument("--run-dir", **run_dir)
    args = ap.parse_args(argv)
    if args.command == "start":
        if len(args.hosts) < 1:
            ap.error("--hosts: at least one HOST:PORT")
        return start(args)
    run = RunDir(Path(args.run_dir))
    if args.command == "check":
        with contextlib.suppress(KeyboardInterrupt):
            return check(run)
        return 0
    return 0 if shutdown(run) else 1


if __name__ == "__main__":
    sys.exit(main())

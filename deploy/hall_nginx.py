"""The hall's nginx config (deploy/hall.py): deploy/nginx.conf filled in from the process count,
nginx's own main config for a run directory, and the paths nginx is started with.

Per process (p1, p2, …): its pin (the affinity cookie names the process that answered a
browser), its line in the pool a first visit goes to, its own upstream with the others as
backups; and the hashes of the inline scripts of the Streamlit this Python runs, for the
content-security policy.
"""

from __future__ import annotations

import base64
import grp
import hashlib
import importlib.util
import os
import pwd
import re
import shutil
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "deploy" / "nginx.conf"
LOCAL = "127.0.0.1"  # the Streamlit processes listen here only; nginx faces the hall


def upstream_ports(first_port: int, processes: int) -> list[int]:
    """The Streamlit processes' ports: first_port, first_port + 1, … (0: any free ports)."""
    if first_port == 0:
        return free_ports(processes)
    return [first_port + i for i in range(processes)]


def free_ports(count: int) -> list[int]:
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind((LOCAL, 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def inline_scripts() -> str:
    """The content-security-policy sources of the inline scripts in Streamlit's index.html
    ('sha256-…' each), from the Streamlit this Python runs: they change with its version."""
    spec = importlib.util.find_spec("streamlit")
    if spec is None or not spec.origin:
        raise SystemExit("streamlit is not installed for this Python: run `make install`")
    html = (Path(spec.origin).parent / "static" / "index.html").read_text()
    bodies = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", html, re.S)
    digests = (base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() for b in bodies)
    return " ".join(f"'sha256-{d}'" for d in digests)


def render_site(ports: list[int], address: str, port: int) -> str:
    """deploy/nginx.conf filled in: the listen address, the hashes of Streamlit's inline scripts,
    and per process (p1, p2, …): its pin, its line in the pool, its own upstream."""
    listen = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    names = [f"p{i + 1}" for i in range(len(ports))]
    cookie = "Path=/; HttpOnly; SameSite=Lax"
    pinned = [f"    {n} convviz_{n};" for n in names]
    served = [f'    "~:{p}$" "convviz_affinity={n}; {cookie}";' for n, p in zip(names, ports)]
    pool = [f"    server {LOCAL}:{p} max_fails=1 fail_timeout=5s;" for p in ports]
    own = []
    for n, line, p in zip(names, pool, ports):
        others = [f"    server {LOCAL}:{q} backup;" for q in ports if q != p]
        own.append("\n".join([f"upstream convviz_{n} {{", line, *others, "    keepalive 16;\n}"]))
    text = TEMPLATE.read_text()
    fills = {
        "@LISTEN@": listen,
        "@PINNED@": "\n".join(pinned),
        "@SERVED@": "\n".join(served),
        "@UPSTREAMS@": "\n".join(pool),
        "@PROCESS_UPSTREAMS@": "\n\n".join(own),
        "@INLINE_SCRIPTS@": inline_scripts(),
    }
    for name, value in fills.items():
        if name not in text:
            raise SystemExit(f"{TEMPLATE} has no {name} to fill in")
        text = text.replace(name, value)
    return text


def render_main(run: Path) -> str:
    """nginx's main config: everything it writes is in the run directory, in the foreground."""
    user = ""
    if os.geteuid() == 0:  # the master stays root to bind; its workers need not be
        who = pwd.getpwnam("nobody")
        user = f"user nobody {grp.getgrgid(who.pw_gid).gr_name};\n"
    temps = "\n".join(
        f"    {kind}_temp_path {run / 'tmp' / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return (
        f"# Written by deploy/hall.py for this run; the site is {run / 'convviz.conf'}.\n"
        f"{user}daemon off;\n"
        "worker_processes 1;  # thousands of idle websockets; the cores are for Python\n"
        f"pid {run / 'nginx.pid'};\n"
        f"error_log {run / 'nginx-error.log'} warn;\n"
        "events { worker_connections 4096; }\n"
        "http {\n"
        "    log_format hall '$remote_addr [$time_local] \"$request\" $status $body_bytes_sent '\n"
        "                    'upstream=$upstream_addr time=$request_time \"$http_user_agent\"';\n"
        f"    access_log {run / 'nginx-access.log'} hall;\n"
        f"{temps}\n"
        f"    include {run / 'convviz.conf'};\n"
        "}\n"
    )


def nginx_paths(run: Path) -> list[str]:
    """nginx's prefix, config and first error log: the run directory's, never /etc/nginx's."""
    return ["-p", f"{run}/", "-c", str(run / "nginx.conf"), "-e", str(run / "nginx-error.log")]


def find_nginx() -> str:
    """Debian's nginx, installed with apt-get when it is missing."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else "")
    if found:
        return found
    print("nginx is missing: installing Debian's package (apt-get install nginx)", flush=True)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([*sudo, "apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "nginx"], check=True, env=env)
    return shutil.which("nginx") or "/usr/sbin/nginx"


def make_temp_dirs(run: Path) -> None:
    """nginx's temp paths in the run directory, writable by its workers (nobody, as root)."""
    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (run / "tmp" / kind).mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            who = pwd.getpwnam("nobody")
            os.chown(run / "tmp" / kind, who.pw_uid, who.pw_gid)

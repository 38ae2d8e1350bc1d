"""The lecture-hall recipe run for real: deploy/hall.py starts nginx and two Streamlit processes
on 127.0.0.1, pins each browser to a process, sends the security headers, restarts a process
that dies while its sessions move on, and stops everything.

Waits for states (the hall's address file, health endpoints, the pid file, the load's events),
never for fixed times; every process is stopped by its group whatever happens.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime

import pytest

from tests.halls import HALL, NGINX, ROOT, Hall, alive, environ, free_port, need_nginx

sys.path.insert(0, str(ROOT / "deploy"))
import hall_nginx
import hall_supervisord

HEADERS = {
    "X-Frame-Options": "SAMEORIGIN",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def csp_of(headers) -> dict[str, list[str]]:
    policy = headers.get("Content-Security-Policy", "")
    return {d.split()[0]: d.split()[1:] for d in policy.split(";") if d.strip()}


# --- the config, without a server ---------------------------------------------------------------


def test_the_upstream_list_is_written_from_the_process_count(tmp_path):
    site = hall_nginx.render_site([9001, 9002, 9003], "127.0.0.1", 8123)
    rules = "\n".join(line.split("#")[0] for line in site.splitlines())  # without comments
    blocks = dict(re.findall(r"upstream (\w+) \{(.*?)\}", rules, re.S))
    servers = {name: re.findall(r"server 127\.0\.0\.1:(\d+)( backup)?", body)
               for name, body in blocks.items()}  # fmt: skip
    # a first visit: any of the three; a pinned browser: its process, the others as backups
    assert servers["convviz"] == [("9001", ""), ("9002", ""), ("9003", "")]
    assert servers["convviz_p2"] == [("9002", ""), ("9001", " backup"), ("9003", " backup")]
    assert set(blocks) == {"convviz", "convviz_p1", "convviz_p2", "convviz_p3"}
    assert re.search(r"\bp3 convviz_p3;", rules)  # the cookie p3 → its upstream
    assert '"~:9003$" "convviz_affinity=p3; ' in rules  # answered by 9003 → pinned to p3
    assert "listen 127.0.0.1:8123;" in rules and "ip_hash" not in rules
    assert "@" not in rules
    assert hall_nginx.upstream_ports(8501, 3) == [8501, 8502, 8503]
    need_nginx()
    (tmp_path / "convviz.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(hall_nginx.render_main(tmp_path))
    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp_path / "tmp" / kind).mkdir(parents=True)
    test = subprocess.run(
        [NGINX, "-t", *hall_nginx.nginx_paths(tmp_path)], capture_output=True, text=True
    )
    assert test.returncode == 0, test.stderr


def test_the_policy_allows_only_the_apps_own_origin():
    site = hall_nginx.render_site([9001], "127.0.0.1", 8123)
    policy = re.search(r'add_header Content-Security-Policy "([^"]+)" always;', site).group(1)
    csp = {d.split()[0]: d.split()[1:] for d in policy.split(";") if d.strip()}
    assert csp["default-src"] == ["'self'"]
    assert csp["frame-ancestors"] == ["'self'"] and csp["object-src"] == ["'none'"]
    sources = [s for values in csp.values() for s in values]
    # no other host, no scheme that reaches one, no script from a string
    assert not [s for s in sources if re.match(r"(https?:|wss?:|\*|'unsafe-eval')", s)]
    assert "'unsafe-inline'" not in csp["script-src"]
    assert [s for s in csp["script-src"] if s.startswith("'sha256-")]  # index.html's own script


# --- a running hall -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    running = Hall(tmp_path_factory.mktemp("hall"), processes=2)
    try:
        yield running
    finally:
        running.stop()


@pytest.mark.server
@pytest.mark.supervisord
def test_every_response_carries_the_security_headers(hall):
    status, headers, body = hall.get("/")
    assert status == 200 and b"<html" in body.lower()
    script = re.search(rb'src="\./(static/js/[^"]+\.js)"', body).group(1).decode()
    for path, code in (("/", 200), (f"/{script}", 200), ("/_stcore/health", 200),
                       ("/no/_stcore/health", 404), ("upload", 413)):  # fmt: skip
        status, headers, _ = too_big(hall) if path == "upload" else hall.get(path)
        assert status == code, path
        for name, value in HEADERS.items():
            assert headers.get(name) == value, (path, name, headers.get(name))
        csp = csp_of(headers)
        assert csp["default-src"] == ["'self'"] and csp["frame-ancestors"] == ["'self'"], path
        if code != 413:  # nginx answered itself: the browser keeps the pin it has
            assert hall.pin_of(headers) in hall.pins().values(), (path, headers)
        else:
            assert hall.pin_of(headers) is None, headers


def too_big(hall: Hall):
    """An upload over nginx's limit: nginx answers it (413) without asking Streamlit."""
    conn = http.client.HTTPConnection("127.0.0.1", hall.port, timeout=30)
    try:
        conn.putrequest("PUT", "/_stcore/upload_file/session/file")
        conn.putheader("Content-Length", str(7 << 20))
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


@pytest.mark.server
@pytest.mark.supervisord
def test_one_browser_stays_on_one_process_and_the_class_uses_both(hall):
    """A first visit gets the pin of the process that answered; every request with it goes
    there; 20 browsers arriving one after the other are spread over both processes."""
    ports = set(hall.streamlit())
    assert len(ports) == 2
    pins = hall.pins()
    for i in range(20):
        _, headers, _ = hall.get("/_stcore/health", agent=f"browser{i:02d}")
        pin = hall.pin_of(headers)
        assert pin in pins.values(), headers.get_all("Set-Cookie")
        for _ in range(3):
            _, headers, _ = hall.get("/_stcore/health", cookie=pin, agent=f"browser{i:02d}")
            assert hall.pin_of(headers) == pin
    hall.wait_for(lambda: len(served(hall)) >= 80, 30, "the access log")
    by_browser: dict[str, set[int]] = {}
    for agent, port in served(hall):
        by_browser.setdefault(agent, set()).add(port)
    assert all(len(p) == 1 for p in by_browser.values()), by_browser  # sticky
    assert {p for s in by_browser.values() for p in s} == ports  # both processes take some


def served(hall: Hall) -> list[tuple[str, int]]:
    """(browser, upstream port) of each logged request of the test's browsers (their agents)."""
    rows = []
    for line in hall.access_log():
        agent = re.search(r'"(browser\d+)"$', line)
        if agent and hall.upstream_of(line):
            rows.append((agent.group(1), hall.upstream_of(line)))
    return rows


@pytest.mark.server
@pytest.mark.supervisord
def test_the_processes_share_the_cookie_secret_kept_beside_the_pids(hall):
    secret = (hall.run / "cookie-secret").read_text().strip()
    assert len(secret) >= 32 and (hall.run / "cookie-secret").stat().st_mode & 0o077 == 0
    for pid in hall.streamlit().values():
        assert environ(pid)["STREAMLIT_SERVER_COOKIE_SECRET"] == secret


@pytest.mark.server
@pytest.mark.supervisord
@pytest.mark.full  # the hall's kill test: `make ci` (45 s of a 2-core machine)
def test_a_killed_process_restarts_alone_while_its_sessions_move_on(tmp_path):
    """Two processes under a short load (scripts/load.py through nginx); one is killed: its
    sessions reconnect and rebuild their view from their URL, the other keeps serving,
    supervisord starts the dead one again on its port with the same secret."""
    hall = Hall(tmp_path / "run", processes=2)
    events = tmp_path / "events.jsonl"
    load = None
    try:
        before = hall.streamlit()
        cmd = [sys.executable, "scripts/load.py", "--through", hall.url]
        cmd += ["--run-dir", str(hall.run), "--sessions", "8", "--duration", "40"]
        cmd += ["--think", "0.5", "1.5", "--timeout", "60", "--events", str(events), "--json"]
        load = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )  # fmt: skip

        def steps() -> list[dict]:
            text = events.read_text() if events.exists() else ""
            return [json.loads(line) for line in text.splitlines() if line.endswith("}")]

        # every session has loaded its page and changed something at least twice
        def going() -> bool:
            done = Counter(e["session"] for e in steps() if e["kind"] != "first")
            return len(done) == 8 and min(done.values()) >= 2

        hall.wait_for(going, 150, "every session to run")
        # the process most sessions were sent to (their page's GET says where)
        sent = Counter(
            hall.upstream_of(line) for line in hall.access_log() if "convviz-load" in line
        )
        victim = max(before, key=lambda port: sent[port])
        survivor = next(port for port in before if port != victim)
        killed_at = time.time()
        os.kill(before[victim], signal.SIGKILL)

        # the supervisor starts it again, on its port, alone
        def restarted() -> bool:
            now = hall.streamlit()
            return now.get(victim) not in (None, before[victim]) and hall_supervisord.answers(
                f"http://127.0.0.1:{victim}/_stcore/health"
            )

        hall.wait_for(restarted, 120, "the killed process to be started again")
        now = hall.streamlit()
        assert now[survivor] == before[survivor] and alive(now[survivor])
        secret = (hall.run / "cookie-secret").read_text().strip()
        assert environ(now[victim])["STREAMLIT_SERVER_COOKIE_SECRET"] == secret
        assert re.search(rf"exited: streamlit-{victim} \(terminated by SIGKILL", hall.said())

        out, err = load.communicate(timeout=240)
        result = json.loads(out.strip().splitlines()[-1])
        assert result["errors"] == 0, (result["error_samples"], err[-2000:])
        assert result["leaks"] == 0, result["leak_samples"]  # each view rebuilt from its URL
        log = steps()
        closed = {e["session"] for e in log if e["kind"] == "closed"}
        moved = {e["session"] for e in log if e["kind"] == "reconnected"}
        assert closed and closed == moved, (closed, moved)
        assert result["reconnects"] == len([e for e in log if e["kind"] == "closed"])
        # after the kill, every session went on running, the moved ones included
        later = Counter(e["session"] for e in log if e["t"] > killed_at and "latency" in e)
        assert set(later) == set(range(8)), later
        # the moved sessions' pages were answered (by the survivor, or by the dead process
        # started again: nginx skips a process that refuses a connection)
        again = [x for x in hall.access_log() if "convviz-load" in x and when(x) >= killed_at - 1]
        assert again and all('" 200 ' in line for line in again), again
    finally:
        if load is not None and load.poll() is None:
            os.killpg(load.pid, signal.SIGKILL)
            load.wait(10)
        hall.stop()
    # and `stop` stopped everything
    assert not (hall.run / "supervisord.pid").exists()
    assert not [pid for pid in hall.seen if alive(pid)], hall.seen


def when(line: str) -> float:
    """The time of an access-log line."""
    stamp = re.search(r"\[([^\]]+)\]", line).group(1)
    return datetime.strptime(stamp, "%d/%b/%Y:%H:%M:%S %z").timestamp()


@pytest.mark.server
@pytest.mark.supervisord
def test_start_daemon_status_and_stop(tmp_path):
    """`start --daemon` returns once the hall answers; `status` says so; `stop` ends it all."""
    need_nginx()
    run, port = tmp_path / "run", free_port()
    cmd = [sys.executable, str(HALL), "start", "--daemon", "--processes", "1"]
    cmd += ["--first-port", "0", "--port", str(port), "--run-dir", str(run)]
    try:
        started = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=200)
        assert started.returncode == 0, started.stdout + started.stderr
        assert f"students open http://127.0.0.1:{port}/" in started.stdout
        status = subprocess.run(
            [sys.executable, str(HALL), "status", "--run-dir", str(run)],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert status.returncode == 0 and status.stdout.count(" up") == 2, status.stdout
        pids = [p.pid for p in hall_supervisord.processes(hall_supervisord.RunDir(run))]
        pids.append(int((run / "supervisord.pid").read_text()))
        assert all(alive(pid) for pid in pids)
    finally:
        stopped = subprocess.run(
            [sys.executable, str(HALL), "stop", "--run-dir", str(run)],
            capture_output=True, text=True, timeout=90,
        )  # fmt: skip
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.1)
    assert not [pid for pid in pids if alive(pid)]
    assert hall_supervisord.port_free("127.0.0.1", port)


def test_hall_help_and_bad_arguments():
    done = subprocess.run(
        [sys.executable, str(HALL), "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0 and "start" in done.stdout and "stop" in done.stdout
    bad = subprocess.run(
        [sys.executable, str(HALL), "conf", "--processes", "0"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert bad.returncode == 2 and "--processes" in bad.stderr


def test_hall_stop_without_a_hall_says_so(tmp_path):
    done = subprocess.run(
        [sys.executable, str(HALL), "stop", "--run-dir", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0 and "no hall runs" in done.stdout


def test_the_front_pins_to_hosts_and_lists_only_those_that_answer(tmp_path):
    """deploy/hall_front.py's config: a pin per host, the pool of the hosts up (the checker's
    choice), the hall's upload and link limits; nginx -t takes it."""
    import hall_front

    hosts = [("198.18.1.2", 8080), ("198.18.2.2", 8080)]
    both = hall_front.render_front(hosts, "127.0.0.1", 8123)
    one = hall_front.render_front(hosts, "127.0.0.1", 8123, up=[hosts[1]])
    assert "up: h1, h2" in both.splitlines()[0] and "up: h2" in one.splitlines()[0]
    pool = re.search(r"upstream convviz_hosts \{(.*?)\}", one, re.S).group(1)
    assert "198.18.2.2:8080" in pool and "198.18.1.2" not in pool
    assert "h1 convviz_h1;" not in one and "h2 convviz_h2;" in one  # a dead host's pin: the pool
    assert '"~(^|, )198\\.18\\.2\\.2:8080$" "convviz_host=h2; ' in one
    assert hall_front.render_front(hosts, "127.0.0.1", 8123, up=[]) == both  # none up: try all
    site = hall_nginx.render_site([9001], "127.0.0.1", 8124)
    for limit in ("client_max_body_size", "large_client_header_buffers"):
        assert re.search(rf"{limit} ([^;]+);", one).group(1) == re.search(
            rf"{limit} ([^;]+);", site
        ).group(1)
    need_nginx()
    (tmp_path / "convviz.conf").write_text(one)
    (tmp_path / "nginx.conf").write_text(hall_nginx.render_main(tmp_path))
    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp_path / "tmp" / kind).mkdir(parents=True)
    test = subprocess.run(
        [NGINX, "-t", *hall_nginx.nginx_paths(tmp_path)], capture_output=True, text=True
    )
    assert test.returncode == 0, test.stderr
    conf = subprocess.run(
        [sys.executable, str(HALL), "conf", "--hosts", "198.18.1.2:8080,198.18.2.2:8080"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert conf.returncode == 0 and "upstream convviz_hosts" in conf.stdout

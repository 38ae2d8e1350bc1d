"""A course on several hosts behind one address, on one machine: two hosts, each a network
namespace running its own hall (deploy/hall.py: supervisord, nginx, a Streamlit process) with
one shared cookie secret, behind the front (deploy/hall_front.py: nginx pinning each browser to
a host, and its checker keeping the hosts that answer in the upstream list) in a third
namespace, where the load generator runs too (tests/netns.py: veth links, no route out).

Under load one whole host is taken down (its processes end, then its link): every session
continues, the moved ones on the other host with their values from their URL, and nothing fails
but the reconnects. The host comes back and takes new students.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time
from collections import Counter

import pytest

from tests.halls import ROOT, need_nginx
from tests.netns import Hosts

sys.path.insert(0, str(ROOT / "deploy"))
from hall_supervisord import RunDir, processes, shutdown

pytestmark = [pytest.mark.netns, pytest.mark.supervisord, pytest.mark.server, pytest.mark.full]

HALL_PORT, FRONT = 8080, "http://127.0.0.1:8080"
PY = sys.executable


def wait_for(ready, timeout: float, what: str, said=lambda: "") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if ready():
            return
        time.sleep(0.2)
    raise TimeoutError(f"waited {timeout:.0f} s for {what}\n{said()}")


class Course:
    """The two hosts' halls and the front, started in their namespaces; always stopped."""

    def __init__(self, tmp_path) -> None:
        need_nginx()
        self.hosts = Hosts(2)
        self.tmp = tmp_path
        self.runs = [tmp_path / f"h{i + 1}" for i in range(2)]
        self.front = tmp_path / "front"
        try:
            secret = tmp_path / "cookie-secret"
            secret.write_text("0f" * 32)
            for run in self.runs:  # one secret for the course: each host's copy
                run.mkdir()
                (run / "cookie-secret").write_bytes(secret.read_bytes())
                (run / "cookie-secret").chmod(0o600)
            for i in range(2):
                self.start_host(i)
            hosts = ",".join(f"{self.hosts.address(i)}:{HALL_PORT}" for i in range(2))
            cmd = [PY, "deploy/hall_front.py", "start", "--daemon", "--hosts", hosts]
            cmd += ["--address", "127.0.0.1", "--port", "8080", "--run-dir", str(self.front)]
            self.sh(self.hosts.front, cmd)
            wait_for(lambda: self.up() == ["h1", "h2"], 60, "the front to see both hosts")
        except BaseException:
            self.stop()
            raise

    def sh(self, ns: str, argv: list[str], timeout: float = 180) -> str:
        done = subprocess.run(
            self.hosts.run(ns, argv), cwd=ROOT, capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def start_host(self, i: int) -> None:
        cmd = [PY, "deploy/hall.py", "start", "--daemon", "--processes", "1"]
        cmd += ["--address", self.hosts.address(i), "--port", str(HALL_PORT)]
        cmd += ["--run-dir", str(self.runs[i])]
        self.sh(self.hosts.names[i], cmd)

    def stop_host(self, i: int) -> None:
        self.sh(self.hosts.names[i], [PY, "deploy/hall.py", "stop", "--run-dir", str(self.runs[i])])

    def up(self) -> list[str]:
        """The hosts the front's upstream list holds now (its config's header)."""
        with contextlib.suppress(OSError):
            head = (self.front / "convviz.conf").read_text().splitlines()[0]
            return sorted(re.findall(r"\bh\d\b", head.split("up:", 1)[1]))
        return []

    def access(self) -> list[str]:
        with contextlib.suppress(OSError):
            return (self.front / "nginx-access.log").read_text(errors="replace").splitlines()
        return []

    def said(self) -> str:
        logs = [self.front / "checker.log", *(r / "supervisord.log" for r in self.runs)]
        return "\n".join(p.read_text(errors="replace")[-1500:] for p in logs if p.exists())

    def stop(self) -> None:
        for run in (self.front, *self.runs):
            with contextlib.suppress(Exception):
                shutdown(RunDir(run), timeout=20)
        self.hosts.remove()


def host_of(line: str) -> str | None:
    """The host (h1, h2) that answered an access-log line of the front (the last one tried)."""
    found = re.search(r"upstream=(?:[\d.:]+, )*198\.18\.(\d)\.2:\d+ ", line)
    return f"h{found.group(1)}" if found else None


def session_of(line: str) -> int | None:
    found = re.search(r'"convviz-load session=(\d+)"$', line)
    return int(found.group(1)) if found else None


def load(course: Course, events, sessions: int, duration: float) -> subprocess.Popen:
    cmd = [PY, "scripts/load.py", "--through", FRONT, "--run-dir", str(course.runs[0])]
    cmd += ["--sessions", str(sessions), "--duration", str(duration), "--think", "0.5", "1.5"]
    cmd += ["--timeout", "60", "--events", str(events), "--json"]
    return subprocess.Popen(
        course.hosts.run(course.hosts.front, cmd), cwd=ROOT, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def steps(events) -> list[dict]:
    text = events.read_text() if events.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.endswith("}")]


def test_a_host_goes_down_under_load_and_its_students_continue_on_the_other(tmp_path):
    course = Course(tmp_path)
    first = tmp_path / "events.jsonl"
    runner = None
    try:
        # both hosts answer through the front, each pinned browser to its own host
        runner = load(course, first, sessions=10, duration=45)

        def going() -> bool:
            done = Counter(e["session"] for e in steps(first) if e["kind"] != "first")
            return len(done) == 10 and min(done.values()) >= 2

        wait_for(going, 180, "every session to run", course.said)
        served = [(session_of(x), host_of(x)) for x in course.access() if session_of(x) is not None]
        by_session: dict[int, set[str]] = {}
        for s, h in served:
            by_session.setdefault(s, set()).add(h)
        assert all(len(h) == 1 for h in by_session.values()), by_session  # pinned to a host
        hosts_used = Counter(next(iter(h)) for h in by_session.values())
        assert set(hosts_used) == {"h1", "h2"}, hosts_used  # the class is spread over both
        victim = hosts_used.most_common(1)[0][0]
        i = int(victim[1]) - 1

        # the whole host goes: its processes end, then its machine leaves the network
        down_at, cut = time.time(), len(course.access())
        course.stop_host(i)
        course.hosts.link(i, up=False)
        wait_for(lambda: course.up() == [h for h in ("h1", "h2") if h != victim], 30,
                 "the checker to drop the host", course.said)  # fmt: skip

        out, err = runner.communicate(timeout=300)
        result = json.loads(out.strip().splitlines()[-1])
        assert result["errors"] == 0, (result["error_samples"], err[-2000:])
        assert result["leaks"] == 0 and result["lost_changes"] == 0, result["leak_samples"]
        log = steps(first)
        closed = {e["session"] for e in log if e["kind"] == "closed"}
        moved = {e["session"] for e in log if e["kind"] == "reconnected"}
        victims = {s for s, h in by_session.items() if victim in h}
        assert closed == moved == victims, (closed, moved, victims)
        later = Counter(e["session"] for e in log if e["t"] > down_at and "latency" in e)
        assert set(later) == set(range(10)), later  # every session went on
        after = [(session_of(x), host_of(x)) for x in course.access()[cut:]]
        assert {h for s, h in after if s in victims} <= {"h1", "h2"} - {victim}, after

        # the host comes back: the checker puts it back, and new students go there
        course.hosts.link(i, up=True)
        course.start_host(i)
        wait_for(lambda: course.up() == ["h1", "h2"], 60, "the host to be back", course.said)
        seen = len(course.access())
        second = tmp_path / "again.jsonl"
        again = load(course, second, sessions=4, duration=10)
        out, err = again.communicate(timeout=200)
        result = json.loads(out.strip().splitlines()[-1])
        assert result["errors"] == 0 and result["leaks"] == 0, (result, err[-2000:])
        new = {host_of(x) for x in course.access()[seen:] if session_of(x) is not None}
        assert victim in new, new  # the fewest connections: the host that came back
        assert all(p.state == "RUNNING" or p.state == "STARTING"
                   for p in processes(RunDir(course.runs[i])))  # fmt: skip
    finally:
        if runner is not None and runner.poll() is None:
            runner.kill()
        course.stop()

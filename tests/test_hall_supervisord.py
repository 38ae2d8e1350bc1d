"""The hall's processes under supervisord (deploy/hall_supervisord.py): its config, written from
the hall's settings, and its restart policy run for real: a process that keeps dying at once is
started again later and later, and never given up (never FATAL).
"""

from __future__ import annotations

import configparser
import itertools
import re
import subprocess
import sys
import time

import pytest

from tests.halls import ROOT

sys.path.insert(0, str(ROOT / "deploy"))
import hall_supervisord as hs


def test_the_config_keeps_every_file_in_the_run_directory_and_never_gives_up(tmp_path):
    run = hs.RunDir(tmp_path)
    programs = [hs.streamlit_program(run, 8501), hs.nginx_program(run, "/usr/sbin/nginx")]
    conf = hs.render_supervisord(run, programs)
    parsed = configparser.RawConfigParser()
    parsed.read_string(conf)
    sections = {name: "".join(f"{k}={v}\n" for k, v in parsed[name].items())
                for name in parsed.sections()}  # fmt: skip
    assert set(sections) == {
        "unix_http_server", "supervisord", "rpcinterface:supervisor", "supervisorctl",
        "program:streamlit-8501", "program:nginx",
    }  # fmt: skip
    paths = re.findall(r"^(?:file|logfile|pidfile|childlogdir|stdout_logfile)=(.+)$", conf, re.M)
    assert paths and all(p.startswith(str(tmp_path)) for p in paths), paths
    streamlit = sections["program:streamlit-8501"]
    assert "command=/bin/sh " + str(ROOT / "deploy" / "serve.sh") + " 127.0.0.1 8501" in streamlit
    # the secret is read from its file at each start, never written into the config
    assert f"CONVVIZ_COOKIE_SECRET_FILE={tmp_path / 'cookie-secret'}" in streamlit
    assert not (tmp_path / "cookie-secret").exists() or run.cookie_secret() not in conf
    for body in (streamlit, sections["program:nginx"]):
        assert "autorestart=true" in body and "stopasgroup=true" in body
        retries = int(re.search(r"startretries=(\d+)", body).group(1))
        # supervisord waits n s before the n-th retry: all of them take over a century
        assert retries * (retries + 1) / 2 > 100 * 365 * 86400
    assert re.search(r"priority=100\n", streamlit) and "priority=900" in sections["program:nginx"]


def test_a_command_word_with_spaces_quotes_and_percent_signs_survives_the_config():
    assert hs.quote("plain") == "plain"
    assert hs.quote("a b") == '"a b"'
    assert hs.quote('say "hi" 100%') == '"say \\"hi\\" 100%%"'


@pytest.mark.supervisord
def test_a_process_that_keeps_dying_is_started_again_later_and_later(tmp_path):
    """A program that exits at once: supervisord starts it again after 1 s, 2 s, 3 s, … and
    keeps it in BACKOFF (never FATAL, never given up)."""
    starts = tmp_path / "starts"
    run = hs.RunDir(tmp_path)
    crash = f"date +%s.%N >> {starts}; exit 3"  # % and spaces: quoted by the config
    program = hs.Program("streamlit-1", ["/bin/sh", "-c", crash], tmp_path / "crash.log", {})
    run.conf.write_text(hs.render_supervisord(run, [program]))
    proc = subprocess.Popen(
        hs.supervisord_command(run, foreground=True), cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and len(times(starts)) < 5:
            assert proc.poll() is None, (tmp_path / "supervisord.log").read_text()
            time.sleep(0.1)
        seen = times(starts)
        assert len(seen) >= 5, seen
        gaps = [b - a for a, b in itertools.pairwise(seen)]
        # 1 s, 2 s, 3 s, 4 s (supervisord's tick is 1 s: each within a second of its due)
        assert all(n + 1 - 0.2 < gap < n + 1 + 1.2 for n, gap in enumerate(gaps[:4])), gaps
        states = {p.state for p in hs.processes(run)}
        assert states <= {"BACKOFF", "STARTING"}, states
    finally:
        assert hs.shutdown(run, timeout=20)
        proc.wait(10)


def times(path) -> list[float]:
    return [float(x) for x in path.read_text().split()] if path.exists() else []

"""scripts/latency.py, short: one repetition of each measurement and of the timeline, in Chromium
against its own two servers. It keeps the harness from rotting; no timing is asserted."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Chromium present (else a skip, or in CI a failure): the fixture the browser tests use. The
# script starts its own two servers and Chromium: `browser` (which allows the servers).
# A measuring tool's own test: `make ci` runs it (`full`), `make test` leaves it out.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.full,
    pytest.mark.usefixtures("browser_type_launch_args"),
]


def latency(*flags: str) -> str:
    cmd = [sys.executable, "scripts/latency.py", "--reps", "1", *flags]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sample lost" not in done.stderr, done.stderr[-3000:]
    return done.stdout


def test_latency_prints_every_median_and_ratio():
    out = latency()
    for label in ("(a) control change", "(b) cell click", "(b') cell click", "(c) cold context"):
        assert re.search(re.escape(label) + r".* \d+\.\d\d$", out, re.M), out
    assert re.search(r"\(a\) control change -> chart, app +\d+ ms", out), out


def test_latency_timeline_shows_where_a_change_goes():
    out = latency("--timeline")
    for page in ("app ", "bare"):
        row = rf"^\(a\) {page} 0: +\d+ ms \| sent +\d+ \| messages .*\| draws \d"
        assert re.search(row, out, re.M), out

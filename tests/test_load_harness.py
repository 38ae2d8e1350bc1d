"""scripts/load.py, short: 3 sessions for ~8 s against its own server (no timing assertions).

The page is opened once before the burst (--warmup): this test keeps the harness from rotting;
the cold-start burst itself is what `make load` exercises.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.server  # the script starts its own streamlit server
def test_load_harness_short_run():
    cmd = [sys.executable, "scripts/load.py", "--sessions", "3", "--duration", "8"]
    cmd += ["--think", "0.5", "1.5", "--warmup", "--timeout", "60", "--json"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.stdout.strip(), done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["errors"] == 0, result["error_samples"]
    assert result["leaks"] == 0, result["leak_samples"]
    assert result["fewest_reruns_per_session"] >= 1, result
    assert done.returncode == 0, done.stderr[-3000:]


def test_load_help():
    done = subprocess.run(
        [sys.executable, "scripts/load.py", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0
    for flag in ("--sessions", "--duration", "--think"):
        assert flag in done.stdout

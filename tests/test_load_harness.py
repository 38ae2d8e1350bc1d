"""scripts/load.py, short runs against its own server (no timing assertions).

The page is opened once before the burst (--warmup): these tests keep the harness from rotting;
the cold-start burst itself is what `make load` exercises. The hall (--through) is driven in
tests/test_hall.py.
"""

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.server  # the script starts its own streamlit server


def load(*flags: str, timeout: float = 180) -> tuple[dict, subprocess.CompletedProcess]:
    cmd = [sys.executable, "scripts/load.py", "--warmup", "--timeout", "60", "--json", *flags]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done


def test_a_short_class_explores_with_its_own_values(tmp_path):
    """Three sessions doing what students do: every kind of change, each session's own."""
    events = tmp_path / "events.jsonl"
    result, done = load(
        "--sessions", "3", "--duration", "12", "--think", "0.3", "1.0", "--events", str(events)
    )
    assert result["errors"] == 0, result["error_samples"]
    assert result["leaks"] == 0, result["leak_samples"]
    assert result["fewest_reruns_per_session"] >= 1, result
    # a change the app dropped (a lost change) is its bug, not the harness's: said, exit 1
    assert done.returncode == (1 if result["lost_changes"] else 0), done.stderr[-3000:]
    kinds = Counter(json.loads(line)["kind"] for line in events.read_text().splitlines())
    assert kinds["first"] == 3
    assert len(set(kinds) - {"first"}) >= 4, kinds  # seed, stride, click, page, …
    for name in ("p50_s", "p95_s", "p99_s", "server_cpu_per_rerun_s", "client_cpu_s"):
        assert result[name] is not None and result[name] >= 0, name
    assert result["load_avg_before"] >= 0 and result["load_avg_after"] >= 0


def test_one_control_and_the_bare_floor():
    result, done = load("--sessions", "2", "--duration", "5", "--think", "0.3", "1.0",
                        "--control", "Stride", "--page", "Forward")  # fmt: skip
    assert (result["errors"], result["leaks"], result["mode"]) == (0, 0, "control"), result
    assert result["fewest_reruns_per_session"] >= 1 and done.returncode == 0
    result, done = load("--bare", "--sessions", "2", "--duration", "5", "--think", "0.3", "1.0")
    assert (result["errors"], result["leaks"], result["mode"]) == (0, 0, "bare"), result
    assert result["fewest_reruns_per_session"] >= 1 and done.returncode == 0


def test_load_help_and_loopback_only():
    done = subprocess.run(
        [sys.executable, "scripts/load.py", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0
    for flag in ("--sessions", "--duration", "--think", "--through", "--bare", "--arrive"):
        assert flag in done.stdout
    away = subprocess.run(
        [sys.executable, "scripts/load.py", "--through", "http://example.com:8080"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert away.returncode == 2 and "127.0.0.1 (or the test hosts) only" in away.stderr
    for host in ("10.0.0.1", "198.20.0.1", "192.168.1.1"):  # private, or past the test range
        argv = [sys.executable, "scripts/load.py", "--through", f"http://{host}:8080"]
        away = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert away.returncode == 2, host
    assert "--ratio" in done.stdout and "--run-dir" in done.stdout


def test_the_ratio_to_the_bare_page_is_measured_in_the_same_run():
    result, done = load(
        "--mix", "control", "--control", "Seed", "--sessions", "1", "--duration", "4",
        "--think", "0.3", "0.8", "--ratio",
    )  # fmt: skip
    assert done.returncode == 0 and result["errors"] == 0, result
    floor = result["bare_server_cpu_per_rerun_s"]
    assert result["bare_before_s"] > 0 and result["bare_after_s"] > 0, result
    assert floor == (result["bare_before_s"] + result["bare_after_s"]) / 2, "the floor: both"
    assert result["cpu_ratio_to_bare"] == result["server_cpu_per_rerun_s"] / floor

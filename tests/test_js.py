"""The JavaScript: Biome lints it (biome.json) and node's own test runner checks the player's
rules (tests/js/). Skipped where node, or Biome from `npm ci`, is missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NODE = shutil.which("node")
BIOME = ROOT / "node_modules" / ".bin" / "biome"


def _run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_players_rules_pass_node_test():
    done = _run(NODE, "--test", "tests/js/")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout


@pytest.mark.skipif(not BIOME.exists(), reason="Biome is not installed (npm ci)")
def test_the_javascript_is_lint_clean():
    done = _run(str(BIOME), "lint", "--error-on-warnings")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]

"""The NumPy and PyTorch snippets, run as a student would run them, against the engine."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from convviz.export.snippet import numpy_snippet, torch_snippet
from convviz.export.story import Story
from convviz.model.presets import PRESETS

LAYERS = [
    *((p.key, None) for p in PRESETS),  # remainders, 'same' on even kernels, dilation, channels
    (None, "?preset=reflect&mode=reflect"),
    (None, "?preset=reflect&mode=replicate"),
    (None, "?preset=reflect&mode=circular&seed=7"),
    (None, "?preset=classroom&gout=mse&sh=3"),  # non-integer-free: y - target
]
DUMP = """
import runpy, sys
import numpy as np
g = runpy.run_path(sys.argv[1])
np.savez(sys.argv[2], y=g["y"], grad_x=g["grad_x"], grad_w=g["grad_w"])
"""


def _run(source: str, tmp_path) -> tuple[dict, str]:
    """Run the snippet in a fresh interpreter; its arrays and what it printed."""
    script, out = tmp_path / "snippet.py", tmp_path / "out.npz"
    script.write_text(source)
    printed = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert printed.returncode == 0, printed.stderr
    subprocess.run(
        [sys.executable, "-c", DUMP, str(script), str(out)], check=True, timeout=120,
        capture_output=True, cwd=tmp_path,
    )  # fmt: skip
    with np.load(out) as arrays:
        return dict(arrays), printed.stdout


def _check(story: Story, got: dict) -> None:
    lay = story.layer
    np.testing.assert_allclose(got["y"], lay.forward.y, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got["grad_x"], lay.input_grad.grad_x, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got["grad_w"], lay.weight_grad.grad_w, rtol=0, atol=1e-9)


@pytest.mark.parametrize("preset,link", LAYERS, ids=[p or l for p, l in LAYERS])
def test_numpy_snippet_prints_the_engines_numbers(preset, link, tmp_path):
    story = Story.of(preset, link)
    source = numpy_snippet(story)
    assert "convviz" not in source.split('"""', 2)[2]  # needs NumPy only
    got, printed = _run(source, tmp_path)
    _check(story, got)
    assert [line for line in printed.splitlines() if line.endswith("=")] == [
        "y =",
        "dL/dx =",
        "dL/dw =",
    ]


def test_snippet_holds_every_digit_of_edited_values(tmp_path):
    story = Story.of(link="?preset=recitation-s1&x=0.1,2,3,4,5,6,7,8,1e-07")
    assert "0.1" in numpy_snippet(story) and "1e-07" in numpy_snippet(story)
    got, _ = _run(numpy_snippet(story), tmp_path)
    _check(story, got)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
@pytest.mark.parametrize("preset,link", LAYERS, ids=[p or l for p, l in LAYERS])
def test_torch_snippet_prints_the_engines_numbers(preset, link, tmp_path):
    story = Story.of(preset, link)
    got, _ = _run(torch_snippet(story), tmp_path)
    _check(story, got)


def test_torch_snippet_names_the_layer_exactly():
    story = Story.of("even-same")
    source = torch_snippet(story)
    compile(source, "torch_snippet.py", "exec")  # at least valid Python where torch is missing
    assert "stride = (1, 1)" in source and "padding = ((1, 2), (1, 2))" in source
    assert "F.conv2d(x_pad, wt, stride=stride, dilation=dilation)" in source

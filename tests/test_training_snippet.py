"""The Learning page's snippets train the same layer for the same steps and print the same
numbers as the engine: the NumPy one is run here (and the PyTorch one where torch is
installed)."""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest

from convviz.export.training_snippet import numpy_training_snippet, torch_training_snippet
from convviz.learning.experiment import Settings, experiment
from convviz.model.fields import preset_state
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import values_of

CASES = [
    ("recitation-s2", Settings(steps=40)),
    ("classroom", Settings(steps=60, momentum=0.9)),
    ("channels-small", Settings(steps=25, reduction="mean", target="box")),
    ("reflect", Settings(steps=15, target="random")),
    ("dilation-2", Settings(lr=1e-4, steps=10, target="laplacian")),
]


def run_of(key: str, settings: Settings):
    spec, x, w, _ = values_of(preset_state(PRESETS_BY_KEY[key]))
    return experiment(spec, x, w, settings).run


def execute(code: str) -> tuple[dict, str]:
    names: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<snippet>", "exec"), names)
    return names, out.getvalue()


@pytest.mark.parametrize(("key", "settings"), CASES, ids=[k for k, _ in CASES])
def test_the_numpy_snippet_prints_the_engines_losses_and_ends_at_its_w_and_b(key, settings):
    run = run_of(key, settings)
    names, printed = execute(numpy_training_snippet(run, run.w[0]))
    losses = [float(v) for v in re.findall(r"step \d+: L = (\S+)", printed)]
    assert len(losses) == run.steps_done + 1
    np.testing.assert_allclose(losses, run.loss, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(names["w"], run.w[-1], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(names["b"], run.b[-1], rtol=1e-9, atol=1e-9)
    assert "import convviz" not in numpy_training_snippet(run, run.w[0])


def test_the_snippet_can_fail():
    """A run of one more step, or another rate, prints other numbers."""
    run = run_of("classroom", Settings(steps=10))
    other = run_of("classroom", Settings(steps=10, lr=1e-4))
    names, _ = execute(numpy_training_snippet(other, other.w[0]))
    assert not np.allclose(names["losses"], run.loss)


@pytest.mark.parametrize(("key", "settings"), CASES[:3], ids=[k for k, _ in CASES[:3]])
def test_the_torch_snippet_matches_the_engine(key, settings):
    pytest.importorskip("torch")
    run = run_of(key, settings)
    names, _ = execute(torch_training_snippet(run, run.w[0]))
    np.testing.assert_allclose(names["losses"], run.loss, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(names["w"].detach().numpy(), run.w[-1], rtol=1e-7, atol=1e-7)


@pytest.mark.encoder
def test_the_training_run_as_an_mp4_holds_the_gifs_frames():
    from convviz.export.video import gif_frames, mp4_bytes
    from convviz.render.story.learning import run_gif

    run = run_of("recitation-s2", Settings(steps=6))
    frames = gif_frames(run_gif(run))
    assert len(frames.images) == run.steps_done + 1
    mp4 = mp4_bytes(frames)
    assert mp4[4:8] == b"ftyp" and len(mp4) > 1000

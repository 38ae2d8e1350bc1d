"""The .tex export: every stage a bmatrix with its marked cells; it compiles where pdflatex is."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from convviz.export import latex
from convviz.export.story import Story
from convviz.model.presets import PRESETS as ALL

PRESETS = [p.key for p in ALL]


def _matrices(tex: str) -> list[list[list[str]]]:
    """Every bmatrix as rows of cell strings."""
    blocks = re.findall(r"\\begin\{bmatrix\}(.*?)\\end\{bmatrix\}", tex, re.S)
    return [[row.split(" & ") for row in b.split(r" \\ ")] for b in blocks]


def test_bmatrix_marks_padded_and_inserted_cells():
    values = np.array([[0, 0, 0], [0, 5, -2], [0, 0, 0]], float)
    pad = np.zeros((3, 3), bool)
    pad[0] = True
    ins = np.zeros((3, 3), bool)
    ins[:, 0] = True
    (m,) = _matrices(latex.bmatrix(values, {"cvpad": pad, "cvins": ins}))
    assert m[0] == [r"\cvpad{0}"] * 3  # a padded cell is marked once, as padding
    assert m[1] == [r"\cvins{0}", "5", "-2"]
    assert latex.bmatrix(np.zeros((17, 2))).startswith(r"\text{(17$\times$2")


@pytest.mark.parametrize("preset", PRESETS)
def test_stages_tex_holds_the_engines_arrays(preset):
    story = Story.of(preset)
    tex = latex.stages_tex(story)
    assert tex.isascii()
    assert tex.startswith(r"\documentclass") and tex.rstrip().endswith(r"\end{document}")
    for env in ("document", "bmatrix", "aligned"):
        assert tex.count(rf"\begin{{{env}}}") == tex.count(rf"\end{{{env}}}")
    assert tex.count(r"\begin{bmatrix}") > 0 and tex.count("{") == tex.count("}")
    ig, fw, wg = story.layer.input_grad, story.layer.forward, story.layer.weight_grad
    n, k, c = story.n, story.k, story.c
    mark = r"\cvdrop" if story.spec.padding_mode == "zeros" else r"\cvfold"
    # every grid in order, with the marks it must carry: (array, macro, mask)
    grids = [
        (fw.x_padded[n, c], r"\cvpad", fw.pad_mask), (fw.w[k, c], None, None),
        (fw.y[n, k], None, None), (ig.grad_out[n, k], None, None),
        (ig.dilated[n, k], r"\cvins", ig.dilation_mask),
        (ig.padded[n, k], r"\cvpad", ig.padded_ring), (ig.w[k, c], None, None),
        (ig.w_rot[c, k], None, None), (ig.grad_x_padded[n, c], mark, ig.pad_mask),
        (ig.grad_x[n, c], None, None), (wg.grad_w[k, c], None, None),
        (wg.dilated[n, k], r"\cvins", wg.dilation_mask),
        (wg.x_padded[n, c], r"\cvpad", wg.pad_mask),
    ]  # fmt: skip
    tex = tex.split(r"\section*{How the layer learns}")[0]  # the layer's own stages first
    typeset = [g for g in grids if max(g[0].shape) <= latex.MAX_SIDE]
    too_big = len(grids) - len(typeset)
    assert tex.count("too large to typeset") == too_big
    mats = _matrices(tex)
    assert len(mats) == len(typeset)
    strip = re.compile(r"\\cv[a-z]+\{(.*)\}")
    as_array = lambda m: np.array([[float(strip.sub(r"\1", s)) for s in r] for r in m])  # noqa: E731
    for m, (a, macro, mask) in zip(mats, typeset):
        np.testing.assert_allclose(as_array(m), a, atol=5e-4 * max(1, np.abs(a).max()))
        if macro is not None:
            marked = np.array([[s.startswith(macro) for s in r] for r in m])
            np.testing.assert_array_equal(marked, mask)
    assert latex.cell_latex(story.input_grad_formula) in tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("preset", ["recitation-s2", "reflect"])
def test_stages_tex_compiles_standalone(preset, tmp_path):
    (tmp_path / "stages.tex").write_text(latex.stages_tex(Story.of(preset)))
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "stages.tex"],
        cwd=tmp_path, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "stages.pdf").read_bytes().startswith(b"%PDF")
    assert re.search(r"Output written on stages\.pdf \(\d+ pages?", run.stdout)
    assert "Undefined control sequence" not in run.stdout

"""The .tex export: every stage a bmatrix with its marked cells; it compiles where pdflatex is."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from convviz.export import latex
from convviz.export.story import Story

PRESETS = ["recitation-s2", "classroom", "reflect", "channels-small"]


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
        assert tex.count(rf"\begin{{{env}}}") == tex.count(rf"\end{{{env}}}") > 0
    assert tex.count("{") == tex.count("}")
    ig, fw = story.layer.input_grad, story.layer.forward
    n, k, c = story.n, story.k, story.c
    mats = _matrices(tex)
    # x̃, w, y, ∂L/∂y, dilated, padded, w, rot180 w, ∂L/∂x̃, ∂L/∂x, ∂L/∂w
    assert len(mats) == 11
    strip = re.compile(r"\\cv[a-z]+\{(.*)\}")
    as_array = lambda m: np.array([[float(strip.sub(r"\1", s)) for s in r] for r in m])  # noqa: E731
    for m, a in zip(
        mats,
        [fw.x_padded[n, c], fw.w[k, c], fw.y[n, k], ig.grad_out[n, k], ig.dilated[n, k],
         ig.padded[n, k], ig.w[k, c], ig.w_rot[c, k], ig.grad_x_padded[n, c], ig.grad_x[n, c],
         story.layer.weight_grad.grad_w[k, c]],
    ):  # fmt: skip
        np.testing.assert_allclose(as_array(m), a, atol=5e-4 * max(1, np.abs(a).max()))
    # the marks: padded x̃ cells, inserted zeros, the padded ring of ∂L/∂y
    x_pad = sum(s.startswith(r"\cvpad") for row in mats[0] for s in row)
    assert x_pad == fw.pad_mask.sum()
    inserted = sum(s.startswith(r"\cvins") for row in mats[4] for s in row)
    assert inserted == ig.dilation_mask.sum()
    ring = sum(s.startswith(r"\cvpad") for row in mats[5] for s in row)
    assert ring == ig.padded_ring.sum()
    mark = r"\cvdrop" if story.spec.padding_mode == "zeros" else r"\cvfold"
    assert sum(s.startswith(mark) for row in mats[8] for s in row) == ig.pad_mask.sum()
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

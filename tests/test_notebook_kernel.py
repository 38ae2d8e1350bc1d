"""The example notebooks run top to bottom by a real Jupyter kernel (nbclient), their printed
numbers the engine's; their HTML as nbconvert writes it plays in Chromium with the network
blocked, and a clicked cell shows its sum.

One notebook in `make test` (`kernel`); every notebook and its HTML in Chromium in `make ci`.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest
from browser_helpers import click_cell
from nbclient import NotebookClient

from convviz.engine.reference import conv2d_input_loop, conv2d_loop, conv2d_weight_loop
from convviz.model.presets import PRESETS_BY_KEY

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.ipynb"))
SEEDS = {"recitation_s1": "recitation-s1", "recitation_s2": "recitation-s2"}
ARTIFACTS = ROOT / "artifacts"


def run(name: str, tmp_path: Path, monkeypatch) -> nbformat.NotebookNode:
    """The example run by a kernel in a copy of examples/ (its files written there), with this
    checkout's convviz."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the kernel's convviz: this checkout's
    folder = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", folder)
    nb = nbformat.read(folder / f"{name}.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def stdout(nb) -> str:
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


def printed(nb) -> dict[str, list]:
    """`name = [...]` lines the notebook printed."""
    text = stdout(nb)
    return {m[1]: ast.literal_eval(m[2]) for m in re.finditer(r"^(\w+) = (\[.*\])$", text, re.M)}


def seed_numbers(key: str) -> dict[str, list]:
    """The preset's y, ∂L/∂x and ∂L/∂w by the plain loops (an independent oracle)."""
    preset = PRESETS_BY_KEY[key]
    spec = preset.spec()
    x = np.array(preset.x, float).reshape(spec.input_shape)
    w = np.array(preset.w, float).reshape(spec.weight_shape)
    g = np.array(preset.g, float).reshape(spec.output_shape)
    conv = dict(stride=spec.stride, padding=spec.padding)
    return {
        "y": conv2d_loop(x, w, **conv)[0, 0].tolist(),
        "grad_x": conv2d_input_loop(x.shape, w, g, **conv)[0, 0].tolist(),
        "grad_w": conv2d_weight_loop(x, w.shape, g, **conv)[0, 0].tolist(),
    }


@pytest.mark.kernel
def test_a_seeds_notebook_prints_the_engines_numbers(tmp_path, monkeypatch):
    nb = run("recitation_s2", tmp_path, monkeypatch)
    assert printed(nb) == seed_numbers("recitation-s2")
    assert printed(nb)["grad_x"][2][2] == 36  # the recitation's worked cell
    html = [o["data"]["text/html"] for c in nb.cells for o in c.get("outputs", [])
            if "text/html" in o.get("data", {})]  # fmt: skip
    assert len(html) == 3 and "window.convvizPlayer = function" in html[0]  # the scripts: once
    assert all("window.convvizPlayer = function" not in h for h in html[1:])


@pytest.mark.kernel
@pytest.mark.full
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_runs_top_to_bottom(path, tmp_path, monkeypatch):
    nb = run(path.stem, tmp_path, monkeypatch)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    if path.stem in SEEDS:
        assert printed(nb) == seed_numbers(SEEDS[path.stem])
    if path.stem == "backward_pass_in_ten_cells":  # out.save() wrote the page beside it
        assert (tmp_path / "examples" / "backward_pass.html").stat().st_size > 4_000_000
    if path.stem == "train_a_kernel":
        assert float(re.search(r"max \|w - sobel\| = (\S+)", stdout(nb)).group(1)) < 0.01


PLAYER = "(key) => { const p = window.__convviz.players.get(key); return p && [p.current(), p.count, p.playing()]; }"  # noqa: E501


@pytest.mark.kernel
@pytest.mark.browser
@pytest.mark.full
def test_the_nbconvert_html_plays_offline_and_a_click_shows_the_cells_sum(
    tmp_path, monkeypatch, browser
):
    from nbconvert import HTMLExporter

    nb = run("recitation_s2", tmp_path, monkeypatch)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    path = tmp_path / "recitation_s2.html"
    path.write_text(body)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    fetched = []

    def network(route):  # blocked: only the file itself and its data: URIs load
        if route.request.url.startswith(("file:", "data:")):
            return route.continue_()
        fetched.append(route.request.url)
        return route.abort()

    context.route("**/*", network)
    page.goto(path.as_uri())
    page.wait_for_function("() => window.__convviz && window.__convviz.players.size === 3")
    keys = page.evaluate("() => [...window.__convviz.players.keys()]")
    forward = keys[0]
    current, count, _ = page.evaluate(PLAYER, forward)
    assert current == count - 1  # opened on the result, as the app does on a laptop
    play = page.locator(".convviz-nb").first.locator(".cv-player")
    play.locator("button.play").click()  # the player lives in the output's shadow root
    page.wait_for_function(f"() => ({PLAYER})('{forward}')[0] > 0")  # it plays from the first
    page.wait_for_function(f"() => ({PLAYER})('{forward}')[0] === {count - 1}")
    y = np.array(seed_numbers("recitation-s2")["y"])
    click_cell(page, "xaxis3", "yaxis3", 0, 1)  # y₀₁ of the output grid
    formula = play.locator("[data-testid=player-formula]")
    page.wait_for_function(f"() => ({PLAYER})('{forward}')[0] === 1")
    assert formula.inner_text().splitlines()[-1].endswith(f"= {y[0, 1]:g}")
    assert formula.inner_text().startswith("y₀₁ =")
    # the keys: ← steps back, but only in the output that has the keyboard
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"() => ({PLAYER})('{forward}')[0] === 0")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "notebook-nbconvert.png"))
    assert not [u for u in fetched if "convviz" in u or "plotly" in u], fetched
    context.close()

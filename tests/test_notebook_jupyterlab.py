"""In JupyterLab 4, as a student works: a server started here on 127.0.0.1, a notebook opened in
Chromium and its cells run one by one. `convviz.show()` plays; a `Widget`'s stride set from Python
redraws it in place; a click on a cell in the browser changes `w.selected` in the kernel.

`jupyter` (a Jupyter server and its kernel) and `browser`; `make ci` (`full`).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from live import hover
from nbformat.v4 import new_code_cell, new_notebook
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from convviz.render.plotly.adapter import probing

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
pytestmark = [pytest.mark.jupyter, pytest.mark.browser, pytest.mark.full]

CELLS = [
    "import convviz\nconvviz.show('recitation-s2', stage='forward')",
    "w = convviz.Widget('recitation-s2', stage='forward')\nw",
    "w.stride = 1",
    "print('selected', w.selected, w.formula.splitlines()[-1])",
]
# the page point of cell (row, col) of grid (xaxis, yaxis) of the i-th chart on the page
CELL_XY = probing("""([i, xa, ya, row, col]) =>
  cvPlotly.pagePoint(document.querySelectorAll('.js-plotly-plot')[i], xa, ya, col, row)""")
PLAYERS = "() => [...(window.__convviz ? window.__convviz.players.values() : [])]"
# the notebook's kernel has started and the page is connected to it (a cell run before is lost)
KERNEL_READY = """async () => {
  const kernels = await (await fetch('/api/kernels')).json();
  return kernels.length === 1 && kernels[0].connections > 0
    && kernels[0].execution_state === 'idle';
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on a free loopback port, no token, its settings and runtime in a folder of
    its own; the kernels it starts import this checkout's convviz."""
    home = tmp_path_factory.mktemp("lab")
    kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    nb = new_notebook(cells=[new_code_cell(c) for c in CELLS], metadata=kernel)
    nbformat.write(nb, home / "student.ipynb")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(home / "config"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces")}  # fmt: skip
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--IdentityProvider.token=", f"--ServerApp.root_dir={home}",
           "--LabApp.news_url=", "--allow-root",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]  # fmt: skip
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "jupyterlab.log", "w")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(cmd, env=env, cwd=home, start_new_session=True, stdout=log,
                            stderr=subprocess.STDOUT)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while not _answers(f"{url}/api/status"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not start: {log.name} says why")
            time.sleep(0.3)  # polling a starting process: there is no event to wait on
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def run_cell(page, i: int) -> None:
    """Run the notebook's i-th cell as a student does: click into it (once it is being edited),
    Shift+Enter; until its prompt says it runs or ran."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(i)
    ran = cell.locator(".jp-InputPrompt").filter(has_text=re.compile(r"\[[*0-9]"))
    for _ in range(3):  # JupyterLab 4 here drops a fresh page's first run (the cell moves on)
        cell.locator(".jp-InputArea-editor").click()
        page.wait_for_selector(".jp-Notebook.jp-mod-editMode .jp-Cell.jp-mod-active .cm-focused")
        page.keyboard.press("Shift+Enter")
        try:
            ran.wait_for(timeout=15_000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"cell {i} did not run")


def test_show_plays_the_widget_redraws_and_a_click_reaches_the_kernel(lab, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"{lab}/lab/tree/student.ipynb")
    page.wait_for_selector(".jp-Notebook .jp-Cell .jp-InputArea-editor", timeout=120_000)
    page.wait_for_function(KERNEL_READY, timeout=120_000)
    run_cell(page, 0)  # convviz.show(): it plays
    page.wait_for_function(f"() => ({PLAYERS})().length === 1", timeout=60_000)
    shown = page.locator(".jp-Cell").nth(0).locator(".cv-player")
    shown.locator("button.play").click()
    first = f"({PLAYERS})()[0]"
    page.wait_for_function(f"() => {first}.current() < {first}.count - 1")  # it plays
    page.wait_for_function(f"() => {first}.current() === {first}.count - 1")  # to the end
    run_cell(page, 1)  # the widget: plotly.js already on the page
    drawn = page.locator(".jp-Cell").nth(1).locator(".convviz-nb")
    page.wait_for_function(f"() => ({PLAYERS})().length === 2", timeout=60_000)
    assert drawn.get_attribute("data-cv-drawn") == "1"
    frames = page.evaluate(f"() => ({PLAYERS})()[1].count")
    run_cell(page, 2)  # w.stride = 1: redrawn in place, with the player of the new layer
    page.wait_for_function(
        "(el) => el.dataset.cvDrawn === '2'", arg=drawn.element_handle(), timeout=60_000
    )
    assert (frames, page.evaluate(f"() => ({PLAYERS})()[1].count")) == (4, 9)
    # the chart is a figure named and described in words (the long one under it, tied to it)
    chart = drawn.locator(".cv-chart[role=figure]")
    long = drawn.locator(f"#{chart.get_attribute('aria-describedby')}")
    assert chart.get_attribute("aria-label") and len(long.text_content()) > 80
    x, y = page.evaluate(CELL_XY, [1, "xaxis3", "yaxis3", 0, 1])  # y₀₁ of the widget's chart
    hover(page, x, y)
    page.mouse.click(x, y)
    formula = drawn.locator("[data-testid=widget-formula]")
    formula.filter(has_text="y₀₁").wait_for(timeout=30_000)  # the kernel wrote w.formula back
    run_cell(page, 3)  # the kernel's w.selected
    out = page.locator(".jp-Cell").nth(3).locator(".jp-OutputArea-output")
    out.filter(has_text="selected").wait_for(timeout=60_000)
    assert "selected ['y', 0, 1]" in out.inner_text()
    page.screenshot(path=str(ARTIFACTS / "notebook-jupyterlab.png"), full_page=True)
    context.close()

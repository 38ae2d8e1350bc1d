"""convviz as an installed package: its wheel carries every asset, `make install`'s environment runs
it from any folder, and a fresh environment's `pip install .` gives the same.

All three run pip or an installed convviz in another process: marked `install` (seconds to a
minute each; `make test`), the fresh environment `full` as well (it installs every dependency:
`make ci`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from convviz.export import cli
from convviz.export.story import Story

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "convviz"
# what a clean environment passes on: no PYTHONPATH, so only an installed convviz imports
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}

pytestmark = pytest.mark.install


def _sources(into: Path) -> Path:
    """The files a wheel is built from (pyproject.toml and convviz/), copied as a clone has them:
    the build leaves its build/ and egg-info there, not in this checkout."""
    into.mkdir()
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")
    shutil.copytree(PACKAGE, into / "convviz", ignore=shutil.ignore_patterns("__pycache__"))
    return into


def _run(argv: list, timeout: float = 600) -> subprocess.CompletedProcess:
    """A command from `/`, where no checkout is on the path."""
    return subprocess.run(
        [str(a) for a in argv], cwd="/", env=CLEAN_ENV, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


def test_the_wheel_carries_every_module_and_asset(tmp_path):
    """The player's JS and CSS, the UI's CSS and JS, the deck's JS: a wheel without them installs
    an app whose pages and exports fail at their first figure."""
    src, out = _sources(tmp_path / "src"), tmp_path / "wheels"
    run = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                "--quiet", "-w", out, src])  # fmt: skip
    assert run.returncode == 0, run.stderr
    (wheel,) = out.glob("convviz-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    files = {p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*") if p.is_file()}
    files = {f for f in files if "__pycache__" not in f}
    assert files - names == set(), "missing from the wheel"
    for pattern in ("player/*.js", "player/*.css", "ui/*.css", "ui/*.js", "export/deck.js"):
        assert list(PACKAGE.glob(pattern)), pattern  # the named assets exist, so are checked
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Provides-Extra: notebook" in metadata
    assert 'anywidget>=0.11; extra == "notebook"' in metadata


def _exports_from_root(python: Path | str, out: Path, *formats: str) -> Path:
    """`import convviz` and `python -m convviz export --preset recitation-s2` (every format, or
    those named) from `/`, where only an installed convviz is found; the HTML lecture has the
    deck's JS inside. Returns where convviz was imported from."""
    run = _run([python, "-c", "import convviz; print(convviz.__file__)"])
    assert run.returncode == 0, run.stderr
    where = Path(run.stdout.strip())
    chosen = ["--formats", ",".join(formats)] if formats else []
    run = _run([python, "-m", "convviz", "export", "--preset", "recitation-s2", *chosen,
                "--quiet", "--out", out])  # fmt: skip
    assert run.returncode == 0, run.stderr
    story = Story.of("recitation-s2")
    want = {job.name for job in cli.jobs(story, list(formats or cli.FORMATS))}
    assert {p.name for p in out.iterdir()} == want
    lecture = (out / story.file_name("lecture", "html")).read_text()
    assert (where.parent / "export" / "deck.js").read_text() in lecture
    return where


@pytest.mark.encoder  # every format: the GIFs and MP4s too
def test_make_installs_environment_runs_convviz_from_any_folder(tmp_path):
    """`make install` installs convviz editable: from `/` (no checkout on the path) `import
    convviz` and `python -m convviz export` failed with "No module named convviz"."""
    run = _run([sys.executable, "-c", "import convviz; print(convviz.__file__)"])
    if run.returncode == 0 and not Path(run.stdout.strip()).is_relative_to(ROOT):
        pytest.skip(f"this environment installs another checkout ({run.stdout.strip()})")
    if run.returncode != 0 and (ROOT / ".venv").is_symlink():
        pytest.skip("this checkout borrows another's .venv (a link), which make install leaves")
    where = _exports_from_root(sys.executable, tmp_path / "x")
    assert where == PACKAGE / "__init__.py"  # editable: this checkout's files


@pytest.mark.full
def test_a_fresh_environments_pip_install_gives_the_same(tmp_path):
    """`pip install .[notebook]` in a new venv (its dependencies from the package index): the
    same command from `/`, on the installed copy (not this checkout's files), and the Widget."""
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", venv]).returncode == 0
    python = venv / "bin" / "python"
    src = _sources(tmp_path / "src")
    run = _run([python, "-m", "pip", "install", "--quiet", f"{src}[notebook]"], 1200)
    assert run.returncode == 0, run.stderr[-2000:]
    widget = _run([python, "-c", "import convviz; print(convviz.Widget.__name__)"])
    assert widget.stdout.strip() == "Widget", widget.stderr  # the extra: anywidget
    where = _exports_from_root(python, tmp_path / "x", "html", "png", "py")
    assert where.is_relative_to(venv) and (where.parent / "player" / "core.js").exists()

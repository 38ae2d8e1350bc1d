"""Layers: the engine imports NumPy and the standard library only, never a UI or plotting library;
the renderers and the URL state never import Streamlit; the package ships every subpackage.

Each group of modules is imported in a fresh interpreter of its own, one module after another,
so modules imported by other tests cannot hide a leak: what a module's import adds to sys.modules
is its, and a package loaded by several is seen at the first of them (the check is the same).
"""

from __future__ import annotations

import functools
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("streamlit", "plotly", "matplotlib")


def modules_under(*packages: str) -> list[str]:
    """Every module of these packages, their subpackages' too (by walking the tree)."""
    out = []
    for name in packages:
        out.append(name)
        path = ROOT.joinpath(*name.split("."))
        out += [m.name for m in pkgutil.walk_packages([str(path)], f"{name}.")]
    return sorted(out)


# The engine, the learning code and the app's model: NumPy and the standard library only.
ENGINE_MODULES = [
    "convviz",
    "convviz.bench",
    *modules_under("convviz.engine", "convviz.learning", "convviz.model"),
]

PROBE = """
import json, sys
before = set(sys.modules)
import {module}
new = sorted({{name.split(".")[0] for name in set(sys.modules) - before}})
print(json.dumps(new))
"""


def imported_top_level_packages(module: str) -> list[str]:
    """Top-level packages that `import module` loads in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"import {module} failed:\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


IN_TURN = """
import json, sys
out = {}
for module in json.loads(sys.argv[1]):
    before = set(sys.modules)
    __import__(module)
    out[module] = sorted({name.split(".")[0] for name in set(sys.modules) - before})
print(json.dumps(out))
"""


@functools.cache
def imported_in_turn(modules: tuple[str, ...]) -> dict[str, list[str]]:
    """For each module, the top-level packages its import loads, the modules imported one after
    another in one fresh interpreter (one interpreter a group: ~0.7 s, not ~0.7 s a module)."""
    done = subprocess.run(
        [sys.executable, "-c", IN_TURN, json.dumps(modules)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"importing {modules} failed:\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_engine_imports_numpy_and_stdlib_only(module):
    loaded = imported_in_turn(tuple(ENGINE_MODULES))[module]
    ui = [name for name in loaded if name in FORBIDDEN]
    assert not ui, f"import {module} loaded {ui}: the engine must not know the UI layers"
    # cython_runtime: the pseudo-module numpy.random's compiled parts register (the URL state
    # draws its default preset's numbers at import)
    allowed = set(sys.stdlib_module_names) | {"numpy", "convviz", "cython_runtime"}
    other = [name for name in loaded if name not in allowed and not name.startswith("_")]
    assert not other, f"import {module} loaded third-party {other}: NumPy + stdlib only"


def test_probe_detects_a_forbidden_import():
    """The probe itself can fail: importing matplotlib is seen."""
    assert "matplotlib" in imported_top_level_packages("matplotlib")
    # and in turn: a leak is seen at the first module that loads it, not hidden by the others
    assert (
        "matplotlib"
        in imported_in_turn(("json", "matplotlib.pyplot", "matplotlib"))["matplotlib.pyplot"]
    )


# Renderers draw for the app, the exports and the notebook; the player is embedded by all three:
# no Streamlit in any of them.
NO_STREAMLIT = modules_under(
    "convviz.render", "convviz.player", "convviz.export", "convviz.notebook"
)


@pytest.mark.parametrize("module", NO_STREAMLIT)
def test_renderers_and_state_never_import_streamlit(module):
    loaded = imported_in_turn(tuple(NO_STREAMLIT))[module]
    assert "streamlit" not in loaded, f"import {module} loaded streamlit"


def test_the_package_ships_every_subpackage():
    """`pip install .` must ship convviz.ui (its JS and CSS too), not only the engine."""
    import tomllib

    from setuptools import find_packages

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    shipped = set(find_packages(str(ROOT), **config["packages"]["find"]))
    on_disk = {
        ".".join(p.relative_to(ROOT).parts[:-1]) for p in (ROOT / "convviz").rglob("__init__.py")
    }
    assert on_disk <= shipped, f"not shipped: {sorted(on_disk - shipped)}"
    data = config["package-data"]
    for package in ("convviz.ui", "convviz.player"):
        folder = ROOT.joinpath(*package.split("."))
        assert list(folder.glob("*.js")) and {"*.js", "*.css"} <= set(data[package]), package


def test_the_package_declares_what_it_imports():
    """`pip install .` installs every third-party package convviz imports (lazy imports too);
    torch stays optional (the checks that use it say so when it is missing), the notebook
    widget's packages come with its extra (`pip install convviz[notebook]`)."""
    import ast
    import importlib.metadata
    import re
    import sys
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["notebook"]]
    declared = {
        re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0].lower().replace("_", "-") for d in wanted
    }
    distributions = importlib.metadata.packages_distributions()
    imported = set()
    for path in (ROOT / "convviz").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"convviz", "torch"}
    needed = {distributions[m][0].lower().replace("_", "-") for m in third_party}
    assert needed <= declared, f"imported, not in pyproject's dependencies: {needed - declared}"


@pytest.mark.parametrize("folder", ["render", "export", "player", "engine", "learning", "model"])
def test_no_layer_below_the_app_imports_its_ui(folder):
    """The layers run one way: nothing the pages build on (renderers, exports, the player, the
    engine, the model) imports convviz.ui, not even lazily inside a function."""
    import ast

    leaks = []
    for path in sorted((ROOT / "convviz" / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            leaks += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.startswith("convviz.ui")]
    assert not leaks


def test_the_pages_folder_is_numbered_as_the_page_list():
    """One list owns the pages' order (convviz.model.pages): every file in pages/ is in it, at
    the place its number says, and the lecture's pages come in its order."""
    from convviz.model.lecture import LECTURE
    from convviz.model.pages import PAGES, url_path

    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py"))
    listed = [path for path, _, _ in PAGES]
    assert listed[0] == "app.py" and listed[1:] == files
    for i, path in enumerate(listed[1:], start=1):
        assert Path(path).name.startswith(f"{i}_"), path
        assert url_path(path) == Path(path).stem.split("_", 1)[1]
    lecture_pages = list(LECTURE.pages())
    assert lecture_pages == sorted(lecture_pages, key=listed.index)

"""Layers: the engine imports NumPy and the standard library only, never a UI or plotting library;
the renderers and the URL state never import Streamlit; the package ships every subpackage.

Each check runs in a fresh interpreter, so modules imported by other tests cannot hide a leak.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import convviz

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("streamlit", "plotly", "matplotlib")

# Every plain module of the engine package; subpackages (convviz.render) may use plotting.
ENGINE_MODULES = [
    "convviz",
    *sorted(f"convviz.{m.name}" for m in pkgutil.iter_modules(convviz.__path__) if not m.ispkg),
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


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_engine_imports_numpy_and_stdlib_only(module):
    loaded = imported_top_level_packages(module)
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


# Renderers draw for the app and for files; the URL state is plain data: no Streamlit in either.
NO_STREAMLIT = [
    *sorted(
        f"convviz.render.{m.name}"
        for m in pkgutil.iter_modules([str(ROOT / "convviz" / "render")])
        if not m.ispkg
    ),
    "convviz.fields",
    "convviz.state",
]


@pytest.mark.parametrize("module", NO_STREAMLIT)
def test_renderers_and_state_never_import_streamlit(module):
    loaded = imported_top_level_packages(module)
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
    assert {"*.js", "*.css"} <= set(config["package-data"]["convviz.ui"])
    assert list((ROOT / "convviz" / "ui").glob("*.js")), "the player's JS lives in convviz/ui"


def test_the_package_declares_what_it_imports():
    """`pip install .` installs every third-party package convviz imports (lazy imports too);
    torch stays optional (the checks that use it say so when it is missing)."""
    import ast
    import importlib.metadata
    import re
    import sys
    import tomllib

    declared = {
        re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0].lower().replace("_", "-")
        for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
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

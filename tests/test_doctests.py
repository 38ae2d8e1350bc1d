"""The examples a reader runs are tests: the README's API snippet and the `>>>` examples of the
engine's public functions (and its number writer) run as doctests in the quick tier."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = ["convviz.engine.conv", "convviz.engine.text", "convviz.engine.spec"]


@pytest.mark.parametrize("name", MODULES)
def test_a_modules_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no example"
    assert result.failed == 0


def test_the_readmes_api_snippet_runs():
    result = doctest.testfile(str(ROOT / "README.md"), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)  # fmt: skip
    assert result.attempted >= 6 and result.failed == 0


def test_every_public_function_has_an_example_and_its_shape():
    """conv2d, conv2d_input, conv2d_weight and conv2d_bias: an example that runs, and a Shape:
    section (the output size's formula on the three that have one)."""
    import convviz

    for name in ("conv2d", "conv2d_input", "conv2d_weight", "conv2d_bias"):
        doc = getattr(convviz, name).__doc__
        assert ">>>" in doc and "Shape:" in doc, name
        if name != "conv2d_bias":
            assert "⌊(H + pad_top + pad_bottom − dilation·(kH − 1) − 1) / stride⌋" in " ".join(
                doc.split()
            ), name

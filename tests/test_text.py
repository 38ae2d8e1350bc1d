"""One rule for writing a number: cells, formulas, captions and exports agree."""

import numpy as np
import pytest

from convviz.engine.arrays import layer
from convviz.engine.formulas import forward_formula
from convviz.engine.spec import ConvSpec
from convviz.engine.text import MINUS, number
from convviz.render.mpl import panel
from convviz.render.plotly.grids import format_value, format_values


@pytest.mark.parametrize(
    ("value", "text"),
    [(3.0, "3"), (-2.0, f"{MINUS}2"), (0.5, "0.5"), (-1.256, f"{MINUS}1.26"), (0.001, "0.001"),
     (1.2e-5, f"1.2e{MINUS}05"), (-0.0, "0"), (-1e-12, "0"), (float("nan"), ""),
     (float("inf"), "∞")],
)  # fmt: skip
def test_number(value, text):
    assert number(value) == text


def test_a_small_value_reads_the_same_in_a_cell_an_export_and_a_formula():
    spec = ConvSpec.create((1, 1, 2, 2), (1, 1, 1, 1))
    x = np.array([[[[0.001, 2.0], [3.0, 4.0]]]])
    lay = layer(spec, x, np.ones(spec.weight_shape), np.ones(spec.output_shape))
    assert format_value(0.001) == panel.number(0.001) == "0.001"
    assert format_values(x[0, 0])[0, 0] == "0.001"
    assert "0.001" in forward_formula(lay.forward, 0, 0, 0, 0).latex(numeric=True)

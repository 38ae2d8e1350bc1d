"""The plotly adapter (render/plotly/adapter.py) against plotly's own public results, on every
figure the pages draw: its JSON for the browser is plotly's `to_dict`'s, and the figures it
builds without validation pass plotly's full validation. A plotly release that moves what the
adapter reads fails here."""

from __future__ import annotations

import json
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio
import pytest
from streamlit.testing.v1 import AppTest

from convviz.model.pages import PAGES
from convviz.render.plotly.adapter import Figure, figure, sent, wire
from convviz.ui import compute

APP = str(Path(__file__).resolve().parents[1] / "app.py")
pytestmark = pytest.mark.apptest  # the figures come from every page, run in AppTest


@pytest.fixture(scope="module", params=["recitation-s2", "classroom"])
def page_figures(request) -> list[Figure]:
    """Every figure the pages built for a preset, in both modes (kept by the shared cache)."""
    compute.CACHE.clear()
    for pres in ("0", "1"):
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params.update(preset=request.param, pres=pres)
        at.run()
        for path, _, _ in PAGES[1:]:
            at.switch_page(path).run()
            assert not at.exception, (path, [e.value for e in at.exception])
    figures = [v for v in compute.CACHE.values() if isinstance(v, Figure)]
    assert len(figures) >= 10
    return figures


def test_the_browser_gets_what_plotly_would_send(page_figures):
    for fig in page_figures:
        ours = json.loads(pio.to_json(wire(fig), validate=False))
        plotlys = json.loads(pio.to_json(fig.to_dict(), validate=False))
        assert ours == plotlys


def test_streamlit_is_handed_the_wire_once(page_figures):
    """st.plotly_chart reads a figure through plotly.tools (its to_dict alone): what it gets is
    the wire, made once per figure."""
    import plotly.tools

    for fig in page_figures[:3]:
        handed = sent(fig)
        assert sent(fig) is handed
        assert plotly.tools.return_figure_from_figure_or_data(handed, True) is handed.to_dict()
        assert json.loads(pio.to_json(handed.to_dict(), validate=False)) == json.loads(
            pio.to_json(wire(fig), validate=False)
        )


def test_every_figure_passes_plotlys_validation(page_figures):
    for fig in page_figures:
        go.Figure(fig.to_dict())  # raises on a property plotly.js does not know


def test_typed_arrays_as_plotly_writes_them():
    import numpy as np

    fig = figure(
        [{"type": "heatmap", "z": np.arange(6, dtype=np.int64).reshape(2, 3),
          "x": np.array([0.5, 1.5]), "text": np.array([["a", "b"]], dtype=object),
          "customdata": np.array([2**40, 1])}],
        {"xaxis": {"range": np.array([0, 1])}},
    )  # fmt: skip
    assert wire(fig) == json.loads(json.dumps(fig.to_dict(), cls=_Arrays))


class _Arrays(json.JSONEncoder):
    def default(self, o):
        return o.tolist()

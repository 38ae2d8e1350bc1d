"""Every page runs cleanly across input sizes and strides a student is likely to try: one table
of links × every page the sidebar lists."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from convviz.model.pages import PAGES as APP_PAGES

pytestmark = pytest.mark.apptest  # every page at many sizes, in AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGES = [path for path, _, _ in APP_PAGES]  # every page, as the sidebar lists them

QUERIES = [
    pytest.param({"H": "16", "W": "16"}, id="16x16"),
    pytest.param(
        {"H": "33", "W": "20", "sh": "3", "same_axes": "0", "sw": "2"}, id="33x20-stride3x2"
    ),
    pytest.param(
        {"H": "12", "W": "9", "kH": "4", "kW": "2", "dh": "2", "pad": "same", "pres": "1"},
        id="even-kernel-same-dilated-pres",
    ),
    pytest.param(
        {"H": "5", "W": "5", "cin": "3", "cout": "4", "batch": "2", "mode": "circular"},
        id="channels-circular",
    ),
    pytest.param(
        {"H": "6", "W": "7", "kH": "3", "kW": "2", "pad": "full", "mode": "replicate"},
        id="full-replicate",
    ),
]


# (not named `page`: pytest-playwright would take a parameter of that name for its fixture)
@pytest.mark.parametrize("page_file", PAGES, ids=[Path(p).stem for p in PAGES])
@pytest.mark.parametrize("query", QUERIES)
def test_page_runs_without_error(page_file, query):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query)
    at.run()
    if page_file != "app.py":
        at.switch_page(page_file).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert not at.warning, [w.value for w in at.warning]
    # its figures, its checks' tables, or (a matrix past 64 cells) a note saying why not
    shown = at.get("plotly_chart") or at.table or at.info
    assert shown, "the page draws its figures or tables, or says why not"

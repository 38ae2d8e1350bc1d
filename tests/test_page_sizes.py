"""Every page runs cleanly across input sizes and strides a student is likely to try."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from convviz.ui.controls import PAGES as APP_PAGES

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGES = [path for path, _, _ in APP_PAGES]  # every page, as the sidebar lists them


@pytest.mark.parametrize("page", PAGES, ids=[Path(p).stem for p in PAGES])
@pytest.mark.parametrize(
    "query",
    [
        {"H": "16", "W": "16"},
        {"H": "33", "W": "20", "sh": "3", "same_axes": "0", "sw": "2"},
        {"H": "12", "W": "9", "kH": "4", "kW": "2", "dh": "2", "pad": "same", "pres": "1"},
        {"H": "5", "W": "5", "cin": "3", "cout": "4", "batch": "2", "mode": "circular"},
    ],
    ids=["16x16", "33x20-stride3x2", "even-kernel-same-dilated-pres", "channels-circular"],
)
def test_page_runs_without_error(page, query):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query)
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert not at.warning, [w.value for w in at.warning]
    # its figures, its checks' tables, or (a matrix past 64 cells) a note saying why not
    shown = at.get("plotly_chart") or at.table or at.info
    assert shown, "the page draws its figures or tables, or says why not"

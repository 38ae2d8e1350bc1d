"""Big layers readable, the pages (AppTest): on qa-channels (5 channels of 100×100, 10 filters of
5×5×5) every big grid comes with a close-up that has numbers (∂L/∂x, y, ∂L/∂w's operands), a
click on it or the keyboard picker moves it, and the selected cell's formula is shown."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.apptest
APP = str(Path(__file__).resolve().parents[1] / "app.py")


def open_page(page: str, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"preset": "qa-channels", **query})
    if page != "app.py":
        at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def zooms(at: AppTest) -> dict[str, list[str]]:
    """Each close-up chart's panel titles (those whose titles end '(zoom)'), by chart key."""
    out = {}
    for chart in at.get("plotly_chart"):
        fig = json.loads(chart.proto.spec)
        titles = [a["text"] for a in fig["layout"]["annotations"] if "(zoom)" in a.get("text", "")]
        numbered = [t for t in fig["data"] if t.get("text") is not None]
        if titles:
            assert numbered, "a close-up writes its numbers"
            out[chart.proto.id.split("-")[-1]] = titles
    return out


@pytest.mark.parametrize(
    ("page", "query", "wants"),
    [
        ("app.py", {"sel": "grad_x:99:3"}, ("y[n=0, k=0]", "∂L/∂x[n=0, c=0]")),
        ("pages/2_Input_gradient.py", {"sel": "grad_x:99:3"}, ("∂L/∂x[n=0, c=0]",)),
        ("pages/6_Channels.py", {"sel": "grad_w:1:2"}, ("input x[n=0, c=0]", "∂L/∂x[n=0, c=0]")),
        ("pages/3_Weight_gradient.py", {}, ("input x[n=0, c=0]",)),
        ("pages/1_Forward.py", {}, ("input x[n=0, c=0]",)),
    ],
    ids=["overview", "input-gradient", "channels", "weight-gradient", "forward"],
)
def test_every_big_grid_has_a_close_up(page, query, wants):
    at = open_page(page, **query)
    titles = " ".join(t for ts in zooms(at).values() for t in ts)
    for want in wants:
        assert want in titles, (want, titles)


def test_the_close_up_follows_the_selection_and_says_its_formula():
    at = open_page("app.py", sel="grad_x:99:3")
    fig = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if "zoom" in c.proto.id)
    words = re.sub(r"<[^>]+>", " ", " ".join(a["text"] for a in fig["layout"]["annotations"]))
    assert "rows 89…99, columns 0…10: around the selected cell" in " ".join(words.split())
    assert any("∂L/∂x" in s.value for s in at.header)  # the formula box of that cell
    assert at.latex

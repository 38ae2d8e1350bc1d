"""One bound on a link's length (convviz.model.state.MAX_LINK, 12 KiB of query): the app never
writes a longer one (it leaves the longest edits out, the session keeps them, the share link says
so), and a link at the bound loads through the hall's nginx and through a plain server
(tests/test_hall_limits.py).
"""

from __future__ import annotations

from urllib.parse import urlencode

import numpy as np
import pytest

from convviz.model.fields import encode_array
from convviz.model.state import LEFT_OUT_FIRST, MAX_LINK, bounded


def test_a_link_within_the_bound_is_kept_whole():
    query = {"preset": "classroom", "x": "1,2,3", "sel": "y:0:1"}
    assert bounded(query) == (query, [])


def test_a_longer_link_leaves_out_the_longest_edits_first_and_keeps_the_rest():
    rng = np.random.default_rng(0)
    query = {"H": "16", "W": "16", "cin": "8", "seed": "3", "sel": "y:1:2", "tgt": "typed"}
    query |= {"x": encode_array(rng.integers(-99, 99, 2048)), "w": "1,0,-1,2,0,-2,1,0,-1"}
    query |= {"t": encode_array(rng.integers(-999, 999, 900))}
    assert len(urlencode(query)) > MAX_LINK
    out, left = bounded(query)
    assert len(urlencode(out)) <= MAX_LINK
    assert left == ["x"]  # the longest; the typed target alone fits with the rest
    assert {k: v for k, v in query.items() if k != "x"} == out
    query["t"] = encode_array(rng.integers(-999, 999, 3000))  # now the longest
    out, left = bounded(query)
    assert left == ["t"] and len(urlencode(out)) <= MAX_LINK and out["x"] == query["x"]
    query["x"] = encode_array(rng.integers(-99, 99, 2500))  # too long even alone
    out, left = bounded(query)
    assert left == ["t", "x"] and len(urlencode(out)) <= MAX_LINK and out["w"] == query["w"]
    assert set(LEFT_OUT_FIRST) == {"x", "w", "g", "t"}


@pytest.mark.apptest
def test_the_app_never_writes_a_link_over_the_bound_and_says_what_it_left_out():
    from tests.apptest_pages import open_page

    rng = np.random.default_rng(1)
    x = encode_array(rng.integers(-999, 999, 4 * 16 * 16) / 10)  # 1,024: the most a link holds
    t = encode_array(rng.integers(-9999, 9999, 4 * 14 * 14) / 100)
    query = {"H": "16", "W": "16", "cin": "4", "cout": "4", "kH": "3", "kW": "3", "x": x}
    query |= {"tgt": "typed", "t": t}
    assert len(urlencode(query)) > MAX_LINK  # the link as a session may ask for it
    at = open_page("pages/4_Learning.py", 60, **query)
    assert not at.exception, [e.value for e in at.exception]
    written = {k: at.query_params[k] for k in at.query_params}
    written = {k: v[0] if isinstance(v, list) else v for k, v in written.items()}
    assert len(urlencode(written)) <= MAX_LINK, len(urlencode(written))
    assert written.get("t") == t and "x" not in written  # the longest edit left out
    said = " ".join(c.value for c in at.caption)
    assert "`x` make a link longer than a link may be (12 KiB)" in said, said
    share = next(c.value for c in at.caption if "Share this view" in c.value)
    assert "x=" not in share.split("(<", 1)[1] and len(share.split("(<", 1)[1]) < MAX_LINK + 200

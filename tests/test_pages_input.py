"""Pages through Streamlit's AppTest: the URL holds the view and reproduces it; bad input (a
malformed link, an impossible layer, a refused field, values typed in) is explained and the last
valid view stays drawn.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs

import numpy as np
import pytest
from apptest_pages import (
    CHANNELS,
    FORWARD,
    INPUT_GRAD,
    OVERVIEW,
    WEIGHT_GRAD,
    assert_clean,
    figures,
    headers,
    heat,
    open_page,
    open_picker,
    query,
    shown,
    side,
    side_items,
    slider_steps,
    state,
)

from convviz.engine.text import echo
from convviz.model.fields import DEFAULTS, FIELDS, KERNEL_CHOICES
from convviz.model.pages import PAGES as APP_PAGES
from convviz.ui.compute import compute_layer, value_key
from convviz.ui.editors import EDITORS

pytestmark = pytest.mark.apptest  # the URL and bad input, in AppTest


# --- the URL --------------------------------------------------------------------------------------


def test_url_reflects_every_field():
    at = open_page()
    assert query(at)["preset"] == "classroom"
    assert query(at)["sh"] == "2"
    side(at, "sh").set_value(1).run()
    side(at, "W").set_value(5).run()
    q = query(at)
    assert (q["sh"], q["W"], q["preset"]) == ("1", "5", "custom")
    share = next(c.value for c in at.main.caption if "Share this view" in c.value)
    assert "sh=1" in share and "W=5" in share


def test_a_full_url_reproduces_the_view():
    at = open_page(FORWARD)
    side(at, "sh").set_value(1).run()
    side(at, "pad").set_value("same").run()
    side(at, "kernel").set_value("laplacian").run()
    side(at, "seed").set_value(3).run()
    open_picker(at)
    at.number_input(key="pick_row").set_value(2)
    at.number_input(key="pick_col").set_value(5)
    at.button(key="pick_go").click().run()
    assert_clean(at)
    url = query(at)
    assert url["sel"] == "y:2:5"
    again = open_page(FORWARD, **url)
    assert_clean(again)
    assert not again.warning
    assert query(again) == url
    assert headers(again) == headers(at) == ["Output cell y[2, 5]"]
    assert figures(again) == figures(at)
    assert [lt.value for lt in again.latex] == [lt.value for lt in at.latex]


def test_preset_in_the_url_then_overrides():
    at = open_page(FORWARD, preset="recitation-s1", kernel="sobel y", W="4", sh="2")
    assert_clean(at)
    assert heat(at, "x:values").shape == (3, 4)
    assert heat(at, "y:values").shape == (1, 2)
    assert state(at)["kernel"] == "sobel y"


# --- bad input and values typed in ----------------------------------------------------------------


MALFORMED = [
    ({"H": "abc"}, "H=abc"),
    ({"kH": "99"}, "kH=99"),
    ({"mode": "bogus"}, "mode=bogus"),
    ({"same_axes": "maybe"}, "same_axes=maybe"),
    ({"preset": "nope"}, "preset=nope"),
    ({"step": "0"}, "step=0"),
    ({"sh": "-1"}, "sh=-1"),
    ({"sel": "junk"}, "sel"),  # not 'grid:row:col'
    ({"sel": "y:9:9"}, "sel"),  # outside the 4×4 output
]


@pytest.mark.parametrize(
    ("params", "words"),
    [pytest.param(q, w, id="&".join(f"{k}={v}" for k, v in q.items())) for q, w in MALFORMED],
)
def test_malformed_url_values_are_named_and_ignored(params, words):
    at = open_page(FORWARD, **params)
    assert not at.exception
    messages = [shown(m.value) for m in [*at.warning, *at.error]]
    assert any(words in m for m in messages), messages
    assert all(len(m) < 300 for m in messages)
    assert heat(at, "y:values").shape == (4, 4)  # the defaults' view, drawn
    # the warning stays through reruns (the page reruns once to fit the screen) until the
    # reader changes something
    at.run()
    assert at.warning
    side(at, "seed").set_value(5).run()
    assert not at.warning


@pytest.mark.parametrize(
    ("x", "words"),
    [
        ("1,2", "has 2 values"),
        ("1,nan," + ",".join(["1"] * 47), "x value `nan` is not a finite number"),
        ("a,b", "not a number"),
    ],
    ids=["wrong-count", "nan", "text"],
)
def test_bad_edited_values_in_the_url(x, words):
    for page_file in (OVERVIEW, FORWARD, WEIGHT_GRAD):
        at = open_page(page_file, x=x)
        assert not at.exception
        assert not at.error
        (warning,) = at.warning
        assert words in shown(warning.value) and "edits reset" in shown(warning.value)
        assert figures(at), page_file
        assert heat(at, "x:values").shape == (9, 9)


def test_wrong_count_edit_is_reset_as_the_message_says():
    """The message says the edits were reset: the next run must not repeat it."""
    at = open_page(FORWARD, x="1,2")
    assert "edits reset" in shown(at.warning[0].value)
    side(at, "pres").set_value(True).run()  # any unrelated rerun
    assert not at.error and not at.warning, [e.value for e in at.error]
    assert "x" not in query(at)


def test_impossible_url_combination_explains_and_draws_defaults():
    at = open_page(FORWARD, H="2", W="2", kH="5", kW="5", pad="valid")
    assert not at.exception
    (err,) = at.error
    assert "spans" in err.value and "padded input" in err.value
    assert heat(at, "y:values").shape == (4, 4)


def test_impossible_combination_keeps_the_last_valid_charts():
    at = open_page(FORWARD)
    side(at, "pad").set_value("valid").run()
    side(at, "kH").set_value(5).run()
    assert_clean(at)
    valid = figures(at)
    assert heat(at, "y:values").shape == (2, 3)
    side(at, "H").set_value(2).run()
    assert not at.exception
    (err,) = at.error
    assert "spans 5 rows" in err.value and "padded input has only 2" in err.value
    assert figures(at) == valid  # the last valid view stays on screen
    # the address and the share link hold the layer drawn: a link shared (or reloaded) while an
    # impossible one is typed opened the default layer under a sidebar of impossible shapes
    assert (query(at)["H"], query(at)["kH"]) == ("7", "5")
    share = next(c.value for c in at.main.caption if "Share this view" in c.value)
    assert "H=7&" in share and "H=2&" not in share
    assert state(at)["H"] == 2  # the sidebar keeps what was typed, to be fixed
    at.switch_page(WEIGHT_GRAD).run()
    assert len(at.error) == 1 and not at.exception
    assert heat(at, "grad_w:values").shape == (5, 3)
    # fixing it clears the message
    at.switch_page(FORWARD).run()
    side(at, "H").set_value(6).run()
    assert_clean(at)
    assert heat(at, "y:values").shape == (1, 3)
    # a first visit's own impossible address is kept as it came (nothing valid was drawn yet)
    at = open_page(FORWARD, pad="valid", kH="5", H="2")
    assert at.error and query(at)["H"] == "2"


@pytest.mark.parametrize(
    ("name", "typed", "says"),
    [
        ("H", None, "needs a number"),
        ("kW", None, "needs a number"),
        ("seed", None, "needs a number"),
        ("H", 500, f"takes 1 to {FIELDS['H'].hi}"),
        ("kW", 0, f"takes 1 to {FIELDS['kW'].hi}"),
    ],
)
def test_an_emptied_or_out_of_range_number_field_keeps_its_number_and_says_so(name, typed, says):
    """Emptying a sidebar number field made it its minimum (H = 1), silently, and the layer
    custom; a number past its range stayed in the field, marked only by a red icon, beside a
    layer that kept the last one. The field shows the layer's number again; a toast says why."""
    at = open_page(FORWARD)
    before, drawn = dict(state(at)), figures(at)
    side(at, name).set_value(typed).run()
    assert_clean(at)
    assert state(at) == before and figures(at) == drawn
    assert side(at, name).value == before[name]  # the field shows the number again
    (toast,) = at.toast
    assert toast.value == f"{side(at, name).label} {says}: it stays {before[name]}."


def test_edited_values_follow_and_wrong_counts_are_refused():
    at = open_page(FORWARD, preset="d2l")
    st = state(at)
    st.update(x=",".join(["1"] * 9), preset="custom")  # an edit as the data editor stores it
    at.run()
    assert_clean(at)
    np.testing.assert_array_equal(heat(at, "y:values"), [[6, 6], [6, 6]])
    assert query(at)["x"] == ",".join(["1"] * 9)
    state(at).update(x="1,2,3")
    at.run()
    assert not at.exception
    assert "has 3 values" in at.error[0].value
    np.testing.assert_array_equal(heat(at, "y:values"), [[6, 6], [6, 6]])
    # a shape change drops edits that no longer fit
    side(at, "H").set_value(4).run()
    assert_clean(at)
    assert "x" not in query(at)


def test_a_kernel_size_change_keeps_the_values_that_still_fit():
    """A lecturer mistypes the kernel size and corrects it: the recitation's numbers survive the
    impossible layer (the last valid view is shown meanwhile); a valid new size re-rolls only
    the arrays whose shape it changes (w, ∂L/∂y), never x."""
    at = open_page(FORWARD, preset="recitation-s1")
    before = {name: state(at)[name] for name in ("x", "w", "g")}
    kh = state(at)["kH"]
    assert all(before.values()) and kh > 1
    side(at, "kH").set_value(5).run()  # taller than the padded input
    assert not at.exception and "Cannot compute this layer" in at.error[0].value
    side(at, "kH").set_value(kh).run()
    assert_clean(at)
    assert {name: state(at)[name] for name in before} == before
    side(at, "kH").set_value(kh - 1).run()  # a valid layer with other shapes
    assert_clean(at)
    assert state(at)["x"] == before["x"]
    assert state(at)["w"] == "" and state(at)["g"] == ""


def test_typed_in_values_read_typed_in_and_a_chosen_source_replaces_them():
    """recitation-s2 types in its kernel and ∂L/∂y: the sidebar read "Kernel: random" and
    "grad_out: ones" beside them, and choosing a source did nothing (the typed values won).
    They read "typed in"; every source stays a choice, the one they replaced too, and choosing
    it replaces them (x's typed values stay)."""
    at = open_page(FORWARD, preset="recitation-s2")
    kernel, gout = side(at, "kernel"), side(at, "gout")
    assert kernel.value == "typed in" and gout.value == "typed in"
    assert "random" in kernel.options and len(kernel.options) == 1 + len(KERNEL_CHOICES)
    assert state(at)["kernel"] == "random" and state(at)["w"] and state(at)["g"]
    w_before = compute_layer(value_key(state(at))).forward.w.copy()
    kernel.set_value("random").run()  # the source the typed values had replaced
    assert_clean(at)
    s = state(at)
    assert s["w"] == "" and s["g"] and s["x"]  # the kernel's values only
    assert side(at, "kernel").value == "random"
    assert "typed in" not in side(at, "kernel").options
    assert not np.array_equal(compute_layer(value_key(s)).forward.w, w_before)
    gout = side(at, "gout")
    gout.set_value("typed in").run()  # keeps them
    assert state(at)["g"]


def test_default_state_is_the_classroom_preset():
    at = open_page()
    assert state(at)["preset"] == DEFAULTS["preset"] == "classroom"


def test_a_stride_change_forgets_values_that_no_longer_fit():
    """recitation-s2 carries its own ∂L/∂y (2×2); at stride 1 the output is 3×3: the layer follows
    the stride (∂L/∂y is drawn afresh) instead of keeping the last valid one."""
    at = open_page(FORWARD, preset="recitation-s2")
    assert slider_steps(figures(at)[0]) == 4
    side(at, "sh").set_value(1).run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert slider_steps(figures(at)[0]) == 9
    assert query(at)["x"] and "g" not in query(at)  # x still fits; ∂L/∂y did not


@pytest.mark.parametrize("page_file", [OVERVIEW, FORWARD, INPUT_GRAD, WEIGHT_GRAD, CHANNELS])
@pytest.mark.parametrize("field", ["x", "w", "g"])
def test_overflowing_values_get_a_message_and_the_last_valid_view(page_file, field):
    """9 values of 1e308 in a link used to crash formulas (inf) and fail the reference check."""
    size = {"x": 49, "w": 9, "g": 16}[field]  # the default layer: 7×7 ⋆ 3×3 → 4×4
    at = open_page(page_file, **{field: ",".join(["1e308"] * size)})
    assert_clean(at)
    messages = [shown(m.value) for m in [*at.error, *at.warning]]
    assert any(f"{field} value `1e308` is too large" in m for m in messages), messages


@pytest.mark.parametrize(
    "value",
    ["[click me](https://example.com)", "![x](http://127.0.0.1:9/track.png)", "9" * 20_000],
    ids=["link", "image", "20k-chars"],
)
def test_echoed_link_values_are_text_and_short(value):
    at = open_page(FORWARD, H=value)
    assert_clean(at)
    (warning,) = [w.value for w in at.warning]
    assert len(warning) < 200, len(warning)
    quoted = echo(f"H={value}")  # a code span: Markdown renders nothing in it (the DOM: Chromium)
    assert quoted in warning and quoted.startswith("`"), warning
    assert not re.search(r"\]\(|!\[|<", warning.replace(quoted, "")), warning


def test_edited_values_keep_every_digit():
    from convviz.model.fields import decode_array, encode_array

    a = np.array([123456789.0, 0.1, -2.5, 3.0, 1e-7, 1 / 3])
    assert np.array_equal(decode_array(encode_array(a), a.shape, "x"), a)


def test_value_editors_are_made_once_opened():
    """The three value grids (and the image loader) come when their expander is opened."""
    at = open_page()
    assert not at.get("dataframe") and not at.get("file_uploader")
    at.session_state[EDITORS] = True  # what opening the expander sends
    at.run()
    assert_clean(at)
    grids = at.get("dataframe")
    assert len(grids) == 3 and at.get("file_uploader")


def test_page_links_carry_the_view():
    """A page link opened in a new tab (a plain navigation, no session) shows the same layer:
    the sidebar's links (convviz/ui/nav.js, in the sidebar's component) carry the view's query."""
    at = open_page(FORWARD)
    side(at, "sh").set_value(1).run()
    links = side_items(at)[1]["nav"]  # drawn by the sidebar's component, above its controls
    assert not [el for el in at.sidebar.get("bidi_component")
                if el.proto.component_name == "convviz_nav"]  # fmt: skip
    assert [p["label"] for p in links["pages"]] == [label for _, label, _ in APP_PAGES]
    query = parse_qs(links["query"])
    assert query["sh"] == ["1"] and query["preset"] == ["custom"], links["query"]


def test_the_overviews_way_on_carries_the_view():
    """The Overview's "Where next" links (the same element as the sidebar's, under a heading) go
    to every other page with the view's query."""
    at = open_page(OVERVIEW)
    side(at, "sh").set_value(1).run()
    (nav,) = [el.proto for el in at.main.get("bidi_component")
              if el.proto.component_name == "convviz_nav"]  # fmt: skip
    links = json.loads(nav.bytes)
    assert links["title"] == "Where next" and links["heading"]
    assert [p["label"] for p in links["pages"]] == [label for _, label, _ in APP_PAGES[1:]]
    query = parse_qs(links["query"])
    assert query["sh"] == ["1"] and query["preset"] == ["custom"], links["query"]


def test_a_tied_stride_is_both_axes_stride_in_the_link():
    """'Same stride and dilation for both axes' ticked, a link's sh=3 drew a 3×3 stride but the
    page's link kept classroom's sw=2 (two strides in one address), and unticking the box
    brought the columns' 2 back; the columns now follow the rows, from a link or a slider."""
    at = open_page(FORWARD, preset="classroom", sh="3")
    assert_clean(at)
    assert (query(at)["sh"], query(at)["sw"]) == ("3", "3")
    side(at, "dh").set_value(2).run()
    assert (query(at)["dh"], query(at)["dw"]) == ("2", "2")
    side(at, "same_axes").uncheck().run()
    assert side(at, "sw").value == 3 and side(at, "dw").value == 2


def _type_into_x(at, text: str):
    """What typing `text` over x[0, 1] in the Overview's grid sends (the editor's edited rows)."""
    grid = at.get("dataframe")[0]
    key = grid.proto.id.split("-", 2)[2]  # '$$ID-<hash>-<the editor's key>'
    at.session_state[key] = {"edited_rows": {0: {"1": text}}, "added_rows": [], "deleted_rows": []}
    return at.run()


def test_typed_values_are_read_as_written_or_refused_with_a_message():
    """The Overview's grids of x, w and ∂L/∂y take what a person types: '1e3' is 1000 and '1,5'
    is 1.5 (a number cell took them as 13 and 15, dropping the keys it did not expect), and
    'abc' is refused with a message (it was ignored without one); the layer keeps its numbers."""
    at = open_page(preset="recitation-s2")
    at.session_state[EDITORS] = True  # the expander opened
    at.run()
    for typed, value in (("1e3", "1000"), ("1,5", "1.5")):
        _type_into_x(at, typed)
        assert_clean(at)
        assert query(at)["x"].startswith(f"1,{value},3"), (typed, query(at)["x"])
    before = at.get("dataframe")[0].proto.id
    _type_into_x(at, "abc")
    assert any("input x `abc` is not a number" in w.value for w in at.warning)
    assert query(at)["x"].startswith("1,1.5,3")
    # the grid is drawn anew, with the number kept: the browser's grid kept the refused text
    # ('1e400' beside a warning that the app uses the last numbers); typing on works
    grid = at.get("dataframe")[0]
    assert grid.proto.id != before and grid.value.iloc[0, 1] == "1.5"
    _type_into_x(at, "7")
    assert_clean(at)
    assert query(at)["x"].startswith("1,7,3")

"""Pages through Streamlit's AppTest (no browser): every page × preset, every control, the URL,
bad input, the keyboard cell picker and the input-gradient storyboard.

Figures are read as the page sent them (`plotly_chart` protos); heatmap z arrives as plotly's
base64 typed arrays, decoded by `z_of`.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from convviz.presets import PRESETS, PRESETS_BY_KEY
from convviz.render.theme import theme_for
from convviz.state import DEFAULTS, FIELDS, KERNEL_CHOICES
from convviz.text import echo
from convviz.ui import views
from convviz.ui.compute import MAX_SCATTER_STEPS, compute_layer, formula_at, value_key
from convviz.ui.controls import CHANNELS_OPEN
from convviz.ui.controls import PAGES as APP_PAGES
from convviz.ui.editors import EDITORS
from convviz.ui.views import PICKER

APP = str(Path(__file__).resolve().parents[1] / "app.py")
OVERVIEW = "app.py"
FORWARD = "pages/1_Forward.py"
INPUT_GRAD = "pages/2_Input_gradient.py"
WEIGHT_GRAD = "pages/3_Weight_gradient.py"
CHANNELS = "pages/4_Channels.py"
PAGES = (OVERVIEW, FORWARD, INPUT_GRAD, WEIGHT_GRAD, CHANNELS)
SLOW = {"qa-channels"}  # 5×100×100 input, 10 filters: seconds, not tenths


# --- helpers -------------------------------------------------------------------------------------


def open_page(page: str = OVERVIEW, timeout: float = 30, **query: str) -> AppTest:
    """A fresh session on `page`, its URL seeded with `query`, after its first run."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for name, value in query.items():
        at.query_params[name] = value
    if page != OVERVIEW:
        at.switch_page(page)
    return at.run()


def open_picker(at: AppTest) -> AppTest:
    """Open the keyboard cell picker (what expanding it sends: its controls come on that rerun)."""
    at.session_state[PICKER] = True
    return at.run()


def assert_clean(at: AppTest) -> None:
    """No exception and no st.error on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def figures(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def z_of(trace: dict) -> np.ndarray:
    """A heatmap's z as an array, whether sent as a nested list or a base64 typed array."""
    z = trace["z"]
    if isinstance(z, dict):
        shape = tuple(int(s) for s in str(z["shape"]).split(","))
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape)
    return np.array(z, dtype=float)


def trace(fig: dict, name: str) -> dict:
    found = [d for d in fig["data"] if d.get("name") == name]
    assert found, f"no trace {name!r} in {[d.get('name') for d in fig['data']]}"
    return found[0]


def heat(at: AppTest, name: str, chart: int = 0) -> np.ndarray:
    """The z of the named heatmap in the page's chart number `chart`."""
    return z_of(trace(figures(at)[chart], name))


def slider_steps(fig: dict) -> int:
    """How many steps the page's player offers for this animated figure."""
    return len(fig["layout"]["meta"]["player"]["names"])


def shown(markdown: str) -> str:
    """A message as the page renders it: markdown's backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", markdown)


def query(at: AppTest) -> dict[str, str]:
    return {k: str(v) for k, v in dict(at.query_params).items()}


def shapes_table(at: AppTest) -> dict[str, str]:
    df = at.table[0].value
    return dict(zip(df["array"], df["shape"]))


def dims(shape) -> str:
    return " × ".join(map(str, shape))


def headers(at: AppTest) -> list[str]:
    return [s.value for s in at.header]


def side_number(at: AppTest, name: str):
    return at.sidebar.number_input(key=f"w_{name}")


def side_select(at: AppTest, name: str):
    return at.sidebar.selectbox(key=f"w_{name}")


def state(at: AppTest) -> dict:
    return at.session_state["cv_state"]


# --- every page × every preset -------------------------------------------------------------------


def check_overview(at, p):
    spec = p.spec()
    rows = shapes_table(at)
    N, C = spec.batch, spec.in_channels
    assert rows["x"] == dims(spec.input_shape)
    assert rows["x padded"] == dims((N, C, *spec.padded_size))
    assert rows["w"] == dims(spec.weight_shape)
    assert rows["y"] == dims(spec.output_shape)
    assert rows["∂L/∂x"] == dims(spec.input_shape)
    assert rows["∂L/∂w"] == dims(spec.weight_shape)
    arithmetic = at.code[0].value  # the output-size arithmetic, ending in the size per axis
    assert arithmetic.splitlines()[0].endswith(f"= {spec.out_size[0]}")
    assert arithmetic.splitlines()[1].endswith(f"= {spec.out_size[1]}")
    assert len(figures(at)) == 2


def check_forward(at, p):
    spec = p.spec()
    fig, *rest = figures(at)  # the animation; at sizes drawn without numbers, the kernel too
    numbers = max(spec.padded_size) <= theme_for(False).max_text_cells
    assert [trace(f, "w:values") and "kernel" for f in rest] == ([] if numbers else ["kernel"])
    assert z_of(trace(fig, "x:values")).shape == spec.padded_size
    assert z_of(trace(fig, "w:values")).shape == spec.kernel_size
    assert z_of(trace(fig, "y:values")).shape == spec.out_size
    cells = spec.out_size[0] * spec.out_size[1]
    assert slider_steps(fig) == len(fig["frames"])
    if cells <= 400:  # every window position is a frame; larger sweeps are sampled
        assert slider_steps(fig) == cells
    else:
        assert 2 <= slider_steps(fig) <= 401
    oh, ow = spec.out_size  # nothing selected: the sum of the cell the player opens on, the last
    assert headers(at)[0] == f"Output cell y[{oh - 1}, {ow - 1}]"


def check_input_grad(at, p):
    spec = p.spec()
    figs = figures(at)
    assert z_of(trace(figs[0], "grad_out:values")).shape == spec.out_size
    if spec.out_size[0] * spec.out_size[1] <= MAX_SCATTER_STEPS:
        assert len(figs) == 2  # the storyboard step and the scatter route
        assert z_of(trace(figs[1], "grad_x_padded:values")).shape == spec.padded_size
    else:
        assert len(figs) == 1
        assert f"{MAX_SCATTER_STEPS:,} stamps (output cells × filters)" in at.info[0].value
    assert any(h.startswith("Gradient of input x cell") for h in headers(at))


def check_weight_grad(at, p):
    spec = p.spec()
    figs = figures(at)
    # x̃ whole, as on Forward: a remainder (no window reaches it) is marked, not cut off
    assert z_of(trace(figs[0], "x:values")).shape == spec.padded_size
    assert z_of(trace(figs[0], "grad_w:values")).shape == spec.kernel_size
    assert z_of(trace(figs[0], "grad_out:values")).shape == spec.out_size
    kh, kw = spec.kernel_size  # nothing selected: the last tap, where the player opens
    assert headers(at)[0] == f"Weight cell [{kh - 1}, {kw - 1}] of filter k=0, channel c=0"


def check_channels(at, p):
    spec = p.spec()
    K, C = spec.out_channels, spec.in_channels
    summary = at.markdown[0].value
    channels = f"{C} channel" + ("s" if C != 1 else "")
    assert f"{channels} of {spec.in_size[0]}×{spec.in_size[1]}" in summary
    assert f"**output** {K}×{spec.out_size[0]}×{spec.out_size[1]}" in summary
    # the grids' heatmaps (their click targets, invisible markers, follow them)
    x_grid, w_grid, tile, sum_grid, gx_grid = figures(at)
    x_grid, w_grid, sum_grid, gx_grid = (
        [d for d in g["data"] if d["type"] == "heatmap"]
        for g in (x_grid, w_grid, sum_grid, gx_grid)
    )
    assert [z_of(d).shape for d in x_grid] == [spec.in_size] * C
    assert [z_of(d).shape for d in w_grid] == [spec.kernel_size] * (K * C)
    tiles = {t["name"]: z_of(t) for t in tile["data"] if t.get("name", "").endswith(":values")}
    assert tiles["grad_w:values"].shape == spec.kernel_size  # the outlined tile, with its operands
    assert len(sum_grid) == K + 1
    assert [z_of(d).shape for d in gx_grid] == [spec.in_size] * C


CHECKS = {
    OVERVIEW: check_overview,
    FORWARD: check_forward,
    INPUT_GRAD: check_input_grad,
    WEIGHT_GRAD: check_weight_grad,
    CHANNELS: check_channels,
}


# (not named `page`: pytest-playwright would take a parameter of that name for its fixture)
@pytest.mark.parametrize("page_file", PAGES, ids=lambda p: Path(p).stem)
@pytest.mark.parametrize("key", [p.key for p in PRESETS])
def test_every_page_and_preset_renders_its_shapes(page_file, key):
    at = open_page(page_file, timeout=60 if key in SLOW else 30, preset=key)
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    assert state(at)["preset"] == key
    CHECKS[page_file](at, PRESETS_BY_KEY[key])


def test_classroom_overview_names_the_output_shape():
    at = open_page(preset="classroom")
    assert shapes_table(at)["y"] == "1 × 1 × 4 × 4"
    assert "Classroom" in at.info[0].value
    assert at.success and "agree with" in at.success[0].value  # the live loop-reference check


def test_d2l_forward_gives_the_books_answer():
    at = open_page(FORWARD, preset="d2l")
    np.testing.assert_array_equal(heat(at, "y:values"), [[19, 25], [37, 43]])


# --- controls ------------------------------------------------------------------------------------


def test_stride_slider_changes_the_output_size():
    at = open_page(FORWARD)  # classroom: 7×7, 3×3, stride 2, padding 1 → 4×4
    assert heat(at, "y:values").shape == (4, 4)
    at.sidebar.slider(key="w_sh").set_value(1).run()
    assert_clean(at)
    assert heat(at, "y:values").shape == (7, 7)
    assert slider_steps(figures(at)[0]) == 49
    assert query(at)["sh"] == "1"
    assert query(at)["preset"] == "custom"


def test_a_layer_put_back_as_a_preset_had_it_is_that_preset_again():
    """Changed and put back, a control left the preset box on "Custom" beside the preset's own
    layer (review)."""
    at = open_page(FORWARD, preset="d2l")
    side_number(at, "H").set_value(1).run()  # the 2×2 kernel does not fit: d2l's numbers kept
    assert at.sidebar.selectbox(key="w_preset").value == "custom"
    side_number(at, "H").set_value(3).run()
    assert_clean(at)
    assert query(at)["preset"] == "d2l"
    assert at.sidebar.selectbox(key="w_preset").value == "d2l"
    at = open_page(FORWARD)  # classroom: seeded values, none typed in (a new shape drops those)
    at.sidebar.slider(key="w_sh").set_value(1).run()
    assert query(at)["preset"] == "custom"
    at.sidebar.slider(key="w_sh").set_value(2).run()
    assert query(at)["preset"] == "classroom"


def test_separate_axes_show_a_second_stride():
    at = open_page(FORWARD)
    keys = [s.key for s in at.sidebar.slider]
    assert keys == ["w_sh", "w_dh"]
    at.sidebar.checkbox(key="w_same_axes").set_value(False).run()
    assert [s.key for s in at.sidebar.slider] == ["w_sh", "w_sw", "w_dh", "w_dw"]  # row by row
    at.sidebar.slider(key="w_sw").set_value(1).run()
    assert_clean(at)
    assert heat(at, "y:values").shape == (4, 7)


@pytest.mark.parametrize(
    ("kind", "padded", "out"),
    [("valid", (7, 7), (3, 3)), ("same", (9, 9), (4, 4)), ("full", (11, 11), (5, 5))],
)
def test_padding_kind_changes_padded_input_and_output(kind, padded, out):
    at = open_page(FORWARD)  # 7×7, kernel 3, stride 2
    side_select(at, "pad").set_value(kind).run()
    assert_clean(at)
    assert heat(at, "x:values").shape == padded
    assert heat(at, "y:values").shape == out
    assert query(at)["pad"] == kind
    # explicit per-side inputs only for the explicit kind
    assert "w_pt" not in [n.key for n in at.sidebar.number_input]


def test_explicit_padding_sides():
    at = open_page(FORWARD)
    assert [n.key for n in at.sidebar.number_input if n.key in ("w_pt", "w_pb", "w_pl", "w_pr")]
    side_number(at, "pb").set_value(3).run()
    assert_clean(at)
    assert heat(at, "x:values").shape == (11, 9)  # 1 top + 7 + 3 bottom


def test_padding_mode_fills_the_ring():
    at = open_page(FORWARD, preset="reflect")  # 5×5, padding 1, reflect
    x = heat(at, "x:values")
    np.testing.assert_array_equal(x[0, 1:-1], x[2, 1:-1])  # reflect: row -1 mirrors row 1
    side_select(at, "mode").set_value("zeros").run()
    assert_clean(at)
    x = heat(at, "x:values")
    assert not np.any(np.nan_to_num(x[0])), x[0]
    side_select(at, "mode").set_value("replicate").run()
    x = heat(at, "x:values")
    np.testing.assert_array_equal(x[0, 1:-1], x[1, 1:-1])
    assert query(at)["mode"] == "replicate"


def test_channels_and_batch_change_the_shapes():
    at = open_page()
    assert at.sidebar.expander[0].label == "Channels and batch"
    assert not [n for n in at.sidebar.number_input if n.key == "w_cin"], "folded: not made"
    at.session_state[CHANNELS_OPEN] = True  # the reader opens it
    at.run()
    side_number(at, "cin").set_value(2).run()
    side_number(at, "cout").set_value(3).run()
    side_number(at, "batch").set_value(2).run()
    assert_clean(at)
    rows = shapes_table(at)
    assert rows["x"] == "2 × 2 × 7 × 7"
    assert rows["w"] == "3 × 2 × 3 × 3"
    assert rows["y"] == "2 × 3 × 4 × 4"
    at.switch_page(CHANNELS).run()
    assert_clean(at)
    assert "**output** 3×4×4" in at.markdown[0].value
    grad_w = [d for d in figures(at)[1]["data"] if d["type"] == "heatmap"]
    assert len(grad_w) == 6  # grad_w: 3 filters × 2 channels
    # the slice selectors are bounded by the new counts
    side_number(at, "k").set_value(3).run()
    assert at.toast[0].value == "filter k takes 0 to 2: it stays 0." and state(at)["k"] == 0
    side_number(at, "k").set_value(2).run()
    assert_clean(at)
    assert query(at)["k"] == "2"


def test_shrinking_channels_clips_the_slice():
    at = open_page(CHANNELS, preset="channels-small")
    side_number(at, "k").set_value(2).run()
    side_number(at, "cout").set_value(1).run()
    assert_clean(at)
    assert state(at)["k"] == 0


def test_kernel_choice_sets_the_kernel_values():
    at = open_page(FORWARD)
    assert "sobel x" in KERNEL_CHOICES
    side_select(at, "kernel").set_value("sobel x").run()
    assert_clean(at)
    np.testing.assert_array_equal(heat(at, "w:values"), [[1, 0, -1], [2, 0, -2], [1, 0, -1]])
    assert query(at)["kernel"] == "sobel x"


def test_grad_out_kind():
    at = open_page(INPUT_GRAD)  # classroom: random grad_out
    assert not np.all(heat(at, "grad_out:values") == 1)
    side_select(at, "gout").set_value("ones").run()
    assert_clean(at)
    np.testing.assert_array_equal(heat(at, "grad_out:values"), np.ones((4, 4)))
    side_select(at, "gout").set_value("mse").run()
    assert_clean(at)
    assert query(at)["gout"] == "mse"


def test_seed_and_reroll_change_the_values():
    at = open_page(FORWARD)
    x0 = heat(at, "x:values")
    side_number(at, "seed").set_value(7).run()
    assert_clean(at)
    x7 = heat(at, "x:values")
    assert not np.array_equal(x0, x7)
    assert query(at)["seed"] == "7"
    at.sidebar.button[0].click().run()  # Re-roll
    assert_clean(at)
    assert state(at)["seed"] != 7
    assert side_number(at, "seed").value == state(at)["seed"]
    assert not np.array_equal(heat(at, "x:values"), x7)


def test_preset_select_applies_the_preset():
    at = open_page(FORWARD)
    at.sidebar.toggle(key="w_pres").set_value(True).run()
    side_select(at, "preset").set_value("d2l").run()
    assert_clean(at)
    np.testing.assert_array_equal(heat(at, "y:values"), [[19, 25], [37, 43]])
    assert side_number(at, "H").value == 3
    assert query(at)["preset"] == "d2l"
    assert state(at)["pres"] is True  # presentation mode is not part of a preset


def test_presentation_toggle_bigger_fonts_fewer_words():
    at = open_page()
    assert at.caption and at.info
    font = figures(at)[0]["layout"]["font"]["size"]
    at.sidebar.toggle(key="w_pres").set_value(True).run()
    assert_clean(at)
    assert figures(at)[0]["layout"]["font"]["size"] > font
    assert not at.info  # the preset's note is a secondary word
    assert query(at)["pres"] == "1"


def test_values_survive_a_page_switch():
    at = open_page()
    side_number(at, "H").set_value(9).run()
    side_select(at, "kernel").set_value("sobel x").run()
    at.switch_page(FORWARD).run()
    assert_clean(at)
    assert side_number(at, "H").value == 9
    assert side_select(at, "kernel").value == "sobel x"
    assert heat(at, "x:values").shape == (11, 9)
    at.switch_page(CHANNELS).run()
    assert "9×7" in at.markdown[0].value
    assert query(at)["H"] == "9"


# --- the URL -------------------------------------------------------------------------------------


def test_url_reflects_every_field():
    at = open_page()
    assert query(at)["preset"] == "classroom"
    assert query(at)["sh"] == "2"
    at.sidebar.slider(key="w_sh").set_value(1).run()
    side_number(at, "W").set_value(5).run()
    q = query(at)
    assert (q["sh"], q["W"], q["preset"]) == ("1", "5", "custom")
    share = next(c.value for c in at.main.caption if "Share this view" in c.value)
    assert "sh=1" in share and "W=5" in share


def test_a_full_url_reproduces_the_view():
    at = open_page(FORWARD)
    at.sidebar.slider(key="w_sh").set_value(1).run()
    side_select(at, "pad").set_value("same").run()
    side_select(at, "kernel").set_value("laplacian").run()
    side_number(at, "seed").set_value(3).run()
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


# --- bad input -----------------------------------------------------------------------------------


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
    at.number_input(key="w_seed").set_value(5).run()
    assert not at.warning


@pytest.mark.parametrize(
    ("x", "words"),
    [
        ("1,2", "has 2 values"),
        ("1,nan," + ",".join(["1"] * 47), "NaN"),
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
    at.sidebar.toggle(key="w_pres").set_value(True).run()  # any unrelated rerun
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
    side_select(at, "pad").set_value("valid").run()
    side_number(at, "kH").set_value(5).run()
    assert_clean(at)
    valid = figures(at)
    assert heat(at, "y:values").shape == (2, 3)
    side_number(at, "H").set_value(2).run()
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
    side_number(at, "H").set_value(6).run()
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
    side_number(at, name).set_value(typed).run()
    assert_clean(at)
    assert state(at) == before and figures(at) == drawn
    assert side_number(at, name).value == before[name]  # the field shows the number again
    (toast,) = at.toast
    assert toast.value == f"{side_number(at, name).label} {says}: it stays {before[name]}."


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
    side_number(at, "H").set_value(4).run()
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
    side_number(at, "kH").set_value(5).run()  # taller than the padded input
    assert not at.exception and "Cannot compute this layer" in at.error[0].value
    side_number(at, "kH").set_value(kh).run()
    assert_clean(at)
    assert {name: state(at)[name] for name in before} == before
    side_number(at, "kH").set_value(kh - 1).run()  # a valid layer with other shapes
    assert_clean(at)
    assert state(at)["x"] == before["x"]
    assert state(at)["w"] == "" and state(at)["g"] == ""


@pytest.mark.parametrize(
    ("page", "cell", "grid"), [(FORWARD, (1, 1), 2), (WEIGHT_GRAD, (1, 1), 2)], ids=["y", "dw"]
)
def test_a_slide_lights_the_cell_whose_sum_it_writes(monkeypatch, page, cell, grid):
    """Nothing selected: the PNG/SVG writes the sum of the cell the player opens on (the last)
    and lights that cell (outlined black as the cell written out, not red as selected) and its
    window."""
    sent = []
    monkeypatch.setattr(views, "export_buttons", lambda panels, *a, **k: sent.append(panels))
    at = open_page(page, preset="recitation-s1")
    assert_clean(at)
    panels = sent[0]
    assert (panels[grid].written, panels[grid].selected) == (cell, None)
    assert panels[0].mask("highlight").any()


def test_a_storyboard_slide_marks_no_selection_when_there_is_none(monkeypatch):
    """Nothing selected: the mask stage's PNG/SVG outlines the followed cell (the centre) as the
    cell written out below, not red as selected, and its stage 1 lights no ∂L/∂y cell."""
    sent = []
    monkeypatch.setattr(views, "export_buttons", lambda panels, *a, **k: sent.append(panels))
    for step, check in ((6, "mask"), (1, "dy")):
        sent.clear()
        at = open_page(INPUT_GRAD, preset="recitation-s2", step=step)
        assert_clean(at)
        panels = sent[0]
        assert all(p.selected is None and p.highlight is None for p in panels), check
        if check == "mask":
            assert panels[-1].written == (2, 2)


def test_typed_in_values_read_typed_in_and_a_chosen_source_replaces_them():
    """recitation-s2 types in its kernel and ∂L/∂y: the sidebar read "Kernel: random" and
    "grad_out: ones" beside them, and choosing a source did nothing (the typed values won).
    They read "typed in"; every source stays a choice, the one they replaced too, and choosing
    it replaces them (x's typed values stay)."""
    at = open_page(FORWARD, preset="recitation-s2")
    kernel, gout = side_select(at, "kernel"), side_select(at, "gout")
    assert kernel.value == "typed in" and gout.value == "typed in"
    assert "random" in kernel.options and len(kernel.options) == 1 + len(KERNEL_CHOICES)
    assert state(at)["kernel"] == "random" and state(at)["w"] and state(at)["g"]
    w_before = compute_layer(value_key(state(at))).forward.w.copy()
    kernel.set_value("random").run()  # the source the typed values had replaced
    assert_clean(at)
    s = state(at)
    assert s["w"] == "" and s["g"] and s["x"]  # the kernel's values only
    assert side_select(at, "kernel").value == "random"
    assert "typed in" not in side_select(at, "kernel").options
    assert not np.array_equal(compute_layer(value_key(s)).forward.w, w_before)
    gout = side_select(at, "gout")
    gout.set_value("typed in").run()  # keeps them
    assert state(at)["g"]


@pytest.mark.parametrize(
    "preset, sel, reader",
    [("recitation-s1", "x:0:0", (0, 0)), ("recitation-s1", "x:2:1", (1, 0)),
     ("classroom", "x:0:0", (0, 0)), ("classroom", "x:8:8", (3, 3))],
)  # fmt: skip
def test_a_selected_input_cell_opens_on_an_output_that_reads_it(preset, sel, reader):
    """Selecting x[0, 0] opened the animation and the formula on the last output, y[1, 1],
    whose window does not hold x[0, 0], while the note said y[0, 0] reads it."""
    at = open_page(FORWARD, preset=preset, sel=sel)
    assert_clean(at)
    assert headers(at)[0] == f"Output cell y[{reader[0]}, {reader[1]}]"
    spec = compute_layer(value_key(at.session_state["cv_state"])).forward.spec
    active = figures(at)[0]["layout"]["meta"]["player"]["active"]
    assert active == reader[0] * spec.out_size[1] + reader[1]


def test_keyboard_cell_picker_selects_a_cell():
    at = open_page(FORWARD)
    assert at.expander[0].label == "Select a cell with the keyboard"
    assert not [n for n in at.number_input if n.key == "pick_row"], "made only once opened"
    open_picker(at)
    at.number_input(key="pick_row").set_value(1)
    at.number_input(key="pick_col").set_value(2)
    at.button(key="pick_go").click().run()
    assert_clean(at)
    assert headers(at)[0] == "Output cell y[1, 2]"
    assert query(at)["sel"] == "y:1:2"
    # the animation opens at that cell's step
    assert figures(at)[0]["layout"]["meta"]["player"]["active"] == 1 * 4 + 2
    # the picker is bounded by the grid it picks in
    assert at.number_input(key="pick_row").max == 3
    # x̃ is numbered as its axes are, from the ring (−1 for classroom's padding 1), and named as
    # the page titles it: the picker showed 'x' and 0…8, so the axes' [0, 3] picked x̃[−1, 2]
    at.selectbox(key="pick_grid").set_value("x").run()
    assert at.selectbox(key="pick_grid").format_func("x") == "x̃ (input, padded)"
    row = at.number_input(key="pick_row")
    assert (row.min, row.max) == (-1, 7)
    row.set_value(0)
    at.number_input(key="pick_col").set_value(3)
    at.button(key="pick_go").click().run()
    assert_clean(at)
    assert query(at)["sel"] == "x:1:4"  # the link keeps array indices


def test_keyboard_picker_on_the_gradient_pages():
    at = open_page(INPUT_GRAD)
    open_picker(at)
    at.number_input(key="pick_row").set_value(0)
    at.number_input(key="pick_col").set_value(6)
    at.button(key="pick_go").click().run()
    assert_clean(at)
    assert "Gradient of input x cell [0, 6]" in headers(at)
    at.switch_page(WEIGHT_GRAD).run()
    open_picker(at)
    at.number_input(key="pick_row").set_value(2)
    at.number_input(key="pick_col").set_value(1)
    at.button(key="pick_go").click().run()
    assert_clean(at)
    assert headers(at)[0] == "Weight cell [2, 1] of filter k=0, channel c=0"


def test_a_selection_in_the_url_selects_the_cell():
    at = open_page(FORWARD, sel="y:3:1")
    assert_clean(at)
    assert headers(at)[0] == "Output cell y[3, 1]"
    # its window's bottom row is padding: those terms are grey, and only those (KaTeX's \color
    # is a switch that would grey every term after the first vanishing one)
    latex = [lt.value for lt in at.latex]
    assert all("\\textcolor{gray}" in tex for tex in latex), latex
    assert not any("\\color{" in tex for tex in latex), latex


# --- the input-gradient storyboard ---------------------------------------------------------------


def is_step(heading: str, n: int) -> bool:
    """A storyboard heading of step n, e.g. '## 2. Dilate ∂L/∂y by the stride'."""
    return re.match(rf"#{{2,3}} {n}\b", heading) is not None


def test_storyboard_next_and_back_move_the_step():
    at = open_page(INPUT_GRAD)
    assert is_step(at.markdown[0].value, 1)
    assert at.button(key="nav_back_page").label == "◀ Forward"  # before the first stage
    assert [b.key for b in at.button if (b.key or "").startswith("nav_next")] == ["nav_next"]
    titles = []
    for n in range(2, 7):
        at.button(key="nav_next").click().run()
        assert_clean(at)
        assert query(at)["step"] == str(n)
        titles.append(at.markdown[0].value)
        assert is_step(titles[-1], n), titles[-1]
        assert figures(at), n
    at.button(key="nav_next").click().run()  # after the six stages, the whole pass
    assert query(at)["step"] == "7" and at.markdown[0].value.startswith("## 1–6. The whole")
    # the story goes on
    assert at.button(key="nav_next_page").label == "next: weight gradient ▶"
    at.button(key="nav_back").click().run()
    assert query(at)["step"] == "6"
    projector = open_page(INPUT_GRAD, pres="1", step="7")  # as short as Next: the bar keeps its row
    assert projector.button(key="nav_next_page").label == "Next ▶"
    assert "weight gradient page" in projector.button(key="nav_next_page").help
    assert len(set(titles)) == len(titles)
    at.button(key="nav_back").click().run()
    assert query(at)["step"] == "5"
    assert at.markdown[0].value == titles[-2]


def test_the_storyboard_opens_at_its_start_going_on_and_at_its_end_going_back():
    """PageUp from a freshly opened Weight gradient link went back to stage 1 of the storyboard,
    and Forward's way on opened it wherever it was last left: as through slides, going on starts
    at stage 1 and going back arrives at stage 6."""
    at = open_page(WEIGHT_GRAD)
    at.button(key="nav_back_page").click().run()  # the whole pass, the stage before
    assert_clean(at)
    assert query(at)["step"] == "7" and at.markdown[0].value.startswith("## 1–6. The whole")
    at = open_page(FORWARD, step="4")
    at.button(key="nav_next_page").click().run()
    assert_clean(at)
    assert query(at)["step"] == "1" and is_step(at.markdown[0].value, 1)


def test_a_stage_opens_on_its_first_frame_or_on_its_result_as_the_lecturer_chose():
    """On a projector, entered either way (PageUp from the Weight gradient into the whole pass,
    PageDown into a stage), a motion opens on its first frame under the default playback
    (play=auto: the browser then plays it once) and on its result under play=stills."""
    for play, first in (("auto", True), ("stills", False)):
        at = open_page(WEIGHT_GRAD, play=play, pres="1")
        at.button(key="nav_back_page").click().run()
        assert_clean(at)
        meta = figures(at)[0]["layout"]["meta"]["player"]
        assert meta["active"] == (0 if first else len(meta["steps"]) - 1), play
        at = open_page(INPUT_GRAD, play=play, step="2", pres="1")
        at.button(key="nav_next").click().run()
        meta = figures(at)[0]["layout"]["meta"]["player"]
        assert meta["labels"][0] == "3 · pad"
        assert meta["active"] == (0 if first else len(meta["steps"]) - 1), play


def test_every_page_ends_with_the_way_on():
    for page, label in [(OVERVIEW, "next: forward ▶"), (FORWARD, "next: input gradient ▶")]:
        at = open_page(page)
        assert at.button(key="nav_next_page").label == label
        assert at.button(key="nav_next_page").proto.shortcut == "pagedown"
    at = open_page(WEIGHT_GRAD, step="2")  # its last stage
    assert at.button(key="end_next_page").label == "next: channels ▶"
    at = open_page(INPUT_GRAD, step="7")
    assert at.button(key="end_next_page").label == "next: weight gradient ▶"
    assert at.button(key="nav_next_page").proto.shortcut == "pagedown"  # the bar's next stage
    at.button(key="end_next_page").click().run()
    assert at.title[0].value == "Weight gradient ∂L/∂w"


def test_storyboard_step_from_the_url_and_the_animated_step():
    at = open_page(INPUT_GRAD, step="5")
    assert_clean(at)
    assert is_step(at.markdown[0].value, 5)
    # the full correlation, animated: one step per cell of the padded input's gradient (9×9)
    story = figures(at)[0]
    assert slider_steps(story) == len(story["frames"]) == 81
    assert z_of(trace(story, "grad_x_padded:values")).shape == (9, 9)
    at.button(key="nav_back").click().run()
    labels = figures(at)[0]["layout"]["meta"]["player"]["labels"]
    assert set(labels) == {"4 · rotate 180°"}  # step 4: the rotation alone, as a motion


def test_default_state_is_the_classroom_preset():
    at = open_page()
    assert state(at)["preset"] == DEFAULTS["preset"] == "classroom"


def test_a_stride_change_forgets_values_that_no_longer_fit():
    """recitation-s2 carries its own ∂L/∂y (2×2); at stride 1 the output is 3×3: the layer follows
    the stride (∂L/∂y is drawn afresh) instead of keeping the last valid one."""
    at = open_page(FORWARD, preset="recitation-s2")
    assert slider_steps(figures(at)[0]) == 4
    at.slider(key="w_sh").set_value(1).run()
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
    assert any("beyond ±1e+09" in m for m in messages), messages


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
    from convviz.state import decode_array, encode_array

    a = np.array([123456789.0, 0.1, -2.5, 3.0, 1e-7, 1 / 3])
    assert np.array_equal(decode_array(encode_array(a), a.shape, "x"), a)


def test_an_animation_offers_its_gif_at_three_speeds():
    at = open_page(FORWARD)
    speed = at.get("button_group")[0]
    assert [o.content for o in speed.proto.options] == ["0.5×", "1×", "2×"]
    assert list(speed.proto.default) == [1]  # 1× until the reader picks another
    assert_clean(at)


@pytest.mark.parametrize("page", [path for path, _, _ in APP_PAGES])
def test_every_page_shows_one_share_link(page):
    at = open_page(page, preset="recitation-s2")
    links = [c.value for c in at.main.caption if "Share this view" in c.value]
    assert len(links) == 1 and "preset=recitation-s2" in links[0], links


def test_a_late_viewport_report_after_a_page_switch_is_ignored(monkeypatch):
    """The viewport callback can fire after its widget's state is gone (a report sent as the
    reader switches pages): it must not raise (that showed 'This app has encountered an error')."""
    from convviz.ui import viewport

    session: dict = {}
    monkeypatch.setattr(viewport.st, "session_state", session)
    viewport._store()
    assert viewport.VIEWPORT not in session
    for malformed in ([1280, 720], [1280, 720, "24"], "1280x720"):  # kept out, never raising
        session["w_viewport"] = {"viewport": malformed}
        viewport._store()
        assert viewport.VIEWPORT not in session
    session["w_viewport"] = {"viewport": [1848, 1080, 24]}  # width, height, rem
    viewport._store()
    assert session[viewport.VIEWPORT] == (1848, 1080, 24.0)
    session["w_viewport"] = {"viewport": [9000, 9000, 1000]}  # bounded
    viewport._store()
    assert session[viewport.VIEWPORT] == (4000, 3000, 64.0)


@pytest.mark.parametrize("key", [p.key for p in PRESETS if p.key not in SLOW])
def test_overview_shows_the_formula_of_a_clicked_cell(key):
    """The Overview says 'click any cell to see its formula': a cell of y, ∂L/∂x or ∂L/∂w shows
    the engine's formula and is outlined in its panel; an operand's cell says what to click."""
    for name in ("y", "grad_x", "grad_w"):
        at = open_page(preset=key, sel=f"{name}:0:0")
        assert_clean(at)
        s = state(at)
        lay_key = value_key(s)
        formula = formula_at(lay_key, (name, 0, 0), s["n"], s["k"], s["c"])
        assert f"Selected: {formula.name()}" in headers(at), key
        assert formula.name(latex=True) in at.latex[0].value
        assert any(c.value.startswith("✓ the") for c in at.caption), f"{key}: {name} adds up"
        outlined = [
            fig["layout"][shape["xref"].split()[0].replace("x", "xaxis")]
            for fig in figures(at)
            for shape in fig["layout"].get("shapes", [])
            if shape["name"] == "selected"
        ]
        assert len(outlined) == 1, f"{key}: the clicked {name} cell is outlined once"
    at = open_page(preset=key, sel="x:0:0")
    assert_clean(at)
    assert not any(h.startswith("Selected") for h in headers(at))
    assert any("Click a cell of y" in c.value for c in at.caption)


def test_channels_tile_shows_the_formula_of_a_clicked_weight_cell():
    """Under the (k, c) tile with its operands, a clicked ∂L/∂w cell is outlined, its window lit
    on x̃, and its sum (over the batch) written out; until then the page says what to click."""
    at = open_page(CHANNELS, preset="channels-small")
    assert_clean(at)
    assert any(c.value.startswith("Click a cell of ∂L/∂w to") for c in at.caption)
    at = open_page(CHANNELS, preset="channels-small", sel="grad_w:1:2")
    assert_clean(at)
    s = state(at)
    formula = formula_at(value_key(s), ("grad_w", 1, 2), s["n"], s["k"], s["c"])
    assert f"Selected: {formula.name()}" in headers(at)
    assert any(c.value.startswith("✓ the") for c in at.caption)
    tile = next(
        f
        for f in figures(at)
        if any(s["name"] == "selected" for s in f["layout"].get("shapes", []))
    )
    assert any(s["name"] == "highlight" for s in tile["layout"]["shapes"]), "the window is lit"


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
    """A page link opened in a new tab (a plain navigation, no session) shows the same layer."""
    at = open_page(FORWARD)
    at.sidebar.slider(key="w_sh").set_value(1).run()
    links = [el.proto for el in at.get("page_link")]
    assert len(links) >= len(APP_PAGES)
    for link in links:
        assert "sh=1" in link.query_string and "preset=custom" in link.query_string, link.page


def test_bias_gradient_is_written_as_every_other_number():
    """The bias metric follows text.number (two decimals, a typographic minus), as cells do."""
    at = open_page(WEIGHT_GRAD, w=",".join(["0.123"] * 9), gout="mse")  # y − target not whole
    assert_clean(at)
    value = at.metric[0].value
    assert re.fullmatch(r"−?\d+\.\d{1,2}", value), value
    # says what it sums in the grids' indices, not as a NumPy slice ("∂L/∂y[:, 0]")
    assert at.metric[0].label.endswith("∂L/∂b[0] = Σ over n, i, j of ∂L/∂y[n, 0, i, j]")


def test_forward_marks_a_selected_input_cell_and_dots_the_outputs_it_feeds():
    """With an input cell selected the player's current output is outlined solid; the outputs
    that read the cell are dotted, and the cell itself is marked selected (on the animation)."""
    at = open_page(FORWARD, preset="recitation-s2", sel="x:2:2")
    assert_clean(at)
    (fig,) = [f for f in figures(at) if f.get("frames")]
    shapes = {s["name"]: s for s in fig["layout"]["shapes"]}
    assert shapes["selected"]["xref"] == "x domain"  # on the input, the first panel
    assert shapes["highlight"]["xref"] == "x3" and shapes["highlight"]["line"]["dash"] == "dot"
    target = next(t for t in fig["data"] if t.get("name") == "target")
    assert target["line"].get("dash") in (None, "solid")


@pytest.mark.parametrize(("page", "sel"), [(FORWARD, "y:1:0"), (WEIGHT_GRAD, "grad_w:1:0")])
def test_the_legend_lists_only_marks_the_animation_draws(page, sel):
    """A selected output cell is outlined red; it is not also listed as 'linked to the
    selection' (the dotted outline under the red one could not be seen)."""
    at = open_page(page, preset="recitation-s2", sel=sel)
    assert_clean(at)
    (fig,) = [f for f in figures(at) if f.get("frames")][:1]
    names = [s["name"] for s in fig["layout"]["shapes"]]
    notes = " ".join(a.get("text", "") for a in fig["layout"]["annotations"])
    assert "selected" in names and "selected" in notes
    assert "highlight" not in names and "linked to the selection" not in notes


def test_a_tied_stride_is_both_axes_stride_in_the_link():
    """'Same stride and dilation for both axes' ticked, a link's sh=3 drew a 3×3 stride but the
    page's link kept classroom's sw=2 (two strides in one address), and unticking the box
    brought the columns' 2 back; the columns now follow the rows, from a link or a slider."""
    at = open_page(FORWARD, preset="classroom", sh="3")
    assert_clean(at)
    assert (query(at)["sh"], query(at)["sw"]) == ("3", "3")
    at.sidebar.slider(key="w_dh").set_value(2).run()
    assert (query(at)["dh"], query(at)["dw"]) == ("2", "2")
    at.sidebar.checkbox(key="w_same_axes").uncheck().run()
    assert at.sidebar.slider(key="w_sw").value == 3 and at.sidebar.slider(key="w_dw").value == 2


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
    assert any("input x: `abc` is not a number" in w.value for w in at.warning)
    assert query(at)["x"].startswith("1,1.5,3")
    # the grid is drawn anew, with the number kept: the browser's grid kept the refused text
    # ('1e400' beside a warning that the app uses the last numbers); typing on works
    grid = at.get("dataframe")[0]
    assert grid.proto.id != before and grid.value.iloc[0, 1] == "1.5"
    _type_into_x(at, "7")
    assert_clean(at)
    assert query(at)["x"].startswith("1,7,3")

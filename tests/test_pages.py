"""Pages through Streamlit's AppTest (no browser): every page × preset and every control of the
shared sidebar; what every page ends with. The URL and bad input: test_pages_input.py; the
selected cell, the keyboard picker and the storyboard: test_pages_views.py; helpers:
apptest_pages.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from apptest_pages import (
    CHANNELS,
    FORWARD,
    INPUT_GRAD,
    OVERVIEW,
    PAGES,
    SLOW,
    WEIGHT_GRAD,
    assert_clean,
    dims,
    figures,
    frames_of,
    headers,
    heat,
    open_page,
    query,
    shapes_table,
    side,
    side_drawn,
    side_group,
    slider_steps,
    state,
    trace,
    z_of,
)

from convviz.model.fields import KERNEL_CHOICES
from convviz.model.pages import PAGES as APP_PAGES
from convviz.model.presets import PRESETS, PRESETS_BY_KEY
from convviz.render.theme import THEME, theme_for
from convviz.ui.compute import MAX_SCATTER_STEPS

pytestmark = pytest.mark.apptest  # every page × preset and every control, in AppTest


# --- every page × every preset --------------------------------------------------------------------


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
    big = max(*spec.out_size, *spec.in_size) > THEME.max_text_cells  # and the close-up of y, ∂L/∂x
    assert len(figures(at)) == 2 + big


def check_forward(at, p):
    spec = p.spec()
    fig, *rest = figures(at)  # the animation; at sizes drawn without numbers, the kernel too
    numbers = max(spec.padded_size) <= theme_for(False).max_text_cells
    assert [trace(f, "w:values") and "kernel" for f in rest] == ([] if numbers else ["kernel"])
    assert z_of(trace(fig, "x:values")).shape == spec.padded_size
    assert z_of(trace(fig, "w:values")).shape == spec.kernel_size
    assert z_of(trace(fig, "y:values")).shape == spec.out_size
    cells = spec.out_size[0] * spec.out_size[1]
    assert slider_steps(fig) == len(frames_of(at, fig))
    if cells <= 400:  # every window position is a frame; larger sweeps are sampled
        assert slider_steps(fig) == cells
    else:
        assert 2 <= slider_steps(fig) <= 401
    oh, ow = spec.out_size  # nothing selected: the sum of the cell the player opens on, the last
    assert headers(at)[0] == f"Output cell y[{oh - 1}, {ow - 1}]"


def unzoomed(figs: list[dict]) -> list[dict]:
    """The figures but a big layer's close-ups (their panels titled '… (zoom)')."""
    return [
        f
        for f in figs
        if not any("(zoom)" in a.get("text", "") for a in f["layout"]["annotations"])
    ]


def check_input_grad(at, p):
    spec = p.spec()
    figs = unzoomed(figures(at))  # a big layer's close-up of ∂L/∂x: test_big_pages.py
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
    figs = unzoomed(figures(at))
    if max(spec.in_size) > THEME.max_text_cells:  # ∂L/∂x by filter: in an expander, when open
        assert any("by filter" in e.label for e in at.expander)
        figs.insert(3, {"data": [{"type": "heatmap"}] * (K + 1)})
    x_grid, w_grid, tile, sum_grid, gx_grid = figs
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


# --- controls -------------------------------------------------------------------------------------


def test_stride_slider_changes_the_output_size():
    at = open_page(FORWARD)  # classroom: 7×7, 3×3, stride 2, padding 1 → 4×4
    assert heat(at, "y:values").shape == (4, 4)
    side(at, "sh").set_value(1).run()
    assert_clean(at)
    assert heat(at, "y:values").shape == (7, 7)
    assert slider_steps(figures(at)[0]) == 49
    assert query(at)["sh"] == "1"
    assert query(at)["preset"] == "custom"


def test_a_layer_put_back_as_a_preset_had_it_is_that_preset_again():
    """Changed and put back, a control left the preset box on "Custom" beside the preset's own
    layer (review)."""
    at = open_page(FORWARD, preset="d2l")
    side(at, "H").set_value(1).run()  # the 2×2 kernel does not fit: d2l's numbers kept
    assert side(at, "preset").value == "custom"
    side(at, "H").set_value(3).run()
    assert_clean(at)
    assert query(at)["preset"] == "d2l"
    assert side(at, "preset").value == "d2l"
    at = open_page(FORWARD)  # classroom: seeded values, none typed in (a new shape drops those)
    side(at, "sh").set_value(1).run()
    assert query(at)["preset"] == "custom"
    side(at, "sh").set_value(2).run()
    assert query(at)["preset"] == "classroom"


def test_separate_axes_show_a_second_stride():
    at = open_page(FORWARD)
    assert side_drawn(at, "slider") == ["sh", "dh"]
    side(at, "same_axes").set_value(False).run()
    assert side_drawn(at, "slider") == ["sh", "sw", "dh", "dw"]  # row by row
    side(at, "sw").set_value(1).run()
    assert_clean(at)
    assert heat(at, "y:values").shape == (4, 7)


@pytest.mark.parametrize(
    ("kind", "padded", "out"),
    [("valid", (7, 7), (3, 3)), ("same", (9, 9), (4, 4)), ("full", (11, 11), (5, 5))],
)
def test_padding_kind_changes_padded_input_and_output(kind, padded, out):
    at = open_page(FORWARD)  # 7×7, kernel 3, stride 2
    side(at, "pad").set_value(kind).run()
    assert_clean(at)
    assert heat(at, "x:values").shape == padded
    assert heat(at, "y:values").shape == out
    assert query(at)["pad"] == kind
    # explicit per-side inputs only for the explicit kind
    assert "pt" not in side_drawn(at, "number_input")


def test_explicit_padding_sides():
    at = open_page(FORWARD)
    assert {"pt", "pb", "pl", "pr"} <= set(side_drawn(at, "number_input"))
    side(at, "pb").set_value(3).run()
    assert_clean(at)
    assert heat(at, "x:values").shape == (11, 9)  # 1 top + 7 + 3 bottom


def test_padding_mode_fills_the_ring():
    at = open_page(FORWARD, preset="reflect")  # 5×5, padding 1, reflect
    x = heat(at, "x:values")
    np.testing.assert_array_equal(x[0, 1:-1], x[2, 1:-1])  # reflect: row -1 mirrors row 1
    side(at, "mode").set_value("zeros").run()
    assert_clean(at)
    x = heat(at, "x:values")
    assert not np.any(np.nan_to_num(x[0])), x[0]
    side(at, "mode").set_value("replicate").run()
    x = heat(at, "x:values")
    np.testing.assert_array_equal(x[0, 1:-1], x[1, 1:-1])
    assert query(at)["mode"] == "replicate"


def test_channels_and_batch_change_the_shapes():
    at = open_page()
    group = side_group(at)
    assert group["label"] == "Channels and batch" and not group["open"], "one of each: folded"
    side(at, "cin").set_value(2).run()
    assert side_group(at)["open"], "a count over 1: open"
    side(at, "cout").set_value(3).run()
    side(at, "batch").set_value(2).run()
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
    side(at, "k").set_value(3).run()
    assert at.toast[0].value == "filter k takes 0 to 2: it stays 0." and state(at)["k"] == 0
    side(at, "k").set_value(2).run()
    assert_clean(at)
    assert query(at)["k"] == "2"


def test_shrinking_channels_clips_the_slice():
    at = open_page(CHANNELS, preset="channels-small")
    side(at, "k").set_value(2).run()
    side(at, "cout").set_value(1).run()
    assert_clean(at)
    assert state(at)["k"] == 0


def test_kernel_choice_sets_the_kernel_values():
    at = open_page(FORWARD)
    assert "sobel x" in KERNEL_CHOICES
    side(at, "kernel").set_value("sobel x").run()
    assert_clean(at)
    np.testing.assert_array_equal(heat(at, "w:values"), [[1, 0, -1], [2, 0, -2], [1, 0, -1]])
    assert query(at)["kernel"] == "sobel x"


def test_grad_out_kind():
    at = open_page(INPUT_GRAD)  # classroom: random grad_out
    assert not np.all(heat(at, "grad_out:values") == 1)
    side(at, "gout").set_value("ones").run()
    assert_clean(at)
    np.testing.assert_array_equal(heat(at, "grad_out:values"), np.ones((4, 4)))
    side(at, "gout").set_value("mse").run()
    assert_clean(at)
    assert query(at)["gout"] == "mse"


def test_seed_and_reroll_change_the_values():
    at = open_page(FORWARD)
    x0 = heat(at, "x:values")
    side(at, "seed").set_value(7).run()
    assert_clean(at)
    x7 = heat(at, "x:values")
    assert not np.array_equal(x0, x7)
    assert query(at)["seed"] == "7"
    side(at, "reroll").click().run()
    assert_clean(at)
    assert state(at)["seed"] != 7
    assert side(at, "seed").value == state(at)["seed"]
    assert not np.array_equal(heat(at, "x:values"), x7)


def test_preset_select_applies_the_preset():
    at = open_page(FORWARD)
    side(at, "pres").set_value(True).run()
    side(at, "preset").set_value("d2l").run()
    assert_clean(at)
    np.testing.assert_array_equal(heat(at, "y:values"), [[19, 25], [37, 43]])
    assert side(at, "H").value == 3
    assert query(at)["preset"] == "d2l"
    assert state(at)["pres"] is True  # presentation mode is not part of a preset


def test_presentation_toggle_bigger_fonts_fewer_words():
    at = open_page()
    assert at.caption and at.info
    font = figures(at)[0]["layout"]["font"]["size"]
    side(at, "pres").set_value(True).run()
    assert_clean(at)
    assert figures(at)[0]["layout"]["font"]["size"] > font
    assert not at.info  # the preset's note is a secondary word
    assert query(at)["pres"] == "1"


def test_values_survive_a_page_switch():
    at = open_page()
    side(at, "H").set_value(9).run()
    side(at, "kernel").set_value("sobel x").run()
    at.switch_page(FORWARD).run()
    assert_clean(at)
    assert side(at, "H").value == 9
    assert side(at, "kernel").value == "sobel x"
    assert heat(at, "x:values").shape == (11, 9)
    at.switch_page(CHANNELS).run()
    assert "9×7" in at.markdown[0].value
    assert query(at)["H"] == "9"


# --- what every page ends with --------------------------------------------------------------------


def test_every_page_ends_with_the_way_on():
    for page, label in [(OVERVIEW, "next: forward ▶"), (FORWARD, "next: input gradient ▶")]:
        at = open_page(page)
        assert at.button(key="nav_next_page").label == label
        assert at.button(key="nav_next_page").proto.shortcut == "pagedown"
    at = open_page(WEIGHT_GRAD, step="2")  # its last stage: the lecture goes on
    assert at.button(key="end_next_page").label == "next: how the layer learns ▶"
    at = open_page(INPUT_GRAD, step="7")
    assert at.button(key="end_next_page").label == "next: weight gradient ▶"
    assert at.button(key="nav_next_page").proto.shortcut == "pagedown"  # the bar's next stage
    at.button(key="end_next_page").click().run()
    assert at.title[0].value == "Weight gradient ∂L/∂w"


def test_an_animation_offers_its_gif_at_three_speeds():
    at = open_page(FORWARD)
    speed = at.get("button_group")[0]
    assert [o.content for o in speed.proto.options] == ["0.5×", "1×", "2×"]
    assert list(speed.proto.default) == [1]  # 1× until the reader picks another
    assert_clean(at)


@pytest.mark.sample  # every page once: the quick tier's look at the pages
@pytest.mark.parametrize("page_file", [path for path, _, _ in APP_PAGES])
def test_every_page_shows_one_share_link(page_file):
    at = open_page(page_file, preset="recitation-s2")
    links = [c.value for c in at.main.caption if "Share this view" in c.value]
    assert len(links) == 1 and "preset=recitation-s2" in links[0], links


def test_a_late_viewport_report_after_a_page_switch_is_ignored(monkeypatch):
    """The viewport callback can fire after its widget's state is gone (a report sent as the
    reader switches pages): it must not raise (that showed 'This app has encountered an error')."""
    from convviz.ui import sidebar, viewport

    session: dict = {}
    monkeypatch.setattr(viewport.st, "session_state", session)
    monkeypatch.setattr(sidebar.st, "session_state", session)
    sidebar._take_viewport()  # the sidebar's component's state gone
    assert viewport.VIEWPORT not in session
    for malformed in ([1280, 720], [1280, 720, "24"], "1280x720"):  # kept out, never raising
        session[sidebar.SIDEBAR] = {"viewport": malformed}
        sidebar._take_viewport()
        assert viewport.VIEWPORT not in session
    viewport.store("not a report")
    assert viewport.VIEWPORT not in session
    session[sidebar.SIDEBAR] = {"viewport": [1848, 1080, 24]}  # width, height, rem
    sidebar._take_viewport()
    assert session[viewport.VIEWPORT] == (1848, 1080, 24.0)
    session[sidebar.SIDEBAR] = {"viewport": [9000, 9000, 1000]}  # bounded
    sidebar._take_viewport()
    assert session[viewport.VIEWPORT] == (4000, 3000, 64.0)


def test_bias_gradient_is_written_as_every_other_number():
    """The bias metric follows text.number (two decimals, a typographic minus), as cells do."""
    at = open_page(WEIGHT_GRAD, w=",".join(["0.123"] * 9), gout="mse")  # y − target not whole
    assert_clean(at)
    value = at.metric[0].value
    assert re.fullmatch(r"−?\d+\.\d{1,2}", value), value
    # says what it sums in the grids' indices, not as a NumPy slice ("∂L/∂y[:, 0]")
    assert at.metric[0].label.endswith("∂L/∂b[0] = Σ over n, i, j of ∂L/∂y[n, 0, i, j]")

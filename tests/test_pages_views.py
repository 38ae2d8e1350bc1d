"""Pages through Streamlit's AppTest: the selected cell (what its slide, formula and outlines
show), the keyboard cell picker, and the input-gradient storyboard.
"""

from __future__ import annotations

import re

import pytest
from apptest_pages import (
    CHANNELS,
    FORWARD,
    INPUT_GRAD,
    SLOW,
    WEIGHT_GRAD,
    animated,
    assert_clean,
    figures,
    frames_of,
    headers,
    open_page,
    open_picker,
    query,
    slider_steps,
    state,
    trace,
    z_of,
)

from convviz.model.presets import PRESETS
from convviz.render.theme import GREY_TERM
from convviz.ui import stage_view, views
from convviz.ui.compute import compute_layer, formula_at, value_key

pytestmark = pytest.mark.apptest  # the selected cell, the picker and the storyboard, in AppTest


# --- the selected cell and the keyboard picker ----------------------------------------------------


@pytest.mark.parametrize(
    ("page_file", "cell", "grid"), [(FORWARD, (1, 1), 2), (WEIGHT_GRAD, (1, 1), 2)], ids=["y", "dw"]
)
def test_a_slide_lights_the_cell_whose_sum_it_writes(monkeypatch, page_file, cell, grid):
    """Nothing selected: the PNG/SVG writes the sum of the cell the player opens on (the last)
    and lights that cell (outlined black as the cell written out, not red as selected) and its
    window."""
    sent = []
    monkeypatch.setattr(views, "export_buttons", lambda panels, *a, **k: sent.append(panels))
    at = open_page(page_file, preset="recitation-s1")
    assert_clean(at)
    panels = sent[0]
    assert (panels[grid].written, panels[grid].selected) == (cell, None)
    assert panels[0].mask("highlight").any()


def test_a_storyboard_slide_marks_no_selection_when_there_is_none(monkeypatch):
    """Nothing selected: the mask stage's PNG/SVG outlines the followed cell (the centre) as the
    cell written out below, not red as selected, and its stage 1 lights no ∂L/∂y cell."""
    sent = []
    monkeypatch.setattr(stage_view, "export_buttons", lambda panels, *a, **k: sent.append(panels))
    for step, check in ((6, "mask"), (1, "dy")):
        sent.clear()
        at = open_page(INPUT_GRAD, preset="recitation-s2", step=step)
        assert_clean(at)
        panels = sent[0]
        assert all(p.selected is None and p.highlight is None for p in panels), check
        if check == "mask":
            assert panels[-1].written == (2, 2)


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
    assert "Select a cell with the keyboard" in [e.label for e in at.expander]
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
    assert all(f"\\textcolor{{{GREY_TERM}}}" in tex for tex in latex), latex
    assert not any("\\color{" in tex for tex in latex), latex


# --- the input-gradient storyboard ----------------------------------------------------------------


def is_step(heading: str, n: int) -> bool:
    """A storyboard heading of step n, e.g. '## 2. Dilate ∂L/∂y by the stride'."""
    return re.match(rf"## {n}\b", heading) is not None


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


def test_storyboard_step_from_the_url_and_the_animated_step():
    at = open_page(INPUT_GRAD, step="5")
    assert_clean(at)
    assert is_step(at.markdown[0].value, 5)
    # the full correlation, animated: one step per cell of the padded input's gradient (9×9)
    story = figures(at)[0]
    assert slider_steps(story) == len(frames_of(at, story)) == 81
    assert z_of(trace(story, "grad_x_padded:values")).shape == (9, 9)
    at.button(key="nav_back").click().run()
    labels = figures(at)[0]["layout"]["meta"]["player"]["labels"]
    assert set(labels) == {"4 · rotate 180°"}  # step 4: the rotation alone, as a motion


# --- a clicked cell's formula and outlines --------------------------------------------------------


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


def test_forward_marks_a_selected_input_cell_and_dots_the_outputs_it_feeds():
    """With an input cell selected the player's current output is outlined solid; the outputs
    that read the cell are dotted, and the cell itself is marked selected (on the animation)."""
    at = open_page(FORWARD, preset="recitation-s2", sel="x:2:2")
    assert_clean(at)
    (fig,) = [f for f in figures(at) if animated(f)]
    shapes = {s["name"]: s for s in fig["layout"]["shapes"]}
    assert shapes["selected"]["xref"] == "x domain"  # on the input, the first panel
    assert shapes["highlight"]["xref"] == "x3" and shapes["highlight"]["line"]["dash"] == "dot"
    target = next(t for t in fig["data"] if t.get("name") == "target")
    assert target["line"].get("dash") in (None, "solid")


@pytest.mark.parametrize(("page_file", "sel"), [(FORWARD, "y:1:0"), (WEIGHT_GRAD, "grad_w:1:0")])
def test_the_legend_lists_only_marks_the_animation_draws(page_file, sel):
    """A selected output cell is outlined red; it is not also listed as 'linked to the
    selection' (the dotted outline under the red one could not be seen)."""
    at = open_page(page_file, preset="recitation-s2", sel=sel)
    assert_clean(at)
    (fig,) = [f for f in figures(at) if animated(f)][:1]
    names = [s["name"] for s in fig["layout"]["shapes"]]
    notes = " ".join(a.get("text", "") for a in fig["layout"]["annotations"])
    assert "selected" in names and "selected" in notes
    assert "highlight" not in names and "linked to the selection" not in notes

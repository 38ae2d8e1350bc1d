"""The 'why it works' pages through AppTest: matrix view, checks and quiz on every preset,
the bad-input path, and the quiz's seed in the link. Figures are read as the page sent them."""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest_pages import assert_clean, figures, open_page, query, shown, side, trace, z_of

from convviz.engine import matrix
from convviz.model import quiz
from convviz.model.fields import preset_state
from convviz.model.presets import PRESETS
from convviz.render.story.matrix import SECTIONS
from convviz.render.story.quiz import given_figures, given_rows
from convviz.render.theme import tap_colors, theme_for
from convviz.ui.compute import compute_layer, value_key

pytestmark = pytest.mark.apptest  # the Matrix, Checks and Quiz pages in AppTest

MATRIX, CHECKS, QUIZ = "pages/7_Matrix.py", "pages/8_Checks.py", "pages/9_Quiz.py"
SECTION = "mx_section"  # the Matrix view's tabs
FAST = [p for p in PRESETS if p.key != "qa-channels"]
BAD = {"H": "2", "W": "2", "kH": "5", "kW": "5"}  # a 5×5 kernel over a 2×2 input, no padding


def chart_keys(at) -> list[str]:
    return [c.proto.id.split("-")[-1] for c in at.get("plotly_chart")]


def preset_layer(p):
    return compute_layer(value_key(preset_state(p)))


def quiz_of(p, seed: int = 0):
    st = preset_state(p)
    return quiz.questions(preset_layer(p), 0, 0, 0, seed, st["pad"], p.worked)


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_matrix_page(p):
    at = open_page(MATRIX, timeout=60, preset=p.key)
    assert_clean(at)
    spec = p.spec()
    assert any("equals the engine's ∂L/∂x" in s.value for s in at.success)
    code = at.code[0].value
    assert f"output_padding={spec.remainder}" in code
    reason = matrix.too_large(spec)
    if reason:
        assert figures(at) == []
        assert any("at most 64" in shown(i.value) for i in at.info)
        return
    figs = figures(at)
    assert len(figs) == 2  # the first tab: M and the linked grids (a hidden tab sends nothing)
    tabs = {"Mt": SECTIONS[1], "spread": SECTIONS[1], "P": SECTIONS[2], "Pt": SECTIONS[2]}
    for name, section in tabs.items():  # each other tab draws its own charts once it is open
        at.session_state[SECTION] = section
        at.run()
        assert_clean(at)
        assert f"mx_chart_{name}" in chart_keys(at), (name, chart_keys(at))
        assert len(figures(at)) == 2
        if name != "spread":  # a matrix: its own chart
            assert_matrix_indexed(figures(at)[chart_keys(at).index(f"mx_chart_{name}")], name)
    at.session_state[SECTION] = SECTIONS[0]
    at.run()
    lay = preset_layer(p)
    M, taps = matrix.conv_matrix(spec, lay.forward.w[0, 0])
    drawn = z_of(trace(figs[0], "M:values"))
    top = 2  # vec(x) over a blank row
    np.testing.assert_allclose(np.nan_to_num(drawn[top:, : M.shape[1]]), M)
    np.testing.assert_allclose(drawn[0, : M.shape[1]], lay.forward.x[0, 0].ravel())
    if spec.in_channels == 1:  # the right column is y itself
        np.testing.assert_allclose(drawn[top:, -1], lay.forward.y[0, 0].ravel())
    # each nonzero wears its tap's colour: the tap overlay's z is the tap index
    assert_matrix_indexed(figs[0], "M")
    tap_z = z_of(trace(figs[0], "M:taps"))[top:, : M.shape[1]]
    single = taps >= 0
    np.testing.assert_array_equal(tap_z[single], taps[single])
    scale = trace(figs[0], "M:taps")["colorscale"]
    colors = tap_colors(*spec.kernel_size)
    assert [c for _, c in scale[::2]] == colors[: len(scale) // 2]


def assert_matrix_indexed(fig, name: str) -> None:
    """Only the matrix's own rows and columns are numbered: the vector above it and the result
    beside it (named in the subtitle) are not rows -2 and -1 or a column past its last."""
    layout = fig["layout"]
    rows, cols = z_of(trace(fig, f"{name}:values")).shape
    for axis, count in (("yaxis", rows - 2), ("xaxis", cols - 2)):  # the vector row, the gap
        ticks = layout[axis]["tickvals"]
        assert ticks and min(ticks) == 0 and max(ticks) < count, (name, axis, ticks, count)


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_checks_page(p):
    at = open_page(CHECKS, timeout=60, preset=p.key)
    assert_clean(at)
    heads = [m.value for m in at.markdown if m.value.startswith("## ")]
    assert len(heads) == 5
    assert all("agrees" in h for h in heads[:3]), heads
    assert "skipped" in heads[3] or "agrees" in heads[3]
    assert "Finite differences through both layers: agrees" in heads[4], heads
    assert at.success[0].value.startswith("All 4 checks agree") or "All 5" in at.success[0].value
    assert len(at.table) >= 3  # reference rows, finite differences, adjoint products


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_quiz_right_then_wrong(p):
    at = open_page(QUIZ, timeout=60, preset=p.key)
    assert_clean(at)
    first, second = quiz_of(p)[:2]
    at.text_input[0].set_value(quiz.answer_text(first))
    submit(at)
    assert_clean(at)
    assert at.success[0].value.startswith("Right")
    # said where the eye is too (the verdict is below a 720 px screen's edge), once
    assert [t.value for t in at.toast] == [at.success[0].value]
    at.run()
    assert not at.toast and at.success[0].value.startswith("Right")
    assert "score: **1 / 1**" in at.markdown[0].value
    assert bool(at.latex) == (first.formula is not None), "the formula is revealed"
    next_question(at)
    assert "Question 2" in at.markdown[0].value
    wrong = second.traps[0].value if second.traps else second.answer + 1
    at.text_input[0].set_value(f"{wrong:g}")
    submit(at)
    assert "Not yet" in at.warning[0].value, "a wrong answer earns a hint, not the answer"
    assert not re.search(r"-\d", at.warning[0].value), "minus signs are '−', as on the grids"
    assert not at.latex, "the formula is not revealed yet"
    if second.traps:  # the named mistake, once
        assert sum(second.traps[0].hint in shown(i.value) for i in at.info) == 1
    assert "score: **1 / 1**" in at.markdown[0].value  # not done yet
    for _ in range(quiz.MAX_TRIES - 1):
        at.text_input[0].set_value(f"{second.answer + 1:g}")
        submit(at)
    assert "Not quite" in at.warning[0].value and quiz.answer_text(second) in at.warning[0].value
    assert "score: **1 / 2**" in at.markdown[0].value
    assert query(at)["qr"] == "1" and query(at)["qd"] == "2"  # the score travels in the link


NOTES = {  # what each preset's note works out, in the note's words: the engine agrees
    "recitation-s1": ("∂L/∂x₁₁ = 1·4 + (−2)·3 + 3·2 + (−1)·1 = 3", {("grad_x", 1, 1): 3}),
    "recitation-s2": ("1·9 + 2·7 + 3·3 + 4·1 = 36", {("grad_x", 2, 2): 36}),
    "d2l": (
        "[[19, 25], [37, 43]]",
        {("y", 0, 0): 19, ("y", 0, 1): 25, ("y", 1, 0): 37, ("y", 1, 1): 43},
    ),
}


@pytest.mark.parametrize("key", NOTES)
def test_the_quiz_does_not_ask_the_sums_a_preset_note_works_out(key):
    """recitation-s1's note (on the Overview) works ∂L/∂x₁₁ out to 3, and seed 0's first
    question asked exactly that; recitation-s2's note gives ∂L/∂x₂₂ and d2l's every y. The
    notes' numbers are the engine's, and no seed asks them."""
    (p,) = [p for p in PRESETS if p.key == key]
    words, sums = NOTES[key]
    assert words in p.note and set(p.worked) == set(sums)
    lay = preset_layer(p)
    grids = {"grad_x": lay.input_grad.grad_x[0, 0], "y": lay.forward.y[0, 0]}
    assert {(g, r, c): grids[g][r, c] for g, r, c in sums} == sums
    names = {"grad_x": "∂L/∂x", "y": "y"}
    cells = [f"**{names[g]}[{r}, {c}]**" for g, r, c in sums]
    asked = [q.prompt for seed in range(40) for q in quiz_of(p, seed)]
    assert not [q for q in asked if any(cell in q for cell in cells)]
    at = open_page(QUIZ, preset=p.key)  # the page asks what quiz_of asks
    assert_clean(at)
    assert at.markdown[1].value == quiz_of(p)[0].prompt


def submit(at):
    next(b for b in at.button if b.label == "Check my answer").click().run()


def next_question(at):
    next(b for b in at.button if b.label.startswith("Next question")).click().run()


def test_quiz_seed_and_question_come_from_the_link():
    p = FAST[1]
    at = open_page(QUIZ, preset=p.key, quiz="7", qn="1")
    assert_clean(at)
    assert at.markdown[0].value.startswith("**Question 2 of")
    assert "seed 7" in at.markdown[0].value
    assert query(at)["quiz"] == "7" and query(at)["qn"] == "1"
    assert quiz_of(p, 7)[1].prompt == at.markdown[1].value
    # the page's "Share this view" link asks them too (it sent seed 0, question 1)
    share = next(c.value for c in at.caption if "Share this view" in c.value)
    assert "&quiz=7&qn=1" in share


@pytest.mark.parametrize("typed", ["twelve", "1e999", "nan", "-inf"])
def test_quiz_says_so_when_the_answer_is_not_a_number(typed):
    at = open_page(QUIZ, preset=FAST[0].key)
    at.text_input[0].set_value(typed)
    submit(at)
    assert_clean(at)
    said = at.warning[0].value
    assert any(w in said for w in ("is not a number", "is not a finite number", "is too large"))


@pytest.mark.parametrize("page_file", [MATRIX, CHECKS, QUIZ])
def test_bad_input_keeps_the_last_valid_view(page_file):
    at = open_page(page_file, preset="recitation-s2")
    assert_clean(at)
    before = len(figures(at))
    for name, value in BAD.items():
        side(at, name).set_value(int(value)).run()
    assert not at.exception
    assert any("Cannot compute this layer" in e.value for e in at.error)
    assert len(figures(at)) == before  # the last valid view stays


def test_quiz_questions_are_reproducible_and_answers_are_the_engines():
    for p in FAST:
        a, b = quiz_of(p, 3), quiz_of(p, 3)
        assert [q.prompt for q in a] == [q.prompt for q in b]
        lay = preset_layer(p)
        for q in a:
            assert quiz.grade(q, q.answer).right
            for t in q.traps:
                assert not quiz.close(t.value, q.answer)
                assert not quiz.grade(q, t.value).right and quiz.grade(q, t.value).hint == t.hint
            if q.formula is not None:
                assert q.formula.adds_up()
        kinds = [q.kind for q in a]
        at = [kinds.index(k) for k in quiz.STORY if k in kinds]
        assert at == sorted(at) and kinds.index("zeros") > max(at), "the story first, in order"
        assert lay is not None


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_quiz_arithmetic_reads_right_with_the_usual_precedence(p):
    """The zeros answer's size of the dilated ∂L/∂y, read as written: "(5−1)·2+1 × (5−1)·2+1"
    read as 8 + 8 + 1 = 17, not 9·9; it is bracketed now."""
    lay = preset_layer(p)
    (zeros,) = [q for q in quiz_of(p) if q.kind == "zeros"]
    written, h, w = re.match(r"Dilated: (.+?) = (\d+)×(\d+),", zeros.notes[0]).groups()
    python = written.translate(str.maketrans({"−": "-", "·": "*", "×": "*", "[": "(", "]": ")"}))
    dH, dW = lay.forward.spec.dilated_out_size
    assert (int(h), int(w)) == (dH, dW)
    assert eval(python) == dH * dW  # our own text: digits, brackets and operators
    assert ") (" not in zeros.prompt  # "∂L/∂y (for n = 0, k = 0) (5×5)" read as two asides


def test_a_sum_too_long_for_hand_work_is_not_asked_and_the_page_says_why():
    """qa-channels' sums add 250 products (∂L/∂x over 10 filters of 5×5) to 9216 (∂L/∂w): the
    quiz asked them beside grids whose numbers are hidden. It asks about the layer's shape
    instead and says why; a small layer's questions ask sums, with no such note."""
    big = next(p for p in PRESETS if p.key == "qa-channels")
    asked = quiz_of(big)
    assert asked and not [q for q in asked if q.kind in quiz.SUMS]
    assert "too long to work out by hand (up to 9216 products)" in quiz.by_hand(
        preset_layer(big), asked
    )
    small = next(p for p in PRESETS if p.key == "classroom")
    asked = quiz_of(small)
    assert {"grad_x", "y", "grad_w"} <= {q.kind for q in asked}
    assert all(len(q.formula.terms) <= quiz.MAX_HAND_TERMS for q in asked if q.formula)
    assert quiz.by_hand(preset_layer(small), asked) == ""


def test_a_sum_over_filters_channels_or_samples_gives_every_slice_it_adds():
    """∂L/∂x[c] adds every filter's w[k, c] · ∂L/∂y[n, k]: the quiz gave filter k = 0's alone, so
    channels-small's answer could not be worked from the grids. Each slice the formula reads is
    now drawn, a row per slice; the seeds' one-slice layers keep their one row of x, w, ∂L/∂y."""
    p = next(p for p in PRESETS if p.key == "channels-small")
    lay = preset_layer(p)
    for q in quiz_of(p):
        rows = given_rows(lay, 0, 0, 0, q.kind)
        drawn = {(panel.key, panel.title) for row in rows for panel in row}
        if q.kind not in quiz.SUMS:
            assert len(rows) == 1 and [panel.key for panel in rows[0]] == ["x", "w", "g"]
            continue
        if q.formula is None:  # the bias: ∂L/∂y of every sample
            assert [p.key for row in rows for p in row].count("g") == p_batch(lay)
            continue
        symbols = [s for term in q.formula.terms for s in (term.left, term.right)]
        read = {(s.name, s.tags) for s in symbols if s.name != "0"}
        names = {"xp": "x", "x": "x", "w": "w", "dy": "g"}
        for name, tags in read:
            axes = dict(tags)
            key = names[name]
            want = {"x": ("n", "c"), "w": ("k", "c"), "g": ("n", "k")}[key]
            label = {"x": "x", "w": "w", "g": "∂L/∂y"}[key]
            title = f"{label}[{want[0]}={axes[want[0]]}, {want[1]}={axes[want[1]]}]"
            assert (key, title) in drawn, f"{q.kind}: {title} is read but not drawn"
    seeds = next(p for p in PRESETS if p.key == "recitation-s2")
    for q in quiz_of(seeds):
        (row,) = given_rows(preset_layer(seeds), 0, 0, 0, q.kind)
        assert [panel.key for panel in row] == ["x", "w", "g"]


def test_a_projector_puts_the_slices_side_by_side_to_fit_one_screen():
    """channels-small's ∂L/∂x gives w and ∂L/∂y of 3 filters. On a projector they fill one
    screen together: two to a line, every cell one size, the stride said once. A laptop's page
    scrolls: a line per filter, each at the laptop's full cells."""
    p = next(p for p in PRESETS if p.key == "channels-small")
    rows = given_rows(preset_layer(p), 0, 0, 0, "grad_x")
    assert len(rows) == 3
    for size in ((1232, 720, 16), (1848, 1080, 24)):
        theme = theme_for(True, size)
        figs = given_figures(rows, theme)
        assert len(figs) == 2
        assert sum(f.layout.height for f in figs) <= theme.figure_h
        cells = {round(matrix_cell_px(f.to_plotly_json())) for f in figs}  # w[k, 0]'s cells
        assert len(cells) == 1 and cells.pop() >= 32 * theme.scale
        assert ["stride" in str(f.layout) for f in figs] == [True, False]
        assert str(figs[0].layout).count("stride") == 1  # said once, by w[k=0]
    laptop = given_figures(rows, theme_for(False))
    assert len(laptop) == 3
    assert [round(matrix_cell_px(f.to_plotly_json())) for f in laptop] == [44] * 3


@pytest.mark.parametrize(
    ("key", "word", "says"),
    [
        pytest.param("classroom", None, "padding 1 top and 1 bottom", id="amounts: None"),
        pytest.param("keras-same", "same", "'same' padding", id="a word"),
    ],
)
def test_quiz_rows_question_states_the_padding_as_it_was_given(key, word, says):
    """The engine knows only its padding words; amounts (the UI's 'explicit') come as None."""
    p = next(p for p in PRESETS if p.key == key)
    rows = next(q for q in quiz.questions(preset_layer(p), 0, 0, 0, 0, word) if q.kind == "rows")
    assert says in rows.prompt


def p_batch(lay) -> int:
    return lay.forward.spec.batch


def matrix_cell_px(fig: dict) -> float:
    """The px edge of the cells of a Matrix view chart's first grid (its axis domain's width)."""
    layout = fig["layout"]
    x0, x1 = layout["xaxis"]["domain"]
    plot_w = layout["width"] - layout["margin"]["l"] - layout["margin"]["r"]
    grid = next(t for t in fig["data"] if t["type"] == "heatmap" and t.get("xaxis", "x") == "x")
    cols = z_of(grid).shape[1]
    return (x1 - x0) * plot_w / cols


@pytest.mark.parametrize("key", ["recitation-s1", "recitation-s2", "classroom"])
def test_matrix_cells_are_legible_on_a_projector(key):
    """In presentation mode a tall matrix scrolls the page rather than shrink its cells below
    48 px (the legibility floor of the other pages' grids on a projector); only a matrix too wide
    for the screen has smaller cells, and then it takes the whole width."""
    at = open_page(MATRIX, timeout=60, preset=key, pres="1")
    width = theme_for(True).figure_w
    for section in SECTIONS:
        at.session_state[SECTION] = section
        at.run()
        assert_clean(at)
        for fig in figures(at):
            cell = matrix_cell_px(fig)
            assert cell >= 48 or fig["layout"]["width"] + cell > width, (key, section, cell)


def test_an_unknown_matrix_tab_opens_the_first():
    """A crafted client naming no tab gets the first one, not an error or an empty page."""
    at = open_page(MATRIX, timeout=60, preset="recitation-s1")
    at.session_state[SECTION] = "no such tab"
    at.run()
    assert_clean(at)
    assert len(figures(at)) == 2 and at.header[0].value.startswith("1. The forward pass")


@pytest.mark.parametrize(("sel", "says"), [("y:0:0", "output y[0, 0]"), ("x:3:2", "input x[2, 1]")])
def test_the_matrix_view_opens_on_the_links_selection(sel, says):
    """A link's (or another page's) selection is the Matrix view's: it opened on y[2, 2]
    whatever `sel` said, and its clicks never reached the link. An x cell comes in the padded
    indices of the other pages (classroom pads 1: x̃[3, 2] is x[2, 1])."""
    at = open_page(MATRIX, timeout=60, preset="classroom", sel=sel)
    assert_clean(at)
    assert any(f"**Selected:** {says}" in m.value for m in at.markdown), [
        m.value for m in at.markdown if "Selected" in m.value
    ]
    assert query(at)["sel"] == sel


def test_a_matrix_entry_maps_to_the_other_pages_selection_and_back():
    """Every output and input cell: the page's cell → the app's selection → the page's cell."""
    from convviz.render.story.matrix import app_selection, link_of, page_cell

    p = next(p for p in PRESETS if p.key == "classroom")
    spec, lay = p.spec(), preset_layer(p)
    ms = matrix.matrix_slice(spec, lay.forward.x, lay.forward.w, lay.input_grad.grad_out, 0, 0, 0)
    for key, (h, w) in (("y", spec.out_size), ("x", spec.in_size)):
        for r in range(h):
            for c in range(w):
                app = app_selection(ms, link_of(ms, key, r, c))
                assert app[0] == key and page_cell(ms, app) == (key, r, c)
    assert page_cell(ms, ("x", 0, 0)) is None  # x̃'s padding ring: no cell of x here
    assert page_cell(ms, ("grad_w", 1, 2)) == ("w", 1, 2)


def test_the_textbook_row_of_mt_follows_a_selected_output():
    """With an output cell selected, the backward tab lit its column of Mᵀ but drew the textbook
    row of the centre x cell, which that output may not read; it draws the row of a cell the
    output reads (so the two agree) and says so."""
    at = open_page(MATRIX, timeout=60, preset="remainder", sel="y:1:1")
    at.session_state[SECTION] = SECTIONS[1]
    at.run()
    assert_clean(at)
    (line,) = [m.value for m in at.markdown if m.value.startswith("**Row of Mᵀ for x[")]
    assert "(a cell y[1, 1] reads)" in line
    r, c = map(int, re.search(r"x\[(\d+), (\d+)\]", line).groups())
    spec = next(p for p in PRESETS if p.key == "remainder").spec()
    lay = preset_layer(next(p for p in PRESETS if p.key == "remainder"))
    ms = matrix.matrix_slice(spec, lay.forward.x, lay.forward.w, lay.input_grad.grad_out, 0, 0, 0)
    out = 1 * spec.out_size[1] + 1
    assert ms.taps[out, r * spec.in_size[1] + c] != -1  # y[1, 1] reads it


@pytest.mark.parametrize("p", FAST, ids=lambda p: p.key)
def test_quiz_flip_note_gives_the_kernel_row_each_term_uses(p):
    """The reveal's rule a = (x̃ row − s·i) / d, evaluated at each term's ∂L/∂y row i, is the
    kernel row that term multiplies; written plainly (no "+ 0", "/ 1" or "1·i")."""
    for q in (q for q in quiz_of(p) if q.kind == "grad_x"):
        note = q.notes[0]
        rule = note.split("kernel row a = ")[1].split(":")[0]
        assert not any(noise in rule for noise in ("+ 0", "/ 1", "1·i")), rule
        expr = rule.replace("−", "-").replace("·", "*")
        terms = [t for t in q.formula.terms if t.left.name == "dy" and not t.folded]  # its own
        assert terms
        for t in terms:
            i, a = t.left.index[0], t.right.index[0]
            assert eval(expr, {"i": i}) == a, (rule, t)  # our own arithmetic


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.key)
def test_the_matrix_views_textbook_grid_is_numbered_as_on_the_input_gradient_page(p):
    """Matrix view's row of Mᵀ drawn the textbook way numbered the dilated, padded ∂L/∂y 0…6;
    the Input gradient page numbers the same grid −2…4 (∂L/∂y's first cell is 0)."""
    from convviz.render.story.input_grad import input_grad_story
    from convviz.render.story.matrix import spread_panel

    ig = preset_layer(p).input_grad
    spread = spread_panel(ig, 0, 0, 0, (0, 0))
    (padded,) = [q for q in input_grad_story(ig, 0, 0, 0)[2].panels if q.key == "padded"]
    assert spread.origin == padded.origin and spread.shape == padded.shape
    np.testing.assert_array_equal(spread.values, padded.values)


def test_the_grad_x_prompt_names_every_grid_it_shows():
    """'The grids below give w and ∂L/∂y' stood over three grids, x the first: with one filter
    the prompt names x too; with several, the rows are w and ∂L/∂y of each filter, no x."""
    for p in FAST:
        lay = preset_layer(p)
        (q,) = [q for q in quiz_of(p) if q.kind == "grad_x"][:1] or [None]
        if q is None:
            continue
        keys = {panel.key for row in given_rows(lay, 0, 0, 0, "grad_x") for panel in row}
        assert ("and x its size" in q.prompt) == ("x" in keys), p.key
        if "x" not in keys:  # its size and padding in words (channels-small: padding 1)
            spec = lay.forward.spec
            assert f"x is {spec.in_size[0]}×{spec.in_size[1]} with padding 1 (zeros)" in q.prompt

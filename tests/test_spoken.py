"""What a screen reader is told (issue 41), checked against the numbers: a cell's sum in words adds
up to the engine's value (the public API's, not the formula's); a keyboard grid's cells carry the
grid's numbers and roles; a sliding window's steps say the cells the window covers and the value
it writes; a motion's cells, as it ends, are the stage's result; the number tables hold every
digit, with a caption and header cells; every stage has a long description that names its grids'
sizes and ranges; the player and the grids are handed their words."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pytest

import convviz
from convviz import player
from convviz.engine.arrays import layer
from convviz.engine.formulas import forward_formula, input_grad_formula, weight_grad_formula
from convviz.engine.sweeps import forward_sweep
from convviz.engine.text import MINUS
from convviz.model.descriptions import DESCRIPTIONS, described
from convviz.model.lecture import LECTURE
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import from_query
from convviz.render.motion.frames import motion_figure
from convviz.render.motion.model import MOTION_FRAME_MS
from convviz.render.panel import ROLE_WORDS, Panel
from convviz.render.plotly.frames import FRAME_MS
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.plotly.spoken import SAID_TERMS, Sums, say_sums, window_says
from convviz.render.plotly.sweeps import sweep_figure
from convviz.render.story.board import drawing, sums_of
from convviz.render.story.describe import describe
from convviz.render.story.learning_frames import STEP_FRAME_MS, STEP_FRAMES
from convviz.render.story.panels import forward_panels
from convviz.render.story.subject import Subject
from convviz.render.tables import table_html
from convviz.render.theme import THEME

PRESETS = ("recitation-s1", "recitation-s2", "keras-same", "d2l", "classroom", "channels-small")


def _layer(key: str, seed: int = 0):
    p = PRESETS_BY_KEY[key]
    spec, (x, w) = p.spec(), p.values()
    g = np.random.default_rng(seed).integers(-3, 4, spec.output_shape).astype(float)
    return layer(spec, x, w, g), x, w, g


def _said_numbers(text: str) -> float:
    """What a sum said in words adds up to, read back: its products, the rest, the bias."""
    number = r"(−?[0-9][0-9.]*)"
    value = lambda s: float(s.replace(MINUS, "-"))  # noqa: E731
    total = sum(value(a) * value(b) for a, b in re.findall(rf"{number} times {number}", text))
    rest = re.search(rf"more, adding up to {number}", text)
    bias = re.search(rf"plus the bias {number}", text)
    return total + (value(rest[1]) if rest else 0) + (value(bias[1]) if bias else 0)


# --- a sum in words ----------------------------------------------------------------------------


@pytest.mark.parametrize("key", PRESETS)
def test_a_sum_said_in_words_adds_up_to_the_public_apis_value(key):
    lay, x, w, g = _layer(key)
    spec = lay.forward.spec
    kw = spec.kwargs()
    y = convviz.conv2d(x, w, **kw)
    gx = convviz.conv2d_input(x.shape, w, g, **kw)
    gw = convviz.conv2d_weight(x, w.shape, g, **kw)
    (oh, ow), (H, W), (kh, kwd) = spec.out_size, spec.in_size, spec.kernel_size
    for i, j in np.ndindex(oh, ow):
        said = forward_formula(lay.forward, 0, 0, i, j).words()
        assert _said_numbers(said) == pytest.approx(y[0, 0, i, j]), said
    for i, j in np.ndindex(H, W):
        said = input_grad_formula(lay.input_grad, 0, 0, i, j).words()
        assert _said_numbers(said) == pytest.approx(gx[0, 0, i, j]) or "copies" in said, said
    for i, j in np.ndindex(kh, kwd):
        said = weight_grad_formula(lay.weight_grad, 0, 0, i, j).words()
        assert _said_numbers(said) == pytest.approx(gw[0, 0, i, j]), said


def test_a_long_sum_says_twelve_products_then_how_many_more_and_what_they_add_to():
    lay, *_ = _layer("channels-small")
    formula = weight_grad_formula(lay.weight_grad, 0, 0, 0, 0)
    said = formula.words()
    assert len(formula.terms) > 12
    assert said.count(" times ") == 12
    assert f", and {len(formula.terms) - 12} more, adding up to " in said
    assert said.startswith(f"the sum of {len(formula.terms)} products: ")


def test_a_cell_no_window_reads_is_marked_so_in_its_grid():
    spec = convviz.ConvSpec.create((1, 1, 5, 5), (1, 1, 2, 2), stride=3)
    x, w = np.ones(spec.input_shape), np.ones(spec.weight_shape)
    s = Subject(layer(spec, x, w, np.ones(spec.output_shape)))
    grad_x = drawing(s, LECTURE.stage("mask")).still(s).panels[-1]
    roles = grad_x.roles()
    assert roles[2, 2] == "u" and roles[0, 0] == "."
    assert ROLE_WORDS["u"] == "no window reads it"


# --- a keyboard grid's cells -------------------------------------------------------------------


def _click_grids(fig) -> dict[str, dict]:
    return {t["name"]: t for t in fig.traces if (t.get("meta") or {}).get("grid")}


def test_a_grids_cells_carry_its_numbers_roles_and_where_it_opens():
    lay, *_ = _layer("keras-same")
    fw = lay.forward
    panels = forward_panels(fw, forward_sweep(fw, 0, 0), 0, 0, 0, selected=(1, 2))
    fig = panels_figure(list(panels), THEME)
    grids = _click_grids(fig)
    x = grids["x:click"]["meta"]["grid"]
    assert x["shape"] == [5, 5] and x["origin"] == [-1, -1]
    written = x["values"].split("|")
    assert [float(v.replace(MINUS, "-")) for v in written] == list(fw.x_padded[0, 0].ravel())
    ring = np.array(list(x["roles"])).reshape(5, 5) == "p"
    assert ring.sum() == 16 and not ring[1:-1, 1:-1].any()
    y = grids["y:click"]["meta"]["grid"]
    assert y["start"] == [1, 2] and "roles" not in y


def test_a_figures_sums_are_said_cell_by_cell_within_a_budget():
    lay, *_ = _layer("recitation-s2")
    s = Subject(lay)
    fig = panels_figure(drawing(s, LECTURE.stage("forward")).still(s).panels, THEME)
    say_sums(fig, sums_of(s, LECTURE.stage("forward")))
    y = _click_grids(fig)["y:click"]
    for (_, r, c), said in zip(y["customdata"], y["meta"]["grid"]["sums"]):
        assert said == forward_formula(lay.forward, 0, 0, r, c).words()
    assert "sums" not in _click_grids(fig)["x:click"]["meta"]["grid"]  # x holds values
    # a figure whose cells would cost more than the budget is said by its numbers alone
    costly = Sums(lay.forward.spec, lambda kind, cell: pytest.fail("built a formula"))
    fig = panels_figure(drawing(s, LECTURE.stage("forward")).still(s).panels, THEME)
    cells = _click_grids(fig)["y:click"]["customdata"]
    per_cell = SAID_TERMS // len(cells) + 1
    spec = lay.forward.spec
    big = convviz.ConvSpec.create((1, per_cell, *spec.in_size), (1, per_cell, 3, 3), stride=2)
    say_sums(fig, Sums(big, costly.formula))
    assert "sums" not in _click_grids(fig)["y:click"]["meta"]["grid"]


def test_no_sums_on_grids_that_are_not_the_layers_own():
    s = Subject(_layer("recitation-s2")[0], state={"preset": "recitation-s2"})
    assert sums_of(s, LECTURE.stage("train")) is None  # a run's y and ∂L/∂w, step by step
    assert sums_of(s, LECTURE.stage("chain-forward")) is None
    layer_one = sums_of(s, LECTURE.stage("chain-mask"))
    assert layer_one.spec == s.spec and layer_one.formula("grad_x", (0, 0)).value == pytest.approx(
        s.layer_one.layer.input_grad.grad_x[0, 0, 0, 0]
    )


# --- what the announcer says -------------------------------------------------------------------


@pytest.mark.parametrize("key", ("recitation-s2", "keras-same", "classroom"))
def test_each_step_of_a_sliding_window_says_the_cells_it_covers_and_the_value_it_writes(key):
    lay, x, w, _ = _layer(key)
    fw, spec = lay.forward, lay.forward.spec
    sweep = forward_sweep(fw, 0, 0)
    op = forward_panels(fw, sweep, 0, 0, 0)[0]
    y = convviz.conv2d(x, w, **spec.kwargs())
    (sh, sw), (kh, kw), ((pt, _), (pl, _)) = spec.stride, spec.kernel_size, spec.padding
    said = window_says(sweep, range(sweep.steps), op, "y")
    for t, words in enumerate(said):
        r, c = divmod(t, spec.out_size[1])
        rows = f"{r * sh - pt}–{r * sh - pt + kh - 1}"
        cols = f"{c * sw - pl}–{c * sw - pl + kw - 1}"
        said = f"the window over rows {rows}, columns {cols} computes y[{r}, {c}] = "
        assert words == said.replace("-", MINUS) + f"{y[0, 0, r, c]:g}".replace("-", MINUS)


def test_the_sweep_figure_hands_its_steps_words_to_the_player():
    lay, *_ = _layer("recitation-s2")
    s = Subject(lay)
    drawn = drawing(s, LECTURE.stage("forward")).sweep(s)
    fig = sweep_figure(drawn.sweep, *drawn.panels, THEME)
    data = player.player_data(fig, None, chart="c", find=".c", stage="forward",
                              presentation=False, arrived="forward: it slides")  # fmt: skip
    assert data["says"][0].startswith("the window over rows 0–2, columns 0–2 computes y[0, 0]")
    assert data["words"]["step"] == "step {step} of {count}: {said}"
    assert data["arrived"] == "forward: it slides"
    assert "window.convvizGrids" in player.global_script()
    assert set(player.grid_words()["roles"]) == set(ROLE_WORDS)


@pytest.mark.parametrize("key", ("keras-same", "recitation-s2"))
def test_a_motions_cells_as_it_ends_are_the_stages_result(key):
    lay, *_ = _layer(key)
    s = Subject(lay)
    motion = drawing(s, LECTURE.stage("mask")).motion(s).build()
    fig = motion_figure(motion, THEME)
    grid = next(iter(_click_grids(fig).values()))
    meta, data = grid["meta"]["grid"], grid["customdata"]
    values = meta["values"].split("|")
    inner = [(r, c, v) for (k, r, c), v in zip(data, values) if k == "grad_x"]
    assert len(inner) == np.prod(lay.forward.spec.in_size)
    for r, c, v in inner:
        assert float(v.replace(MINUS, "-")) == lay.input_grad.grad_x[0, 0, r, c]


# --- the number tables -------------------------------------------------------------------------


class _Table(HTMLParser):
    def __init__(self):
        super().__init__()
        self.caption, self.heads, self.cells, self.button = "", [], [], None
        self._in = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self._in = tag
        if tag == "th":
            self.heads.append(attrs.get("scope"))
        if tag == "td":
            self.cells.append(attrs["data-v"])
        if tag == "button":
            self.button = attrs.get("data-cv-csv")

    def handle_data(self, data):
        if self._in == "caption":
            self.caption += data


def test_a_table_has_a_caption_header_cells_and_every_digit_of_its_numbers():
    values = np.random.default_rng(3).normal(size=(3, 4)) / 7
    pad = np.zeros((3, 4), bool)
    pad[0] = True
    panel = Panel(values, "∂L/∂x̃", "grad_x_padded", pad_mask=pad, origin=(-1, 0))
    table = _Table()
    table.feed(table_html(panel, "convviz-x-grad.csv"))
    assert table.caption.startswith("∂L/∂x̃, 3×4 (cells marked: grey, 4 padding")
    assert table.heads == ["col"] * 5 + ["row"] * 3
    assert np.array_equal(np.array(table.cells, dtype=float).reshape(3, 4), values)
    assert table.button == "convviz-x-grad.csv"


# --- descriptions ------------------------------------------------------------------------------


def test_every_stage_has_a_long_description_and_no_description_lacks_its_stage():
    assert set(DESCRIPTIONS) == {s.key for s in LECTURE.stages}
    spec = PRESETS_BY_KEY["recitation-s2"].spec()
    for stage in LECTURE.stages:
        words = described(stage, spec)
        sentences = [s for s in re.split(r"(?<=[.:])\s+", words) if s]
        assert max(len(s.split()) for s in sentences) <= 35, (stage.key, words)


@pytest.mark.parametrize("key", ("recitation-s2", "keras-same", "classroom"))
def test_a_stages_description_names_its_grids_sizes_and_their_numbers_range(key):
    lay, *_ = _layer(key)
    s = Subject(lay)
    for stage in ("forward", "pad", "mask", "weight-grad"):
        told = describe(s, LECTURE.stage(stage))
        for panel in drawing(s, LECTURE.stage(stage)).still(s).panels:
            v = np.asarray(panel.values, float)
            shape = f"{panel.shape[0]}×{panel.shape[1]}"
            assert shape in told.short and shape in told.long
            lo, hi = (f"{a:g}".replace("-", MINUS) for a in (v.min(), v.max()))
            assert (f"from {lo} to {hi}" in told.long) or (lo == hi and f"is {lo}" in told.long)
        assert told.arrived.startswith(LECTURE.named(LECTURE.stage(stage)))


# --- moving content (WCAG 2.2.2) ---------------------------------------------------------------


@pytest.mark.parametrize("key", ("recitation-s1", "recitation-s2", "keras-same", "classroom"))
def test_every_transition_lasts_between_a_fifth_of_a_second_and_two_at_1x(key):
    """A motion's glide from one keyframe to the next, a sliding window's step and the Learning
    page's step each take 0.2–2 s at 1× (none under reduced motion: the player's `arrival`)."""
    state, _ = from_query({"preset": key})
    s = Subject(_layer(key)[0], state=state)
    for stage in LECTURE.of(s.spec):
        drawn = drawing(s, stage)
        if drawn.motion is None:
            continue
        glides = np.array(drawn.motion(s).build().tweens) * MOTION_FRAME_MS
        assert glides.min() >= 200 and glides.max() <= 2000, (stage.key, glides)
    assert 200 <= FRAME_MS <= 2000 and 200 <= STEP_FRAMES * STEP_FRAME_MS <= 2000

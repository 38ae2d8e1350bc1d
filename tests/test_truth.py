"""Visual truth: what the app says about a layer agrees with the layer it computes.

A link that overrides a preset is a custom layer: the banner (the preset's title and note), the
sidebar (the state) and the figures (the layer computed from the state) describe one layer, for
every preset × a few overrides. Oracles: the preset's own spec and values, the state's spec, and
the page's shapes table.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from apptest_pages import side
from streamlit.testing.v1 import AppTest

from convviz.engine.arrays import layer
from convviz.engine.formulas import input_grad_formula
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.engine.sweeps import channel_contributions, forward_sweep, weight_grad_sweep
from convviz.engine.values import layer_values
from convviz.model.fields import EDITABLE, VALUE_FIELDS, decode_array, preset_state
from convviz.model.presets import PRESETS
from convviz.model.state import from_query, spec_of, to_query
from convviz.render.panel import Panel
from convviz.render.story.input_grad import Step, formula_notes, input_grad_story
from convviz.render.story.panels import (
    channel_grids,
    forward_panels,
    overview_panels,
    weight_grad_panels,
)

APP = str(Path(__file__).resolve().parents[1] / "app.py")

OVERRIDES = [
    pytest.param({}, id="none"),
    pytest.param({"kH": "9"}, id="kH=9"),
    pytest.param({"kH": "3", "kW": "3"}, id="kernel 3x3"),
    pytest.param({"H": "9"}, id="H=9"),
    pytest.param({"sh": "2"}, id="stride 2"),
    pytest.param({"pad": "full"}, id="pad full"),
    pytest.param({"mode": "circular", "pad": "explicit", "pt": "1", "pb": "1"}, id="circular"),
    pytest.param({"seed": "7"}, id="seed 7"),
    pytest.param({"gout": "mse"}, id="gout mse"),
    pytest.param({"cout": "2"}, id="two filters"),
    pytest.param({"sel": "y:0:0", "step": "3", "pres": "1"}, id="view fields only"),
]
SMALL = [p for p in PRESETS if np.prod(p.input_shape) <= 1000]


def layer_of_state(state: dict):
    """(spec, x, w, grad_out) the pages compute from a state (as ui.compute does)."""
    spec = spec_of(state)
    shapes = {"x": spec.input_shape, "w": spec.weight_shape, "g": spec.output_shape}
    edits = {n: decode_array(state[n], shapes[n], n) if state[n] else None for n in EDITABLE}
    return (spec, *layer_values(spec, state["seed"], state["kernel"], state["gout"], **edits))


def preset_layer(preset):
    spec, (x, w) = preset.spec(), preset.values()
    g = layer_values(spec, preset.seed, preset.kernel, preset.grad_out, x=x, w=w)[2]
    return spec, x, w, preset.grad_out_for(None) if preset.g is not None else g


@pytest.mark.parametrize("overrides", OVERRIDES)
@pytest.mark.parametrize("preset", [pytest.param(p, id=p.key) for p in SMALL])
def test_a_link_names_its_preset_only_if_it_shows_that_layer(preset, overrides):
    state, problems = from_query({"preset": preset.key, **overrides})
    try:
        spec, x, w, g = layer_of_state(state)
    except ConvSpecError as exc:  # the figures would fall back to another layer
        raise AssertionError(f"the link's state cannot be computed: {exc}") from None
    if state["preset"] == preset.key:  # the banner says this preset: it must be its layer
        want = preset_layer(preset)
        assert spec == want[0], (overrides, problems)
        for name, got, expected in zip(("x", "w", "grad_out"), (x, w, g), want[1:]):
            np.testing.assert_array_equal(got, expected, err_msg=f"{name} {overrides}")
        own = to_query(preset_state(preset))
        changed = [k for k, v in overrides.items() if k in VALUE_FIELDS and own.get(k) != v]
        assert not changed or any("not applied" in p for p in problems), problems
    else:
        assert state["preset"] == "custom", state["preset"]
        assert any("custom layer" in p for p in problems), problems
        for name, value in overrides.items():  # the sidebar shows what the link asked for
            assert str(int(state[name]) if isinstance(state[name], bool) else state[name]) == value


def test_a_link_without_a_preset_that_changes_the_default_layer_is_custom():
    assert from_query({"H": "5"})[0]["preset"] == "custom"
    assert from_query({"sh": "2"})[0]["preset"] == "classroom", "the default's own stride"
    assert from_query({"sel": "y:1:1"})[0]["preset"] == "classroom", "a view field only"
    impossible, _ = from_query({"H": "2", "W": "2", "kH": "5", "kW": "5", "pad": "valid"})
    assert impossible["preset"] == "custom", "the page shows an error, not the default's banner"


def test_a_shared_custom_link_is_not_reported():
    state, _ = from_query({"preset": "recitation-s1", "kH": "3", "kW": "3"})
    again, more = from_query(to_query(state))
    assert again == state and not more, more


def overview(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


@pytest.mark.apptest
@pytest.mark.parametrize(
    "query",
    [
        pytest.param({"preset": "recitation-s2", "kH": "9"}, id="recitation-s2&kH=9"),
        pytest.param({"preset": "recitation-s1", "kH": "3", "kW": "3"}, id="recitation-s1&k3x3"),
    ],
)
def test_banner_sidebar_and_figures_describe_one_layer(query):
    """The issue's two links, in the app: the banner names a preset only if the shapes table
    (the computed layer) and the sidebar's kernel are that preset's."""
    at = overview(**query)
    assert not at.exception and not at.error, [e.value for e in at.error]
    shapes = dict(zip(at.table[0].value["array"], at.table[0].value["shape"]))
    kernel = (
        side(at, "kH").value,
        side(at, "kW").value,
    )
    banner = [i.value for i in at.info]
    titled = [p for p in PRESETS if any(b.startswith(f"**{p.title}.**") for b in banner)]
    if titled:
        (preset,) = titled
        assert shapes["w"] == " × ".join(map(str, preset.weight_shape))
        assert kernel == preset.weight_shape[2:]
    else:
        assert at.session_state["cv_state"]["preset"] == "custom"
        assert shapes["w"].endswith(f"{kernel[0]} × {kernel[1]}"), (shapes["w"], kernel)


# --- words that fit the layer ------------------------------------------------------------------
WORDING_SPECS = [
    pytest.param(p.spec(), id=p.key) for p in PRESETS if np.prod(p.input_shape) <= 1000
] + [
    pytest.param(
        ConvSpec.create((1, 1, 5, 6), (1, 1, 2, 3), stride=(2, 3), padding=((0, 1), (1, 0))),
        id="one-sided padding, remainder",
    ),
    pytest.param(ConvSpec.create((1, 1, 4, 4), (1, 1, 1, 1)), id="1x1 kernel, nothing to pad"),
    pytest.param(ConvSpec.create((1, 1, 6, 6), (1, 1, 2, 2), stride=3), id="stride 3, 2x2"),
]
BAD_WORDS = re.compile(r"\(s\)|\b1 (rows|columns|cols|samples|filters|channels|copies)\b")


def words_of(spec: ConvSpec) -> tuple[list[Step], list[Panel]]:
    """The storyboard and every panel the pages draw for a layer with seeded values."""
    x, w, g = layer_values(spec, 3, "random", "random")
    lay = layer(spec, x, w, g)
    steps = input_grad_story(lay.input_grad, 0, 0, 0)
    forward = forward_panels(lay.forward, forward_sweep(lay.forward), 0, 0, 0)
    wg = weight_grad_panels(lay.weight_grad, weight_grad_sweep(lay.weight_grad), 0, 0, 0)
    overview = [p for part in overview_panels(lay, 0, 0, 0) for p in part]
    panels = [*forward, *wg, *overview, *(p for s in steps for p in s.panels)]
    return steps, panels


@pytest.mark.parametrize("spec", WORDING_SPECS)
def test_captions_fit_the_layer(spec):
    steps, panels = words_of(spec)
    texts = [s.caption for s in steps] + [f"{p.title} {p.subtitle}" for p in panels]
    for text in texts:
        assert not BAD_WORDS.search(text), text
    padded = any(side for sides in spec.padding for side in sides)
    mask = steps[5].caption
    if not padded:
        assert "no padding" in mask and "dropped" not in mask and "added back" not in mask, mask
        assert not any("→ padded" in p.subtitle for p in panels), "nothing is padded"
    else:
        assert ("dropped" in mask) == (spec.padding_mode == "zeros"), mask
        for p in panels:
            if "→ padded" in p.subtitle:  # 'H×W → padded Hp×Wp' names two different sizes
                before, after = p.subtitle.split(" → padded ")
                assert before != after.split(",")[0], p.subtitle
    dilate = steps[1].caption
    if spec.stride == (1, 1):
        assert "no zeros to insert" in dilate and "0×0" not in dilate, dilate


def test_grid_titles_count_filters_and_channels():
    spec = ConvSpec.create((1, 1, 4, 4), (1, 1, 3, 3))
    x, w, g = layer_values(spec, 0)
    lay = layer(spec, x, w, g)
    grids = channel_grids(lay, 0, 0, channel_contributions(lay.input_grad, 0, 0))
    titles = [gr.title for gr in grids]
    assert "input x[n=0]: 1 channel" in titles and "∂L/∂w: 1 filter × 1 channel" in titles[1]
    many = ConvSpec.create((1, 2, 4, 4), (3, 2, 3, 3))
    x, w, g = layer_values(many, 0)
    lay = layer(many, x, w, g)
    grids = channel_grids(lay, 0, 1, channel_contributions(lay.input_grad, 0, 1))
    assert grids[1].title.startswith("∂L/∂w: 3 filters × 2 channels")
    assert grids[2].title == "∂L/∂x[n=0, c=1] = Σ over the 3 filters"


def test_formula_note_counts_the_copies_of_a_folded_cell():
    spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), padding=1, padding_mode="reflect")
    x, w, g = layer_values(spec, 0, "random", "random")
    ig = layer(spec, x, w, g).input_grad
    assert "3 padded copies" in formula_notes(input_grad_formula(ig, 0, 0, 1, 1))
    assert "1 padded copy on" in formula_notes(input_grad_formula(ig, 0, 0, 1, 2))
    assert formula_notes(input_grad_formula(ig, 0, 0, 2, 2)) == "", "an inner cell has no copy"

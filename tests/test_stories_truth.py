"""Words that fit the layer, over every preset: titles say "padded"/"dilated" only where the
engine's masks say so, slices and cells are written in their two notations with the indices the
view asked for, a titled slice holds exactly the engine's array, and every count of channels,
filters or samples in a title or caption is the layer's own."""

import re

import numpy as np
import pytest

from convviz.engine.arrays import layer
from convviz.engine.spec import PADDING_MODES, ConvSpec
from convviz.engine.sweeps import (
    channel_contributions,
    forward_sweep,
    input_grad_sweep,
    weight_grad_sweep,
)
from convviz.engine.text import RECITATION_NOTE
from convviz.engine.values import layer_values
from convviz.model.presets import PRESETS
from convviz.render.motion.model import legend_items
from convviz.render.mpl import sweep_gif
from convviz.render.story.input_grad import (
    Focus,
    feeds_text,
    input_grad_animation,
    input_grad_story,
    scatter_panels,
    stage_motion,
)
from convviz.render.story.panels import (
    channel_grids,
    forward_panels,
    layer_summary,
    overview_panels,
    shape_rows,
    weight_grad_panels,
    window_motion,
)

IDS = [p.key for p in PRESETS]
SLICE = re.compile(r"^[nkc]=\d+(, [nkc]=\d+)*$")


def _layer(preset):
    spec = preset.spec()
    x, w = preset.values()
    lay = layer(spec, x, w, preset.grad_out_for(np.zeros(spec.output_shape)))
    N, K, C = spec.batch, spec.out_channels, spec.in_channels
    return lay, N - 1, K - 1, C - 1  # the last slice: indices that are not all 0


def _panels(lay, n, k, c):
    """Every Panel the stories build for slice (n, k, c)."""
    fw = forward_sweep(lay.forward, n, k)
    ig = input_grad_sweep(lay.input_grad, n, c)
    wg = weight_grad_sweep(lay.weight_grad, k, c)
    forward, backward = overview_panels(lay, n, k, c)
    story = input_grad_story(lay.input_grad, n, k, c)
    return [
        *forward_panels(lay.forward, fw, n, k, c),
        *(p for step in story for p in step.panels),
        *input_grad_animation(lay.input_grad, ig, n, k, c),
        *weight_grad_panels(lay.weight_grad, wg, n, k, c),
        *forward,
        *backward,
        *scatter_panels(lay, n, k, c),
    ]


@pytest.fixture(scope="module", params=PRESETS, ids=IDS)
def case(request):
    lay, n, k, c = _layer(request.param)
    return lay, n, k, c, _panels(lay, n, k, c)


def test_padded_and_dilated_only_where_the_masks_say_so(case):
    *_, panels = case
    for p in panels:
        if "padded" in p.title:
            assert p.mask("pad_mask").any(), f"{p.title!r} has no padded cell"
        if "dilated" in p.title:
            assert p.mask("dilation_mask").any(), f"{p.title!r} has no inserted zero"
        if p.key in ("x", "padded") and p.mask("pad_mask").any():
            assert "padded" in p.title, f"{p.title!r} hides its padding"


def test_slices_name_their_axes_and_hold_the_engines_array(case):
    lay, n, k, c, panels = case
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    index = {"n": n, "k": k, "c": c}
    engine = {  # a title's name → the engine's array of that slice
        "y": fw.y[n, k],
        "w": fw.w[k, c],
        "rot180 w": ig.w_rot[c, k],
        "∂L/∂x": ig.grad_x[n, c],
        "∂L/∂x̃": ig.grad_x_padded[n, c],
        "∂L/∂w": wg.grad_w[k, c],
    }
    for p in panels:
        groups = re.findall(r"\[([^\]]*)\]", p.title)
        assert groups, f"{p.title!r} does not say which slice it is"
        for g in groups:
            assert SLICE.match(g), f"{p.title!r}: a slice is written [n=…, k=…], not [{g}]"
            for axis, value in re.findall(r"([nkc])=(\d+)", g):
                assert int(value) == index[axis], p.title
        name = re.sub(r"^(input|output|kernel) ", "", p.title.split("[")[0])
        if name in engine and "," not in p.title.split("]")[-1]:
            np.testing.assert_array_equal(p.values, engine[name], err_msg=p.title)
        if name == "∂L/∂y" and p.title.endswith("]"):
            np.testing.assert_array_equal(p.values, ig.grad_out[n, k], err_msg=p.title)


def _counted_words(lay, n, k, c):
    """Every title, subtitle and caption the stories write for this slice, with the sweeps'."""
    spec = lay.forward.spec
    story = input_grad_story(lay.input_grad, n, k, c)
    texts = [p.title for p in _panels(lay, n, k, c)] + [p.subtitle for p in _panels(lay, n, k, c)]
    texts += [s.caption for s in story] + [s.heading for s in story]
    contributions = channel_contributions(lay.input_grad, n, c)
    for g in channel_grids(lay, n, c, contributions):
        texts += [g.title, g.caption]
    texts.append(layer_summary(spec, n))
    sweeps = {
        "y": (forward_sweep(lay.forward, n, k), c),
        "grad_x_padded": (input_grad_sweep(lay.input_grad, n, c), k),
        "grad_w": (weight_grad_sweep(lay.weight_grad, k, c), n),
    }
    for key, (sw, channel) in sweeps.items():
        texts.append(sweep_gif.sweep_caption(sw, sw.steps - 1, channel, output=key))
    return texts


def test_every_count_of_channels_filters_or_samples_is_the_layers(case):
    lay, n, k, c, _ = case
    spec = lay.forward.spec
    sizes = {"channel": spec.in_channels, "filter": spec.out_channels, "sample": spec.batch}
    for text in _counted_words(lay, n, k, c):
        for number, word in re.findall(r"(\d+) (channel|filter|sample)s?\b", text):
            assert int(number) == sizes[word], f"{text!r}: the layer has {sizes[word]} {word}s"


def test_the_full_correlation_names_filters_and_the_recitations_words(case):
    lay, n, k, c, _ = case
    K = lay.forward.spec.out_channels
    step = input_grad_story(lay.input_grad, n, k, c)[4]
    assert RECITATION_NOTE in step.caption and "0" in RECITATION_NOTE
    sw = input_grad_sweep(lay.input_grad, n, c)
    caption = sweep_gif.sweep_caption(sw, 0, k, output="grad_x_padded")
    assert "channel" not in caption
    if K > 1:
        assert f"filter k={k}" in caption and f"Σ over the {K} filters" in caption
        assert f"{K} filters" in step.caption


@pytest.mark.parametrize("mode", PADDING_MODES)
def test_the_last_stage_says_what_its_numbers_do_to_the_ring(mode):
    """Reflect's stage 6 (and its slide) said "Mask the padded ring", beside ∂L/∂x[0, 1] = 0
    where ∂L/∂x̃[0, 1] = −4: the ring's gradient had been folded back, not masked."""
    spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), padding=1, padding_mode=mode)
    lay = layer(spec, *layer_values(spec, 3, "random", "random"))
    ig = lay.input_grad
    step = input_grad_story(ig, 0, 0, 0)[5]
    interior = ig.grad_x_padded[0, 0, 1:-1, 1:-1]
    folded = not np.array_equal(interior, ig.grad_x[0, 0])  # the ring's gradient went somewhere
    assert folded == (mode != "zeros")
    assert step.heading.startswith("Fold" if folded else "Mask")
    assert (mode in step.heading) == folded
    assert ("folds back" in step.panels[0].subtitle) == folded


def test_headings_are_fields_not_parsed_titles():
    lay, n, k, c = _layer(PRESETS[0])
    story = input_grad_story(lay.input_grad, n, k, c)
    assert story[0].heading == "∂L/∂y, the gradient from the next layer"
    assert all(s.heading and s.heading != s.title for s in story)


def test_a_selected_input_cell_lights_the_outputs_that_read_it(case):
    lay, n, k, c, _ = case
    spec = lay.forward.spec
    sweep = forward_sweep(lay.forward, n, k)
    cell = (spec.padded_size[0] // 2, spec.padded_size[1] - 1)
    inp, _, out = forward_panels(lay.forward, sweep, n, k, c, reading=cell)
    assert inp.selected == cell  # the input cell is marked (its outputs are only outlined)
    reads = [
        tuple(sweep.targets[t])
        for t in range(sweep.steps)
        if cell[0] in sweep.rows[t] and cell[1] in sweep.cols[t]
    ]
    assert sorted(map(tuple, np.argwhere(out.highlight))) == sorted(reads)
    text = feeds_text(sweep, cell, spec)
    (pt, _), (pl, _) = spec.padding
    r, q = cell[0] - pt, cell[1] - pl  # the labels on the padded grid's axes
    sub = f"{r},{q}" if max(abs(r), abs(q)) > 9 or min(r, q) < 0 else f"{r}{q}"
    # a cell of the padding ring is x̃'s, not x's: its gradient goes to the ring, where the
    # mask drops it (zeros) or adds it to the cell it copies; it wrote "∂L/∂x₇₇" for a 7×7 x
    padding = bool(lay.forward.pad_mask[cell])
    symbol = "\\tilde{x}" if padding else "x"
    assert f"${symbol}_{{{sub}}}$" in text, text
    assert ("is padding, not a cell of x" in text) == (padding and bool(reads))
    if padding and reads:
        fate = "drops" if spec.padding_mode == "zeros" else "adds to the cell of x it copies"
        assert fate in text
    assert text.count(" through ") == len(reads) if reads else "no window" in text


def test_the_shape_table_says_padding_and_zeros_only_where_there_are_some(case):
    lay, *_ = case
    rows = {r["array"]: r["what"] for r in shape_rows(lay)}
    assert ("padding ring" in rows["x padded"]) == lay.forward.pad_mask.any()
    assert ("zeros between" in rows["∂L/∂y dilated"]) == lay.input_grad.dilation_mask.any()


def test_the_story_speaks_of_a_ring_or_channels_only_where_the_layer_has_them(case):
    lay, n, k, c, _ = case
    spec = lay.forward.spec
    text = " ".join(s.caption for s in input_grad_story(lay.input_grad, n, k, c))
    assert ("ring included" in text) == lay.forward.pad_mask.any()
    assert ("Channels swap" in text) == (spec.in_channels > 1 or spec.out_channels > 1)


def test_every_view_of_the_padded_input_shows_it_whole_its_remainder_marked(case):
    """x̃ is drawn whole wherever it is drawn, with the rows and columns no window reaches marked
    as the engine's remainder mask says. The Weight-gradient page cut them off unmarked: x̃ 5×5
    beside Forward's 6×6 (the remainder preset), 'padded 129×129' for Forward's 130×130."""
    lay, n, k, c, panels = case
    wg = lay.weight_grad
    sweep = weight_grad_sweep(wg, k, c)
    motion = window_motion(wg, sweep, n, k, c)
    xs = [p for p in panels if p.key == "x"] + [motion.backdrops[1]]
    assert len(xs) >= 3
    remainder = wg.remainder_mask
    for p in xs:
        assert p.shape == lay.forward.spec.padded_size, p.title
        assert np.array_equal(p.values, lay.forward.x_padded[n, c]), p.title
        if p.remainder_mask is not None or remainder.any():
            assert np.array_equal(p.mask("remainder_mask"), remainder), p.title
    if remainder.any():
        assert legend_items(motion)[-1][2] == "remainder: no window reaches it"


def test_stage_6_marks_the_remainder_whose_gradient_is_0(case):
    """The mask stage (still and motion) marks ∂L/∂x̃'s rows and columns no forward window read:
    their zeros were unexplained ('No ring to mask' beside a row of 0s, the remainder preset)."""
    lay, n, k, c, _ = case
    ig = lay.input_grad
    still = input_grad_story(ig, n, k, c)[5].panels[0]
    motion = stage_motion("mask", ig, None, Focus(n, k, c))
    remainder = lay.forward.remainder_mask
    for panel in (still, motion.panels[0]):
        assert panel.key == "grad_x_padded"
        assert np.array_equal(panel.mask("remainder_mask"), remainder)
    assert np.all(ig.grad_x_padded[n, c][remainder] == 0)  # what the legend says
    words = [w for *_, w in legend_items(motion)]
    assert ("remainder: no window read it, gradient 0" in words) == remainder.any()


def test_a_slice_that_sums_others_says_so_under_its_grid(case):
    """y[n, k] adds every channel's correlation, ∂L/∂x[n, c] every filter's, ∂L/∂w[k, c] every
    sample's: the grid says so (channels-small's Overview drew x[c=0], w[k=0, c=0] and a y its
    cells do not add up to, without a word), and says nothing of one ('Σ over 1 sample')."""
    lay, n, k, c, _ = case
    spec = lay.forward.spec
    forward, backward = overview_panels(lay, n, k, c)
    fw = forward_panels(lay.forward, forward_sweep(lay.forward, n, k), n, k, c)
    wg = weight_grad_panels(lay.weight_grad, weight_grad_sweep(lay.weight_grad, k, c), n, k, c)
    sums = {"channel": spec.in_channels, "filter": spec.out_channels, "sample": spec.batch}
    for panel, what in ((forward[2], "channel"), (fw.output, "channel"),
                        (backward[1], "filter"), (backward[2], "sample"),
                        (wg.output, "sample")):  # fmt: skip
        said = f"Σ over {sums[what]} {what}s" in panel.subtitle if sums[what] > 1 else True
        assert said and ("Σ over" in panel.subtitle) == (sums[what] > 1), panel.subtitle


def test_the_rings_legend_says_what_the_mask_does_with_it(case):
    """Zero padding: the mask drops the ring's gradient; reflect, replicate or circular padding:
    the mask adds it back onto the cells it copied (the legend said 'masked' for both)."""
    lay, n, k, c, _ = case
    ig = lay.input_grad
    words = [w for *_, w in legend_items(stage_motion("mask", ig, None, Focus(n, k, c)))]
    ring = [w for w in words if w.startswith("ring's gradient")]
    if not ig.pad_mask.any():
        assert ring == []
    elif lay.forward.spec.padding_mode == "zeros":
        assert ring == ["ring's gradient (dropped)"]
    else:
        assert ring == ["ring's gradient (folded back)"]

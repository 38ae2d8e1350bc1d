"""The matplotlib GIFs of a sweep: a frame per step (or the browser's sample of a long sweep),
their speed and the held last frame, a legend on every frame, the cell being written outlined as
on screen, captions that add up (what the hidden products add up to), tap colours on the cells they
multiply (through the full correlation's rotation), the products panel naming what slides, cells
named as their axes are. Inspect the GIF's scene (artists), then its bytes."""

from __future__ import annotations

import io

import numpy as np
import pytest
import static_cases
from matplotlib.colors import to_rgba
from PIL import Image
from static_cases import cell_of, legend_texts

from convviz.engine.arrays import layer
from convviz.engine.spec import ConvSpec
from convviz.engine.sweeps import forward_sweep, input_grad_sweep
from convviz.export.story import Story
from convviz.model.presets import PRESETS_BY_KEY
from convviz.render.mpl import legend as static_legend
from convviz.render.mpl import panel as static_panel
from convviz.render.mpl import static
from convviz.render.mpl import sweep_gif as static_gif
from convviz.render.plotly import sweeps as sweep_animations
from convviz.render.selection import GIF_FRAMES
from convviz.render.story.input_grad import input_grad_animation
from convviz.render.theme import HIGHLIGHT_COLOR, THEME, tap_colors

# the module-scoped layer and panels of tests/static_cases.py, as this module's fixtures
classroom = static_cases.classroom
panels = static_cases.panels


# --- frames -----------------------------------------------------------------------------------


@pytest.mark.encoder  # a GIF of every frame, drawn by matplotlib
def test_gif_has_one_frame_per_step(classroom, panels):
    _, sweep = classroom
    x, w, y = panels
    data = static_gif.sweep_gif(sweep, x, w, y, fps=4)
    image = Image.open(io.BytesIO(data))
    assert image.format == "GIF" and image.n_frames == sweep.steps == 16
    assert image.info["duration"] == 250 and image.info["loop"] == 0  # 4 frames a second


@pytest.mark.encoder  # a GIF of every frame, drawn by matplotlib
def test_gif_holds_its_last_frame_and_plays_at_the_asked_speed(classroom, panels):
    _, sweep = classroom
    image = Image.open(io.BytesIO(static_gif.sweep_gif(sweep, *panels, fps=5)))
    durations = []
    for i in range(image.n_frames):
        image.seek(i)
        durations.append(image.info["duration"])
    assert durations[:-1] == [200] * (image.n_frames - 1)  # 5 frames a second
    assert durations[-1] == static_gif.GIF_HOLD_MS  # the finished result stays on screen


@pytest.mark.encoder  # a GIF of every frame, drawn by matplotlib
def test_gif_samples_long_sweeps(classroom, panels):
    _, sweep = classroom
    data = static_gif.sweep_gif(sweep, *panels, max_frames=5)
    assert Image.open(io.BytesIO(data)).n_frames == 5
    # the frames the browser's animation shows (opened on the result): one rule for both
    scene = static_gif._gif_scene(sweep, *panels, THEME, channel=0, max_frames=5)
    assert scene.steps.tolist() == [0, 4, 8, 12, 15]
    browser = sweep_animations.sweep_figure(sweep, *panels[:3], THEME, max_frames=5)
    assert [f.name for f in browser.frames] == [str(t) for t in scene.steps]


def test_gif_frames_carry_a_legend(classroom, panels):
    _, sweep = classroom
    scene = static_gif._gif_scene(sweep, *panels, static.THEME, 0, 60)
    assert static_legend.LEGEND_WORDS["window"] in legend_texts(scene.fig)


def test_gif_marks_the_cell_being_written_as_the_screen_does(classroom, panels):
    """Black, as the browser's animation outlines it; red was already the first tap's colour.
    The window is black too: one legend entry says what both outlines are (two black swatches
    told them apart by line width alone)."""
    _, sweep = classroom
    scene = static_gif._gif_scene(sweep, *panels, static.THEME, 0, 60)
    black = to_rgba(HIGHLIGHT_COLOR)
    assert to_rgba(scene.frames.current.get_edgecolor()) == black
    swatches = {t.get_text(): h for t, h in zip(scene.fig.legends[0].texts,
                                                scene.fig.legends[0].legend_handles)}  # fmt: skip
    assert to_rgba(scene.frames.window.get_edgecolor()) == black
    outlines = [h for h in swatches.values() if to_rgba(h.get_edgecolor()) == black]
    assert outlines == [swatches[static_legend.LEGEND_WORDS["window"]]]
    assert to_rgba(swatches[static_legend.LEGEND_WORDS["tap"]].get_edgecolor()) != black


# --- captions ---------------------------------------------------------------------------------


def test_sweep_caption_adds_up(classroom):
    _, sweep = classroom
    caption = static_gif.sweep_caption(sweep, 6)
    i, j = sweep.targets[6]
    assert f"y[{i}, {j}]" in caption and caption.endswith(f"= {static_panel.number(sweep.sums[6])}")
    assert caption.count(" + ") == 8  # nine products


def test_long_sweep_caption_states_what_the_hidden_products_add_up_to():
    """A 5×5 kernel (25 products) cut at 9: 9 written, then '[16 more terms = s]' with s the sum of
    the other 16 products (as a formula box cuts), so the numbers written add up to the total."""
    spec = ConvSpec.create((1, 1, 7, 7), (1, 1, 5, 5))
    rng = np.random.default_rng(4)
    x, w = rng.integers(-3, 4, spec.input_shape) * 1.0, rng.integers(-2, 3, spec.weight_shape) * 1.0
    sweep = forward_sweep(layer(spec, x, w, np.ones(spec.output_shape)).forward)
    for t in range(sweep.steps):
        caption = static_gif.sweep_caption(sweep, t, max_terms=9)
        body, total = caption.split(":  ")[1].rsplit(" = ", 1)
        *written, rest = body.split(" + ")
        assert len(written) == 9 and rest.startswith("[16 more terms = "), caption
        products = [
            float(a.strip("()").replace(static_gif.MINUS, "-"))
            * float(b.strip("()").replace(static_gif.MINUS, "-"))
            for a, b in (p.split("·") for p in written)
        ]
        hidden = float(rest[len("[16 more terms = ") : -1].replace(static_gif.MINUS, "-"))
        assert np.isclose(sum(products) + hidden, float(total.replace(static_gif.MINUS, "-")))
        assert np.isclose(
            float(total.replace(static_gif.MINUS, "-")),
            x[0, 0][np.ix_(sweep.rows[t], sweep.cols[t])].ravel() @ w.ravel(),
        )


@pytest.mark.parametrize(
    ("preset", "first", "last"),
    [("classroom", "∂L/∂x̃[-1, -1]", "∂L/∂x̃[7, 7]"), ("reflect", "∂L/∂x̃[-1, -1]", "∂L/∂x̃[5, 5]")],
)
def test_the_full_correlation_gif_names_cells_as_its_axes_do(preset, first, last):
    """∂L/∂x̃'s axes start at −1 (the padded ring). The GIF's captions named its cells by array
    index: classroom's last frame said ∂L/∂x̃[8, 8] under axes that end at 7, where the app says
    ∂L/∂x̃[7, 7]. A GIF that samples the steps says so, in the browser player's words (81 steps,
    1 in 2 a frame)."""
    anim = next(a for a in Story.of(preset).animations() if a.name == "input-grad-step5")
    scene = static_gif._gif_scene(anim.sweep, *anim.panels, THEME, anim.channel, GIF_FRAMES)
    captions = []
    for t in (scene.steps[0], scene.steps[-1]):
        static_gif._place_step(scene.frames, anim.sweep, int(t), anim.channel, scene)
        captions.append(scene.frames.caption.get_text())
    assert first in captions[0] and last in captions[1], captions
    sampled = len(scene.steps) < anim.sweep.steps
    assert ("(1 step in 2 shown)" in captions[1]) == sampled == (preset == "classroom")


# --- tap colours and the products panel -------------------------------------------------------


def _input_grad_gif_scene(key: str, k: int = 0, c: int = 0):
    preset = PRESETS_BY_KEY[key]
    spec, (x, w) = preset.spec(), preset.values()
    grad_out = np.random.default_rng(1).integers(-2, 3, spec.output_shape) * 1.0
    ig = layer(spec, x, w, grad_out).input_grad
    sweep = input_grad_sweep(ig, 0, c)
    panels = input_grad_animation(ig, sweep, 0, k, c)
    return w[k, c], sweep, static_gif._gif_scene(sweep, *panels, THEME, channel=k, max_frames=60)


@pytest.mark.encoder  # a GIF of every frame, drawn by matplotlib
@pytest.mark.parametrize(
    ("key", "k", "c"),
    [
        ("recitation-s2", 0, 0),
        ("recitation-s1", 0, 0),
        ("classroom", 0, 0),
        ("even-same", 0, 0),
        ("dilation-2", 0, 0),
        ("channels-small", 2, 1),
    ],
)
def test_full_correlation_gif_taps_wear_the_colour_of_the_tap_they_multiply(key, k, c):
    """Every frame of the input-gradient GIF: the border on each covered cell, and on its product,
    has the colour of the kernel tap that multiplies that cell. The sweep's kernel is rot180 of
    w[k, c], so rotated cell (a, b) holds tap (kh-1-a, kw-1-b) of w, coloured as on step 4."""
    w, sweep, scene = _input_grad_gif_scene(key, k, c)
    kh, kw = w.shape
    colors = [to_rgba(col) for col in tap_colors(kh, kw)]
    fr = scene.frames
    for t in scene.steps:
        static_gif._place_step(fr, sweep, int(t), k, scene)
        for box, (a, b) in zip(fr.taps, np.ndindex(kh, kw)):
            cell = cell_of(box)
            assert cell == (sweep.rows[t, a], sweep.cols[t, b]), (t, a, b)
            src = (kh - 1 - a, kw - 1 - b)  # the tap of w that multiplies this cell
            assert sweep.kernel[k, a, b] == w[src]
            assert sweep.products[t, k, a, b] == sweep.operand[k][cell] * w[src]
            assert to_rgba(box.get_edgecolor()) == colors[src[0] * kw + src[1]], (t, cell)
        for box in fr.products_above:
            a, b = cell_of(box)
            src = (kh - 1 - a, kw - 1 - b)
            assert to_rgba(box.get_edgecolor()) == colors[src[0] * kw + src[1]], ("product", a, b)
        assert len(fr.products_above) == kh * kw


def test_forward_gif_taps_keep_row_major_colours(classroom, panels):
    _, sweep = classroom
    scene = static_gif._gif_scene(sweep, *panels, THEME, channel=0, max_frames=3)
    colors = [to_rgba(col) for col in tap_colors(3, 3)]
    assert [to_rgba(b.get_edgecolor()) for b in scene.frames.taps] == colors


@pytest.mark.encoder  # a GIF of every frame, drawn by matplotlib
def test_a_gifs_products_panel_names_what_slides(classroom, panels):
    """The weight-gradient GIF's middle panel read "window × kernel" while it multiplies by
    ∂L/∂y; it names what slides over the window on each page."""
    from convviz.engine.sweeps import weight_grad_sweep
    from convviz.render.story.panels import weight_grad_panels

    lay, sweep = classroom
    ig, wg = lay.input_grad, lay.weight_grad
    full = input_grad_sweep(ig, 0, 0)
    slid = weight_grad_sweep(wg, 0, 0)
    for s, ps, name in (
        (sweep, panels, "window × kernel"),
        (full, input_grad_animation(ig, full, 0, 0, 0), "window × rot180(w)"),
        (slid, weight_grad_panels(wg, slid, 0, 0, 0), "window × ∂L/∂y"),
    ):
        fig = static_gif._gif_scene(s, *ps, static.THEME, 0, 4).fig
        titles = [ax.get_title() for ax in fig.axes]
        assert name in titles, (name, titles)

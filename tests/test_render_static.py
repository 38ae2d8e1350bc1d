"""The matplotlib exports: inspect the artists on the Axes, then the PNG/SVG/GIF bytes they make."""

from __future__ import annotations

import io
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np
import pytest
from matplotlib.collections import LineCollection, QuadMesh
from matplotlib.colors import to_hex, to_rgba
from matplotlib.figure import Figure
from PIL import Image

from convviz.export.story import Story
from convviz.formulas import forward_formula
from convviz.presets import PRESETS_BY_KEY
from convviz.render import (
    geometry,
    mask_geometry,
    static,
    static_gif,
    static_legend,
    static_panel,
    sweep_animations,
)
from convviz.render.grid_figure import panels_figure
from convviz.render.grids import format_value
from convviz.render.input_story import input_grad_animation
from convviz.render.panel import Panel
from convviz.render.selection import GIF_FRAMES
from convviz.render.static_legend import LEGEND_WORDS, legend_marks
from convviz.render.theme import (
    DILATION_COLOR,
    DROPPED_COLOR,
    HALO_COLOR,
    HIGHLIGHT_COLOR,
    PAD_COLOR,
    REMAINDER_COLOR,
    SELECTED_COLOR,
    THEME,
    contrast,
    tap_colors,
    text_color,
)
from convviz.spec import ConvSpec
from convviz.stages import layer
from convviz.sweeps import forward_sweep, input_grad_sweep

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def classroom():
    """7×7 input padded by 1, 3×3 kernel, stride 2: its layer and forward sweep (16 steps)."""
    spec = ConvSpec.create((1, 1, 7, 7), (1, 1, 3, 3), stride=2, padding=1)
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 10, spec.input_shape).astype(float)
    w = rng.integers(-2, 3, spec.weight_shape).astype(float)
    grad_out = rng.integers(-2, 3, spec.output_shape).astype(float)
    lay = layer(spec, x, w, grad_out)
    return lay, forward_sweep(lay.forward)


@pytest.fixture(scope="module")
def panels(classroom):
    """Input (padded, window of output cell (1, 2) highlighted), kernel with taps, output."""
    lay, sweep = classroom
    fw = lay.forward
    t = 1 * sweep.out_size[1] + 2
    window = np.zeros(fw.pad_mask.shape, bool)
    window[np.ix_(sweep.rows[t], sweep.cols[t])] = True
    taps = np.full(fw.pad_mask.shape, -1)
    taps[np.ix_(sweep.rows[t], sweep.cols[t])] = np.arange(9).reshape(3, 3)
    x = Panel(fw.x_padded[0, 0], "input x, padded", "x", pad_mask=fw.pad_mask, taps=taps,
              highlight=window, origin=(-1, -1), subtitle="7×7 → 9×9")  # fmt: skip
    w = Panel(fw.w[0, 0], "kernel w", "w", taps=np.arange(9).reshape(3, 3), subtitle="3×3")
    y = Panel(fw.y[0, 0], "output y", "y", selected=(1, 2), subtitle="4×4")
    return [x, w, y]


def drawn(panel: Panel):
    """The panel drawn alone on a fresh figure, rendered once so the mesh has its colours."""
    fig = static.panels_figure([panel])
    fig.canvas.draw()
    return fig.axes[0]


def mesh_colors(ax) -> np.ndarray:
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    h, w = (round(abs(d)) for d in (ax.get_ylim()[0] - ax.get_ylim()[1], np.ptp(ax.get_xlim())))
    return np.asarray(mesh.get_facecolor()).reshape(h, w, 4)


def labelled(ax, label: str, kind=None) -> list:
    artists = [*ax.patches, *ax.collections]
    return [a for a in artists if a.get_label() == label and (kind is None or isinstance(a, kind))]


def cell_of(rect) -> tuple[int, int]:
    x, y = rect.get_xy()
    return round(y + rect.get_height() / 2), round(x + rect.get_width() / 2)


def formula_labels(fig: Figure) -> list[str]:
    return [a.get_label() for a in fig.artists if str(a.get_gid()).startswith("formula")]


# --- cells and roles --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [(3.0, "3"), (-2.0, "−2"), (0.5, "0.5"), (-1.256, "−1.26"), (-0.0, "0"), (-1e-12, "0"),
     (120.0, "120"), (float("nan"), "")],
    ids=["int", "negative", "half", "rounded", "minus-zero", "tiny", "hundreds", "nan"],
)  # fmt: skip
def test_exports_write_numbers_as_the_app_does(value, text):
    assert static_panel.number(value) == text == format_value(value)  # one rule: convviz.text


def test_padded_cells_are_pad_color_hatched_with_pad_text(panels):
    x = panels[0]
    ax = drawn(x)
    colors = mesh_colors(ax)
    pad = x.pad_mask
    assert np.allclose(colors[pad], to_rgba(PAD_COLOR))
    assert not np.isclose(colors[~pad], to_rgba(PAD_COLOR)).all(axis=-1).any()
    bands = labelled(ax, "pad")
    assert bands and all(b.get_hatch() == "//" for b in bands)
    assert all(np.allclose(b.get_facecolor(), to_rgba(PAD_COLOR)) for b in bands)
    covered = np.zeros(pad.shape, int)
    for b in bands:
        (c0, r0), nc, nr = np.add(b.get_xy(), 0.5).astype(int), b.get_width(), b.get_height()
        covered[r0 : r0 + nr, c0 : c0 + nc] += 1
    assert (covered == pad).all()  # the bands tile the padding exactly once
    by_cell = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    assert to_rgba(by_cell[0, 0].get_color()) == to_rgba(text_color(PAD_COLOR))  # the one rule


def test_dilation_zeros_get_their_colour():
    mask = np.zeros((3, 5), bool)
    mask[:, 1::2] = True
    ax = drawn(Panel(np.where(mask, 0.0, 2.0), "dilated", "d", dilation_mask=mask))
    assert np.allclose(mesh_colors(ax)[mask], to_rgba(DILATION_COLOR))


def test_taps_are_bordered_in_their_tap_colour(panels):
    x = panels[0]
    ax = drawn(x)
    boxes = labelled(ax, "tap")
    assert len(boxes) == (x.taps >= 0).sum() == 9
    colors = tap_colors(3, 3)
    for box in boxes:
        i, j = cell_of(box)
        assert np.allclose(box.get_edgecolor(), to_rgba(colors[x.taps[i, j]]))
        assert box.get_linewidth() > 2  # thick, in points
        assert box.get_facecolor()[3] == 0  # the value colour shows through
        # with a white edge inside it (an orange tap on an orange cell vanished)
        (edge,) = box.get_path_effects()
        assert edge._gc["foreground"] == HALO_COLOR


def test_highlight_selected_remainder_and_dropped_overlays():
    values = np.arange(30, dtype=float).reshape(5, 6) - 12
    remainder = np.zeros((5, 6), bool)
    remainder[4, :], remainder[:, 5] = True, True
    highlight = np.zeros((5, 6), bool)
    highlight[1:3, 1:3] = True
    ring = np.pad(np.zeros((3, 4), bool), 1, constant_values=True)
    panel = Panel(values, "roles", "r", remainder_mask=remainder, dropped_mask=ring,
                  highlight=highlight, selected=(2, 3))  # fmt: skip
    ax = drawn(panel)
    (rem,) = labelled(ax, "remainder", LineCollection)
    assert np.allclose(rem.get_color(), to_rgba(REMAINDER_COLOR))
    assert rem.get_linestyle()[0][1] is not None  # dashed
    ends = np.concatenate(rem.get_segments())
    assert ends[:, 0].min() == -0.5 and ends[:, 1].max() == 4.5  # around the L-shaped band
    (hl,) = labelled(ax, "highlight", LineCollection)
    assert np.allclose(hl.get_color(), to_rgba(HIGHLIGHT_COLOR))
    assert hl.get_linestyle()[0][1] is not None  # dotted, as on screen
    assert np.ptp(np.concatenate(hl.get_segments()), axis=0).tolist() == [2, 2]  # 2×2 box
    (dropped,) = labelled(ax, "dropped", LineCollection)
    assert np.allclose(dropped.get_color()[:, :3], to_rgba(DROPPED_COLOR)[:3])
    assert len(dropped.get_segments()) == 4 * ring.sum()  # a cross per dropped cell, 4 arms
    (sel,) = labelled(ax, "selected")
    assert cell_of(sel) == (2, 3) and np.allclose(sel.get_edgecolor(), to_rgba(SELECTED_COLOR))
    (halo,) = sel.get_path_effects()  # a white stroke under the red, as on screen
    assert halo._gc["foreground"] == HALO_COLOR


def test_a_cell_written_out_is_outlined_black_and_the_legend_says_so():
    """A slide with nothing selected outlines the cell whose sum it writes solid black (as an
    animation outlines the cell it computes) and its window dotted; the legend says what they
    are, not "selected cell" and "linked to the selection"."""
    window = np.zeros((3, 3), bool)
    window[:2, :2] = True
    ax = drawn(Panel(np.ones((3, 3)), "out", "y", highlight=window, written=(1, 1)))
    (box,) = labelled(ax, "written")
    assert cell_of(box) == (1, 1) and np.allclose(box.get_edgecolor(), to_rgba(HIGHLIGHT_COLOR))
    assert not labelled(ax, "selected")
    written = Panel(np.ones((3, 3)), "out", "y", highlight=window, written=(1, 1))
    assert legend_marks([written]) == ["read", "written"]
    assert LEGEND_WORDS["written"] == "the cell written out below"
    selected = replace(written, written=None, selected=(1, 1))
    assert legend_marks([selected]) == ["highlight", "selected"]
    assert legend_marks([replace(written, selected=(0, 0))]) == ["highlight", "selected", "written"]
    # lit cells without a cell written out (a stage-1 slide of a selection made elsewhere): they
    # are linked to the selection, there is no sum for them to be read by
    assert legend_marks([replace(written, written=None)]) == ["highlight"]


def test_numbers_contrast_with_their_cell():
    values = np.array([[-9.0, 0.0, 1.0, 9.0]])
    ax = drawn(Panel(values, "contrast", "c"))
    by_col = {round(t.get_position()[0]): to_hex(t.get_color()) for t in ax.texts}
    fills = {round(c): to_hex(f) for c, f in enumerate(mesh_colors(ax)[0])}
    for col, ink in by_col.items():  # the one rule, and it reads: 7:1 on every value colour
        assert ink == text_color(fills[col]) and contrast(ink, fills[col]) >= 7


def test_indices_are_offset_by_origin_and_cells_square(panels):
    ax = drawn(panels[0])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["−1", *map(str, range(8))]
    assert [t.get_text() for t in ax.get_yticklabels()][:2] == ["−1", "0"]
    box = ax.get_window_extent()
    assert box.width == pytest.approx(box.height, rel=1e-3)
    assert ax.get_title() == "input x, padded" and ax.get_xlabel() == "7×7 → 9×9"


def ladder_oracle(n: int, origin: int, room_cells: float) -> list[int]:
    """Indices origin … origin + n − 1 labelled when a label needs room_cells cells, by a loop."""
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**9) if s >= room_cells)
    return [v for v in range(origin, origin + n) if v % step == 0]


@pytest.mark.parametrize(("n", "origin"), [(9, -1), (40, 0), (130, -3)], ids=str)
def test_both_renderers_space_index_ticks_on_one_ladder(n, origin):
    """Plotly (a label needs 24 px) and matplotlib (2.2 × the tick font) label every step-th
    index, 0 included, step the first of 1, 2, 5, 10, … that gives a label its room."""
    size = static_panel.tick_size(THEME)
    for cell in (0.5, 1, 2, 3, 5, 11, 24, 40):
        static_ticks = [origin + i for i in static_panel._tick_cells(n, origin, cell, size)]
        assert static_ticks == ladder_oracle(n, origin, 2.2 * size / cell), f"static, {cell} pt"
        plotly_ticks = geometry.tick_values(n, origin, cell)
        assert plotly_ticks == ladder_oracle(n, origin, 24 / max(cell, 1)), f"plotly, {cell} px"


def test_only_the_indexed_part_of_a_grid_is_numbered():
    """A matrix drawn with its vectors (two rows above, two columns beside: `Panel.indexed`) is
    numbered 0… on its own rows and columns only, on screen and in an export."""
    values = np.arange(12 * 9, dtype=float).reshape(12, 9)
    panel = Panel(values, "M", "M", origin=(-2, 0), indexed=(10, 7))
    fig = static.panels_figure([panel], THEME)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [str(i) for i in range(10)]
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(i) for i in range(7)]
    layout = panels_figure([panel], THEME).layout
    assert list(layout.yaxis.tickvals) == list(range(10))
    assert list(layout.xaxis.tickvals) == list(range(7))


@pytest.mark.parametrize(
    ("lo", "hi", "ticks"),
    [
        (-3.0, 5.0, [-3.0, 0.0, 5.0]),
        (1.0, 4.0, [1.0, 4.0]),
        (-2.0, 0.0, [-2.0, 0.0]),
        (2.0, 2.0, [2.0]),
    ],
    ids=["spans-0", "positive", "ends-at-0", "constant"],
)
def test_colour_scale_ticks_are_min_max_and_0_between(lo, hi, ticks):
    assert geometry.scale_ticks(lo, hi) == ticks


@pytest.mark.parametrize(("side", "texts"), [(24, 24 * 24), (25, 0)], ids=["at-limit", "over"])
def test_no_cell_text_past_max_text_cells(side, texts):
    assert THEME.max_text_cells == 24
    values = np.arange(side * side).reshape(side, side) % 10
    ax = drawn(Panel(values.astype(float), "big", "b"))
    assert len(ax.texts) == texts


def test_draw_panel_returns_the_axes_it_drew_on(panels):
    fig = Figure(figsize=(4, 4))
    ax = fig.add_subplot()
    assert static_panel.draw_panel(ax, panels[1]) is ax
    assert len(ax.texts) == 9


def test_mask_rects_tile_any_mask():
    rng = np.random.default_rng(3)
    for mask in [np.pad(np.zeros((5, 5), bool), 2, constant_values=True), rng.random((7, 9)) < 0.4]:
        covered = np.zeros(mask.shape, int)
        for r, c, nr, nc in mask_geometry.mask_rects(mask):
            covered[r : r + nr, c : c + nc] += 1
        assert (covered == mask).all()
    assert (
        len(mask_geometry.mask_rects(np.pad(np.zeros((5, 5), bool), 1, constant_values=True))) == 4
    )


# --- figures ----------------------------------------------------------------------------------


def test_panels_side_by_side_with_equal_square_cells(panels):
    fig = static.panels_figure(panels, title="forward")
    W, H = fig.get_size_inches()
    cells = []
    for ax, p in zip(fig.axes, panels):
        box = ax.get_position()
        cells += [box.width * W / p.shape[1], box.height * H / p.shape[0]]
    assert np.allclose(cells, cells[0])
    lefts = [ax.get_position().x0 for ax in fig.axes]
    assert lefts == sorted(lefts)
    assert cells[0] == pytest.approx(THEME.cell_px / static.EXPORT_PX_PER_INCH)


def test_a_long_title_over_one_small_grid_fits_the_figure():
    """The input-gradient step 1 slide: a 2×2 ∂L/∂y under a 40-character title (cut off)."""
    title = "∂L/∂y, the gradient from the next layer"
    fig = static.panels_figure([Panel(np.arange(4.0).reshape(2, 2), "∂L/∂y", "g")], title=title)
    fig.canvas.draw()
    (text,) = [t for t in fig.texts if t.get_text() == title]
    box = text.get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width


@pytest.mark.parametrize("numeric", [False, True], ids=["symbols", "numbers"])
def test_engine_formula_with_vanishing_terms_is_set_as_math(classroom, panels, numeric):
    """The engine's LaTeX has no colour commands, so mathtext sets it as is, no fallback."""
    f = forward_formula(classroom[0].forward, 0, 0, 0, 0)  # the corner window reads padding
    assert any(t.vanishes for t in f.terms)
    latex = f"${f.latex(numeric=numeric, max_terms=12)}$"
    fig = static.panels_figure(panels, formula=latex, formula_text="plain")
    lines = formula_labels(fig)
    assert all(s.startswith("$") and s.endswith("$") for s in lines), lines
    assert " ".join(s.strip("$") for s in lines) == latex.strip("$")
    assert static.to_png(fig).startswith(PNG_SIGNATURE)


def test_long_formula_wraps_at_top_level_plus():
    terms = " + ".join(
        rf"\frac{{\partial L}}{{\partial y_{{{i % 9}0}}}}\,w_{{{i}}}" for i in range(36)
    )
    latex = "$" + r"\frac{\partial L}{\partial x_{00}} = " + terms + " = 1$"
    fig = static.panels_figure([Panel(np.ones((2, 2)), "g", "g")], formula=latex)
    lines = formula_labels(fig)
    assert len(lines) > 1 and all(s.startswith("$") and s.endswith("$") for s in lines)
    assert "".join(s.strip("$") for s in lines).count("+") == 35


@pytest.mark.parametrize(
    ("formula", "text", "shown"),
    [
        (r"$\frac{a}{$", "x = a + b", "x = a + b"),
        (r"$\nosuchmacro{x}$", None, r"$\nosuchmacro{x}$"),
    ],
    ids=["with-fallback", "raw-source"],
)
def test_broken_formula_falls_back_to_plain_text(panels, formula, text, shown):
    fig = static.panels_figure(panels[1:], formula=formula, formula_text=text)
    assert formula_labels(fig) == [shown]
    assert static.to_png(fig, dpi=50).startswith(PNG_SIGNATURE)


def test_no_panels_is_an_error():
    with pytest.raises(ValueError, match="at least one panel"):
        static.panels_figure([])


# --- bytes ------------------------------------------------------------------------------------


def test_png_bytes_decode_at_the_requested_size(panels):
    fig = static.panels_figure(panels, title="forward", formula=r"$y_{12} = 4$")
    data = static.to_png(fig, dpi=100)
    assert data.startswith(PNG_SIGNATURE)
    image = Image.open(io.BytesIO(data))
    W, H = fig.get_size_inches()
    assert np.allclose(image.size, (W * 100, H * 100), atol=1)
    assert 600 < image.size[0] < 1700 and 300 < image.size[1] < 1000  # slide-sized


def test_svg_parses_and_keeps_cell_numbers_as_text(panels):
    data = static.to_svg(static.panels_figure(panels, formula=r"$y_{12} = 4$"))
    root = ET.fromstring(data)
    assert root.tag.endswith("svg")
    texts = {"".join(el.itertext()).strip() for el in root.iter() if el.tag.endswith("text")}
    for panel in panels:
        assert {static_panel.number(v) for v in panel.values.ravel()} <= texts
    assert any(el.get("id") == "formula-0" for el in root.iter())  # the formula, as outlines


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


def legend_texts(fig: Figure) -> list[str]:
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def test_an_export_says_what_its_marks_mean(classroom, panels):
    """Padding hatch, taps, outlines: each mark drawn is in the legend, and no mark not drawn."""
    x, w, y = panels  # classroom: padded input, tap colours, no inserted zeros
    words = static_legend.LEGEND_WORDS
    shown = legend_texts(static.panels_figure([x, w, y]))
    assert words["pad"] in shown and words["tap"] in shown
    assert words["dilation"] not in shown and words["dropped"] not in shown
    dilated = Panel(np.zeros((3, 3)), "d", "d", dilation_mask=np.eye(3, dtype=bool))
    assert legend_texts(static.panels_figure([dilated])) == [words["dilation"]]
    plain = Panel(np.ones((2, 2)), "p", "p")
    assert legend_texts(static.panels_figure([plain])) == []  # nothing to explain: no legend
    # the weight gradient slides ∂L/∂y, not the kernel: its colours are ∂L/∂y's cells
    grad_out = Panel(np.ones((2, 2)), "∂L/∂y", "grad_out", taps=np.arange(4).reshape(2, 2))
    shown = legend_texts(static.panels_figure([x, grad_out]))
    assert words["grad_out_tap"] in shown and words["tap"] not in shown


def test_the_legend_sits_below_the_panels_and_the_formula(panels):
    fig = static.panels_figure(list(panels), formula="$y = 1 + 2$")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    lowest_grid = min(ax.get_window_extent(renderer).y0 for ax in fig.axes)
    formula = [a for a in fig.artists if (a.get_gid() or "").startswith("formula")]
    assert legend.y1 < min(a.get_window_extent(renderer).y0 for a in formula) < lowest_grid
    assert legend.y0 >= 0 and legend.x0 >= 0 and legend.x1 <= fig.bbox.width


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


def test_module_never_imports_pyplot():
    code = (
        "import sys, convviz.render.static\n"
        "bad = [m for m in ('matplotlib.pyplot', 'streamlit', 'plotly') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.encoder  # a GIF of every frame, drawn by matplotlib
def test_a_gifs_products_panel_names_what_slides(classroom, panels):
    """The weight-gradient GIF's middle panel read "window × kernel" while it multiplies by
    ∂L/∂y; it names what slides over the window on each page."""
    from convviz.render.stories import weight_grad_panels
    from convviz.sweeps import weight_grad_sweep

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


def test_a_legend_tells_the_selected_cell_from_a_kernel_tap(panels):
    """The selection's swatch is red; a tap's swatch was the first tap colour, another red, so
    "kernel tap" and "selected cell" read as one mark. It is now the second tap colour."""
    fig = static.panels_figure(list(panels))
    legend = fig.legends[0]
    swatches = {t.get_text(): h for t, h in zip(legend.texts, legend.legend_handles)}
    tap = to_rgba(swatches[LEGEND_WORDS["tap"]].get_edgecolor())
    selected = to_rgba(swatches[LEGEND_WORDS["selected"]].get_edgecolor())
    assert tap == to_rgba(tap_colors(1, 2)[1]) and np.abs(np.subtract(tap, selected)).max() > 0.3

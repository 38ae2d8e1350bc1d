"""Big and lopsided layers still teach: a small kernel keeps readable cells beside a big input,
every grid drawn without numbers carries a colour scale whose ticks are the engine's min and max,
and a zoomed crop shows the window and its neighbourhood with numbers."""

import re
from pathlib import Path

import numpy as np
import pytest

from convviz.engine.arrays import layer
from convviz.engine.spec import ConvSpec
from convviz.engine.sweeps import forward_sweep, input_grad_sweep, weight_grad_sweep
from convviz.engine.text import number
from convviz.engine.values import layer_values
from convviz.model.presets import PRESETS_BY_KEY
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.plotly.grids import plain, scale_color
from convviz.render.plotly.sweeps import sweep_figure
from convviz.render.selection import zoom_panels
from convviz.render.story.input_grad import input_grad_animation, input_grad_story
from convviz.render.story.panels import forward_panels, overview_panels, weight_grad_panels
from convviz.render.theme import PRESENTATION, THEME, VALUE_SCALE

SCREENS = {
    "normal-1280x720": THEME.fitted(820, 720),
    "normal-1920x1080": THEME.fitted(1460, 1080),
    "presentation-1280x720": PRESENTATION.fitted(1232, 720),
    "presentation-1920x1080": PRESENTATION.fitted(1848, 1080, 24),
}


def _preset_layer(key):
    preset = PRESETS_BY_KEY[key]
    spec = preset.spec()
    x, w = preset.values()
    return layer(spec, x, w, preset.grad_out_for(np.zeros(spec.output_shape)))


def _layer(input_shape, weight_shape, **kw):
    spec = ConvSpec.create(input_shape, weight_shape, **kw)
    return layer(spec, *layer_values(spec, 0))


LOPSIDED = {
    "qa-channels": lambda: _preset_layer("qa-channels"),
    "tall-100x5": lambda: _layer((1, 1, 100, 5), (1, 1, 3, 3)),
    "wide-5x100": lambda: _layer((1, 1, 5, 100), (1, 1, 3, 3), padding=1),
}


def _sweeps(lay):
    """(sweep, panels) of the three sliding windows, slice (0, 0, 0)."""
    fw = forward_sweep(lay.forward)
    ig = input_grad_sweep(lay.input_grad)
    wg = weight_grad_sweep(lay.weight_grad)
    return [
        (fw, forward_panels(lay.forward, fw, 0, 0, 0)),
        (ig, input_grad_animation(lay.input_grad, ig, 0, 0, 0)),
        (wg, weight_grad_panels(lay.weight_grad, wg, 0, 0, 0)),
    ]


def _cell_px(fig, i, cols):
    name = "xaxis" if i == 0 else f"xaxis{i + 1}"
    lo, hi = fig.layout[name].domain
    plot_w = fig.layout.width - fig.layout.margin.l - fig.layout.margin.r
    return (hi - lo) * plot_w / cols


def _values(fig, i):
    key = "x" if i == 0 else f"x{i + 1}"
    return next(t for t in fig.data if t.type == "heatmap" and t.xaxis == key)


@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("case", LOPSIDED)
def test_a_small_kernel_keeps_readable_numbered_cells_beside_a_big_input(case, screen):
    theme, lay = SCREENS[screen], LOPSIDED[case]()
    for sweep, panels in _sweeps(lay)[:2]:  # the kernel is small in the forward and ∂L/∂x
        for fig in (panels_figure(panels, theme), sweep_figure(sweep, *panels, theme)):
            kernel = panels[1]
            assert round(_cell_px(fig, 1, kernel.shape[1])) >= 24, panels[1].title
            taps = next(t for t in fig.data if t.name == f"{kernel.key}:taps")
            assert list(plain(taps.text).ravel()) == [number(v) for v in kernel.values.ravel()]
            assert fig.layout.width <= theme.figure_w


def _all_panels(lay):
    forward, backward = overview_panels(lay, 0, 0, 0)
    story = input_grad_story(lay.input_grad, 0, 0, 0)
    groups = [panels for _, panels in _sweeps(lay)] + [forward, backward]
    return groups + [s.panels for s in story if s.panels]


@pytest.mark.parametrize("screen", ["normal-1280x720", "presentation-1920x1080"])
@pytest.mark.parametrize("case", [*LOPSIDED, "classroom", "channels-small"])
def test_every_grid_without_numbers_has_a_colour_scale_of_the_engines_range(case, screen):
    theme = SCREENS[screen]
    lay = LOPSIDED[case]() if case in LOPSIDED else _preset_layer(case)
    for panels in _all_panels(lay):
        fig = panels_figure(panels, theme)
        for i, p in enumerate(panels):
            trace = _values(fig, i)
            numbered = trace.text is not None or any(
                t.name.startswith(f"{p.key}:") and t.text is not None for t in fig.data
            )
            header = fig.layout.annotations[i].text
            if numbered:
                assert "■" not in header, p.title
                continue
            v = np.asarray(p.values, float)
            lo, hi = v.min(), v.max()
            reach = max(abs(lo), abs(hi)) or 1.0
            assert trace.zmin == -reach and trace.zmax == reach, "colours pinned to ±reach"
            swatches = re.findall(r"color:(#[0-9a-f]{6})'>■</span> ([^ <]+)", header)
            assert swatches, f"{p.title}: no numbers and no colour scale"
            assert swatches[0][1] == number(lo) and swatches[-1][1] == number(hi)
            for color, text in swatches:  # each swatch is the colour the heatmap gives its value
                value = {number(lo): lo, number(hi): hi, "0": 0.0}[text]
                assert color == scale_color(value, reach)
    assert scale_color(-1, 1) == VALUE_SCALE[0][1] and scale_color(1, 1) == VALUE_SCALE[-1][1]
    assert scale_color(0, 1) == VALUE_SCALE[1][1]


@pytest.mark.parametrize("case", LOPSIDED)
def test_the_zoom_shows_the_window_and_its_neighbourhood_with_the_engines_numbers(case):
    lay, seen = LOPSIDED[case](), set()
    for sweep, panels in _sweeps(lay):
        operand, kernel, output = panels
        cell = (output.shape[0] - 1, output.shape[1] // 2)  # not the default: an edge cell
        zoom = zoom_panels(sweep, operand, replace_selected(kernel), output, cell)
        fig = panels_figure(zoom, THEME)
        for i, (big, z) in enumerate(zip(panels, zoom)):
            assert max(z.shape) <= 11
            (r0, c0), (br, bc) = np.subtract(z.origin, big.origin), z.shape
            np.testing.assert_array_equal(z.values, big.values[r0 : r0 + br, c0 : c0 + bc])
            shown = _values(fig, i).text is not None or any(
                t.name.startswith(f"{z.key}:") and t.text is not None for t in fig.data
            )
            assert shown, f"{z.title}: the zoom must show numbers"
        t = sweep.targets.tolist().index(list(cell))
        (r0, c0) = np.subtract(zoom[0].origin, operand.origin)
        rows = sweep.rows[t][(sweep.rows[t] >= r0) & (sweep.rows[t] < r0 + 11)]
        cols = sweep.cols[t][(sweep.cols[t] >= c0) & (sweep.cols[t] < c0 + 11)]
        assert rows.size == min(11, sweep.rows.shape[1]) and cols.size == min(
            11, sweep.cols.shape[1]
        )
        assert zoom[0].highlight[np.ix_(rows - r0, cols - c0)].all()  # the window, outlined
        # a window wider than the crop (a weight gradient's: ∂L/∂y's size) is not all shown
        fits = max(np.ptp(sweep.rows[t]), np.ptp(sweep.cols[t])) < 11
        assert zoom[0].subtitle.endswith(": the window" if fits else "the window's top-left corner")
        seen.add(fits)
        assert zoom[2].selected == (cell[0] - (zoom[2].origin[0] - output.origin[0]),
                                    cell[1] - (zoom[2].origin[1] - output.origin[1]))  # fmt: skip
    assert seen == {True, False}  # windows that fit, and one that does not


def replace_selected(panel):
    return panel


def test_the_weight_gradient_grid_has_a_scale_and_outlines_the_tile_the_views_show():
    from convviz.engine.sweeps import channel_contributions
    from convviz.render.plotly.channels import heatmap_grid
    from convviz.render.story.panels import channel_grids

    lay = _preset_layer("qa-channels")
    k, c = 3, 2
    grids = channel_grids(lay, 0, c, channel_contributions(lay.input_grad, 0, c), k)
    by_key = {g.key: g for g in grids}
    assert by_key["grad_w"].selected == (k, c) and by_key["sum_k"].selected == (0, k)
    grid = by_key["grad_w"]
    np.testing.assert_array_equal(grid.arrays[k, c], lay.weight_grad.grad_w[k, c])
    fig = heatmap_grid(grid.arrays, grid.row_labels, grid.col_labels, THEME, selected=(k, c))
    hidden = all(t.text is None for t in fig.data)
    scaled = [t for t in fig.data if t.showscale]
    assert hidden == bool(scaled), "a colour scale exactly when the numbers are hidden"
    if scaled:
        ticks = scaled[0].colorbar.ticktext
        assert ticks[0] == number(grid.arrays.min()) and ticks[-1] == number(grid.arrays.max())
    (box,) = fig.layout.shapes
    tile = fig.layout[f"xaxis{k * grid.arrays.shape[1] + c + 1}"].domain
    assert box.x0 < tile[0] < tile[1] < box.x1


@pytest.mark.parametrize("case", LOPSIDED)
def test_exports_size_panels_on_their_own_and_scale_the_colours_they_do_not_number(case):
    from convviz.render.mpl import static

    lay = LOPSIDED[case]()
    for _, panels in _sweeps(lay)[:2]:
        fig = static.panels_figure(panels)
        for ax, p in zip(fig.axes, panels):
            numbers = [t.get_text() for t in ax.texts if t.get_gid() != "tap name"]  # w₀₂
            bars = [a for a in ax.child_axes if a.get_label() == "colour scale"]
            if max(p.shape) <= THEME.max_text_cells:  # the kernel: numbered, whatever beside it
                assert numbers == [number(v) for v in p.values.ravel()], p.title
                assert not bars
                continue
            assert not numbers and len(bars) == 1, f"{p.title}: colours without a scale"
            ticks = [t.get_text() for t in bars[0].get_xticklabels()]
            v = np.asarray(p.values, float)[~p.mask("pad_mask")]
            assert ticks[0] == number(v.min()) and ticks[-1] == number(v.max())


@pytest.mark.apptest
@pytest.mark.parametrize(
    "page_file, sel, want",
    [
        ("pages/1_Forward.py", "", ("y", 39, 39)),  # nothing selected: the last cell, as played
        ("pages/1_Forward.py", "y:20:17", ("y", 20, 17)),
        ("pages/3_Weight_gradient.py", "grad_w:2:1", None),  # ∂L/∂w 3×3: numbered above
        ("pages/2_Input_gradient.py", "grad_x:30:5", ("grad_x", 31, 6)),  # in x̃: padding 1
    ],
)
def test_a_big_layers_close_up_centres_on_the_cell_whose_sum_is_written(page_file, sel, want):
    """The close-up under a big animation shows the window of the cell the formula box writes
    out (the selected one, else the page's default), not some other cell. A result small enough
    to be numbered above (a 3×3 ∂L/∂w) is not drawn again, smaller, in the close-up."""
    import json

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=60)
    query = {"preset": "custom", "H": "40", "W": "40", "kH": "3", "kW": "3", "pad": "same"}
    query |= {"sh": "1", "sw": "1", "dh": "1", "dw": "1", "same_axes": "1"}
    step = "5" if page_file == "pages/2_Input_gradient.py" else "1"  # the sliding window's stage
    for name, value in (query | {"sel": sel, "step": step}).items():
        at.query_params[name] = value
    at.switch_page(page_file).run()
    assert not at.exception
    zooms = [c for c in at.get("plotly_chart") if c.proto.id.endswith("_zoom")]
    assert len(zooms) == 1
    layout = json.loads(zooms[0].proto.spec)["layout"]
    notes = [re.sub(r"<[^>]+>|\s+", " ", a["text"]) for a in layout["annotations"]]
    crop = re.compile(r"rows (-?\d+)…(-?\d+), +columns (-?\d+)…(-?\d+): +the cell")
    if want is None:
        assert sum("(zoom)" in n for n in notes) == 2 and not any(map(crop.search, notes))
        return
    (r0, r1, c0, c1) = map(int, next(m for m in map(crop.search, notes) if m).groups())
    _, r, c = want
    assert r0 <= r <= r1 and c0 <= c <= c1, (notes, want)


def test_a_kernel_of_more_taps_than_colours_tell_apart_shows_its_values():
    """qa-channels' weight gradient slides a 96×96 ∂L/∂y as its kernel: a hue per cell (9216
    taps over a cycle of colours) read as noise, on screen, on slides and in the GIF. Past the
    taps a grid writes numbers in (max_text_cells²) the kernel shows its values, the window is its
    outline alone and the subtitle says so; a 3×3 kernel keeps its tap colours."""
    from matplotlib.figure import Figure

    from convviz.render.mpl import static, sweep_gif
    from convviz.render.selection import taps_told_apart, told_apart

    lay = _preset_layer("qa-channels")
    wg = weight_grad_sweep(lay.weight_grad)
    panels = weight_grad_panels(lay.weight_grad, wg, 0, 0, 0, selected=(4, 4))
    side = THEME.max_text_cells
    assert not taps_told_apart(panels.kernel, side) and not taps_told_apart(panels.operand, side)
    assert all(p.taps is None for p in told_apart(panels, side))
    fw = forward_sweep(lay.forward)
    small = forward_panels(lay.forward, fw, 0, 0, 0, selected=(0, 0))
    assert told_apart(small, side) == list(small)  # a 5×5 kernel: 25 colours

    fig = sweep_figure(wg, *panels, THEME)
    names = [t.name for t in fig.data]
    assert "grad_out:taps" not in names and "grad_out:values" in names
    window = next(t for t in fig.data if t.name == "window")
    assert np.isnan(np.asarray(window.z, dtype=float)).all()  # outlined, not coloured
    note = fig.layout.annotations[0].text
    assert "window outlined" in note and "coloured by" not in note
    fig = sweep_figure(fw, *small, THEME)
    assert "w:taps" in [t.name for t in fig.data]
    assert "coloured by kernel tap" in fig.layout.annotations[0].text

    slide = static.panels_figure(list(panels), THEME)
    assert not [p for ax in slide.axes for p in ax.patches if p.get_label() == "tap"]
    scene = sweep_gif._gif_scene(wg, *panels, THEME, 0, 4)
    assert scene.frames.taps == [] and isinstance(scene.fig, Figure)


@pytest.mark.parametrize("screen", SCREENS, ids=str)
@pytest.mark.parametrize("key", sorted(PRESETS_BY_KEY))
def test_every_number_fits_its_cell(key, screen):
    """The widest number of a grid, set at its font in the grids' typeface (measured by the
    export's font metrics, not the sizing rule's estimate), fits inside its cell: qa-channels'
    ∂L/∂w writes 1157 and −567 in 68 px cells on a projector, which ran into their neighbours."""
    from convviz.render.mpl.panel import text_width

    theme = SCREENS[screen]
    for sweep, panels in _sweeps(_preset_layer(key)):
        fig = sweep_figure(sweep, *panels, theme)
        plot_w = fig.layout.width - fig.layout.margin.l - fig.layout.margin.r
        for t in fig.data:
            if t.type != "heatmap" or t.text is None or t.name == "window":
                continue
            labels = [s for row in plain(t.text) for s in row if s]
            if not labels:
                continue
            axis = fig.layout["xaxis" + t.xaxis[1:]]
            cols = axis.range[1] - axis.range[0]
            cell = (axis.domain[1] - axis.domain[0]) * plot_w / cols
            widest = max(text_width(s, t.textfont.size) for s in labels)  # pt = px at 72 dpi
            assert widest <= cell - 2, f"{t.name}: {widest:.0f} px of text in {cell:.0f} px"

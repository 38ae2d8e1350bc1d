"""Every preset's animations build in both display modes at both screen sizes, and keep the rule
of the screen: within the box, legible cells on a projector, headers that fit their columns."""

import itertools
import re

import numpy as np
import pytest

from convviz.engine.arrays import layer
from convviz.engine.sweeps import forward_sweep, input_grad_sweep, scatter, weight_grad_sweep
from convviz.model.presets import PRESETS
from convviz.render.plotly.sweeps import scatter_figure, sweep_figure
from convviz.render.story.input_grad import input_grad_animation, scatter_panels
from convviz.render.story.panels import forward_panels, weight_grad_panels
from convviz.render.theme import PRESENTATION, THEME
from convviz.ui.compute import MAX_SCATTER_STEPS  # the pages offer the scatter up to this

SMALL = [p for p in PRESETS if p.spec().out_size[0] * p.spec().out_size[1] <= MAX_SCATTER_STEPS]


# (theme, main column width, window height) at 1280×720 and 1920×1080; the sidebar is open in
# normal mode (the column is 820 / 1460 px) and folded in presentation mode (1232 / 1848 px,
# whose rem grows to 24 px at 1920×1080: presentation.css).
SCREENS = {
    "normal-1280x720": THEME.fitted(820, 720),
    "normal-1920x1080": THEME.fitted(1460, 1080),
    "presentation-1280x720": PRESENTATION.fitted(1232, 720),
    "presentation-1920x1080": PRESENTATION.fitted(1848, 1080, 24),
}


def _grid_px(fig, i: int, cols: int) -> float:
    """The px edge of a cell of panel i (cols columns) in a figure."""
    name = "xaxis" if i == 0 else f"xaxis{i + 1}"
    lo, hi = fig.layout[name].domain
    plot_w = fig.layout.width - fig.layout.margin.l - fig.layout.margin.r
    return (hi - lo) * plot_w / cols


def check_screen_rule(fig, panels, theme) -> None:
    """The sizing rule on one figure: in the box; big cells for small grids; headers apart."""
    assert fig.layout.width <= theme.figure_w
    cell = _grid_px(fig, 0, panels[0].shape[1])
    rows = max(p.shape[0] for p in panels)
    if not theme.show_secondary:
        assert fig.layout.height <= theme.figure_h, "the figure and its player fit the screen"
        # 48 px cells and 20 px numbers at 1280×720, grown with the page (1.5× at 1920×1080)
        small = 9  # rows that they fit in, at 720 px as at 1080 px
        if rows <= small and max(p.shape[1] for p in panels) <= 9:
            assert cell >= 48 * theme.scale, f"{cell:.0f} px cells on a projector"
            heatmaps = [t for t in fig.data if t.type == "heatmap" and t.text is not None]
            assert min(t.textfont.size for t in heatmaps) >= 20 * theme.scale
    else:  # a laptop: numbers as big as their cells let them be (a third of a cell was 10 px)
        for t in fig.data:
            if t.type == "heatmap" and t.text is not None and t.name.endswith(":values"):
                cell = _grid_px(fig, int(t.xaxis[1:] or 1) - 1, len(t.z[0]))
                widest = max(1, *(len(str(s)) for row in t.text for s in row))
                assert t.textfont.size >= min(0.4 * cell, 0.9 * cell / (0.56 * widest)) - 1
    # column indices never crowd: labelled columns are their widest label and a gap apart
    # (they ran together at 1920×1080, where the font grew and the 24 px room did not)
    plot_w = fig.layout.width - fig.layout.margin.l - fig.layout.margin.r
    for name, ax in fig.layout.to_plotly_json().items():
        if name.startswith("xaxis") and len(ax.get("tickvals", ())) > 1:
            cell = (
                (ax["domain"][1] - ax["domain"][0]) * plot_w / abs(ax["range"][1] - ax["range"][0])
            )
            step = ax["tickvals"][1] - ax["tickvals"][0]
            widest = max(len(str(v)) for v in ax["tickvals"])  # '−2' and '10' as wide
            room = 0.6 * ax["tickfont"]["size"] * widest + 6
            assert step * cell >= room, f"{name}: indices crowd"
    # headers sit centred over their columns, and the columns of a row do not overlap (grids
    # that wrap stand in rows: geometry._wrapped)
    heads = [a for a in fig.layout.annotations if a.xref and a.xref.endswith("domain")]
    rows: dict[float, list] = {}
    plot_w = fig.layout.width - fig.layout.margin.l - fig.layout.margin.r
    for a in heads[: len(panels)]:
        name = "xaxis" if a.xref == "x domain" else f"xaxis{a.xref.split()[0][1:]}"
        lo, hi = fig.layout[name].domain
        top = round(fig.layout["y" + name[1:]].domain[1], 6)
        centre = (lo + hi) / 2 * plot_w
        lines = re.findall(r"<b>(.*?)</b>", a.text)  # the title as drawn: one or two lines
        half = 0.6 * theme.title_font_size * max(map(len, lines)) / 2
        rows.setdefault(top, []).append((centre - half, centre + half))
    for spans in rows.values():
        for (_, right), (left, _) in itertools.pairwise(spans):
            assert right <= left + 1, "two panel titles overlap"


@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("preset", SMALL, ids=[p.key for p in SMALL])
def test_animations_build_and_keep_the_screen_rule(preset, screen):
    theme = SCREENS[screen]
    spec = preset.spec()
    x, w = preset.values()
    lay = layer(spec, x, w, np.ones(spec.output_shape))
    fw, wg = forward_sweep(lay.forward), weight_grad_sweep(lay.weight_grad)
    ig = input_grad_sweep(lay.input_grad)
    cases = [
        (fw, forward_panels(lay.forward, fw, 0, 0, 0)),
        (wg, weight_grad_panels(lay.weight_grad, wg, 0, 0, 0)),
        (ig, input_grad_animation(lay.input_grad, ig, 0, 0, 0)),
    ]
    for sweep, panels in cases:
        fig = sweep_figure(sweep, *panels, theme)
        assert len(fig.frames) >= 1
        check_screen_rule(fig, panels, theme)
    kernel, grad_out, result = scatter_panels(lay, 0, 0, 0)
    fig = scatter_figure(
        scatter(lay.forward, lay.input_grad.grad_out), kernel, grad_out, result, theme
    )
    check_screen_rule(fig, [grad_out, kernel, result], theme)  # drawn in this order


@pytest.mark.parametrize("size", [1, 2, 5, 7, 16, 17, 32, 33, 100])
@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (1, 4), (3, 2), (10, 5)])
def test_channel_grids_build_at_every_size(size, rows, cols):
    from convviz.render.plotly.channels import heatmap_grid

    arrays = np.arange(rows * cols * size * size, dtype=float).reshape(rows, cols, size, size)
    fig = heatmap_grid(
        arrays, [f"k={r}" for r in range(rows)], [f"c={c}" for c in range(cols)], title="a grid"
    )
    assert len(fig.data) == rows * cols
    names = ["xaxis", *(f"xaxis{i}" for i in range(2, rows * cols + 1))]
    domains = [fig.layout[name].domain for name in names]
    assert all(0 <= lo < hi <= 1 for lo, hi in domains)


def full_correlation(key: str):
    """A preset's full-correlation sweep and its panels, as the storyboard's stage 5 draws them."""
    from convviz.model.presets import PRESETS_BY_KEY

    preset = PRESETS_BY_KEY[key]
    spec = preset.spec()
    lay = layer(spec, *preset.values(), np.ones(spec.output_shape))
    ig = input_grad_sweep(lay.input_grad)
    return ig, input_grad_animation(lay.input_grad, ig, 0, 0, 0)


@pytest.mark.parametrize(
    ("key", "above", "with_room"),
    [
        ("recitation-s2", 48, True),  # the stage bar: 48 px cells with every subtitle
        ("keras-same", 48, True),
        ("recitation-s1", 48, True),
        ("recitation-s2", 115, False),  # 48 px cells only without the subtitles
    ],
)
def test_full_correlation_on_a_projector_has_48_px_cells_below_the_stage_bar(key, above, with_room):
    # the input-gradient page keeps 48 px for its stage bar (pages/2_Input_gradient.py); panel
    # subtitles give way where that is what 48 px cells need, and only there
    ig, panels = full_correlation(key)
    theme = SCREENS["presentation-1280x720"].reserve(above)
    fig = sweep_figure(ig, *panels, theme)
    assert _grid_px(fig, 0, panels[0].shape[1]) >= 48
    headers = [a.text for a in fig.layout.annotations if a.xref and a.xref.endswith("domain")]
    assert any("<span" in h for h in headers[:3]) == with_room


@pytest.mark.parametrize("key", ["classroom", "even-same"])
def test_a_laptop_keeps_numbered_grids_legible_below_the_stage_bar(key):
    """Normal mode at 1280×720: the full correlation's 11×11 and 12×12 grids shrank to 16 px
    cells with 8 px numbers to end above the fold; grids that show their numbers keep
    min_cell_px (the page scrolls instead), or as much of it as the column's width allows."""
    ig, panels = full_correlation(key)
    theme = SCREENS["normal-1280x720"].reserve(140)  # the page's stage bar and heading
    fig = sweep_figure(ig, *panels, theme)
    assert max(p.shape[0] for p in panels) > 9
    cell, cols = _grid_px(fig, 0, panels[0].shape[1]), sum(p.shape[1] for p in panels)
    assert cell >= THEME.min_cell_px or fig.layout.width + cols > theme.figure_w  # width-bound
    assert cell >= 24


def test_a_bigger_projector_grows_the_page_and_its_figures_alike():
    """At 1920×1080 the page's rem is 24 px (presentation.css): the figures' fonts, their
    largest cell and the room left for the title, player and formula grow 1.5× with it, so the
    screen shows the 1280×720 design, not small text beside big grids. A laptop's page keeps
    its 16 px rem and its sizes."""
    small, big = SCREENS["presentation-1280x720"], SCREENS["presentation-1920x1080"]
    assert big.scale == 1.5
    for size in ("font_size", "title_font_size", "cell_font_size", "cell_px"):
        assert getattr(big, size) == round(1.5 * getattr(small, size)), size
    assert big.cell_font(72) == round(1.5 * small.cell_font(48))
    assert 1080 - big.figure_h == round(1.5 * (720 - small.figure_h))  # the player's rows
    assert big.reserve(48).figure_h == big.figure_h - 72  # a stage bar measured at 16 px
    assert THEME.fitted(820, 720, 16) == SCREENS["normal-1280x720"]

"""Every number readable on its cell, by one rule in every renderer; taps told apart by every
reader. Fills: every colour the app can draw under a number (tap colours, the value scale end to
end, padding, inserted zeros, the remainder, pending cells, the page); renderers: plotly grids,
windows, motions and channel tiles, matplotlib panels (PNG/SVG/GIF/MP4), the .tex marks."""

from __future__ import annotations

import itertools
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_hex

from convviz.render import theme
from convviz.render.motion import model as motion
from convviz.render.mpl.panel import text_colors as static_inks
from convviz.render.panel import Panel
from convviz.render.plotly.channels import value_colours
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.plotly.grids import plain
from convviz.render.theme import (
    BACKGROUND,
    DILATION_COLOR,
    PAD_COLOR,
    PENDING_COLOR,
    TAP_CYCLE,
    VALUE_INK,
    VALUE_SCALE,
    contrast,
    needed_contrast,
    tap_colors,
    text_color,
)

ROOT = Path(__file__).resolve().parents[1]
SIZES = (8, 12, 14, 20, 24, 33)  # px: the smallest cell number up to a projector's
VALUE_FILLS = [theme.scale_fill(VALUE_SCALE, t / 64) for t in range(65)]  # both ends included
ROLE_FILLS = [PAD_COLOR, DILATION_COLOR, PENDING_COLOR, BACKGROUND]
ALL_FILLS = sorted(set(tap_colors(11, 11)) | set(VALUE_FILLS) | set(ROLE_FILLS))


@pytest.mark.parametrize("px", SIZES)
def test_every_fill_carries_a_readable_number_at_every_size(px):
    for fill in ALL_FILLS:
        ink = text_color(fill, px)
        assert contrast(fill, ink) >= needed_contrast(px), (fill, ink, px)
        # high contrast (hc=1): the app's fills are chosen so that 7:1 holds as well
        assert contrast(fill, ink) >= needed_contrast(px, high=True), (fill, ink, px)


def test_the_rule_is_wcag():
    assert needed_contrast(14) == 4.5 and needed_contrast(24) == 3.0
    assert needed_contrast(19, bold=True) == 3.0 and needed_contrast(19) == 4.5
    assert needed_contrast(14, high=True) == 7.0 and needed_contrast(24, high=True) == 4.5
    assert round(contrast("#000000", "#ffffff"), 2) == 21.0
    # a fill that cannot carry a number at 7:1 is changed, keeping its hue
    fixed = theme.readable_fill("#808080", high=True)
    assert fixed != "#808080" and contrast(fixed, text_color(fixed)) >= 7


def test_the_value_scale_takes_one_ink_end_to_end():
    assert VALUE_INK == theme.INK_DARK
    for fill in (VALUE_SCALE[0][1], VALUE_SCALE[-1][1], *VALUE_FILLS):
        assert text_color(fill) == VALUE_INK and contrast(fill, VALUE_INK) >= 7


def _span_inks(text) -> list[tuple[str, str]]:
    """(ink, number) of each cell: a span's colour, else the trace's."""
    out = []
    for t in np.asarray(text, dtype=object).ravel():
        m = re.match(r"<span style='color:(#[0-9a-f]{6})'>(.*)</span>$", t or "")
        out.append((m.group(1), m.group(2)) if m else (None, t))
    return out


def test_plotly_grids_write_each_number_in_its_fills_ink():
    taps = np.arange(12).reshape(3, 4)
    values = np.arange(12.0).reshape(3, 4) - 5
    pad = np.zeros((3, 4), bool)
    pad[0, 0] = True
    dil = np.zeros((3, 4), bool)
    dil[2, 3] = True
    kernel = Panel(values, "kernel", "w", taps=taps)
    grid = Panel(values, "grid", "x", pad_mask=pad, dilation_mask=dil)
    fig = panels_figure([kernel, grid])
    colours = tap_colors(3, 4)
    for trace in fig.data:
        if trace.type != "heatmap" or trace.text is None:
            continue
        if trace.name == "w:taps":
            for (ink, number), t in zip(_span_inks(trace.text), taps.ravel()):
                assert (ink or trace.textfont.color) == text_color(colours[t]), (t, number)
        elif trace.name.endswith(":values"):
            assert trace.textfont.color == VALUE_INK and "span" not in "".join(trace.text.ravel())
        elif trace.name.endswith(":pad"):
            assert trace.textfont.color == text_color(PAD_COLOR)
        elif trace.name.endswith(":dilation"):
            assert trace.textfont.color == text_color(DILATION_COLOR)
    assert list(plain(next(t for t in fig.data if t.name == "w:taps").text).ravel()) == [
        str(v).replace("-", "−") for v in values.ravel().astype(int)
    ]


def test_motion_cells_and_matplotlib_panels_take_the_same_ink():
    fills = np.array(ALL_FILLS, object)
    np.testing.assert_array_equal(motion.inks_of(fills), [text_color(f) for f in fills])
    rgba = np.array([[[*(int(f[i : i + 2], 16) / 255 for i in (1, 3, 5)), 1.0]] for f in fills])
    inks = static_inks(None, rgba)
    assert [to_hex(i) for i in inks.ravel()] == [text_color(f) for f in fills]
    v = np.linspace(-9, 9, 19)
    fill, ink = motion.value_colors(v, 9)
    assert all(contrast(f, i) >= 7 for f, i in zip(fill, ink))


def test_channel_tiles_take_the_value_ink():
    scale = value_colours(-3, 5)["colorscale"]  # 'rgb(r, g, b)' stops
    hexes = [to_hex(np.array(re.findall(r"[\d.]+", c), float) / 255) for _, c in scale]
    assert all(text_color(c) == VALUE_INK for c in hexes)


def test_text_on_the_page_and_paper_reads():
    for name, c in theme.TEX_COLORS.items():
        assert contrast(c, "#ffffff") >= 4.5, name
    assert contrast(theme.GREY_TERM, "#ffffff") >= 7
    for high in (False, True):
        css = theme.a11y_css_variables(high)
        colours = dict(re.findall(r"--cv-a11y-([a-z-]+): (#[0-9a-f]{6})", css))
        bar = 7 if high else 4.5
        for name in ("caption", "hint", "link", "text"):
            assert contrast(colours[name], "#ffffff") >= bar, (name, high)
        assert contrast(colours["accent"], colours["on-accent"]) >= bar, high


def test_streamlits_primary_colour_is_the_themes_accent():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["theme"]["primaryColor"] == theme.ACCENT


# --- taps told apart ----------------------------------------------------------------------------

colorspacious = pytest.importorskip("colorspacious")
SIMULATIONS = {"normal": None, "protan": "protanomaly", "deutan": "deuteranomaly",
               "tritan": "tritanomaly"}  # fmt: skip


def _ucs(colours: list[str], cvd: str | None) -> np.ndarray:
    rgb = np.array([[int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)] for c in colours])
    if cvd:
        space = {"name": "sRGB1+CVD", "cvd_type": cvd, "severity": 100}
        rgb = np.clip(colorspacious.cspace_convert(rgb, space, "sRGB1"), 0, 1)
    return colorspacious.cspace_convert(rgb, "sRGB1", "CAM02-UCS")


def smallest_difference(colours: list[str], cvd: str | None) -> float:
    u = _ucs(colours, cvd)
    return min(np.linalg.norm(a - b) for a, b in itertools.combinations(u, 2))


@pytest.mark.parametrize("sim", SIMULATIONS)
def test_a_3x3_kernels_taps_stay_apart_for_every_reader(sim):
    # ΔE (CAM02-UCS) between the two closest of the nine taps; the old palette had 3.8 (protan),
    # 6.0 (deutan), 7.5 (tritan), 23.3 (normal)
    assert smallest_difference(tap_colors(3, 3), SIMULATIONS[sim]) >= 15
    assert smallest_difference(tap_colors(2, 2), SIMULATIONS[sim]) >= 25


@pytest.mark.parametrize("sim", SIMULATIONS)
def test_taps_stay_apart_from_the_values_the_selection_and_the_hover(sim):
    others = [*VALUE_FILLS, theme.SELECTED_COLOR, theme.HOVER_COLOR, *ROLE_FILLS]
    far = (
        15 if sim == "normal" else 5.9
    )  # measured: 16.5 normal, 6.0 protan, 6.3 deutan, 7.3 tritan
    taps = _ucs(tap_colors(3, 3), SIMULATIONS[sim])
    rest = _ucs(others, SIMULATIONS[sim])
    gaps = np.linalg.norm(taps[:, None] - rest[None], axis=2)
    assert gaps.min() >= far, gaps.min()


def test_every_tap_colour_up_to_the_cycle_is_readable_at_7_to_1():
    for c in tap_colors(11, 11)[:TAP_CYCLE]:
        assert contrast(c, text_color(c)) >= 7, c

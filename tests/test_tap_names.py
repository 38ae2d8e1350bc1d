"""Taps told apart without colour: each kernel tap carries its index in the original kernel
(w₀₂) in its cell's top-left corner, on the rotate stage (the names turn with their taps: w₂₂
lands top-left) and the full correlation's rot180 kernel, in the app's figures and the PNG / SVG
/ GIF exports; each name inside its tap's square, clear of the tap's number, in the tap's ink
(figure objects, no browser)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import convviz.render.motion.gif as mg
from convviz.export.story import Story
from convviz.render.motion.frames import motion_figure
from convviz.render.mpl.panel import text_width
from convviz.render.mpl.static import panels_figure, to_svg
from convviz.render.plotly.sweeps import sweep_figure
from convviz.render.selection import tap_names
from convviz.render.story.board import BOARD
from convviz.render.theme import (
    TAP_LABEL_MAX_SIDE,
    TAP_LABEL_MIN_PX,
    readable,
    tap_colors,
    text_color,
    theme_for,
)

PRESETS = ("recitation-s1", "recitation-s2", "classroom")
SCREENS = {  # the themes the pages draw with at 1280×720: a laptop's page, a projector's
    "normal-1280x720": theme_for(False, (1280, 720, 16.0)),
    "pres-1280x720": theme_for(True, (1280, 720, 16.0)),
    "pres-1920x1080": theme_for(True, (1920, 1080, 24.0)),
}
SIDE = 0.96  # a tap's square, in cells, as test_motion_frames counts it


def story(preset: str) -> Story:
    return Story.of(preset)


def motion(preset: str, key: str):
    return BOARD[key].motion(story(preset)).build()


def shown_frames(fig) -> list[dict[str, dict]]:
    """Per frame, trace name → the trace as the browser shows it (JSON, as sent)."""
    spec = json.loads(fig.to_json())
    out = []
    for frame in spec["frames"]:
        data = [dict(t) for t in spec["data"]]
        for i, update in zip(frame["traces"], frame["data"]):
            for key, v in update.items():
                data[i][key] = {**data[i].get(key, {}), **v} if isinstance(v, dict) else v
        out.append({t["name"]: t for t in data})
    return out


def values(v) -> np.ndarray:
    if isinstance(v, dict) and "bdata" in v:
        import base64

        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
    return np.asarray(v)


def test_names_are_the_formulas_subscripts_and_stop_past_five_a_side():
    assert tap_names(2, 3) == ("w₀₀", "w₀₁", "w₀₂", "w₁₀", "w₁₁", "w₁₂")
    assert tap_names(TAP_LABEL_MAX_SIDE, 1) is not None
    assert tap_names(TAP_LABEL_MAX_SIDE + 1, 3) is None


@pytest.mark.parametrize("preset", PRESETS)
def test_names_travel_with_their_taps_through_the_turn(preset):
    """The model: every frame of the rotate motion, each tap keeps its name and the name's
    corner lies inside its square; at 180° the cell (0, 0) holds w₍ₖₕ₋₁₎₍ₖ𝓌₋₁₎."""
    m = motion(preset, "rotate")
    kH, kW = m.panels[1].shape
    names = np.array(tap_names(kH, kW), object)
    for f in m.frames():
        taps = f.groups["taps"]
        assert np.array_equal(taps.label, names)
        rows, cols = taps.label_corner()
        half = taps.scale / 2
        assert np.all(np.abs(rows - taps.row) < half) and np.all(np.abs(cols - taps.col) < half)
    last = m.frames()[-1].groups["taps"]
    at_origin = np.flatnonzero((np.round(last.row) == 0) & (np.round(last.col) == 0))
    assert list(last.label[at_origin]) == [f"w{'₀₁₂₃₄'[kH - 1]}{'₀₁₂₃₄'[kW - 1]}"]


def cell_px(layout: dict, axis: int) -> float:
    """The px of a cell (one unit of its axis) on panel `axis` (1, 2, …)."""
    xa, margin = layout[f"xaxis{axis if axis > 1 else ''}"], layout["margin"]
    plot_w = layout["width"] - margin["l"] - margin["r"]
    return (xa["domain"][1] - xa["domain"][0]) * plot_w / abs(xa["range"][1] - xa["range"][0])


def boxes(frame: dict[str, dict], axis_px) -> list[tuple]:
    """(name box, number box, square) in px, per shown tap of the turning kernel's panel."""
    taps, names = frame["motion:taps"], frame["names:taps"]
    x, y = values(taps["x"]), values(taps["y"])
    nx, ny = values(names["x"]), values(names["y"])
    font, size = values(taps["textfont"]["size"]), values(taps["marker"]["size"])
    label_px = values(names["textfont"]["size"])
    out = []
    for i, (name, number) in enumerate(zip(names["text"], taps["text"])):
        if not name.strip():
            continue
        cx, cy = axis_px(x[i], y[i])
        left, top = axis_px(nx[i], ny[i])
        label = (left, top, left + text_width(name, label_px[i]), top + label_px[i])
        w, h = text_width(number, font[i]), 0.72 * font[i]  # digits' height
        digits = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        half = size[i] / 2
        out.append((label, digits, (cx - half, cy - half, cx + half, cy + half)))
    return out


def overlap(a, b, slack: float = 0.25) -> bool:
    """Whether two px boxes share more than `slack` px each way (positions are sent rounded)."""
    return (
        a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack
    )


@pytest.mark.parametrize("key", ["rotate", "whole"])
@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("preset", PRESETS)
def test_app_draws_the_names_on_every_frame_inside_the_square_clear_of_the_number(
    preset, screen, key
):
    """The plotly figure of the rotate stage (and the whole pass, whose kernel turns too): at
    every frame a name per tap, in the tap's square, not over its number, in its ink; ≥ 12 px
    whenever the kernel is at rest. The whole pass names them where its cells have room."""
    theme = SCREENS[screen]
    m = motion(preset, key)
    fig = motion_figure(m, theme, start=0)
    layout = fig.layout_dict
    frames = shown_frames(fig)
    if key == "whole" and "names:taps" not in frames[0]:  # small cells: no names
        font = values(frames[0]["motion:taps"]["textfont"]["size"]).max()
        assert theme.tap_label_font(cell_px(layout, 2), font) is None
        return
    kH, kW = m.panels[1].shape
    names = list(tap_names(kH, kW))
    k = cell_px(layout, 2)

    def axis_px(x, y):  # data → px on the turning copy's panel, rows running down
        return x * k, y * k

    rest = [0, len(frames) - 1]
    for f, frame in enumerate(frames):
        assert list(frame["names:taps"]["text"]) == names, f
        inks = frame["names:taps"]["textfont"]["color"]
        assert list(inks) == list(frame["motion:taps"]["textfont"]["color"]), f
        if f in rest:
            assert min(values(frame["names:taps"]["textfont"]["size"])) >= TAP_LABEL_MIN_PX
    for f, frame in enumerate(frames):
        for label, digits, square in boxes(frame, axis_px):
            assert not overlap(label, digits), (f, label, digits)
            assert square[0] <= label[0] and label[2] <= square[2] + 1, (f, label, square)
            assert square[1] <= label[1] and label[3] <= square[3] + 1, (f, label, square)


def test_the_overlap_check_can_fail():
    assert overlap((0, 0, 10, 10), (5, 5, 15, 15))
    assert not overlap((0, 0, 10, 4), (0, 5, 10, 15))


@pytest.mark.parametrize("fill", tap_colors(TAP_LABEL_MAX_SIDE, TAP_LABEL_MAX_SIDE))
def test_every_tap_colour_carries_a_12_px_name(fill):
    assert readable(fill, TAP_LABEL_MIN_PX), (fill, text_color(fill))


@pytest.mark.parametrize("preset", PRESETS)
def test_exports_of_the_rotate_and_correlate_stages_carry_the_names(preset):
    """PNG / SVG: each kernel cell's corner has its tap's name (rot180's w₂₂ at (0, 0));
    the SVG keeps them as text. GIF: the names are stamped with the numbers."""
    s = story(preset)
    for still in s.stills():
        if still.stage is None or still.stage.key not in ("rotate", "correlate"):
            continue
        fig = panels_figure(still.panels)
        kernels = [p for p in still.panels if p.key in ("w", "w_rot")]
        drawn = {}
        for ax, p in zip(fig.axes, still.panels):
            for t in ax.texts:
                if t.get_gid() == "tap name":
                    x, y = t.get_position()
                    drawn[p.key, round(y + 0.5), round(x + 0.5)] = t.get_text()
        for p in kernels:
            want = p.tap_labels()
            for (r, c), name in np.ndenumerate(want):
                assert drawn.get((p.key, r, c)) == name, (still.stage.key, p.key, r, c)
        rot = next(p for p in kernels if p.key == "w_rot")
        kH, kW = rot.shape
        assert drawn["w_rot", 0, 0] == tap_names(kH, kW)[-1]
        assert tap_names(kH, kW)[-1] in to_svg(fig).decode()


@pytest.mark.parametrize("cell_px", [40, None], ids=["gif", "mp4"])
@pytest.mark.parametrize("key", ["rotate", pytest.param("whole", marks=pytest.mark.encoder)])
def test_gif_and_mp4_frames_stamp_names_of_10_px_at_least(key, cell_px):
    """The GIF (40 px cells) and the MP4 (cells that fill 1280 px: `video.motion_cell_px`)
    stamp every tap's name with the numbers, each ≥ 10 px at the frame's own size; mid-turn,
    where a tap's square is too small for a readable name, the name is left out and comes back
    as the tap lands (the first and last frames name every tap). The whole pass: ~10 s a GIF,
    `make test`'s (encoder)."""
    from convviz.export.video import motion_cell_px

    m = motion("recitation-s2", key).coarser(2)
    stamped = []

    class Spy(mg._Numbers):
        def stamp(self, rgb, numbers):
            stamped.append([(n[2], n[4] * 100 / 72) for n in numbers if n[5] == "lt"])
            super().stamp(rgb, numbers)

    real = mg._Numbers
    mg._Numbers = Spy
    try:
        frames = mg.motion_frames(m, cell_px=cell_px or motion_cell_px(m))
    finally:
        mg._Numbers = real
    assert len(stamped) == len(frames)
    sizes = [px for frame in stamped for _, px in frame]
    assert sizes and min(sizes) >= mg.GIF_LABEL_PX - 1e-6 == 10 - 1e-6
    names = sorted(tap_names(3, 3))
    if key == "rotate":  # w and its turning copy, whole at both ends
        assert sorted(n for n, _ in stamped[0]) == sorted(names * 2)
        assert sorted(n for n, _ in stamped[-1]) == sorted(names * 2)
    else:
        assert set(names) <= {n for frame in stamped for n, _ in frame}


def test_correlate_animation_names_its_rot180_kernel():
    s = story("recitation-s2")
    from convviz.render.story.input_grad import input_grad_animation

    ig = s.layer.input_grad
    op, kernel, out = input_grad_animation(ig, s.sweeps["input_grad"], 0, 0, 0)
    fig = sweep_figure(s.sweeps["input_grad"], op, kernel, out, SCREENS["pres-1280x720"])
    trace = next(t for t in fig.traces if t["name"] == "w_rot:tap names")
    at = {
        (round(y + 0.5), round(x + 0.5)): n
        for x, y, n in zip(trace["x"], trace["y"], trace["text"])
    }
    assert at[0, 0] == "w₂₂" and at[2, 2] == "w₀₀"


@pytest.mark.parametrize("stage", ["correlate", "forward"])
@pytest.mark.parametrize("preset", PRESETS)
def test_sliding_window_carries_the_names_at_every_step(preset, stage):
    """The sliding kernel: at every frame each of its taps' names sits in the corner of the
    operand cell that tap reads; its top-left cell is w₍ₖₕ₋₁₎₍ₖ𝓌₋₁₎ for the full correlation's
    rot180 kernel, w₀₀ for the forward's."""
    from convviz.render.story.input_grad import input_grad_animation
    from convviz.render.story.panels import forward_panels

    s = story(preset)
    if stage == "correlate":
        sweep = s.sweeps["input_grad"]
        op, kernel, out = input_grad_animation(s.layer.input_grad, sweep, 0, 0, 0)
    else:
        sweep = s.sweeps["forward"]
        op, kernel, out = forward_panels(s.layer.forward, sweep, 0, 0, 0)
    fig = sweep_figure(sweep, op, kernel, out, SCREENS["pres-1280x720"])
    frames = shown_frames(fig)
    steps = fig.meta["player"]["steps"]
    if "window:tap names" not in frames[0]:  # only where the operand's cells are too small
        font = frames[0][f"{op.key}:values"]["textfont"]["size"]
        theme = SCREENS["pres-1280x720"]
        assert theme.tap_label_font(cell_px(fig.layout_dict, 1), font) is None
        return
    kH, kW = kernel.shape
    (oy, ox) = op.origin
    for t, frame in zip(steps, frames):
        names = frame["window:tap names"]
        x, y = values(names["x"]), values(names["y"])
        rows, cols = sweep.rows[t], sweep.cols[t]
        want = {(r + oy, c + ox) for r in rows for c in cols}
        assert {(round(b + 0.5), round(a + 0.5)) for a, b in zip(x, y)} == want, t
        first = list(names["text"]).index(tap_names(kH, kW)[-1 if stage == "correlate" else 0])
        assert (round(y[first] + 0.5), round(x[first] + 0.5)) == (rows[0] + oy, cols[0] + ox)


def test_scatter_routes_kernel_is_named_as_the_correlations():
    """The scatter route stamps w (unturned): its kernel says w₀₀ top-left."""
    from convviz.engine.sweeps import scatter as scatter_of
    from convviz.render.plotly.sweeps import scatter_figure
    from convviz.render.story.input_grad import scatter_panels

    s = story("recitation-s2")
    kernel, grad_out, result = scatter_panels(s.layer, 0, 0, 0)
    fig = scatter_figure(
        scatter_of(s.layer.forward, s.layer.input_grad.grad_out),
        kernel,
        grad_out,
        result,
        SCREENS["pres-1280x720"],
    )
    trace = next(t for t in fig.traces if t["name"] == "w:tap names")
    at = {
        (round(y + 0.5), round(x + 0.5)): n
        for x, y, n in zip(trace["x"], trace["y"], trace["text"])
    }
    assert at[0, 0] == "w₀₀" and at[2, 2] == "w₂₂"

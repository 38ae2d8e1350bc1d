"""The plotly renderers' animated figures: sweep_figure (a frame per step carrying only the
overlays, the window in the operand's own cells and the taps' colours, the sums written so far, the
player's meta and hover links, sampling, the GIF's frames among the browser's, payload) and
scatter_figure (the scatter route's stamps, its several filters); which frames write their sums;
index labels on a projector. Inspect figure objects (traces, frames, meta), not pixels."""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import plotly_cases
import pytest
from matplotlib.path import Path
from plotly_cases import forward_case, hex_at, input_grad_case, make_layer, tap_grid, trace

from convviz.engine.arrays import layer
from convviz.engine.sweeps import forward_sweep, input_grad_sweep, scatter
from convviz.render import selection
from convviz.render.panel import Panel
from convviz.render.plotly import frames as animation_frames
from convviz.render.plotly import grids
from convviz.render.plotly import sweeps as sweep_animations
from convviz.render.theme import TAP_CYCLE, tap_colors

# the module-scoped layers of tests/plotly_cases.py, as this module's fixtures
classroom = plotly_cases.classroom
remainder_layer = plotly_cases.remainder_layer


# --- the scatter route's panels, frames read back ------------------------------------------------


def scatter_case(lay):
    fw, ig = lay.forward, lay.input_grad
    sc = scatter(fw, ig.grad_out, 0, 0)
    (pt, _), (pl, _) = fw.spec.padding
    kernel = Panel(fw.w[0, 0], "w", "w", taps=tap_grid())
    g = Panel(ig.grad_out[0, 0], "grad_out", "grad_out")
    result = Panel(
        ig.grad_x_padded[0, 0],
        "gxp",
        "gxp",
        pad_mask=fw.pad_mask,
        remainder_mask=fw.remainder_mask,
        origin=(-pt, -pl),
    )
    return sc, kernel, g, result


def frames_json(fig):
    """The frames as the plain dicts they were built from (to_dict would base64 the arrays)."""
    return [f.to_plotly_json() for f in fig.frames]


def covered_by(poly_x, poly_y, shape, origin) -> np.ndarray:
    """Which cell centres a closed polygon contains."""
    h, w = shape
    if len(poly_x) == 0:
        return np.zeros(shape, dtype=bool)
    oy, ox = origin
    rr, cc = np.mgrid[0:h, 0:w]
    centres = np.stack([cc.ravel() + ox, rr.ravel() + oy], axis=1)
    return Path(np.stack([poly_x, poly_y], axis=1)).contains_points(centres).reshape(shape)


# --- sweep_figure --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fwd(classroom):
    sw, operand, kernel, output = forward_case(classroom)
    return (
        sw,
        operand,
        kernel,
        output,
        sweep_animations.sweep_figure(sw, operand, kernel, output, start=5),
    )


def test_one_frame_per_step_named_by_step(fwd):
    sw, *_, fig = fwd
    assert len(fig.frames) == sw.steps == 16
    assert [f.name for f in fig.frames] == [str(t) for t in range(sw.steps)]


def test_frames_carry_only_the_overlay_traces(fwd):
    *_, fig = fwd
    traces = fig.frames[0].traces
    assert all(f.traces == traces for f in fig.frames)
    names = [fig.data[i].name for i in traces]
    assert names == ["window", "window outline", "pending", "target"]
    assert len(fig.data) > len(traces) + 5  # the grids and overlays stay static
    assert all(len(f["data"]) == len(traces) for f in frames_json(fig))


def test_the_window_says_what_colours_it():
    """Forward: the kernel's taps; ∂L/∂w: ∂L/∂y slides over the input, its cells colour it."""
    from convviz.engine.sweeps import weight_grad_sweep
    from convviz.render.story.panels import forward_panels, weight_grad_panels

    lay = make_layer()
    fw_sweep, wg_sweep = forward_sweep(lay.forward), weight_grad_sweep(lay.weight_grad)
    for sw, panels, says in (
        (fw_sweep, forward_panels(lay.forward, fw_sweep, 0, 0, 0), "coloured by kernel tap"),
        (wg_sweep, weight_grad_panels(lay.weight_grad, wg_sweep, 0, 0, 0), "by ∂L/∂y cell"),
    ):
        fig = sweep_animations.sweep_figure(sw, *panels)
        notes = " ".join(
            re.sub(r"<[^>]+>", " ", " ".join(a.text for a in fig.layout.annotations)).split()
        )
        assert says in notes and "kernel tap" not in notes.replace(says, ""), notes


def test_each_frame_colours_the_window_on_the_operands_own_cells(classroom):
    """Each frame's window covers its taps with the operand's numbers; the padding under it keeps
    its own look (in tap colours a padded zero looked like one of x's cells)."""
    lay = make_layer(H=9, stride=1, padding=2, dilation=2)  # gaps between the taps
    sw, operand, kernel, output = forward_case(lay)
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output)
    i_win, _ = trace(fig, "window")
    assert fig.frames[0].traces[0] == i_win
    oy, ox = operand.origin
    pad = operand.mask("pad_mask")
    padded_under = 0
    for t, f in enumerate(frames_json(fig)):
        win = f["data"][0]
        z = np.array(win.get("z", fig.data[i_win].z), dtype=float)
        cells = {
            (int(y), int(x))
            for (a, y) in enumerate(win["y"])
            for (b, x) in enumerate(win["x"])
            if np.isfinite(z[a, b])
        }
        own = ~pad[np.ix_(sw.rows[t], sw.cols[t])]
        expect = {(r + oy, c + ox) for r in sw.rows[t] for c in sw.cols[t] if not pad[r, c]}
        assert cells == expect
        padded_under += int((~own).sum())
        text = grids.plain(win["text"])
        covered = sw.operand[0][np.ix_(sw.rows[t], sw.cols[t])]
        np.testing.assert_array_equal(text[np.isfinite(z)], grids.format_values(covered[own]))
        assert set(text[~np.isfinite(z)]) <= {""}
    assert padded_under > 0  # the case slides the window over the padding


def test_window_cells_take_their_tap_colour_through_the_rotation(classroom):
    sw, operand, kernel, output = input_grad_case(classroom)
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output)
    win = fig.data[fig.frames[0].traces[0]]
    z = np.asarray(win.z, float)
    dh, dw = sw.dilation
    under = z[::dh, ::dw]  # the cell under tap (a, b); NaN over the padding (its own look)
    own = np.isfinite(under)
    assert own.any() and not own.all()  # the first window lies on the padded ring's corner
    np.testing.assert_array_equal(under[own], kernel.taps[own])
    a, b = np.argwhere(own)[0]
    colors = tap_colors(3, 3)
    assert hex_at(win.colorscale, win.zmin, win.zmax, under[a, b]) == colors[kernel.taps[a, b]]


def test_tap_colours_repeat_past_the_largest_kernel_and_their_scale_stays_small():
    # ∂L/∂y is the window of the weight gradient: up to 150×150 "taps". One colour step each made a
    # 45,000-entry colour scale that plotly validated for seconds on every rerun.
    colors = tap_colors(12, 12)
    assert colors[:TAP_CYCLE] == tap_colors(11, 11)  # every tap of a real kernel has its own
    assert colors[TAP_CYCLE:] == colors[: 144 - TAP_CYCLE]
    colour = grids.tap_heatmap(np.arange(144).reshape(12, 12), 144)
    assert len(colour["colorscale"]) == 2 * TAP_CYCLE
    z = np.asarray(colour["z"]).ravel()
    for t in (0, 5, 120, 121, 143):
        assert hex_at(colour["colorscale"], colour["zmin"], colour["zmax"], z[t]) == colors[t]
    assert np.isnan(grids.tap_heatmap(np.array([[-1, 0]]), 1)["z"][0, 0])  # no tap: transparent


def test_output_shows_the_sums_written_so_far(fwd):
    sw, _, _, output, fig = fwd
    _, values = trace(fig, "y:values")
    np.testing.assert_array_equal(values.z, sw.sums.reshape(sw.out_size))
    for t, f in enumerate(frames_json(fig)):
        pending = f["data"][2]
        hidden = covered_by(pending["x"], pending["y"], output.shape, output.origin)
        expect = np.arange(sw.steps).reshape(sw.out_size) > t
        np.testing.assert_array_equal(hidden, expect)
        target = f["data"][3]
        r, c = sw.targets[t]
        assert (min(target["x"]), min(target["y"])) == (c - 0.5, r - 0.5)


def test_player_meta_has_one_label_per_frame_and_opens_at_start(fwd):
    sw, *_, fig = fwd
    meta = animation_frames.player_meta(fig)
    assert meta["names"] == [f.name for f in fig.frames]
    assert meta["steps"] == [int(f.name) for f in fig.frames]
    assert meta["active"] == 5
    assert meta["labels"] == [f"{r}, {c}" for r, c in sw.targets[meta["steps"]]]
    assert meta["prefix"] == "y[" and meta["suffix"] == "]" and meta["sampled"] == 1
    assert meta["frame_ms"] == animation_frames.FRAME_MS and 1 in meta["speeds"]


def test_the_player_drives_the_frames_not_plotly_controls(fwd):
    *_, fig = fwd
    assert not fig.layout.updatemenus and not fig.layout.sliders


def test_base_figure_shows_the_start_step(fwd):
    *_, fig = fwd
    frame = frames_json(fig)[5]
    for i, d in zip(fig.frames[5].traces, frame["data"]):
        for key, value in d.items():
            if key != "type":
                np.testing.assert_array_equal(np.asarray(fig.data[i][key]), np.asarray(value))


def test_hover_link_holds_every_output_cells_window_and_every_operand_cells_readers(fwd):
    """The relation is computed here once (the browser only draws boxes): each output cell's
    window box, and each operand cell's (output, tap) readers, as selection.reads has them."""
    from convviz.render.selection import reads

    sw, operand, kernel, output, fig = fwd
    link = animation_frames.player_meta(fig)["link"]
    assert [p["key"] for p in link["panels"]] == [operand.key, kernel.key, output.key]
    windows = np.array(link["windows"])
    np.testing.assert_array_equal(windows[:, 0], sw.rows[:, 0])
    np.testing.assert_array_equal(windows[:, 1], sw.rows[:, -1])
    np.testing.assert_array_equal(windows[:, 2], sw.cols[:, 0])
    assert link["kernel"] == list(sw.kernel.shape[1:])
    hover = [fig.data[i] for i in link["traces"]]
    assert [h.name for h in hover] == ["hover"] * 3 and all(len(h.x) == 0 for h in hover)
    assert windows[:, 1].max() < operand.shape[0] and windows[:, 3].max() < operand.shape[1]
    kw = link["kernel"][1]
    for cell, pairs in enumerate(link["readers"]):
        r, c = divmod(cell, operand.shape[1])
        steps = pairs[0::2]
        assert steps == np.flatnonzero(reads(sw, (r, c))).tolist()
        for t, tap in zip(steps, pairs[1::2]):
            assert sw.rows[t, tap // kw] == r and sw.cols[t, tap % kw] == c


def test_sampling_keeps_every_kth_step_the_last_and_start():
    lay = make_layer(H=7, stride=1, padding=1)  # 49 steps
    sw, operand, kernel, output = forward_case(lay)
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output, start=23, max_frames=10)
    names = [int(f.name) for f in fig.frames]
    assert names == sorted({*range(0, 49, 5), 48, 23})
    assert "every 5th step shown" in fig.layout.title.text
    meta = animation_frames.player_meta(fig)
    assert meta["active"] == names.index(23) and meta["sampled"] == 5
    assert len(meta["labels"]) == len(names)


@pytest.mark.parametrize("H", [5, 10, 40])  # 25, 100, 1600 steps (padding 1, stride 1)
def test_every_gif_frame_is_one_the_browser_shows(H):
    """The GIF keeps fewer frames than the browser (its file size), but only frames the browser
    shows as well: the same steps of the same sweep, the result last."""
    sw, operand, kernel, output = forward_case(make_layer(H=H, stride=1, padding=1))
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output, start=sw.steps - 1)
    shown = set(animation_frames.player_meta(fig)["steps"])
    gif = selection.gif_steps(sw.steps)
    assert set(gif) <= shown and gif[-1] == sw.steps - 1
    assert len(gif) <= selection.GIF_FRAMES + 1 and len(gif) == min(sw.steps, len(gif))
    if sw.steps <= selection.GIF_FRAMES:
        assert list(gif) == list(range(sw.steps))  # short sweeps: every step in both


def test_start_out_of_range_is_clamped(fwd):
    sw, operand, kernel, output, _ = fwd
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output, start=999)
    assert animation_frames.player_meta(fig)["active"] == len(fig.frames) - 1


def test_mismatched_panels_are_refused(fwd):
    sw, _, kernel, output, _ = fwd
    with pytest.raises(ValueError, match="operand panel"):
        sweep_animations.sweep_figure(sw, kernel, kernel, output)


def test_sweep_click_overlays_on_operand_and_output(fwd):
    *_, fig = fwd
    _, click = trace(fig, "y:click")
    assert [list(c) for c in click.customdata][:2] == [["y", 0, 0], ["y", 0, 1]]
    trace(fig, "x:click")


def test_animated_figure_is_valid_plotly_and_frames_read_back(fwd):
    *_, fig = fwd
    go.Figure(fig.to_dict())  # the full, slow validation of every frame
    assert fig.frames[3].data[0].type == "heatmap"


def test_payload_of_a_16x16_forward_sweep_stays_under_1_mb():
    lay = make_layer(H=16, stride=1, padding=1)
    sw, operand, kernel, output = forward_case(lay)
    fig = sweep_animations.sweep_figure(sw, operand, kernel, output)
    assert len(fig.frames) == 256
    assert len(pio.to_json(fig.to_dict(), validate=False)) < 1_000_000


def test_frame_sums_are_written_only_while_their_terms_stay_bounded(remainder_layer):
    """Building a frame's formula is the slow part of a big first load: all frames' terms
    together are bounded (a small sweep writes every frame; 400 frames of 125 terms do not)."""
    sw = forward_sweep(remainder_layer.forward)
    assert animation_frames.writes_captions(sw, sw.steps)
    big = np.zeros((5, 5, 5))
    assert sw.kernel.size * sw.steps <= animation_frames.MAX_CAPTION_TERMS
    wide = type(sw)(**{**sw.__dict__, "kernel": big})
    assert not animation_frames.writes_captions(wide, 400)


def test_every_index_is_labelled_where_the_labels_fit_a_cell():
    """Classroom's full correlation on a projector: at 1920×1080 every second index was labelled
    (∂L/∂x̃'s ring at −1 had none) though '−1' and a gap fit its 50 px cells."""
    from convviz.model.presets import PRESETS_BY_KEY
    from convviz.render.story.input_grad import input_grad_animation
    from convviz.render.theme import theme_for

    p = PRESETS_BY_KEY["classroom"]
    spec = p.spec()
    x, w = p.values()
    ig = layer(spec, x, w, p.grad_out_for(np.zeros(spec.output_shape))).input_grad
    sweep = input_grad_sweep(ig, 0, 0)
    panels = input_grad_animation(ig, sweep, 0, 0, 0)
    theme = theme_for(True, (1920, 1080, 24)).reserve(100)  # the page's bars: 43 px cells
    fig = sweep_animations.sweep_figure(sweep, *panels, theme, channel=0, start=0)
    assert fig.layout.xaxis3.tickfont.size == 27
    every = list(range(-1, 8))  # x̃'s indices, its ring included
    assert list(fig.layout.xaxis3.tickvals) == every
    assert list(fig.layout.yaxis3.tickvals) == every


# --- scatter_figure ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scat(remainder_layer):
    sc, kernel, g, result = scatter_case(remainder_layer)
    return sc, kernel, g, result, sweep_animations.scatter_figure(sc, kernel, g, result, start=2)


def test_scatter_final_frame_shows_the_full_gradient(scat):
    sc, _, _, result, fig = scat
    i_values, _ = trace(fig, "gxp:values")
    last = frames_json(fig)[-1]
    values = last["data"][fig.frames[-1].traces.index(i_values)]
    z = np.array([[np.nan if v is None else v for v in row] for row in values["z"]])
    pad = result.pad_mask
    np.testing.assert_array_equal(z[~pad], sc.running[-1][~pad])
    assert np.isnan(z[pad]).all()  # the flat padding colour beneath shows through
    np.testing.assert_array_equal(np.asarray(values["text"]), grids.format_values(sc.running[-1]))
    np.testing.assert_allclose(sc.running[-1], result.values)


def test_scatter_stamp_covers_its_window_in_tap_colours(scat):
    sc, kernel, _, result, fig = scat
    i_stamp = fig.frames[0].traces[2]
    assert fig.data[i_stamp].name == "stamp"
    np.testing.assert_array_equal(np.asarray(fig.data[i_stamp].z, float), kernel.taps)
    oy, ox = result.origin
    for t, f in zip((int(f.name) for f in fig.frames), frames_json(fig)):
        stamp = f["data"][2]
        np.testing.assert_array_equal(stamp["x"], sc.cols[t] + ox)
        np.testing.assert_array_equal(stamp["y"], sc.rows[t] + oy)
        shown = [s.replace("+", "") for s in grids.plain(stamp["text"]).ravel()]
        assert shown == list(grids.format_values(sc.stamps[t]).ravel())


def test_scatter_controls_and_start(scat):
    *_, fig = scat
    meta = animation_frames.player_meta(fig)
    assert len(meta["labels"]) == len(fig.frames) == 16
    assert meta["active"] == 2 and meta["link"] is None
    assert len(meta["captions"]) == 16 and meta["captions"][0][0].startswith("∂L/∂y[0, 0] = ")
    # the padded grid's rows and columns as its axes write them: "−1", not "-1"
    assert "rows −1…1, cols −1…1" in meta["captions"][0][0]
    assert not any("-" in line for lines in meta["captions"] for line in lines)
    go.Figure(fig.to_dict())


def test_several_filters_scatter_shows_each_frames_own_filter():
    """channels-small (3 filters): a frame shows the ∂L/∂y and kernel of the filter it stamps
    from, and its stamp is that ∂L/∂y cell times that kernel (not a sum over filters)."""
    from convviz.engine.values import layer_values
    from convviz.model.fields import preset_state
    from convviz.model.presets import PRESETS_BY_KEY
    from convviz.model.state import spec_of
    from convviz.render.story.input_grad import scatter_panels

    state = preset_state(PRESETS_BY_KEY["channels-small"])
    spec = spec_of(state)
    lay = layer(spec, *layer_values(spec, state["seed"], state["kernel"], state["gout"]))
    sc = scatter(lay.forward, lay.input_grad.grad_out, 0, 1)
    fig = sweep_animations.scatter_figure(sc, *scatter_panels(lay, 0, 0, 1))
    i_g, _ = trace(fig, "grad_out:values")
    i_w, _ = trace(fig, "w:taps")
    K, oW = spec.out_channels, spec.out_size[1]
    assert len(fig.frames) == K * spec.out_size[0] * oW  # every filter's stamps, then the sum
    meta = animation_frames.player_meta(fig)
    for s, f, label in zip((int(f.name) for f in fig.frames), frames_json(fig), meta["labels"]):
        k, (r, c) = sc.filters[s], divmod(int(sc.cells[s]), oW)
        traces = fig.frames[0].traces
        shown_g = f["data"][traces.index(i_g)]
        np.testing.assert_array_equal(shown_g["z"], lay.input_grad.grad_out[0, k])
        shown_w = f["data"][traces.index(i_w)]["text"]
        assert list(np.ravel(shown_w)) == list(grids.format_values(lay.forward.w[k, 1]).ravel())
        np.testing.assert_allclose(sc.stamps[s], shown_g["z"][r, c] * lay.forward.w[k, 1])
        assert label.startswith(f"k={k}]")
    assert "filter 2: " in meta["captions"][-1][0]
    np.testing.assert_allclose(sc.running[-1], lay.input_grad.grad_x_padded[0, 1])


def test_scatter_payload_of_16x16_stays_under_1_mb():
    sc, kernel, g, result = scatter_case(make_layer(H=16, stride=1, padding=1))
    fig = sweep_animations.scatter_figure(sc, kernel, g, result)
    assert len(pio.to_json(fig.to_dict(), validate=False)) < 1_000_000

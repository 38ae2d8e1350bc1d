"""The backward pass in motion, in Chromium: the whole pass plays to the end in the browser.

Plays the Input-gradient page's whole-pass animation on the recitation stride-2 example, keeps a
mid-motion screenshot in artifacts/, and checks the end state against the engine (∂L/∂x as drawn,
the player's stage label, the figure's stage bar) and that stepping crosses stage boundaries.
"""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from convviz.presets import PRESETS_BY_KEY
from convviz.render.grids import format_values
from convviz.stages import forward_stages, layer

pytestmark = pytest.mark.browser

CHART_MS = 60_000  # a cold first load on 2 busy cores
PLAYER = "window.__convviz && window.__convviz.players.get('chart_whole_pass')"
STATE = f"() => {{ const p = {PLAYER}; return p ? [p.current(), p.count] : null; }}"
# what the chart draws of a trace at this moment: text at (x, y)
DRAWN = """(name) => {
  const gd = document.querySelector('.st-key-chart_whole_pass .js-plotly-plot');
  const t = gd._fullData.find(d => d.name === name);  // decoded: data keeps typed-array specs
  return [Array.from(t.x), Array.from(t.y), Array.from(t.text || [])];
}"""
BAR = """() => {
  const gd = document.querySelector('.st-key-chart_whole_pass .js-plotly-plot');
  return gd.layout.annotations.map(a => a.text).find(t => t.includes('correlate')) || '';
}"""


def recitation_grad_x() -> np.ndarray:
    p = PRESETS_BY_KEY["recitation-s2"]
    spec = p.spec()
    x, w = p.values()
    lay = layer(spec, x, w, p.grad_out_for(forward_stages(spec, x, w).y))
    return lay.input_grad.grad_x[0, 0]


def label(page: Page) -> str:
    return page.locator(".st-key-player_whole_pass [data-testid='player-label']").inner_text()


def settle(page: Page) -> None:
    """Wait until the page has sized its figures to the screen and finished its run."""
    page.wait_for_function("() => document.body.dataset.cvViewport === 'fitted'", timeout=CHART_MS)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=CHART_MS
    )


def at_frame(page: Page, frame: int) -> None:
    page.wait_for_function(f"() => ({STATE})()[0] === {frame}", timeout=10_000)


def test_whole_backward_pass_plays_to_the_end(tab: Page, app_url, artifacts):
    tab.goto(f"{app_url}/Input_gradient?preset=recitation-s2")
    tab.locator(".js-plotly-plot").first.wait_for(timeout=CHART_MS)
    settle(tab)
    tab.locator(".st-key-whole_pass label").click()
    tab.locator(".st-key-chart_whole_pass .js-plotly-plot").wait_for(timeout=CHART_MS)
    tab.wait_for_function(f"() => ({STATE})() !== null", timeout=CHART_MS)
    frame, count = tab.evaluate(STATE)
    assert frame == 0 and count > 40
    assert "stage [1 · ∂L/∂y]" in label(tab)
    assert "<b>1 · ∂L/∂y</b>" in tab.evaluate(BAR)

    player = tab.locator(".st-key-player_whole_pass")
    player.get_by_role("button", name="4×").click()
    player.get_by_role("button", name="▶ Play").click()
    # mid-motion: the kernel is turning (a frame between two keyframes of the rotation)
    turning = f"""() => {{
      const p = {PLAYER}, gd = document.querySelector('.st-key-chart_whole_pass .js-plotly-plot');
      return p && gd.layout.meta.player.labels[p.current()].includes('rotate');
    }}"""
    tab.wait_for_function(turning, timeout=60_000)
    tab.wait_for_timeout(200)  # the frame drawn
    tab.wait_for_function(
        f"() => {{ const s = ({STATE})(); return s[0] === s[1] - 1; }}", timeout=120_000
    )
    expect(player.get_by_role("button", name="▶ Play")).to_be_visible()  # it stopped at the end
    tab.locator(".st-key-chart_whole_pass").screenshot(path=artifacts / "backward_pass_end.png")

    # the end state: ∂L/∂x as the engine has it, and the stage indicators on the last stage
    assert "stage [7 · ∂L/∂x]" in label(tab)
    assert "<b>7 · ∂L/∂x</b>" in tab.evaluate(BAR)
    xs, ys, text = tab.evaluate(DRAWN, "motion:grad_x")
    grad_x = recitation_grad_x()
    drawn = np.full(grad_x.shape, "", dtype=object)
    for x, y, s in zip(xs, ys, text):
        drawn[round(y), round(x)] = s
    assert np.array_equal(drawn, format_values(grad_x))
    assert drawn[2, 2] == "36"  # the recitation's hand-worked ∂L/∂x₂₂
    _, _, ring_text = tab.evaluate(DRAWN, "motion:grad_x_padded")
    assert not any(ring_text), "∂L/∂x̃ has faded out: only ∂L/∂x is written"

    # stepping crosses stage boundaries: back from the first frame of 'pad' lands in 'dilate'
    labels = tab.evaluate(
        "() => document.querySelector('.st-key-chart_whole_pass .js-plotly-plot')"
        ".layout.meta.player.labels"
    )
    assert len(labels) == count and labels[-1] == "7 · ∂L/∂x"
    first_pad = labels.index("3 · pad")
    # mid-motion pictures: the kernel half-way through its turn, the window half-way through
    mids = (("rotate", "4 · rotate 180°", 0.5), ("correlate", "5 · correlate", 0.4))
    for name, stage, part in mids:
        frames = [i for i, s in enumerate(labels) if s == stage]
        frame = frames[int(part * len(frames))]
        tab.evaluate(f"() => {PLAYER}.show({frame})")
        at_frame(tab, frame)
        tab.wait_for_timeout(1500)  # plotly draws the frame
        chart = tab.locator(".st-key-chart_whole_pass")
        chart.screenshot(path=artifacts / f"backward_pass_mid_{name}.png")
    tab.evaluate(f"() => {PLAYER}.show({first_pad})")
    at_frame(tab, first_pad)
    tab.keyboard.press("ArrowLeft")
    at_frame(tab, first_pad - 1)
    assert "stage [2 · dilate]" in label(tab)
    tab.keyboard.press("ArrowRight")
    at_frame(tab, first_pad)
    assert "stage [3 · pad]" in label(tab)


# storyboard stage → (trace axis of the panel that changes, the engine array it ends on, origin)
def stage_ends():
    p = PRESETS_BY_KEY["recitation-s2"]
    spec = p.spec()
    x, w = p.values()
    ig = layer(spec, x, w, p.grad_out_for(forward_stages(spec, x, w).y)).input_grad
    (gt, _), (gl, _) = spec.full_padding
    return {
        2: ("x", ig.dilated[0, 0], (0, 0), "2 · dilate"),
        3: ("x", ig.padded[0, 0], (-gt, -gl), "3 · pad"),
        4: ("x2", ig.w_rot[0, 0], (0, 0), "4 · rotate 180°"),
        6: ("x", ig.grad_x[0, 0], (0, 0), "6 · mask"),
    }


SHOWN = """(axis) => {
  const p = [...window.__convviz.players.values()].find(p => p.primary);
  const gd = document.querySelector(`.st-key-${p.chart} .js-plotly-plot`);
  return gd._fullData.filter(d => (d.name || '').startsWith('motion:') && d.xaxis === axis)
    .map(d => [Array.from(d.x), Array.from(d.y), Array.from(d.text || [])]);
}"""
PRIMARY = "() => { const p = [...window.__convviz.players.values()].find(p => p.primary); "


def test_each_stage_motion_plays_to_the_engines_stage(tab: Page, app_url):
    for step, (axis, want, (oy, ox), stage) in stage_ends().items():
        tab.goto(f"{app_url}/Input_gradient?preset=recitation-s2&step={step}")
        tab.locator(".js-plotly-plot").first.wait_for(timeout=CHART_MS)
        settle(tab)
        tab.wait_for_function(
            PRIMARY + "return p && p.chart === 'chart_story_" + f"{step - 1}'; }}"
        )
        count = tab.evaluate(PRIMARY + "return p.count; }")
        assert tab.evaluate(PRIMARY + "return p.current(); }") == count - 1, "opens on the result"
        tab.keyboard.press("Home")
        tab.wait_for_function(PRIMARY + "return p.current() === 0; }")
        tab.keyboard.press(" ")  # play to the end
        tab.wait_for_function(PRIMARY + f"return p.current() === {count - 1}; }}", timeout=90_000)
        tab.wait_for_timeout(1500)  # the last frame drawn
        label = tab.locator(f".st-key-player_story_{step - 1} [data-testid='player-label']")
        assert f"stage [{stage}]" in label.inner_text()
        drawn = np.full(want.shape, "", dtype=object)
        for xs, ys, texts in tab.evaluate(SHOWN, axis):
            for x, y, s in zip(xs, ys, texts):
                if s:
                    assert drawn[round(y) - oy, round(x) - ox] == "", "two numbers on one cell"
                    drawn[round(y) - oy, round(x) - ox] = s
        assert np.array_equal(drawn, format_values(want)), step

"""The backward pass in motion, in Chromium: the whole pass plays to the end in the browser.

Plays the Input-gradient page's whole-pass animation on the recitation stride-2 example, keeps a
mid-motion screenshot in artifacts/, and checks the end state against the engine (∂L/∂x as drawn,
the player's stage label, the figure's stage bar) and that stepping crosses stage boundaries. Every
step waits for the state it acts on (tests/live.py), never for a time.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from live import SETTLE_MS, goto, open_tab, rerun, settled
from playwright.sync_api import Browser, Page, expect

from convviz.engine.arrays import forward_arrays, layer
from convviz.model.presets import PRESETS, PRESETS_BY_KEY
from convviz.render.plotly.adapter import probing
from convviz.render.plotly.grids import format_values
from convviz.render.theme import ACCENT

pytestmark = pytest.mark.browser

PLAYER = "window.__convviz && window.__convviz.players.get('chart_stage_whole')"
STATE = f"() => {{ const p = {PLAYER}; return p ? [p.current(), p.count] : null; }}"
# what the chart draws of a trace at this moment: text at (x, y)
DRAWN = probing("""(name) => {
  const gd = document.querySelector('.st-key-chart_stage_whole .js-plotly-plot');
  const t = cvPlotly.trace(gd, name);  // decoded: data keeps typed-array specs
  return [Array.from(t.x), Array.from(t.y), Array.from(t.text || [])];
}""")
# what the SVG shows of a trace: its text nodes' contents (a node plotly dropped is not drawn)
PAINTED = probing("""(name) => cvPlotly.paintedText(
  document.querySelector('.st-key-chart_stage_whole .js-plotly-plot'), name)""")
# the stage bar's buttons the player lit up: [text, state] of each ('now', 'done' or '')
LIT = """() => [...document.querySelectorAll('.st-key-ctl_step button')]
  .map(b => [b.innerText.trim(), b.dataset.cvStage || ''])"""
FORMULA = ".st-key-player_stage_whole [data-testid='player-formula']"


def recitation():
    p = PRESETS_BY_KEY["recitation-s2"]
    spec = p.spec()
    x, w = p.values()
    return layer(spec, x, w, p.grad_out_for(forward_arrays(spec, x, w).y)).input_grad


def recitation_grad_x() -> np.ndarray:
    return recitation().grad_x[0, 0]


def label(page: Page) -> str:
    return page.locator(".st-key-player_stage_whole [data-testid='player-label']").inner_text()


def at_frame(page: Page, frame: int) -> None:
    page.wait_for_function(f"() => ({STATE})()[0] === {frame}")


# Samples of the stage bar, one per player tick (100 ms): [index of the stage lit 'now', whether
# the bar reads done…done, now, none…]; sampling ends at `n` samples or at the first bad one.
LIT_SAMPLES = """([n]) => new Promise(resolve => {
  const out = [];
  const look = () => {
    const states = (LIT)().map(b => b[1]), now = states.indexOf('now');
    const ok = now >= 0 && states.every((s, i) => s === (i < now ? 'done' : i > now ? '' : 'now'));
    out.push([now, ok]);
    if (out.length >= n || !ok) return resolve(out);
    setTimeout(look, 100);
  };
  look();
})""".replace("(LIT)", f"({LIT})")


def lit(page: Page, stage: str, *, playing: bool = False) -> None:
    """The stage bar shows `stage` as where the animation is, the stages before it as done; and
    stays so (a stale player once fought over the bar at each of its 100 ms ticks: the bar is
    sampled at that period, 4 times). While it plays, the bar may only move on: each sample shows
    one stage now, those before it done, and never an earlier one."""
    page.wait_for_function(
        f"() => ({LIT})().filter(b => b[1] === 'now').map(b => b[0]).join() === {stage!r}"
    )
    at = [t for t, _ in page.evaluate(LIT)].index(stage)
    for now, ok in page.evaluate(LIT_SAMPLES, [4]):
        assert ok and (now == at or (playing and now > at)), (stage, now, at)
        at = now


def test_whole_backward_pass_plays_to_the_end(tab: Page, app_url, artifacts):
    goto(tab, f"{app_url}/Input_gradient?preset=recitation-s2")
    with rerun(tab):  # the whole pass: a stage of the bar
        tab.locator(".st-key-ctl_step button", has_text="1–6 · whole pass").click()
    assert "step=7" in tab.url  # in the link
    tab.wait_for_function(f"() => ({STATE})() !== null")  # the whole pass's player is in place
    frame, count = tab.evaluate(STATE)
    assert frame == 0 and count > 40
    assert "stage 1 · ∂L/∂y" in label(tab)
    lit(tab, "1 · ∂L/∂y")
    now = tab.locator(".st-key-ctl_step button[data-cv-stage='now']")
    accent = "rgb({}, {}, {})".format(*(int(ACCENT[i : i + 2], 16) for i in (1, 3, 5)))
    assert now.evaluate("b => getComputedStyle(b).backgroundColor") == accent  # the theme's

    player = tab.locator(".st-key-player_stage_whole")
    player.get_by_role("button", name="4×").click()
    player.get_by_role("button", name="▶ Play").click()
    # mid-motion: the kernel is turning (a frame between two keyframes of the rotation)
    turning = f"""() => {{
      const p = {PLAYER}, gd = document.querySelector('.st-key-chart_stage_whole .js-plotly-plot');
      return p && gd.layout.meta.player.labels[p.current()].includes('rotate');
    }}"""
    tab.wait_for_function(turning)
    lit(tab, "4 · rotate 180°", playing=True)  # the bar follows the playing animation
    frame_ms = tab.evaluate(
        "() => document.querySelector('.st-key-chart_stage_whole .js-plotly-plot')"
        ".layout.meta.player.frame_ms"
    )
    tab.wait_for_function(  # bounded by the length of the play at 4×, thrice, and a settling
        f"() => {{ const s = ({STATE})(); return s[0] === s[1] - 1; }}",
        timeout=3 * count * frame_ms / 4 + SETTLE_MS,
    )
    expect(player.get_by_role("button", name="▶ Play")).to_be_visible()  # it stopped at the end
    settled(tab)  # the last frame drawn
    tab.locator(".st-key-chart_stage_whole").screenshot(path=artifacts / "backward_pass_end.png")

    # the end state: ∂L/∂x as the engine has it, the stage indicators on the last stage, and
    # under the player the followed cell's sum (the centre, ∂L/∂x₂₂ = 36, hand-worked)
    assert "stage 6 · mask" in label(tab)
    lit(tab, "6 · mask")  # ∂L/∂x is the mask's result
    xs, ys, text = tab.evaluate(DRAWN, "motion:grad_x")
    grad_x = recitation_grad_x()
    drawn = np.full(grad_x.shape, "", dtype=object)
    for x, y, s in zip(xs, ys, text):
        drawn[round(y), round(x)] = s
    assert np.array_equal(drawn, format_values(grad_x))
    assert drawn[2, 2] == "36"  # the recitation's hand-worked ∂L/∂x₂₂
    _, _, ring_text = tab.evaluate(DRAWN, "motion:grad_x_padded")
    assert not any(s.strip() for s in ring_text), "∂L/∂x̃ has faded out: only ∂L/∂x is written"
    assert tab.locator(FORMULA).inner_text().splitlines()[1].endswith("= 36")

    # stepping crosses stage boundaries: back from the first frame of 'pad' lands in 'dilate'
    labels = tab.evaluate(
        "() => document.querySelector('.st-key-chart_stage_whole .js-plotly-plot')"
        ".layout.meta.player.labels"
    )
    assert len(labels) == count and labels[-1] == "6 · mask"
    first_pad = labels.index("3 · pad")
    keys = tab.evaluate(
        "() => document.querySelector('.st-key-chart_stage_whole .js-plotly-plot')"
        ".layout.meta.player.keys"
    )  # a step (← →) goes from keyframe to keyframe
    # mid-motion pictures: the kernel half-way through its turn, the window half-way through
    mids = (("rotate", "4 · rotate 180°", 0.5), ("correlate", "5 · correlate", 0.4))
    for name, stage, part in mids:
        frames = [i for i, s in enumerate(labels) if s == stage]
        frame = frames[int(part * len(frames))]
        tab.evaluate(f"() => {PLAYER}.show({frame})")
        at_frame(tab, frame)
        lit(tab, stage)
        settled(tab)  # plotly has drawn the frame
        chart = tab.locator(".st-key-chart_stage_whole")
        chart.screenshot(path=artifacts / f"backward_pass_mid_{name}.png")
    # the sums computed so far are drawn, also after that jump back from the end and a step on
    for _ in range(2):
        _, _, meant = tab.evaluate(DRAWN, "motion:grad_x_padded")
        painted = tab.evaluate(PAINTED, "motion:grad_x_padded")
        numbers = [s for s in meant if s.strip()]
        assert numbers and [s for s in painted if s.strip()] == numbers
        frame = tab.evaluate(STATE)[0]
        tab.keyboard.press("ArrowRight")
        at_frame(tab, next(k for k in keys if k > frame))
        settled(tab)
    tab.evaluate(f"() => {PLAYER}.show({first_pad})")
    at_frame(tab, first_pad)
    tab.keyboard.press("ArrowLeft")
    at_frame(tab, first_pad - 1)
    assert "stage 2 · dilate" in label(tab)
    lit(tab, "2 · dilate")
    tab.keyboard.press("ArrowRight")
    at_frame(tab, next(k for k in keys if k >= first_pad))  # the pad's first keyframe
    assert "stage 3 · pad" in label(tab)
    lit(tab, "3 · pad")

    # a stage button opens that stage alone: the bar the server's again
    with rerun(tab):
        tab.locator(".st-key-ctl_step button", has_text="4 · rotate 180°").click()
    expect(tab.locator(".st-key-chart_stage_rotate .js-plotly-plot")).to_have_count(1)
    assert "step=4" in tab.url
    tab.wait_for_function(f"() => ({LIT})().every(b => b[1] === '')")  # no marks left behind


def open_whole_pass(tab: Page, app_url: str) -> dict:
    """Open recitation-s2's whole pass from a link; once its player runs, its meta."""
    goto(tab, f"{app_url}/Input_gradient?preset=recitation-s2&step=7")
    assert tab.evaluate(STATE) is not None
    return tab.evaluate(
        "() => document.querySelector('.st-key-chart_stage_whole .js-plotly-plot')"
        ".layout.meta.player"
    )


def test_whole_pass_from_a_link_keys_and_formulas(tab: Page, app_url):
    """step=7 in a link opens the whole pass (an older link's whole=1 too); the formula follows
    the window's frames; ← → step keyframe to keyframe; PageDown is the lecture's next stage
    (the Weight gradient), PageUp its stage before (the mask)."""
    meta = open_whole_pass(tab, app_url)
    labels = meta["labels"]
    ig = recitation()
    pt, pl = ig.spec.padding[0][0], ig.spec.padding[1][0]
    correlating = [i for i, s in enumerate(labels) if s == "5 · correlate"]
    for frame in correlating[:: max(1, len(correlating) // 4)]:
        cell = meta["cells"][frame]
        if not cell:
            continue
        tab.evaluate(f"() => {PLAYER}.show({frame})")
        at_frame(tab, frame)
        symbolic, numeric = tab.locator(FORMULA).inner_text().splitlines()[:2]
        want = ig.grad_x_padded[0, 0, cell[1], cell[2]]
        assert symbolic.startswith("∂L/∂x̃") and numeric.endswith(f"= {want:g}"), (cell, numeric)
        assert f"Computing ∂L/∂x̃[{cell[1] - pt}, {cell[2] - pl}]" in meta["captions"][frame][0]
    # → and ← step from keyframe to keyframe: a frame on the way had the window half a cell
    # across and the formula of a cell not yet written (the full correlation moves in 2 frames)
    keys = meta["keys"]
    here = next(i for i, k in enumerate(keys) if labels[k] == "5 · correlate")
    assert keys[here + 1] - keys[here] == 2
    tab.evaluate(f"() => {PLAYER}.show({keys[here]})")
    at_frame(tab, keys[here])
    tab.keyboard.press("ArrowRight")
    at_frame(tab, keys[here + 1])
    tab.keyboard.press("ArrowLeft")
    at_frame(tab, keys[here])
    # the lecture's next stage: the Weight gradient, its first stage; back: the whole pass, and
    # before it the mask
    with rerun(tab):
        tab.keyboard.press("PageDown")
    # a page switch: the URL changes with the next page's run, perhaps after the run awaited
    tab.wait_for_url(re.compile(r"/Weight_gradient\?.*\bstep=1\b"))
    settled(tab)
    with rerun(tab):
        tab.keyboard.press("PageUp")
    tab.wait_for_url(re.compile(r"/Input_gradient\?.*\bstep=7\b"))
    settled(tab)
    with rerun(tab):
        tab.keyboard.press("PageUp")
    tab.wait_for_url(re.compile(r"\bstep=6\b"))


def test_the_laptops_stage_bar_stays_put_from_stage_to_stage(tab: Page, app_url):
    """On a laptop the stage bar has a row of its own under Back and Next. In one row with them
    it wrapped differently at the first stage ("◀ Forward"), the middle ones and the last
    ("Weight gradient ▶"): the stage a student had just clicked moved away from the pointer."""
    tab.set_viewport_size({"width": 1280, "height": 720})
    tops = {}
    for step in (1, 3, 6):
        goto(tab, f"{app_url}/Input_gradient?preset=recitation-s2&step={step}")
        tops[step] = [tab.locator(f".st-key-{k}").bounding_box()["y"] for k in BAR]
    ys = [y for row in tops.values() for y in row]
    assert max(ys) - min(ys) <= 12, tops  # one row, the same at every stage


BAR = ("ctl_step",)  # the stage bar (its last stage the whole pass)


# storyboard stage → (trace axis of the panel that changes, the engine array it ends on, origin)
def stage_ends():
    p = PRESETS_BY_KEY["recitation-s2"]
    spec = p.spec()
    x, w = p.values()
    ig = layer(spec, x, w, p.grad_out_for(forward_arrays(spec, x, w).y)).input_grad
    (gt, _), (gl, _) = spec.full_padding
    return {
        2: ("x", ig.dilated[0, 0], (0, 0), "2 · dilate", "dilate"),
        3: ("x", ig.padded[0, 0], (-gt, -gl), "3 · pad", "pad"),
        4: ("x2", ig.w_rot[0, 0], (0, 0), "4 · rotate 180°", "rotate"),
        6: ("x", ig.grad_x[0, 0], (0, 0), "6 · mask", "mask"),
    }


SHOWN = probing("""(axis) => {
  const p = [...window.__convviz.players.values()].find(p => p.primary);
  const gd = document.querySelector(`.st-key-${p.chart} .js-plotly-plot`);
  return cvPlotly.traces(gd).filter(d => (d.name || '').startsWith('motion:') && d.xaxis === axis)
    .map(d => [Array.from(d.x), Array.from(d.y), Array.from(d.text || [])]);
}""")
PRIMARY = "() => { const p = [...window.__convviz.players.values()].find(p => p.primary); "


def test_each_stage_motion_plays_to_the_engines_stage(tab: Page, app_url):
    for step, (axis, want, (oy, ox), stage, key) in stage_ends().items():
        goto(tab, f"{app_url}/Input_gradient?preset=recitation-s2&step={step}")
        chart = tab.evaluate(PRIMARY + "return p.chart; }")
        assert chart == f"chart_stage_{key}"
        count = tab.evaluate(PRIMARY + "return p.count; }")
        assert tab.evaluate(PRIMARY + "return p.current(); }") == count - 1, "opens on the result"
        tab.keyboard.press("Home")
        tab.wait_for_function(PRIMARY + "return p.current() === 0; }")
        tab.keyboard.press(" ")  # play to the end
        frame_ms = tab.evaluate(
            f"() => document.querySelector('.st-key-{chart} .js-plotly-plot')"
            ".layout.meta.player.frame_ms"
        )
        tab.wait_for_function(  # bounded by the play's length, thrice, and a settling
            PRIMARY + f"return p.current() === {count - 1}; }}",
            timeout=3 * count * frame_ms + SETTLE_MS,
        )
        settled(tab)  # the last frame drawn
        label = tab.locator(f".st-key-player_stage_{key} [data-testid='player-label']")
        assert f"stage {stage}" in label.inner_text()
        drawn = np.full(want.shape, "", dtype=object)
        for xs, ys, texts in tab.evaluate(SHOWN, axis):
            for x, y, s in zip(xs, ys, texts):
                if s.strip():
                    assert drawn[round(y) - oy, round(x) - ox] == "", "two numbers on one cell"
                    drawn[round(y) - oy, round(x) - ox] = s
        assert np.array_equal(drawn, format_values(want)), step


# --- presentation mode: the whole pass on a projector --------------------------------------------

MEASURE = probing("""() => {
  const gd = document.querySelector('.st-key-chart_stage_whole .js-plotly-plot');
  const box = el => { const r = el.getBoundingClientRect();
                      return [r.left, r.top, r.right, r.bottom]; };
  const panels = cvPlotly.axisNames(gd, 'x').map(k => {
    const ax = cvPlotly.axis(gd, k), ya = cvPlotly.axis(gd, k.replace('x', 'y'));
    return [ax.length / Math.abs(ax.range[1] - ax.range[0]), Math.abs(ya.range[1] - ya.range[0])];
  });
  const fonts = cvPlotly.traces(gd).filter(d => (d.name || '').startsWith('motion:') && d.text)
    .map(d => d.textfont.size);
  const player = document.querySelector('.st-key-player_stage_whole');
  return {panels, fonts, chart: box(gd), player: box(player), height: innerHeight,
          notes: Array.from(gd.querySelectorAll('g.annotation')).map(box)};
}""")
# rows of the tallest grid (the padded ∂L/∂y) that 48 px cells fit with the player on the screen
FITS = {720: 7, 1080: 13}


def whole_pass_problems(view: dict) -> list[str]:
    out = []
    if view["player"][3] > view["height"] or view["chart"][3] > view["player"][1]:
        out.append(f"chart / player bottom {view['chart'][3]:.0f} / {view['player'][3]:.0f}")
    for a, b in itertools.combinations(view["notes"], 2):
        if a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1:
            out.append(f"text overlaps text at {a} / {b}")
    rows = max(r for _, r in view["panels"])
    if rows <= FITS[view["height"]]:
        cell = min(px for px, _ in view["panels"])
        font = min(np.min(f) for f in view["fonts"])  # a turning kernel's are per tap
        if cell < 47.5 or font < 20:
            out.append(f"{cell:.1f} px cells, {font} px numbers ({rows} rows)")
    return out


# The presets `make test` plays at each size (`make ci`: every preset, the others marked `full`):
# the lecture's example at both, with a folding ring (reflect) and the biggest layer.
WHOLE_SAMPLE = {
    (1280, 720): ("recitation-s2",),
    (1920, 1080): ("qa-channels",),
}


@pytest.fixture(scope="module")
def projector(request, browser: Browser):
    """A tab of a projector's size for the module (one per size: pytest groups the cases)."""
    width, height = request.param
    page = open_tab(browser, viewport={"width": width, "height": height})
    yield page, (width, height)
    page.context.close()


@pytest.mark.parametrize(
    ("projector", "preset"),
    [
        pytest.param(
            size,
            key,
            id=f"{size[0]}x{size[1]}-{key}",
            marks=() if key in sample else pytest.mark.full,
        )
        for size, sample in WHOLE_SAMPLE.items()
        for key in [p.key for p in PRESETS]
    ],
    indirect=["projector"],
)
def test_whole_pass_fits_a_projector_on_every_preset(projector, app_url, artifacts, preset):
    """Presentation mode, sidebar folded: the figure and its player on the screen, no overlapping
    text, cells ≥ 48 px with ≥ 20 px numbers wherever the tallest grid has room for them; the
    mask stage's player (two formula lines) on the screen too."""
    page, size = projector
    folder = artifacts / "screens"
    folder.mkdir(exist_ok=True)
    problems = []
    goto(page, f"{app_url}/Input_gradient?preset={preset}&pres=1&step=7")
    state = page.evaluate(STATE)
    assert state is not None
    # on a projector the pass plays as it arrives: measured on its result, not on a frame the
    # turning kernel happens to be drawn small in
    page.keyboard.press("End")
    at_frame(page, state[1] - 1)
    settled(page)
    view = page.evaluate(MEASURE)
    page.mouse.move(0, size[1] - 1)
    page.screenshot(path=folder / f"{size[0]}x{size[1]}-{preset}-whole_pass.png")
    problems += [f"{preset}: {p}" for p in whole_pass_problems(view)]
    if preset == "recitation-s2":  # the lecture's example: 48 px cells at both sizes
        assert min(px for px, _ in view["panels"]) >= 47.5
        # the bar follows the frame after the page re-sized itself to the screen
        labels = page.evaluate(
            "() => document.querySelector('.st-key-chart_stage_whole .js-plotly-plot')"
            ".layout.meta.player.labels"
        )
        frame = labels.index("5 · correlate") + 3
        page.evaluate(f"() => {PLAYER}.show({frame})")
        lit(page, "5 · correlate")
    # the mask alone, with its sum under the player: the player still on the screen, and the
    # stage bar on one row (a long "Weight gradient ▶" wrapped it at 1280)
    goto(page, f"{app_url}/Input_gradient?preset={preset}&pres=1&step=6")
    tops = [page.locator(f".st-key-{key}").bounding_box()["y"] for key in ("ctl_step", "nav_next")]
    if max(tops) - min(tops) > 20:
        problems.append(f"{preset}: the stage bar wraps at the last stage: {tops}")
    player = page.locator(".st-key-player_stage_mask").bounding_box()
    if player["y"] + player["height"] > size[1]:
        bottom = player["y"] + player["height"]
        problems.append(f"{preset}: the mask's player ends at {bottom:.0f} px")
    assert not problems, "\n".join(problems)


def test_a_pause_or_a_released_scrub_settles_on_a_keyframe(tab: Page, app_url):
    """Paused mid-play, or let go mid-drag, a motion settles on a keyframe: a frame on the way has
    its window half a cell across and its formula a cell not yet written. While dragging, the
    scrub shows every frame."""
    meta = open_whole_pass(tab, app_url)
    keys = meta["keys"]
    gap = next(i for i in range(len(keys) - 1) if keys[i + 1] - keys[i] >= 4)  # a long move
    tab.evaluate(f"() => {PLAYER}.show({keys[gap] + 1})")
    at_frame(tab, keys[gap] + 1)
    tab.locator(".st-key-chart_stage_whole").click(position={"x": 5, "y": 5})  # keys to the page
    tab.keyboard.press("Space")  # play
    tab.keyboard.press("Space")  # pause, a frame or two on
    at_frame(tab, keys[gap + 1])  # the move finishes: the scene arrives

    scrub = tab.locator(".st-key-player_stage_whole input.scrub")
    scrub.scroll_into_view_if_needed()
    box = scrub.bounding_box()
    y = box["y"] + box["height"] / 2
    tab.mouse.move(box["x"] + 2, y)
    tab.mouse.down()
    for x in range(int(box["x"]) + 2, int(box["x"] + box["width"]), 2):  # to a frame on the way
        tab.mouse.move(x, y)
        frame = tab.evaluate(STATE)[0]
        if frame not in keys and frame > keys[gap]:
            break
    assert frame not in keys, frame  # dragging: every frame, those on the way too
    tab.mouse.up()
    at_frame(tab, min(keys, key=lambda k: abs(k - frame)))

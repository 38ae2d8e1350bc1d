"""No empty frame, at any speed: every animated stage of every page plays in Chromium with its CPU
throttled 4× (the DevTools protocol's Emulation.setCPUThrottlingRate, a slow projector laptop) at
1× speed, sampled every 80 ms: a grid drawn at the stage's first frame and at its last keeps a
filled cell or a number in every sample (`cvPlotly.painted`, convviz/render/plotly/probe.js).

Each stage is sampled twice: the first 3 s of its play, and the play from its last keyframe but
one to its end. A sliding window's frames once went through plotly's animate, whose transition
drops every heatmap until a redraw a timer later: a slow laptop painted the grids blank in between
(1 sample in 14–29 on a busy machine; the player now applies them itself, ui/player.js). The
last test shows the probe sees that blank.

`make test` plays recitation-s2 throttled; `make ci` also recitation-s1 and classroom, and all
three unthrottled.
"""

from __future__ import annotations

import pytest
from live import goto, open_tab, rerun, settled

from convviz.model.lecture import LECTURE
from convviz.model.presets import PRESETS_BY_KEY
from convviz.render.plotly.adapter import probing

pytestmark = pytest.mark.browser

SCREEN = {"width": 1280, "height": 720}
SLOW = 4  # the CPU throttling rate
SAMPLE_MS, FIRST_MS = 80, 3000
PLAYER = "[...window.__convviz.players.values()].find(p => p.primary)"
INSTALL = probing("() => { window.__cvProbe = cvPlotly; }")
# The grids drawn now (a filled cell or a number), of the primary player's chart
DRAWN = f"""() => {{
  const p = {PLAYER};
  const gd = document.querySelector(`.st-key-${{p.chart}} .js-plotly-plot`);
  const seen = window.__cvProbe.painted(gd);
  return Object.keys(seen).filter(k => seen[k].filled || seen[k].numbers);
}}"""
# Start sampling `expected` grids every SAMPLE_MS and play from `frame`; sampling ends after
# `span` ms of page time, or (span 0) when the play has ended on the last frame
SAMPLE = f"""([expected, frame, span]) => {{
  const p = {PLAYER};
  const gd = document.querySelector(`.st-key-${{p.chart}} .js-plotly-plot`);
  const run = window.__cvRun = {{samples: 0, empty: [], done: false}};
  const t0 = performance.now();
  const timer = setInterval(() => {{
    const seen = window.__cvProbe.painted(gd);
    const blank = expected.filter(k => seen[k] && !seen[k].filled && !seen[k].numbers);
    run.samples += 1;
    if (blank.length) run.empty.push({{frame: p.current(), blank}});
    const ended = !p.playing() && p.shown() === p.count - 1;
    if ((span && performance.now() - t0 >= span) || (!span && ended)) {{
      clearInterval(timer);
      p.pause();
      run.done = true;
    }}
  }}, {SAMPLE_MS});
  p.pause();
  p.show(frame, false);
  p.toggle();
}}"""
LAST_BUT_ONE = f"""() => {{
  const p = {PLAYER};
  const gd = document.querySelector(`.st-key-${{p.chart}} .js-plotly-plot`);
  const keys = gd.layout.meta.player.keys || [];
  const before = keys.filter(k => k < p.count - 1);
  return before.length ? before[before.length - 1] : Math.max(0, p.count - 2);
}}"""


def animated(preset: str) -> list:
    return [s for s in LECTURE.of(PRESETS_BY_KEY[preset].spec()) if s.view in ANIMATED]


ANIMATED = ("sweep", "motion", "run")
CASES = [("recitation-s2", SLOW)] + [
    pytest.param(preset, rate, marks=pytest.mark.full)
    for preset in ("recitation-s1", "recitation-s2", "classroom")
    for rate in (SLOW, 1)
    if (preset, rate) != ("recitation-s2", SLOW)
]


@pytest.fixture(scope="module")
def projector(browser):
    page = open_tab(browser, viewport=SCREEN)
    yield page
    page.context.close()


def url(app_url: str, stage, preset: str) -> str:
    name = stage.page.split("_", 1)[1].removesuffix(".py")
    return f"{app_url}/{name}?preset={preset}&pres=1&play=stills&step={LECTURE.step_of(stage)}"


def played(page, expected: list[str], frame: int, span: int) -> dict:
    """Play from `frame` while sampling (see SAMPLE); what the samples found."""
    page.evaluate(SAMPLE, [expected, frame, span])
    page.wait_for_function("() => window.__cvRun && window.__cvRun.done", timeout=120_000)
    return page.evaluate("() => window.__cvRun")


@pytest.mark.parametrize(("preset", "rate"), CASES, ids=lambda v: str(v))
def test_no_grid_goes_blank_while_a_stage_plays(app_url, projector, preset, rate):
    page = projector
    cdp = page.context.new_cdp_session(page)
    found = []
    try:
        shown = None
        for stage in animated(preset):
            if stage.page == shown:  # the page's stage bar: a rerun of its body, not a new session
                with rerun(page):
                    page.locator(".st-key-ctl_step button").nth(LECTURE.step_of(stage) - 1).click()
            else:
                goto(page, url(app_url, stage, preset))
                page.evaluate(INSTALL)
            shown = stage.page
            arrived = f"() => window.__convviz && window.__convviz.shown === '{shown}#{stage.key}'"
            page.wait_for_function(f"() => ({arrived})() && !!({PLAYER})")
            settled(page)
            last = page.evaluate(DRAWN)  # play=stills: the stage opens on its result
            page.evaluate(f"() => ({PLAYER}).show(0, false)")
            settled(page)
            expected = sorted(set(page.evaluate(DRAWN)) & set(last))
            assert expected, f"{stage.key}: no grid drawn at rest"
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
            first = played(page, expected, 0, FIRST_MS)
            end = played(page, expected, page.evaluate(LAST_BUT_ONE), 0)
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
            for part, run in (("first 3 s", first), ("last keyframe", end)):
                assert run["samples"], (stage.key, part)
                if run["empty"]:
                    found.append(f"{stage.key}, {part}: {len(run['empty'])} of {run['samples']} "
                                 f"samples blank, e.g. {run['empty'][:3]}")  # fmt: skip
    finally:
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
        cdp.detach()
    assert not found, "\n".join(found)


def test_the_probe_sees_the_blank_plotlys_transition_leaves(app_url, projector):
    """Plotly's animate, asked to move a scatter trace of the Forward page's figure without a
    redraw, drops every heatmap of the figure (its transition replots the animatable traces
    alone): the probe finds the grids blank, as the samples above would."""
    page = projector
    goto(page, f"{app_url}/Forward?preset=recitation-s2&pres=1&play=stills")
    page.evaluate(INSTALL)
    before = page.evaluate(DRAWN)
    assert "xy" in before
    page.evaluate(
        """() => { const gd = document.querySelector('.js-plotly-plot');
        const i = gd.data.findIndex(t => t.type === 'scatter');
        return Plotly.animate(gd, {data: [{x: gd.data[i].x}], traces: [i]},
          {frame: {duration: 0, redraw: false}, transition: {duration: 0}}); }"""
    )
    page.wait_for_function(f"() => !({DRAWN})().includes('xy')")

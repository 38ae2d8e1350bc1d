"""Latency of the app against the floor of the stack, measured in Chromium in one run.

Serves app.py and scripts/bare_page.py (one number input, one plotly heatmap) side by side on
free loopback ports and measures, interleaving app and bare page so that load hits both alike:

  (a) control change -> updated chart: the sidebar stride on /Forward?preset=recitation-s2
      (ArrowLeft/ArrowRight in turn) vs the bare page's number input (ArrowUp/ArrowDown);
  (b) output-cell click -> that cell's formula shown (the player jumps to its frame and shows
      its sum in the browser) on Forward vs the bare page's (a); (b') the same click -> the
      formula box under the chart (KaTeX, after the server's rerun of the page body);
  (c) a new browser context -> first plotly chart drawn, app vs bare page.

(a) and (b) are timed inside the page: from the input event's timestamp to the animation frame
in which the chart's data (or the formula's text) has changed. (c) is wall time from goto.
Prints median, min and max, the ratios app/bare and the load average. Asserts nothing.

With --timeline it prints instead where (a)'s time goes, per repetition, for app and bare page:
the ms from the key to the BackMsg sent, the first and the last ForwardMsg handled, the number of
React commits (a devtools hook) before the chart changed, and plotly's draws (start-end; the first
is the one (a) waits for).

Run: .venv/bin/python scripts/latency.py [--reps 10] [--timeline]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Error, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: this checkout's convviz
from convviz.render.plotly.adapter import probing  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
VIEWPORT = {"width": 1280, "height": 1400}
FORWARD = "/Forward?preset=recitation-s2"
TIMEOUT_MS = 60_000  # a cold first chart under heavy load
CHANGE_MS = 20_000  # a control change or a click that never shows is reported as lost

# The chart: the Forward animation's container if the page has one, else the first plotly chart.
CHART = """(document.querySelector('.st-key-chart_forward .js-plotly-plot')
  || document.querySelector('.js-plotly-plot'))"""
DRAWN = probing(f"""() => {{ const gd = {CHART};
  return !!(gd && cvPlotly.drawn(gd) && gd.querySelector('.main-svg')); }}""")
CHART_PRINT = probing(f"""() => {{ const gd = {CHART};
  return gd && cvPlotly.drawn(gd) ? JSON.stringify(gd.data) : null; }}""")
FORMULA_PRINT = (
    "() => Array.from(document.querySelectorAll('.katex')).map(e => e.textContent).join('|')"
)
# The player's formula line (inside its component's shadow root): a click shows the clicked cell's
# frame and formula in the browser, before the server's rerun redraws the formula box (KaTeX).
PLAYER_PRINT = """() => { const host = [...document.querySelectorAll('.st-key-player_forward *')]
  .find(e => e.shadowRoot);
  const f = host && host.shadowRoot.querySelector('[data-testid=player-formula]');
  return f ? f.textContent : null; }"""

# Arm a watcher: remember the fingerprint now and the timestamp of the next keydown/mousedown;
# window.__latency resolves with the ms from that event to the first animation frame in which
# the fingerprint differs (timed when that frame's callback runs). Rejects after CHANGE_MS so
# that a broken selector cannot hang us.
ARM = """([src, timeout, name = '__latency']) => {
  const fp = eval(src), before = fp();
  let t0 = null;
  const mark = e => { if (t0 === null) t0 = e.timeStamp; };
  window.addEventListener('keydown', mark, {capture: true, once: true});
  window.addEventListener('mousedown', mark, {capture: true, once: true});
  window[name] = new Promise((resolve, reject) => {
    const start = performance.now();
    const tick = () => {
      // performance.now(), not the frame's timestamp: after a long task that timestamp is the
      // frame's scheduled start, hundreds of ms before the change could be seen
      const now = performance.now();
      if (t0 !== null) { const f = fp(); if (f !== null && f !== before) return resolve(now - t0); }
      if (now - start > timeout) return reject(new Error('nothing changed'));
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}"""

# Page pixels and customdata of the clickable (invisible scatter) cells of the output panel y.
Y_CELLS = probing(f"""() => {{
  const gd = {CHART}, axis = (name, k) => k + 'axis' + (name || '').slice(1);
  return cvPlotly.traces(gd)
    .filter(t => t.customdata && t.customdata.length && t.customdata[0][0] === 'y')
    .flatMap(t => t.customdata.map((cd, i) => [cd[1], cd[2], ...cvPlotly.pagePoint(
      gd, axis(t.xaxis, 'x'), axis(t.yaxis, 'y'), t.x[i], t.y[i])]));
}}""")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
            return r.read() == b"ok"
    except OSError:
        return False


@contextlib.contextmanager
def streamlit(script: str):
    """`streamlit run script` on a free loopback port in its own process group; yields its URL."""
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true"]
    cmd += ["--server.address", "127.0.0.1", "--server.port", str(port)]
    cmd += ["--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            if healthy(url):
                break
            if proc.poll() is not None:
                raise RuntimeError(f"{script}: streamlit exited with {proc.returncode}")
            time.sleep(0.2)
        else:
            raise RuntimeError(f"{script}: streamlit did not answer on {url}")
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def timed(page: Page, print_js: str, act, also: str | None = None):
    """Seconds from the input event `act` causes until `print_js` of the page changes; with
    `also`, a pair: that and the seconds until `also` changes."""
    page.evaluate(ARM, [f"({print_js})", CHANGE_MS])
    if also:
        page.evaluate(ARM, [f"({also})", CHANGE_MS, "__latency2"])
    act()
    first = page.evaluate("() => window.__latency") / 1e3
    return (first, page.evaluate("() => window.__latency2") / 1e3) if also else first


def open_page(context, url: str) -> Page:
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    page.wait_for_function(DRAWN, polling="raf")
    return page


def cold(browser, url: str) -> float:
    """Seconds from goto in a new browser context until the first chart is drawn."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        start = time.perf_counter()
        page.goto(url, wait_until="commit", timeout=TIMEOUT_MS)
        page.wait_for_function(DRAWN, polling="raf", timeout=TIMEOUT_MS)
        return time.perf_counter() - start
    finally:
        context.close()


def take(times: dict[str, list[float]], name: str, fn, *args) -> None:
    """Append one sample (to names "p,q" a pair); a sample lost (a timeout under load, the app
    mid-edit) is reported."""
    try:
        sample = fn(*args)
    except Error as exc:
        print(f"{name}: sample lost: {str(exc).splitlines()[0]}", file=sys.stderr)
        return
    for key, value in zip(name.split(","), sample if "," in name else [sample]):
        times[key].append(value)


def measure(app_url: str, bare_url: str, reps: int) -> dict[str, list[float]]:
    names = ("a_app", "a_bare", "b_app", "b_box", "c_app", "c_bare")
    times: dict[str, list[float]] = {k: [] for k in names}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport=VIEWPORT)
        app = open_page(context, app_url + FORWARD)
        bare = open_page(context, bare_url)
        stride = app.locator("[data-testid='stSidebar'] input[type='range'][aria-label^='Stride']")
        number = bare.locator("input[type='number']")
        clicked = None
        for rep in range(reps):
            key = ("ArrowLeft", "ArrowRight")[rep % 2]  # recitation-s2: stride 2 -> 1 -> 2 ...

            def change_app(key=key):
                stride.first.focus()
                app.keyboard.press(key)

            def change_bare(key=("ArrowUp", "ArrowDown")[rep % 2]):
                number.focus()
                bare.keyboard.press(key)

            pair = [("a_app", app, change_app), ("a_bare", bare, change_bare)]
            for name, page, act in pair if rep % 2 == 0 else pair[::-1]:
                page.bring_to_front()
                take(times, name, timed, page, CHART_PRINT, act)
            # (b): click a y cell other than the one shown now: not the last clicked, not y[0, 0]
            # (the default formula) and not the last cell (the frame a page opens on)
            app.bring_to_front()
            cells = app.evaluate(Y_CELLS)
            shown = ((0, 0), clicked, max((c[0], c[1]) for c in cells))
            row, col, x, y = next(c for c in cells if (c[0], c[1]) not in shown)
            clicked = (row, col)

            def click(x=x, y=y):
                app.mouse.move(x, y)  # plotly picks the point on hover; the click selects it
                app.mouse.click(x, y)

            take(times, "b_app,b_box", timed, app, PLAYER_PRINT, click, FORMULA_PRINT)
            app.mouse.move(1, 1)
        context.close()
        for rep in range(reps):
            pair = [("c_app", app_url + FORWARD), ("c_bare", bare_url)]
            for name, url in pair if rep % 2 == 0 else pair[::-1]:
                take(times, name, cold, browser, url)
        browser.close()
    return times


# --timeline: logs, from the first document script on, what the page does (ms, performance.now()):
# websocket sends and messages, React commits, plotly draws (wrapped once plotly.js defines itself).
TIMELINE_INIT = """(() => {
  const log = window.__timeline = [];
  const at = (what, x) => log.push([performance.now(), what, x ?? 0]);
  window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = { supportsFiber: true, renderers: new Map(),
    inject: () => 1, onCommitFiberRoot: () => at('commit'), onCommitFiberUnmount() {},
    onPostCommitFiberRoot() {}, checkDCE() {} };
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (d) { at('send'); return send.call(this, d); };
  const Ws = WebSocket;
  window.WebSocket = function (...args) {
    const ws = new Ws(...args);
    ws.addEventListener('message', () => at('message'));
    return ws;
  };
  window.WebSocket.prototype = Ws.prototype;
  Object.assign(window.WebSocket, Ws);
  window.addEventListener('keydown', () => at('key'), {capture: true});
  let plotly;
  Object.defineProperty(window, 'Plotly', { configurable: true, get: () => plotly, set(P) {
    plotly = P;
    for (const name of ['react', 'newPlot']) {
      const draw = P[name];
      P[name] = function (...args) {
        const t = performance.now();
        const done = () => at('draw', [t, performance.now()]);
        const out = draw.apply(this, args);
        out && out.then ? out.then(done) : done();
        return out;
      };
    }
  } });
})()"""


def timeline(page: Page, act) -> str:
    """One change: where its time went (see the module's docstring)."""
    page.evaluate("() => { window.__timeline.length = 0; }")
    lat = timed(page, CHART_PRINT, act) * 1e3
    page.wait_for_timeout(500)  # the draws that follow
    log = page.evaluate("() => window.__timeline")
    t0 = next(t for t, what, _ in log if what == "key")
    ms = {what: [t - t0 for t, w, _ in log if w == what] for what in ("send", "message", "commit")}
    draws = ", ".join(f"{x[0] - t0:.0f}-{x[1] - t0:.0f}" for _, w, x in log if w == "draw")
    sent = ms["send"][0]
    msgs = [t for t in ms["message"] if t > sent]
    commits = sum(t <= lat for t in ms["commit"])
    return (
        f"{lat:4.0f} ms | sent {sent:3.0f} | messages {len(msgs):3d}, "
        f"{msgs[0]:3.0f}-{msgs[-1]:3.0f} | commits {commits:2d} | draws {draws}"
    )


def print_timeline(app_url: str, bare_url: str, reps: int) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(TIMELINE_INIT)
        app, bare = open_page(context, app_url + FORWARD), open_page(context, bare_url)
        stride = app.locator("[data-testid='stSidebar'] input[type='range'][aria-label^='Stride']")
        number = bare.locator("input[type='number']")
        for rep in range(reps):
            for name, page, field, keys in (
                ("app ", app, stride, ("ArrowLeft", "ArrowRight")),
                ("bare", bare, number, ("ArrowUp", "ArrowDown")),
            ):
                page.bring_to_front()

                def act(page=page, field=field, key=keys[rep % 2]):
                    field.first.focus()
                    page.keyboard.press(key)

                try:
                    print(f"(a) {name} {rep}: {timeline(page, act)}")
                except Error as exc:
                    print(f"(a) {name} {rep}: lost: {str(exc).splitlines()[0]}", file=sys.stderr)
        browser.close()


def stats(xs: list[float]) -> str:
    ms = [x * 1e3 for x in xs]
    if not ms:
        return "     no samples"
    return f"{statistics.median(ms):8.0f} ms  (min {min(ms):.0f}, max {max(ms):.0f}, n {len(ms)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=10, help="repetitions of each measurement")
    parser.add_argument("--timeline", action="store_true", help="where (a)'s time goes")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # still stop the servers
    load_before = os.getloadavg()
    with streamlit("app.py") as app_url, streamlit("scripts/bare_page.py") as bare_url:
        if args.timeline:
            return print_timeline(app_url, bare_url, args.reps)
        t = measure(app_url, bare_url, args.reps)
    load_after = os.getloadavg()
    rows = (
        ("(a) control change -> chart, app", "a_app"),
        ("(a) input change -> chart, bare", "a_bare"),
        ("(b) cell click -> its formula, app", "b_app"),
        ("(b') cell click -> formula box, app", "b_box"),
        ("(c) cold context -> first chart, app", "c_app"),
        ("(c) cold context -> first chart, bare", "c_bare"),
    )
    print(f"{args.reps} repetitions, Chromium, {FORWARD} vs scripts/bare_page.py")
    for label, key in rows:
        print(f"  {label:40}{stats(t[key])}")
    med = {k: statistics.median(v) if v else math.nan for k, v in t.items()}
    print("ratios app/bare (medians):")
    print(f"  (a) control change -> chart      {med['a_app'] / med['a_bare']:5.2f}")
    print(f"  (b) cell click -> its formula    {med['b_app'] / med['a_bare']:5.2f}")
    print(f"  (b') cell click -> formula box   {med['b_box'] / med['a_bare']:5.2f}")
    print(f"  (c) cold context -> first chart  {med['c_app'] / med['c_bare']:5.2f}")
    fmt = ", ".join
    print(f"load average before: {fmt(f'{x:.2f}' for x in load_before)}")
    print(f"load average after:  {fmt(f'{x:.2f}' for x in load_after)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Waiting on the live app in Chromium: for the state a test acts on, never for time.

One signal says the page is *settled*, and every browser test waits on it before it acts and
before it measures (`settled`, `goto`, `rerun`):

- Streamlit has no run in flight: its app root says `data-test-script-state="notRunning"` (and
  not "initial": a first run has ended) and no element is still marked stale (`data-stale`), so
  the last run has replaced every element, the sidebar (drawn last) included;
- no lazily loaded element is still a skeleton, and the fonts are loaded;
- the page is sized to this screen: the screen-size reporter (convviz/ui/viewport.js) says
  `fitted` (else it is about to ask for the one rerun that sizes the figures);
- every plotly chart is drawn (its SVG exists) and has its keyboard grid, made for the figure
  drawn (convviz/player/grid.js), and every player (convviz/player/player.js) drives a
  chart that carries its own frames, and shows the frame it is at (`shown()`: plotly's animate
  has finished drawing it; a transition in flight is not settled).

`rerun` is for an action that makes the server run the page (a control, a click that selects, a
button): it waits for the server's `script_finished` message of the run the action asked for (the
last one, if the run reran itself), then for the page to settle. A page merely at rest before the
run began is not mistaken for one that has drawn it: the run is seen on the websocket, not
guessed from the DOM.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator

from playwright.sync_api import Browser, Page, WebSocket, expect
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from convviz.render.plotly.adapter import probing

# A bound on how long a state may take to come, not a pause: every wait ends when its state is
# there. Generous because a failure here costs a whole CI run, and a 2-core machine shared with
# a benchmark draws a big layer's page in ~10 s.
SETTLE_MS = 60_000

SETTLED = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-stale="true"], [data-testid="stSkeleton"]')) return false;
  if (document.fonts.status !== 'loaded') return false;
  const reporter = document.querySelector('.st-key-cv_sidebar');
  if (reporter && document.body.dataset.cvViewport !== 'fitted') return false;
  const charts = [...document.querySelectorAll('.js-plotly-plot')];
  if (!charts.every(gd => gd.querySelector('.main-svg'))) return false;
  const grids = window.__convvizGrids;
  const walked = gd => {
    const g = grids && grids.charts.get(gd);
    return g && g.box.isConnected && g.data === gd.data && g.layout === gd.layout;
  };
  if (!charts.every(gd => !(gd.data || []).some(t => t.meta && t.meta.grid) || walked(gd))) {
    return false;
  }
  const players = window.__convviz ? [...window.__convviz.players.values()] : [];
  return players.every(p => {
    const gd = document.querySelector(`.st-key-${p.chart} .js-plotly-plot`);
    const meta = gd && gd.layout && gd.layout.meta && gd.layout.meta.player;
    return meta && meta.names.length === p.count && (!p.shown || p.shown() === p.current());
  });
}"""


# Page pixels of cell (row, col) on the given axes of the page's first plotly chart.
CELL_XY = probing("""([xa, ya, row, col]) =>
  cvPlotly.pagePoint(document.querySelector('.js-plotly-plot'), xa, ya, col, row)""")


def settled(page: Page, timeout: float = SETTLE_MS) -> None:
    """Wait until the page is settled (see the module's docstring)."""
    page.wait_for_function(SETTLED, timeout=timeout)


def is_settled(page: Page) -> bool:
    return page.evaluate(SETTLED)


def goto(page: Page, url: str, charts: int | None = None, timeout: float = SETTLE_MS) -> None:
    """Open url in a new session and wait until it is settled (sized to this screen: one rerun
    after the first); with `charts`, that it draws that many plotly charts."""
    page.goto(url)
    settled(page, timeout)
    if charts is not None:
        expect(page.locator(".js-plotly-plot")).to_have_count(charts, timeout=timeout)


def _finished(payload: str | bytes) -> bool:
    """Whether a websocket frame from the server says a run (or a fragment's) has ended; not one
    stopped to run again (st.rerun, st.switch_page, a newer request): the next run follows it,
    and between the two Streamlit says "notRunning" with nothing stale."""
    if not isinstance(payload, bytes) or len(payload) > 512:  # the message is a few bytes
        return False
    try:
        msg = ForwardMsg.FromString(payload)
    except Exception:  # another small frame that is not a ForwardMsg
        return False
    return (
        msg.WhichOneof("type") == "script_finished"
        and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
    )


def asks_for_a_run(payload: str | bytes) -> bool:
    """Whether a websocket frame the browser sent asks the server for a run."""
    if not isinstance(payload, bytes):
        return False
    return BackMsg.FromString(payload).WhichOneof("type") == "rerun_script"


def _socket(page: Page) -> WebSocket:
    """The page's open Streamlit websocket (`watch_sockets` keeps it)."""
    sockets = [ws for ws in getattr(page, "_cv_sockets", []) if not ws.is_closed()]
    if not sockets:
        raise RuntimeError("no open Streamlit websocket: was the page opened with watch_sockets?")
    return sockets[-1]


def watch_sockets(page: Page) -> Page:
    """Keep the page's Streamlit websockets, for `rerun` (call once, before the first goto)."""
    page._cv_sockets = []  # type: ignore[attr-defined]
    page.on(
        "websocket",
        lambda ws: page._cv_sockets.append(ws) if "/_stcore/stream" in ws.url else None,
    )
    return page


def open_tab(browser: Browser, **context_args) -> Page:
    """A page in a new context (e.g. a screen's size) that keeps its Streamlit websockets; close
    it with `page.context.close()`."""
    page = browser.new_context(**context_args).new_page()
    page.set_default_timeout(SETTLE_MS)
    return watch_sockets(page)


@contextlib.contextmanager
def rerun(page: Page, timeout: float = SETTLE_MS) -> Iterator[None]:
    """Around an action that makes the server run the page: act once the page is settled, then
    wait for the end of the run it asked for and for the page to settle again."""
    settled(page, timeout)
    with _socket(page).expect_event("framereceived", predicate=_finished, timeout=timeout):
        yield
    settled(page, timeout)


def act(page: Page, action: Callable[[], object], timeout: float = SETTLE_MS) -> None:
    """`action()` inside `rerun`."""
    with rerun(page, timeout):
        action()


# Arms a one-off listener for plotly's hover on the chart at page pixel (x, y).
_ARM_HOVER = """([x, y]) => {
  window.__cvHovered = false;
  const gd = document.elementFromPoint(x, y).closest('.js-plotly-plot');
  gd.once('plotly_hover', () => { window.__cvHovered = true; });
}"""


def hover(page: Page, x: float, y: float) -> None:
    """Move the pointer to page pixel (x, y), on a chart, and wait until plotly has picked the
    point there (a click selects the point the last hover picked)."""
    page.mouse.move(1, 1)  # off the chart: the move onto the point is a new hover
    page.evaluate(_ARM_HOVER, [x, y])
    page.mouse.move(x, y)
    page.wait_for_function("() => window.__cvHovered")


def warm(url: str, timeout: float = 180.0) -> None:
    """Run the app's first page once in the server over its websocket, as a browser would, so
    the imports and the first layer's caches are paid before the first test (a cold server took
    up to 33 s for its first chart on 2 busy cores)."""
    from websockets.asyncio.client import connect

    async def once() -> None:
        stream = url.replace("http://", "ws://") + "/_stcore/stream"
        opts = {"max_size": None, "ping_interval": None, "subprotocols": ["streamlit"]}
        async with connect(stream, **opts) as ws:
            msg = BackMsg()
            msg.rerun_script.query_string = ""
            await ws.send(msg.SerializeToString())
            async with asyncio.timeout(timeout):
                while ForwardMsg.FromString(await ws.recv()).WhichOneof("type") != (
                    "script_finished"
                ):
                    pass

    asyncio.run(once())

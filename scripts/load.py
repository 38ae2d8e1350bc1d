"""Load test: N concurrent Streamlit sessions, a class exploring, against 127.0.0.1 only.

Run: .venv/bin/python scripts/load.py --sessions 50 --duration 60    (`make load`: 10, then 50)
     .venv/bin/python scripts/load.py --bare --sessions 50            the floor: a bare page
     .venv/bin/python scripts/load.py --through http://127.0.0.1:8080 --sessions 100
                                                  a running hall (deploy/hall.py) through nginx

Each session is one browser tab speaking Streamlit's websocket protocol (/_stcore/stream, the
protobufs that ship with streamlit): it loads the page's HTML (and so its nginx affinity
cookie), opens the websocket and runs the page with its query string; then, every --think
seconds, it does what a student does, by default a mix (`--mix class`): a new seed, another
stride, padding or kernel size, another preset, a click on a cell of a chart, a switch to
another page (of --pages). Each session keeps its own values: a leak is a run whose URL
(page_info_changed) or widget holds a value this session never had; a lost change, one whose URL
still holds what it had before (the app dropped the change). `--control LABEL` changes
that one control on --page instead (the old harness); `--bare` runs scripts/bare_page.py (one
number input, one plotly heatmap: what Streamlit itself costs per rerun) and changes its number.

Latency = BackMsg sent → script_finished. First load = the HTML's GET → the first run's end
(first chart: → its first plotly chart). `--arrive S` spreads the sessions' first loads over S
seconds (default: all at once). Through nginx, a session whose websocket closes (its process
died) reconnects as the browser does and rebuilds its view from its URL (a reconnect, counted;
checked for leaks like every run). Server CPU-seconds come from /proc: the server this script
started, or the processes in the hall's pid file (--pids). Errors: exception elements, failed
runs, timeouts, closed sockets, tracebacks in the server's log. Bounded: at most 200 sessions,
600 s, 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: this checkout's convviz
from convviz.presets import PRESETS_BY_KEY  # noqa: E402
from convviz.spec import ConvSpecError  # noqa: E402
from convviz.state import from_query, spec_of  # noqa: E402

HOST = "127.0.0.1"
LOOPBACK = ("127.0.0.1", "localhost")
MAX_SESSIONS, MAX_DURATION = 200, 600.0
WS_OPTS = {"max_size": None, "ping_interval": None}  # no client pings: a busy server is data
HALL_PIDS = ROOT / "deploy" / "run" / "hall.pids"
CLASS_PAGES = ("", "Forward", "Input_gradient", "Weight_gradient", "Channels", "Matrix")
# What a student does between two looks, and how often (weights).
ACTIONS = {"seed": 30, "stride": 15, "padding": 10, "kernel": 10, "preset": 10}
ACTIONS |= {"click": 15, "page": 10}
TITLE_TO_PRESET = {p.title: key for key, p in PRESETS_BY_KEY.items()}
RECONNECT_TRIES = 6


class Server:
    """`streamlit run <script>` on a free local port, in its own process group; always stopped."""

    def __init__(self, script: str = "app.py") -> None:
        with socket.socket() as sock:
            sock.bind((HOST, 0))
            self.port = sock.getsockname()[1]
        fd, self.log = tempfile.mkstemp(prefix="convviz-load-", suffix=".log")
        cmd = [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true"]
        cmd += ["--server.address", HOST, "--server.port", str(self.port)]
        cmd += ["--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=fd, stderr=subprocess.STDOUT, start_new_session=True
        )
        os.close(fd)
        self.base = f"http://{HOST}:{self.port}"

    def wait_ready(self, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"{self.base}/_stcore/health") as r:
                    if r.read() == b"ok":
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not start:\n{self.log_text()[-2000:]}")

    def log_text(self) -> str:
        return Path(self.log).read_text(errors="replace")

    def pids(self) -> dict[str, list[int]]:
        return {"streamlit": [self.proc.pid], "nginx": []}

    def stop(self) -> None:
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
                try:
                    os.killpg(self.proc.pid, sig)
                    self.proc.wait(wait)
                    break
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    continue
        Path(self.log).unlink(missing_ok=True)


class Hall:
    """A hall that runs already (deploy/hall.py): its address, and its processes from its pid
    file (read again at each sample: a restarted process has a new pid)."""

    def __init__(self, url: str, pids: Path) -> None:
        self.base, self.pid_file = url.rstrip("/"), pids

    def wait_ready(self) -> None:
        with urllib.request.urlopen(f"{self.base}/_stcore/health", timeout=10) as r:
            if r.read() != b"ok":
                raise RuntimeError(f"{self.base} does not answer")

    def log_text(self) -> str:
        logs = sorted(self.pid_file.parent.glob("streamlit-*.log"))
        return "\n".join(p.read_text(errors="replace") for p in logs)

    def pids(self) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {"streamlit": [], "nginx": []}
        with contextlib.suppress(OSError):
            for line in self.pid_file.read_text().splitlines():
                role, _, pid = line.split()
                if role in found:
                    found[role].append(int(pid))
        return found

    def stop(self) -> None:
        pass


def tree(pid: int) -> list[int]:
    """The pid and its live descendants."""
    pids, i = [pid], 0
    while i < len(pids):
        for task in Path(f"/proc/{pids[i]}/task").glob("*"):
            with contextlib.suppress(OSError):
                pids += [int(c) for c in (task / "children").read_text().split()]
        i += 1
    return pids


def proc_stats(pid: int) -> tuple[int, float]:
    """(VmHWM in kB, user+system CPU seconds) of one process; zeros if it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0, 0.0
    hwm = next(
        (int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM")), 0
    )
    return hwm, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_of(server, role: str) -> dict[int, float]:
    """CPU seconds of each live process (and its children) of one role, by pid."""
    return {p: proc_stats(p)[1] for top in server.pids()[role] for p in tree(top)}


def spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two readings (a process gone since counts up to `before`)."""
    return sum(after.get(p, c) - c for p, c in before.items()) + sum(
        c for p, c in after.items() if p not in before
    )


def quantile(values: list[float], q: float) -> float | None:
    return values[min(len(values) - 1, int(q * len(values)))] if values else None


class Session:
    """One browser tab: a websocket, its page's widgets and charts, the values it set."""

    def __init__(self, idx: int, base: str, args: argparse.Namespace, events) -> None:
        self.idx, self.base, self.args, self.events = idx, base, args, events
        self.rng = random.Random(args.seed * 1000 + idx)
        self.latencies: list[float] = []
        self.actions: list[str] = []  # what each timed run was (beside its latency)
        self.errors: list[str] = []
        self.leaks: list[str] = []
        self.lost: list[str] = []
        self.had: dict[str, set[str]] = {}  # every value this session's URL has held
        self.history: list[str] = []  # what it did, for the messages
        self.reconnects = 0
        self.first_load: float | None = None
        self.first_chart: float | None = None
        self.cookie = ""  # nginx's affinity cookie (none without nginx)
        self.page_hash = ""
        self.pages: dict[str, str] = {}  # url path → page script hash (from `navigation`)
        self.page = args.page if args.mix == "control" else self.rng.choice(args.pages)
        self.query = args.query  # the URL's query as the server last wrote it
        self.expect: dict[str, str] = {}  # URL fields this session set, and their values
        self.widgets: dict[str, tuple[str, object, str]] = {}  # label → (kind, proto, fragment)
        self.charts: dict[str, tuple[object, str]] = {}  # chart key → (proto, fragment)
        # hash → (message, the run it was last used in), like the browser's cache: it forgets a
        # message unused for more than 2 runs (global.maxCachedMessageAge)
        self.cache: dict[str, tuple[ForwardMsg, int]] = {}
        self.runs = 0
        self.ws = None

    # --- the wire

    async def get_html(self) -> None:
        """GET the page as a browser's address bar does: its HTML, and nginx's affinity cookie."""
        parts = urlsplit(self.base)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
        try:
            path = f"/{quote(self.page)}?{self.query}"
            head = [f"GET {path} HTTP/1.1", f"Host: {parts.netloc}", "Connection: close"]
            head += ["User-Agent: convviz-load"]
            head += [f"Cookie: convviz_affinity={self.cookie}"] if self.cookie else []
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
        status = raw.split(b"\r\n", 1)[0].decode(errors="replace")
        if " 200 " not in status + " ":
            raise ConnectionError(f"GET {self.page}: {status}")
        for line in raw.split(b"\r\n\r\n", 1)[0].decode(errors="replace").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "set-cookie" and value.strip().startswith("convviz_affinity="):
                self.cookie = value.strip().split(";")[0].split("=", 1)[1]

    async def open(self) -> None:
        """Load the page: its HTML (and nginx's pin), then its websocket."""
        parts = urlsplit(self.base)
        await self.get_html()
        headers = {"Cookie": f"convviz_affinity={self.cookie}"} if self.cookie else {}
        self.ws = await connect(
            f"ws://{parts.netloc}/_stcore/stream", subprotocols=["streamlit"],
            origin=f"http://{parts.netloc}", additional_headers=headers, **WS_OPTS,
        )  # fmt: skip

    async def rerun(
        self, widgets=(), page_name: str = "", page_hash: str | None = None, fragment: str = ""
    ) -> dict:
        """Send a rerun_script BackMsg; read until script_finished; return what came back."""
        msg = BackMsg()
        run = msg.rerun_script
        run.query_string, run.page_name = self.query, page_name
        run.page_script_hash = self.page_hash if page_hash is None else page_hash
        run.fragment_id = fragment
        run.widget_states.widgets.extend(widgets)
        run.cached_message_hashes.extend(self.cache)
        if not fragment:  # a full run draws every widget again; a fragment only its own
            self.widgets.clear()
            self.charts.clear()
        seen: dict = {"query": None, "values": {}, "refused": "", "charts": 0}
        start = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        async with asyncio.timeout(self.args.timeout):
            while True:
                fwd = ForwardMsg.FromString(await self.ws.recv())
                if fwd.HasField("ref_hash"):
                    fwd = self.cache[fwd.ref_hash][0]
                if fwd.metadata.cacheable:
                    self.cache[fwd.hash] = (fwd, self.runs)
                kind = fwd.WhichOneof("type")
                if kind == "navigation":
                    self.page_hash = fwd.navigation.page_script_hash
                    self.pages = {
                        p.url_pathname: p.page_script_hash for p in fwd.navigation.app_pages
                    }
                elif kind == "page_info_changed":
                    seen["query"] = fwd.page_info_changed.query_string
                elif kind == "session_event" and fwd.session_event.HasField(
                    "script_compilation_exception"
                ):
                    self.errors.append("compile error")
                elif kind == "delta" and fwd.delta.HasField("new_element"):
                    self.element(fwd.delta.new_element, fwd.delta.fragment_id, seen, start)
                elif kind == "script_finished":
                    if fwd.script_finished not in (0, 3):
                        self.errors.append(f"script_finished={fwd.script_finished}")
                    self.runs += 1
                    self.cache = {h: e for h, e in self.cache.items() if self.runs - e[1] <= 2}
                    seen["latency"] = time.perf_counter() - start
                    if seen["query"] is not None:
                        self.query = seen["query"]
                    return seen

    def element(self, element, fragment: str, seen: dict, start: float) -> None:
        kind = element.WhichOneof("type")
        proto = getattr(element, kind)
        if kind == "exception":
            self.errors.append(f"{proto.type}: {proto.message}"[:200])
        elif kind == "alert" and "Cannot compute this layer" in proto.body:
            seen["refused"] = proto.body[:200]
        elif kind == "plotly_chart":
            seen["charts"] += 1
            if "first_chart" not in seen:
                seen["first_chart"] = time.perf_counter() - start
            if proto.id and "-chart_" in proto.id:  # a chart whose cell clicks select
                # by its key: its id changes with its figure (a click redraws the selection)
                self.charts[proto.id.split("-", 2)[-1]] = (proto, fragment)
        elif getattr(proto, "id", "") and getattr(proto, "label", ""):
            self.widgets[proto.label] = (kind, proto, fragment)
            if kind in ("slider", "number_input") and proto.set_value:
                seen["values"][proto.id] = list(proto.value) if kind == "slider" else [proto.value]

    # --- what a student does

    def state(self) -> dict:
        return from_query({k: v[0] for k, v in parse_qs(self.query).items()})[0]

    def fits(self, **change) -> bool:
        """Whether the layer with `change` is one the app computes (else it would refuse it)."""
        try:
            spec_of(self.state() | change)
        except (ConvSpecError, KeyError, TypeError, ValueError):
            return False
        return True

    def widget(self, *labels: str) -> tuple[str, object, str]:
        for label in labels:
            if label in self.widgets:
                return self.widgets[label]
        raise LookupError(f"no control labelled {' or '.join(map(repr, labels))} on {self.page!r}")

    def number(self, label: str, value: int, *also: str):
        """The widget state that sets a slider or number input (found by its label)."""
        kind, proto, _ = self.widget(label, *also)
        state = BackMsg().rerun_script.widget_states.widgets.add()
        state.id = proto.id
        if kind == "slider":
            state.double_array_value.data.append(value)
        elif kind == "number_input":
            state.int_value = value
        else:
            raise ValueError(f"control {label!r} is a {kind}; use a slider or number input")
        return state

    def choice(self, label: str, option: str):
        kind, proto, _ = self.widget(label)
        if kind != "selectbox":
            raise ValueError(f"control {label!r} is a {kind}, not a selectbox")
        state = BackMsg().rerun_script.widget_states.widgets.add()
        state.id, state.string_value = proto.id, option
        return state

    def pick(self, options: list):
        """A random one of `options`; LookupError if there is none (another action is taken)."""
        if not options:
            raise LookupError("nothing to choose from")
        return self.rng.choice(options)

    def plan(self, action: str) -> tuple[dict, dict]:
        """(rerun keyword arguments, URL fields it must leave) for one action; LookupError when
        this page has no such control."""
        now, rng = self.state(), self.rng
        if action == "seed":
            value = rng.randrange(1_000_000)
            return {"widgets": [self.number("Seed", value)]}, {"seed": str(value)}
        if action == "stride":
            values = [v for v in range(1, 5) if v != now["sh"] and self.fits(sh=v, sw=v)]
            value = self.pick(values)
            return {"widgets": [self.number("Stride", value, "Stride (rows)")]}, {"sh": str(value)}
        if action == "padding":
            kinds = [k for k in ("explicit", "valid", "same", "full") if k != now["pad"]]
            value = self.pick([k for k in kinds if self.fits(pad=k)])
            return {"widgets": [self.choice("Padding", value)]}, {"pad": value}
        if action == "kernel":
            name, label = rng.choice((("kH", "Kernel height"), ("kW", "Kernel width")))
            values = [v for v in range(1, 6) if v != now[name] and self.fits(**{name: v})]
            value = self.pick(values)
            return {"widgets": [self.number(label, value)]}, {name: str(value)}
        if action == "preset":
            _, proto, _ = self.widget("Preset")
            titles = [t for t in proto.options if t in TITLE_TO_PRESET]
            title = self.pick([t for t in titles if TITLE_TO_PRESET[t] != now["preset"]])
            return {"widgets": [self.choice("Preset", title)]}, {"preset": TITLE_TO_PRESET[title]}
        if action == "click":
            return self.click()
        if action == "page":
            page = self.pick([p for p in self.args.pages if p != self.page and p in self.pages])
            self.page = page
            return {"page_hash": self.pages[page]}, {}
        raise ValueError(action)

    def click(self) -> tuple[dict, dict]:
        """A click on a random cell of a random selectable chart (its customdata [key, r, c])."""
        charts = list(self.charts.items())
        self.rng.shuffle(charts)
        for _, (proto, fragment) in charts:
            spec = json.loads(proto.spec)
            points = [
                (i, j, data)
                for i, trace in enumerate(spec.get("data", []))
                for j, data in enumerate(trace.get("customdata") or [])
                if isinstance(data, list) and len(data) == 3 and not isinstance(data[0], list)
            ]
            if not points:
                continue
            curve, point, data = self.rng.choice(points)
            event = {"points": [{"curve_number": curve, "point_number": point}]}
            event["points"][0] |= {"point_index": point, "customdata": data}
            event |= {"point_indices": [point], "box": [], "lasso": []}
            state = BackMsg().rerun_script.widget_states.widgets.add()
            state.id, state.string_value = proto.id, json.dumps({"selection": event})
            return {"widgets": [state], "fragment": fragment}, {"sel": ":".join(map(str, data))}
        raise LookupError(f"no chart with clickable cells on {self.page!r}")

    def choose(self) -> str:
        if self.args.mix == "control":
            return "control"
        names = list(ACTIONS)
        return self.rng.choices(names, [ACTIONS[n] for n in names])[0]

    def control(self) -> tuple[dict, dict]:
        """The single control of `--control` (or the bare page's number): a new value."""
        kind, proto, _ = self.widget(self.args.control)
        if kind not in ("slider", "number_input"):
            raise ValueError(f"control {self.args.control!r} is a {kind}; use a slider or number")
        now = int(proto.value[0] if kind == "slider" else proto.value)
        lo, hi = int(proto.min), min(int(proto.max), int(proto.min) + 999)
        value = self.rng.choice([v for v in range(lo, hi + 1) if v != now])
        state = self.number(self.args.control, value)
        key = state.id.split("-", 2)[-1]
        return {"widgets": [state]}, ({key[2:]: str(value)} if key.startswith("w_") else {})

    # --- checks

    def check(self, seen: dict, widgets=(), strict: bool = False) -> None:
        """Every URL field this session set holds its value; a number it set is the widget's.

        A wrong value is a leak when this session never had it (another session's value, or
        one from nowhere), a lost change when it is one this session had before (or none):
        the app dropped the change. Both are bugs; they are counted apart. `strict`: every wrong
        value is a leak (a view rebuilt from its URL after a reconnect must be that URL's).
        """
        query = parse_qs(self.query)
        wrong = {k: query.get(k, ["<none>"])[0] for k, v in self.expect.items()}
        wrong = {k: got for k, got in wrong.items() if got != self.expect[k]}
        for state in widgets:
            sent = state.int_value if state.HasField("int_value") else None
            if state.HasField("double_array_value"):
                sent = state.double_array_value.data[0]
            got = seen["values"].get(state.id)
            if sent is not None and got is not None and [int(v) for v in got] != [int(sent)]:
                wrong[state.id.split("-", 2)[-1]] = f"widget {got}"
        for k, got in wrong.items():
            said = f"session {self.idx} on {self.page!r}: set {k}={self.expect.get(k, '?')}"
            said += f", got {got} (after {' → '.join(self.history[-3:])})"
            mine = not strict and (got == "<none>" or got in self.had.get(k, ()))
            (self.lost if mine else self.leaks).append(said[:300])
        for k, values in query.items():  # what this session's URL has held
            self.had.setdefault(k, set()).update(values)

    def log(self, **event) -> None:
        if self.events is not None:
            self.events.write(json.dumps({"t": time.time(), "session": self.idx} | event) + "\n")
            self.events.flush()  # read while the load runs (tests/test_hall.py)

    # --- the session

    async def first(self) -> None:
        start = time.perf_counter()
        await self.open()
        seen = await self.rerun(page_name=self.page)
        self.first_load = time.perf_counter() - start
        self.check(seen)  # nothing set yet: notes what the URL holds
        if "first_chart" in seen:
            self.first_chart = self.first_load - seen["latency"] + seen["first_chart"]
        self.log(kind="first", page=self.page, latency=self.first_load)

    async def reconnect(self, why: Exception) -> None:
        """The websocket closed (its process died): open the page again, as the browser does,
        on whichever process nginx sends it to, with the state its URL holds."""
        self.reconnects += 1
        self.log(kind="closed", why=type(why).__name__)
        for attempt in range(RECONNECT_TRIES):
            with contextlib.suppress(Exception):
                await self.ws.close()
            try:
                await self.open()
                seen = await self.rerun(page_hash=self.pages.get(self.page, self.page_hash))
                self.check(seen, strict=True)
                self.log(
                    kind="reconnected", attempt=attempt, latency=seen["latency"], pin=self.cookie
                )
                return
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError):
                await asyncio.sleep(min(4.0, 0.25 * 2**attempt))
        raise ConnectionError(f"session {self.idx} could not reconnect after {why!r}")

    async def step(self) -> None:
        action = self.choose()
        if action == "control":
            kwargs, expect = self.control()
        else:
            try:
                kwargs, expect = self.plan(action)
            except LookupError:  # this page has no such control (the Matrix view: no chart)
                kwargs, expect, action = (*self.plan("seed"), "seed")
        if action not in ("click", "page", "control"):
            self.expect.pop("preset", None)  # any other control makes the layer 'custom'
        if action in ("stride", "padding", "kernel", "preset"):
            self.expect.pop("sel", None)  # a cell of a grid the new shapes have no more
        if action == "preset":
            self.expect.clear()  # a preset sets every field
        widgets = kwargs.get("widgets", ())
        self.history.append(f"{action} {expect}" if expect else action)
        seen = await self.rerun(**kwargs)
        if seen["refused"]:  # chosen to fit (`fits`): a refusal is the app's or this script's
            self.errors.append(f"refused {expect}: {seen['refused']}"[:200])
            return
        self.expect |= expect
        self.latencies.append(seen["latency"])
        self.actions.append(action)
        self.log(kind=action, latency=seen["latency"])
        self.check(seen, widgets)

    async def run(self, loaded: asyncio.Barrier, go: asyncio.Event, window: dict) -> None:
        """Arrive, load the page, wait until every session has, then explore until the end."""
        args = self.args
        try:
            try:
                await asyncio.sleep(self.idx * args.arrive / max(1, args.sessions))
                await self.first()
                if args.mix == "control" and args.control not in self.widgets:
                    raise LookupError(f"no control labelled {args.control!r} on {self.page!r}")
            finally:
                await loaded.wait()
                await go.wait()
            while True:
                think = self.rng.uniform(*args.think)
                if time.monotonic() + think >= window["deadline"]:
                    break
                await asyncio.sleep(think)
                try:
                    await self.step()
                except (ConnectionClosed, OSError) as exc:
                    if not args.through:
                        raise
                    await self.reconnect(exc)
        except Exception as exc:  # a timeout, a closed socket, a missing control: all errors
            self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
        finally:
            if self.ws is not None:
                await self.ws.close()


async def sample(server, peaks: dict, stop: asyncio.Event) -> None:
    """Every 0.5 s: each server process's VmHWM (kept at its maximum) and the load average."""
    while True:
        for top in server.pids()["streamlit"]:
            for p in tree(top):
                peaks[p] = max(peaks.get(p, 0), proc_stats(p)[0])
        peaks["load"] = max(peaks.get("load", 0.0), os.getloadavg()[0])
        if stop.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


def own_cpu() -> float:
    return sum(resource.getrusage(resource.RUSAGE_SELF)[:2])


async def drive(server, args: argparse.Namespace, events=None) -> dict:
    """Warm up (optional), open the sessions, then the timed window; the figures."""
    if args.warmup:
        warm = Session(-1, server.base, args, None)
        await warm.first()
        await warm.ws.close()
    sessions = [Session(i, server.base, args, events) for i in range(args.sessions)]
    peaks: dict = {}
    stop, go, window = asyncio.Event(), asyncio.Event(), {}
    sampler = asyncio.create_task(sample(server, peaks, stop))
    load0, client0 = os.getloadavg()[0], own_cpu()
    loaded = asyncio.Barrier(args.sessions + 1)
    runs = asyncio.gather(*(s.run(loaded, go, window) for s in sessions))
    await asyncio.wait_for(loaded.wait(), args.arrive + args.timeout + 10)  # every first load
    client1 = own_cpu()
    cpu0, nginx0 = cpu_of(server, "streamlit"), cpu_of(server, "nginx")
    start = time.monotonic()
    window["deadline"] = start + args.duration
    go.set()
    await asyncio.wait_for(runs, args.duration + args.timeout * 2 + 30)
    wall = time.monotonic() - start
    cpu = spent(cpu0, cpu_of(server, "streamlit"))
    nginx = spent(nginx0, cpu_of(server, "nginx"))
    client = own_cpu() - client1
    stop.set()
    await sampler
    lat = sorted(x for s in sessions for x in s.latencies)
    firsts = sorted(s.first_load for s in sessions if s.first_load is not None)
    charts = sorted(s.first_chart for s in sessions if s.first_chart is not None)
    by_action: dict[str, list[float]] = {}
    for s in sessions:
        for action, latency in zip(s.actions, s.latencies):
            by_action.setdefault(action, []).append(latency)
    errors = [e for s in sessions for e in s.errors]
    errors += [f"server log: {x}" for x in server.log_text().splitlines() if "Traceback" in x]
    return {
        "sessions": args.sessions,
        "mode": "bare" if args.bare else args.mix,
        "through": args.through or "its own server",
        "window_s": round(wall, 1),
        "reruns": len(lat),
        "fewest_reruns_per_session": min(len(s.latencies) for s in sessions),
        "p50_s": statistics.median(lat) if lat else None,
        "p95_s": quantile(lat, 0.95),
        "p99_s": quantile(lat, 0.99),
        "max_s": lat[-1] if lat else None,
        "first_load_p50_s": quantile(firsts, 0.5),
        "first_load_p95_s": quantile(firsts, 0.95),
        "first_load_max_s": firsts[-1] if firsts else None,
        "first_chart_max_s": charts[-1] if charts else None,
        "client_cpu_first_loads_s": client1 - client0,
        "throughput_per_s": len(lat) / wall,
        "server_cpu_per_rerun_s": cpu / len(lat) if lat else None,
        "server_cpu_cores": cpu / wall,
        "nginx_cpu_s": nginx,
        "peak_rss_mb": sum(v for k, v in peaks.items() if k != "load") / 1024,
        "load_avg_before": load0,
        "load_avg_peak": peaks["load"],
        "load_avg_after": os.getloadavg()[0],
        "client_cpu_s": client,
        "client_cpu_cores": client / wall,
        "client_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "p50_p95_by_action_s": {
            k: [len(v), round(statistics.median(v), 3), round(quantile(sorted(v), 0.95), 3)]
            for k, v in sorted(by_action.items())
        },
        "errors": len(errors),
        "leaks": sum(len(s.leaks) for s in sessions),
        "lost_changes": sum(len(s.lost) for s in sessions),
        "reconnects": sum(s.reconnects for s in sessions),
        "error_samples": sorted(set(errors))[:5],
        "leak_samples": [x for s in sessions for x in s.leaks][:5],
        "lost_samples": [x for s in sessions for x in s.lost][:5],
    }


def report(r: dict) -> str:
    """One figure a line (names carry the unit: _s seconds, _mb megabytes)."""
    return "\n".join(f"{k:26} {round(v, 3) if isinstance(v, float) else v}" for k, v in r.items())


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10, help="concurrent sessions (default 10)")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    ap.add_argument(
        "--think",
        type=float,
        nargs=2,
        default=(2.0, 6.0),
        metavar=("MIN", "MAX"),
        help="random pause before each change, seconds (default 2 6)",
    )
    ap.add_argument(
        "--mix",
        choices=("class", "control"),
        default="class",
        help="class: each session does a mix of what students do, on --pages (default);\n"
        "control: each changes --control on --page",
    )
    ap.add_argument(
        "--pages",
        type=lambda s: [p.strip("/") for p in s.split(",")],
        default=list(CLASS_PAGES),
        help="the pages (URL paths) the class opens and switches between\n"
        f"(default {','.join(CLASS_PAGES)}; '' is the Overview)",
    )
    ap.add_argument("--page", default="Forward", help="--mix control: the page (default Forward)")
    ap.add_argument("--control", help="the slider/number to change (implies --mix control)")
    ap.add_argument("--query", default="preset=recitation-s2", help="the page's query string")
    ap.add_argument(
        "--bare", action="store_true", help="the floor: scripts/bare_page.py, its number changed"
    )
    ap.add_argument(
        "--through",
        metavar="URL",
        help="drive a running hall (deploy/hall.py) at this address, e.g. http://127.0.0.1:8080,\n"
        "instead of a server of its own; 'nginx' means http://127.0.0.1:8080",
    )
    ap.add_argument(
        "--pids",
        type=Path,
        default=HALL_PIDS,
        help=f"--through: the hall's pid file, for its CPU and memory (default {HALL_PIDS})",
    )
    ap.add_argument(
        "--arrive", type=float, default=0.0, help="spread the first loads over S seconds (0)"
    )
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds allowed per rerun")
    ap.add_argument("--seed", type=int, default=0, help="random seed of the think times/values")
    ap.add_argument(
        "--warmup", action="store_true", help="open the page once before the burst of sessions"
    )
    ap.add_argument("--events", type=Path, help="write every run as a JSON line to this file")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = ap.parse_args(argv)
    if not (1 <= args.sessions <= MAX_SESSIONS and 0 < args.duration <= MAX_DURATION):
        ap.error(f"--sessions must be 1..{MAX_SESSIONS}, --duration 0..{MAX_DURATION}")
    if not 0 <= args.think[0] <= args.think[1]:
        ap.error("--think needs 0 <= MIN <= MAX")
    if not 0 <= args.arrive <= MAX_DURATION:
        ap.error(f"--arrive must be 0..{MAX_DURATION}")
    if args.through == "nginx":
        args.through = "http://127.0.0.1:8080"
    if args.through and urlsplit(args.through).hostname not in LOOPBACK:
        ap.error("--through: this harness sends load to 127.0.0.1 only")
    if args.bare:
        args.mix, args.control, args.page, args.query = "control", "Number", "", ""
    if args.control:
        args.mix = "control"
    args.control = args.control or "Stride"
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally below
    if args.through:
        server = Hall(args.through, args.pids)
    else:
        server = Server("scripts/bare_page.py" if args.bare else "app.py")
    events = open(args.events, "w") if args.events else None  # noqa: SIM115
    try:
        server.wait_ready()
        result = asyncio.run(drive(server, args, events))
    finally:
        server.stop()
        if events is not None:
            events.close()
    print(json.dumps(result) if args.json else report(result))
    return 1 if result["errors"] or result["leaks"] or result["lost_changes"] else 0


if __name__ == "__main__":
    sys.exit(main())

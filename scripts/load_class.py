"""The class of scripts/load.py: what each session does, as a student exploring would.

A `Session` is a `Tab` (scripts/load_wire.py) with its own random choices: it arrives, loads
its page, then every --think seconds makes a change (`ACTIONS`: a seed, a stride, a padding, a
kernel size, a preset, a click on a cell of a chart, another page; or the one --control), and
checks what came back against the values it set (a leak, a lost change). Through nginx it
reconnects when its websocket closes. It writes each run as a JSON line to --events.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import time
from urllib.parse import parse_qs

from load_wire import Tab, sent
from streamlit.proto.BackMsg_pb2 import BackMsg
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from convviz.engine.spec import ConvSpecError
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import from_query, spec_of

CLASS_PAGES = ("", "Forward", "Input_gradient", "Weight_gradient", "Channels", "Matrix")
# What a student does between two looks, and how often (weights).
ACTIONS = {"seed": 30, "stride": 15, "padding": 10, "kernel": 10, "preset": 10}
ACTIONS |= {"click": 15, "page": 10}
TITLE_TO_PRESET = {p.title: key for key, p in PRESETS_BY_KEY.items()}
RECONNECT_TRIES = 6


class Session(Tab):
    """One student's tab: the values it set, its timings, what went wrong."""

    def __init__(self, idx: int, base: str, args: argparse.Namespace, events) -> None:
        super().__init__(idx, base, args)
        self.events = events
        self.rng = random.Random(args.seed * 1000 + idx)
        self.latencies: list[float] = []
        self.actions: list[str] = []  # what each timed run was (beside its latency)
        self.leaks: list[str] = []
        self.lost: list[str] = []
        self.had: dict[str, set[str]] = {}  # every value this session's URL has held
        self.history: list[str] = []  # what it did, for the messages
        self.reconnects = 0
        self.first_load: float | None = None
        self.first_chart: float | None = None
        if args.mix != "control":
            self.page = self.rng.choice(args.pages)
        self.expect: dict[str, str] = {}  # URL fields this session set, and their values

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
            titles = [t for t in self.options("Preset") if t in TITLE_TO_PRESET]
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
        if kind == "control" and proto["t"] in ("number", "slider"):  # the app's sidebar
            now, lo, hi = proto["v"], proto["min"], proto["max"]
        elif kind in ("slider", "number_input"):  # a Streamlit widget (the bare page's)
            now = int(proto.value[0] if kind == "slider" else proto.value)
            bounded = kind == "slider" or proto.has_min  # a number input without a minimum: 0
            lo = int(proto.min) if bounded else 0
            hi = int(proto.max) if kind == "slider" or proto.has_max else lo + 999
        else:
            raise ValueError(f"control {self.args.control!r} is not a slider or a number")
        hi = min(hi, lo + 999)
        value = self.rng.choice([v for v in range(lo, hi + 1) if v != now])
        state = self.number(self.args.control, value)
        field = proto["f"] if kind == "control" else ""
        return {"widgets": [state]}, ({field: str(value)} if field else {})

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
            key, value = sent(state)
            got = seen["values"].get(key)
            if value is not None and got is not None and [int(v) for v in got] != [int(value)]:
                wrong[key.split("-", 2)[-1]] = f"widget {got}"
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

"""The wire of scripts/load.py: one browser tab speaking Streamlit's websocket protocol.

A `Tab` loads its page as a browser does (the HTML's GET, and so nginx's affinity cookie, then
the websocket /_stcore/stream with the protobufs that ship with streamlit), sends rerun_script
BackMsgs and reads ForwardMsgs until script_finished: the page's widgets and charts as drawn, its
URL, a message cache like the browser's. It builds the widget states a change sends; what a
student changes, and when, is scripts/load_class.py's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from urllib.parse import quote, urlsplit

from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

WS_OPTS = {"max_size": None, "ping_interval": None}  # no client pings: a busy server is data
SIDEBAR = "convviz_sidebar"  # the app's sidebar: one component (convviz/ui/sidebar.py)


def controls(items: list[dict]):
    """The sidebar's controls (items with a field), rows and groups opened."""
    for item in items:
        yield from controls(item.get("items", []))
        if "f" in item:
            yield item


class Tab:
    """One browser tab: a websocket, its page's widgets and charts, its message cache."""

    def __init__(self, idx: int, base: str, args: argparse.Namespace) -> None:
        self.idx, self.base, self.args = idx, base, args
        self.errors: list[str] = []
        self.pins: dict[str, str] = {}  # nginx's affinity cookies: a hall's, a front's
        self.page_hash = ""
        self.pages: dict[str, str] = {}  # url path → page script hash (from `navigation`)
        self.page = args.page
        self.query = args.query  # the URL's query as the server last wrote it
        self.widgets: dict[str, tuple[str, object, str]] = {}  # label → (kind, proto, fragment)
        self.charts: dict[str, tuple[object, str]] = {}  # chart key → (proto, fragment)
        self.sidebar: tuple[object, dict, str] | None = None  # the sidebar's proto, its data
        # hash → (message, the run it was last used in), like the browser's cache: it forgets a
        # message unused for more than 2 runs (global.maxCachedMessageAge)
        self.cache: dict[str, tuple[ForwardMsg, int]] = {}
        self.runs = 0
        self.ws = None

    # --- the wire

    @property
    def cookie(self) -> str:
        """The Cookie header: every pin nginx set (convviz_affinity, convviz_host)."""
        return "; ".join(f"{name}={value}" for name, value in self.pins.items())

    async def get_html(self) -> None:
        """GET the page as a browser's address bar does: its HTML, and nginx's affinity cookie."""
        parts = urlsplit(self.base)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
        try:
            path = f"/{quote(self.page)}?{self.query}"
            head = [f"GET {path} HTTP/1.1", f"Host: {parts.netloc}", "Connection: close"]
            head += [f"User-Agent: convviz-load session={self.idx}"]
            head += [f"Cookie: {self.cookie}"] if self.cookie else []
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
            if name.lower() == "set-cookie" and value.strip().startswith("convviz_"):
                pin, _, value = value.strip().split(";")[0].partition("=")
                self.pins[pin] = value

    async def open(self) -> None:
        """Load the page: its HTML (and nginx's pin), then its websocket."""
        parts = urlsplit(self.base)
        await self.get_html()
        headers = {"Cookie": self.cookie} if self.cookie else {}
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
        elif kind == "bidi_component" and proto.component_name == SIDEBAR:
            self.sidebar = (proto, json.loads(proto.bytes), fragment)
            for item in controls(self.sidebar[1]["items"]):
                self.widgets[item["label"]] = ("control", item, fragment)
                if item["t"] in ("number", "slider"):
                    seen["values"][item["f"]] = [item["v"]]
        elif getattr(proto, "id", "") and getattr(proto, "label", ""):
            self.widgets[proto.label] = (kind, proto, fragment)
            if kind in ("slider", "number_input") and proto.set_value:
                seen["values"][proto.id] = list(proto.value) if kind == "slider" else [proto.value]

    # --- the widget states a change sends

    def widget(self, *labels: str) -> tuple[str, object, str]:
        for label in labels:
            if label in self.widgets:
                return self.widgets[label]
        raise LookupError(f"no control labelled {' or '.join(map(repr, labels))} on {self.page!r}")

    def edit(self, field: str, value):
        """What the sidebar (convviz/ui/sidebar.js) sends when the reader sets a control: the
        edit, numbered on from the last one the server applied, in its `edit` event."""
        proto, data, _ = self.sidebar
        state = BackMsg().rerun_script.widget_states.widgets.add()
        state.id = _make_trigger_id(proto.id, "events")
        edit = {"n": data["acked"] + 1, "f": field, "v": value}
        payload = {"session": data["session"], "edits": [edit]}
        state.json_trigger_value = json.dumps([{"event": "edit", "value": payload}])
        return state

    def number(self, label: str, value: int, *also: str):
        """The widget state that sets a slider or number input (found by its label)."""
        kind, proto, _ = self.widget(label, *also)
        if kind == "control":
            return self.edit(proto["f"], value)
        state = BackMsg().rerun_script.widget_states.widgets.add()
        state.id = proto.id
        if kind == "slider":
            state.double_array_value.data.append(value)
        elif kind == "number_input":
            state.int_value = value
        else:
            raise ValueError(f"control {label!r} is a {kind}; use a slider or number input")
        return state

    def options(self, label: str) -> list[str]:
        """The words a menu offers."""
        kind, proto, _ = self.widget(label)
        return [word for _, word in proto["options"]] if kind == "control" else list(proto.options)

    def choice(self, label: str, option: str):
        """The widget state that chooses `option` (by the word it shows) in a menu."""
        kind, proto, _ = self.widget(label)
        if kind == "control" and proto["t"] == "select":
            return self.edit(proto["f"], next(k for k, word in proto["options"] if word == option))
        if kind != "selectbox":
            raise ValueError(f"control {label!r} is a {kind}, not a selectbox")
        state = BackMsg().rerun_script.widget_states.widgets.add()
        state.id, state.string_value = proto.id, option
        return state


def sent(state) -> tuple[str, float | None]:
    """(what a widget state sets, the number it sends, if any): a widget's id, or a field of
    the sidebar."""
    if state.HasField("json_trigger_value"):
        (edit,) = json.loads(state.json_trigger_value)[0]["value"]["edits"]
        v = edit["v"]
        return edit["f"], v if isinstance(v, int | float) and not isinstance(v, bool) else None
    if state.HasField("int_value"):
        return state.id, state.int_value
    if state.HasField("double_array_value"):
        return state.id, state.double_array_value.data[0]
    return state.id, None

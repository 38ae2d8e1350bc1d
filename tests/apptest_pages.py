"""What the page tests share: open a page in Streamlit's AppTest (no browser), read what it sent.

Figures are read as the page sent them (`plotly_chart` protos); heatmap z arrives as plotly's
base64 typed arrays, decoded by `z_of`. Tests that use these are marked `apptest`.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.testing.v1 import AppTest

from convviz.ui.views import PICKER

APP = str(Path(__file__).resolve().parents[1] / "app.py")
OVERVIEW = "app.py"
FORWARD = "pages/1_Forward.py"
INPUT_GRAD = "pages/2_Input_gradient.py"
WEIGHT_GRAD = "pages/3_Weight_gradient.py"
CHANNELS = "pages/6_Channels.py"
PAGES = (OVERVIEW, FORWARD, INPUT_GRAD, WEIGHT_GRAD, CHANNELS)
SLOW = {"qa-channels"}  # 5×100×100 input, 10 filters: seconds, not tenths


# --- helpers -------------------------------------------------------------------------------------


def open_page(page: str = OVERVIEW, timeout: float = 30, **query: str) -> AppTest:
    """A fresh session on `page`, its URL seeded with `query`, after its first run."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for name, value in query.items():
        at.query_params[name] = value
    if page != OVERVIEW:
        at.switch_page(page)
    return at.run()


def open_picker(at: AppTest) -> AppTest:
    """Open the keyboard cell picker (what expanding it sends: its controls come on that rerun)."""
    at.session_state[PICKER] = True
    return at.run()


def assert_clean(at: AppTest) -> None:
    """No exception and no st.error on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def figures(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def animated(fig: dict) -> bool:
    """Whether a sent figure is an animation (a player drives it)."""
    return "player" in fig["layout"].get("meta", {})


def frames_of(at: AppTest, fig: dict) -> list[dict]:
    """An animated figure's frames as the browser gets them: with the figure (a motion, which
    plotly's transitions play), or in its player's data (a stepwise animation: a sliding
    window, a run's steps, applied by the player; ui/player.py)."""
    if "frames" in fig:
        return fig["frames"]
    names = fig["layout"]["meta"]["player"]["names"]
    for el in at.get("bidi_component"):
        data = json.loads(el.proto.bytes) if el.proto.bytes else {}
        if data.get("names") == names and "frames" in data:
            return data["frames"]
    raise AssertionError("no player holds this figure's frames")


def z_of(trace: dict) -> np.ndarray:
    """A heatmap's z as an array, whether sent as a nested list or a base64 typed array."""
    z = trace["z"]
    if isinstance(z, dict):
        shape = tuple(int(s) for s in str(z["shape"]).split(","))
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape)
    return np.array(z, dtype=float)


def trace(fig: dict, name: str) -> dict:
    found = [d for d in fig["data"] if d.get("name") == name]
    assert found, f"no trace {name!r} in {[d.get('name') for d in fig['data']]}"
    return found[0]


def heat(at: AppTest, name: str, chart: int = 0) -> np.ndarray:
    """The z of the named heatmap in the page's chart number `chart`."""
    return z_of(trace(figures(at)[chart], name))


def slider_steps(fig: dict) -> int:
    """How many steps the page's player offers for this animated figure."""
    return len(fig["layout"]["meta"]["player"]["names"])


def shown(markdown: str) -> str:
    """A message as the page renders it: markdown's backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", markdown)


def query(at: AppTest) -> dict[str, str]:
    return {k: str(v) for k, v in dict(at.query_params).items()}


def shapes_table(at: AppTest) -> dict[str, str]:
    df = at.table[0].value
    return dict(zip(df["array"], df["shape"]))


def dims(shape) -> str:
    return " × ".join(map(str, shape))


def headers(at: AppTest) -> list[str]:
    return [s.value for s in at.header]


# The sidebar's controls, by field: the one door the tests drive and read the sidebar by. The
# sidebar is one component (convviz/ui/sidebar.py, sidebar.js): what it draws is its data's
# items; a change is the edit its `edit` event carries, as the browser sends it.
SIDEBAR = "convviz_sidebar"


def side_items(at: AppTest) -> tuple[object, dict]:
    """The sidebar component's element proto and its data (session, acked, items)."""
    (proto,) = [el.proto for el in at.sidebar.get("bidi_component")
                if el.proto.component_name == SIDEBAR]  # fmt: skip
    return proto, json.loads(proto.bytes)


def _controls(items: list[dict]):
    for item in items:
        yield from _controls(item.get("items", []))
        if "f" in item:
            yield item


class SideControl:
    """A control of the sidebar as a test drives it: value, label, options; set_value / select /
    check / uncheck / click record an edit, and .run() sends it as the browser would."""

    def __init__(self, at: AppTest, item: dict):
        self.at, self.item = at, item

    value = property(lambda self: self.item.get("v"))
    label = property(lambda self: self.item["label"])
    options = property(lambda self: [word for _, word in self.item["options"]])

    def set_value(self, value) -> SideControl:
        self.at.__dict__.setdefault("_cv_edits", []).append((self.item["f"], value))
        return self

    select = set_value

    def check(self) -> SideControl:
        return self.set_value(True)

    def uncheck(self) -> SideControl:
        return self.set_value(False)

    def click(self) -> SideControl:
        return self.set_value(True)

    def run(self, timeout: float | None = None) -> AppTest:
        return run_edits(self.at, timeout)


def run_edits(at: AppTest, timeout: float | None = None) -> AppTest:
    """Run `at` with the sidebar edits recorded since its last run (sidebar.js's `edit` event:
    numbered on from the last the server applied, with this session's token)."""
    edits = at.__dict__.pop("_cv_edits", [])
    states = at._tree.get_widget_states()
    if edits:
        proto, data = side_items(at)
        sent = [{"n": data["acked"] + i, "f": f, "v": v} for i, (f, v) in enumerate(edits, 1)]
        state = states.widgets.add()
        state.id = _make_trigger_id(proto.id, "events")
        payload = {"session": data["session"], "edits": sent}
        state.json_trigger_value = json.dumps([{"event": "edit", "value": payload}])
    return at._run(states, timeout=timeout)


def side(at: AppTest, field: str) -> SideControl:
    """The sidebar's control of `field` ("H", "sh", "preset", "pres", …; "reroll": the Re-roll
    button): its value, label and options; set_value / select / click, then .run()."""
    for item in _controls(side_items(at)[1]["items"]):
        if item["f"] == field:
            return SideControl(at, item)
    raise KeyError(f"the sidebar draws no control of {field!r}")


def side_group(at: AppTest) -> dict:
    """The sidebar's folding group (its channels and batch): label, open (as the server draws
    it: open while a count is over 1; the browser keeps the reader's choice until one crosses 1)
    and items."""
    (group,) = [i for i in side_items(at)[1]["items"] if i["t"] == "group"]
    return group


_KINDS = {"number_input": "number", "slider": "slider", "selectbox": "select",
          "toggle": "toggle", "checkbox": "check"}  # fmt: skip


def side_drawn(at: AppTest, kind: str) -> list[str]:
    """The fields whose controls of `kind` ("number_input", "slider", …) the sidebar draws, in
    order (a folded group's too: the browser folds it)."""
    return [i["f"] for i in _controls(side_items(at)[1]["items"]) if i["t"] == _KINDS[kind]]


def state(at: AppTest) -> dict:
    return at.session_state["cv_state"]

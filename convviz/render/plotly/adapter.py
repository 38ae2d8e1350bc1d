"""The renderers' plotly figures: plain dicts sent to plotly.js as they are, plotly's objects
made only when something reads them (tests, plotly's own writers).

A figure is checked by tests, not on every rerun: plotly's object tree costs ~1 ms per frame
trace (its validation: a regex per colour), even unvalidated its layout objects cost ~10 % of a
weight-gradient rerun with new values, and its `to_dict` checks every array against six
dataframe libraries before encoding it (~20 %). Here the JSON is made from the dicts directly.
`tests/test_plotly_adapter.py` compares it with plotly's own `to_dict` on every figure the pages
draw and validates each the slow way. The one private plotly field this module sets (a figure's
frames without validation, for tests' object view) is checked there too.

Its browser side, for tests and scripts only: probe.js reads what plotly.js has drawn
(`probing` hands it to a page function); no other file reads plotly's private fields.
"""

from __future__ import annotations

import base64
from functools import cache, cached_property
from itertools import chain
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

# plotly.js's typed-array names of the dtypes plotly encodes (_plotly_utils.utils)
# (by dtype: str(dtype) costs numpy a walk of its type tree, ~3% of a class's server time)
_TYPED = {np.dtype(name): code for name, code in (
    ("int8", "i1"), ("uint8", "u1"), ("int16", "i2"), ("uint16", "u2"), ("int32", "i4"),
    ("uint32", "u4"), ("float32", "f4"), ("float64", "f8"))}  # fmt: skip
_PLAIN_KEYS = frozenset({"geojson", "layer", "layers", "range"})  # plotly sends these as lists
_SCALARS = frozenset({str, int, float, bool, type(None)})  # sent as they are (not numpy's)


PROBE_JS = Path(__file__).with_name("probe.js")


@cache
def _probe() -> str:
    return PROBE_JS.read_text()


def probing(page_function: str) -> str:
    """`page_function` (for Playwright's evaluate or wait_for_function, taking one argument or
    none) with probe.js's `cvPlotly` in its scope."""
    return f"(arg) => {{\n{_probe()}\nreturn ({page_function})(arg);\n}}"


class Figure:
    """A figure as the plain dicts plotly.js reads: its traces, its layout and its frames.

    The app sends it as it is (`wire`); plotly's object view of it (`.data`, `.layout`,
    `.frames`, `to_dict()` and the rest of go.Figure's API, for tests and plotly's own writers)
    is made on first use, without validation.
    """

    def __init__(self, data: list[dict], layout: dict, frames: list[dict] = ()):
        self.traces, self.layout_dict, self.frame_dicts = data, layout, list(frames)

    @cached_property
    def plotly(self) -> go.Figure:
        fig = go.Figure(data=self.traces, layout=self.layout_dict, _validate=False)
        fig._frame_objs = tuple(_LazyFrame(**f, _validate=False) for f in self.frame_dicts)
        return fig

    @property
    def meta(self) -> dict:
        """The layout's meta (the player's data), read without plotly's objects."""
        return self.layout_dict.get("meta", {})

    def __getattr__(self, name: str):
        if name.startswith("__"):  # copy, pickle and the like: not plotly's
            raise AttributeError(name)
        return getattr(self.plotly, name)


class _LazyFrame(go.Frame):
    """A Frame stored as the plain dict it is given; reading `.data` validates a copy."""

    @property
    def data(self):
        return go.Frame(self.to_plotly_json()).data


def figure(data: list[dict], layout: dict, frames: list[dict] = ()) -> Figure:
    """Every renderer's plotly figure: plain dicts, never validated on the app's path."""
    return Figure(data, layout, frames)


def parts(fig: Figure) -> tuple[list[dict], dict, list[dict]]:
    """The figure's traces, layout and frames (read, never changed)."""
    return fig.traces, fig.layout_dict, fig.frame_dicts


def wire(fig: Figure, frames: bool = True) -> dict:
    """The figure as plotly.js reads it: what `fig.to_dict()` returns (numpy arrays as typed
    arrays, or lists where plotly.js has no type for them), built in one walk; without `frames`,
    its frames left out (a player that applies them itself is handed them: `wired_frames`)."""
    out = {"data": _wire(fig.traces), "layout": _wire(fig.layout_dict)}
    if "template" not in out["layout"] and pio.templates.default:  # as plotly adds it
        out["layout"]["template"] = _template(pio.templates.default)
    if fig.frame_dicts and frames:
        out["frames"] = wired_frames(fig)
    return out


def wired_frames(fig: Figure) -> list[dict]:
    """The figure's frames as plotly.js reads them (see `wire`)."""
    return _wire(fig.frame_dicts)


@cache
def _template(name: str) -> dict:
    """plotly's template `name` as a figure's layout sends it (made once; never changed)."""
    return go.Figure(layout={"template": name}).to_dict()["layout"]["template"]


def _wire(value, data: bool = False):
    """`value` with its arrays typed; in plotly's properties (not in `data`: a layout's `meta`
    is the page's own) a property set to None is unset, and left out as plotly leaves it."""
    if isinstance(value, dict):
        return {
            k: v if type(v) in _SCALARS  # most values: as they are, without a call each
            else _plain(v) if k in _PLAIN_KEYS
            else _wire(v, data or k == "meta")
            for k, v in value.items()
            if data or v is not None
        }  # fmt: skip
    if isinstance(value, list | tuple):
        if _SCALARS.issuperset(map(type, value)):  # text, numbers: as they are
            return list(value)
        if all(type(v) is list for v in value) and _SCALARS.issuperset(
            map(type, chain.from_iterable(value))
        ):  # the cells' customdata
            return list(map(list, value))
        return [_wire(v, data) for v in value]
    if isinstance(value, np.ndarray):
        return _typed(value)
    return value.item() if isinstance(value, np.generic) else value


def _plain(value):
    return value.tolist() if isinstance(value, np.ndarray) else _wire(value)


def _typed(a: np.ndarray):
    """plotly.js's typed array of `a` ({dtype, bdata[, shape]}), or a list for other dtypes."""
    if a.dtype.kind in "iu" and a.dtype.itemsize == 8 and a.size:
        a = _narrowest(a)
    code = _TYPED.get(a.dtype)
    if code is None or a.size == 0:
        return a.tolist()
    spec = {"dtype": code, "bdata": base64.b64encode(np.ascontiguousarray(a)).decode("ascii")}
    if a.ndim > 1:
        spec["shape"] = ", ".join(map(str, a.shape))
    return spec


def _narrowest(a: np.ndarray) -> np.ndarray:
    """A 64-bit integer array in the narrowest type holding it (plotly.js has no int64)."""
    lo, hi = int(a.min()), int(a.max())
    for kind, (least, most) in (_UNSIGNED if a.dtype.kind == "u" else _SIGNED).items():
        if least <= lo and hi <= most:
            return a.astype(kind)
    return a


_SIGNED = {k: (int(np.iinfo(k).min), int(np.iinfo(k).max)) for k in ("int8", "int16", "int32")}
_UNSIGNED = {k: (0, int(np.iinfo(k).max)) for k in ("uint8", "uint16", "uint32")}


class _Sent(go.Figure):
    """A figure as `st.plotly_chart` is handed it: Streamlit reads a plotly figure only through
    its `to_dict()` (plotly.tools.return_figure_from_figure_or_data), which this one answers
    with the JSON `wire` made once; plotly's own empty figure is never built (~0.6 ms each)."""

    def __new__(cls, spec: dict):
        sent = object.__new__(cls)
        object.__setattr__(sent, "_spec", spec)
        return sent

    def __init__(self, spec: dict):  # nothing of go.Figure's: see __new__
        pass

    def to_dict(self) -> dict:
        return self._spec


def sent(fig: Figure, frames: bool = True) -> go.Figure:
    """`fig` as Streamlit's plotly_chart takes it (without `frames`: see `wire`), converted once
    (kept on the figure: a shared view's figure is sent to every session)."""
    kept = "_sent" if frames else "_sent_bare"
    if kept not in fig.__dict__:
        setattr(fig, kept, _Sent(wire(fig, frames)))
    return fig.__dict__[kept]

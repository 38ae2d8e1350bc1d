"""The one module that relies on how plotly stores a figure (plotly 7.1), for speed.

A figure the renderers build is checked by tests, not on every rerun: plotly's validation costs
~1 ms per frame trace and a regex per colour, and its `to_dict` checks every array against six
dataframe libraries before encoding it (~40 % of a weight-gradient rerun's server time with new
values). Here a figure is built without validation and its plotly.js JSON is made directly.
`tests/test_plotly_adapter.py` compares both with plotly's own public results on the app's
figures, so a plotly release that moves what this module reads fails there.
"""

from __future__ import annotations

import base64

import numpy as np
import plotly.graph_objects as go

# plotly.js's typed-array names of the dtypes plotly encodes (_plotly_utils.utils)
_TYPED = {"int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4",
          "uint32": "u4", "float32": "f4", "float64": "f8"}  # fmt: skip
_PLAIN_KEYS = frozenset({"geojson", "layer", "layers", "range"})  # plotly sends these as lists


class LazyFrame(go.Frame):
    """A Frame stored as the plain dict it is given; reading `.data` validates a copy (tests,
    debugging)."""

    @property
    def data(self):
        return go.Frame(self.to_plotly_json()).data


def figure(data: list[dict], layout: dict, frames: list[dict] = ()) -> go.Figure:
    """A go.Figure of plain dicts, not validated (every renderer's figure is built here)."""
    fig = go.Figure(data=data, layout=layout, _validate=False)
    if frames:
        fig._frame_objs = tuple(LazyFrame(**f, _validate=False) for f in frames)
    return fig


def parts(fig: go.Figure) -> tuple[list[dict], dict, list[dict]]:
    """The figure's traces, layout and frames as plotly holds them (read, never changed)."""
    return fig._data, fig._layout, [f._props for f in fig._frame_objs]


def wire(fig: go.Figure) -> dict:
    """The figure as plotly.js reads it: what `fig.to_dict()` returns (numpy arrays as typed
    arrays, or lists where plotly.js has no type for them), built in one walk."""
    data, layout, frames = parts(fig)
    out = {"data": _wire(data), "layout": _wire(layout)}
    if frames:
        out["frames"] = _wire(frames)
    return out


def _wire(value):
    if isinstance(value, dict):
        return {k: (_plain(v) if k in _PLAIN_KEYS else _wire(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_wire(v) for v in value]
    if isinstance(value, np.ndarray):
        return _typed(value)
    return value.item() if isinstance(value, np.generic) else value


def _plain(value):
    return value.tolist() if isinstance(value, np.ndarray) else _wire(value)


def _typed(a: np.ndarray):
    """plotly.js's typed array of `a` ({dtype, bdata[, shape]}), or a list for other dtypes."""
    if a.dtype.kind in "iu" and a.dtype.itemsize == 8 and a.size:
        a = _narrowest(a)
    code = _TYPED.get(str(a.dtype))
    if code is None or a.size == 0:
        return a.tolist()
    spec = {"dtype": code, "bdata": base64.b64encode(np.ascontiguousarray(a)).decode("ascii")}
    if a.ndim > 1:
        spec["shape"] = ", ".join(map(str, a.shape))
    return spec


def _narrowest(a: np.ndarray) -> np.ndarray:
    """A 64-bit integer array in the narrowest type holding it (plotly.js has no int64)."""
    lo, hi = int(a.min()), int(a.max())
    kinds = ("uint8", "uint16", "uint32") if a.dtype.kind == "u" else ("int8", "int16", "int32")
    for kind in kinds:
        info = np.iinfo(kind)
        if info.min <= lo and hi <= info.max:
            return a.astype(kind)
    return a

"""The layers the motion tests draw, and how they read what a motion shows.

`LAYERS`: every preset's layer but qa-channels', channels-small's drawn for its last sample,
filter and channel (`slice_of`). `grid`: the numbers a scene shows on a panel's grid;
`figure_frame`: the traces as the browser shows them at a frame; `shown_grid`: the text a figure
shows on a panel's grid. Shared by test_motion.py, test_motion_whole.py and test_motion_figures.py.
"""

from __future__ import annotations

import base64
import json

import numpy as np

import convviz.render.motion.model as mv
from convviz.engine.arrays import forward_arrays, layer
from convviz.model.presets import PRESETS
from convviz.render.plotly.grids import format_values

# --- layers --------------------------------------------------------------------------------------


def preset_layer(p):
    spec = p.spec()
    x, w = p.values()
    return layer(spec, x, w, p.grad_out_for(forward_arrays(spec, x, w).y))


# channels-small is drawn for its last sample, filter and channel: (n, k, c) ≠ (0, 0, 0)
LAYERS = {p.key: preset_layer(p) for p in PRESETS if p.key != "qa-channels"}
SLICE = {"channels-small": (1, 2, 1)}


def slice_of(key: str) -> tuple[int, int, int]:
    return SLICE.get(key, (0, 0, 0))


# --- reading scenes and figures ------------------------------------------------------------------


def grid(scene: mv.Scene, motion: mv.Motion, panel: int) -> np.ndarray:
    """The numbers a scene shows on a panel's grid (not the room a turn has around it): visible
    cells at whole positions (NaN elsewhere)."""
    shape, (oy, ox) = mv.grid_part(motion.panels[panel])
    out = np.full(shape, np.nan)
    for name, c in scene.groups.items():
        if motion.where[name] != panel or c.role == "window":
            continue
        seen = c.opacity > 0.5
        assert np.allclose(c.row[seen], np.round(c.row[seen])), name
        r, q = np.round(c.row[seen]).astype(int) - oy, np.round(c.col[seen]).astype(int) - ox
        assert np.isnan(out[r, q]).all(), f"{name}: two visible cells on one place"
        out[r, q] = c.value[seen]
    return out


def decoded(v):
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
    return np.asarray(v, dtype=object)


def merge(trace: dict, update: dict) -> dict:
    out = dict(trace)
    for k, v in update.items():
        out[k] = merge(out.get(k, {}), v) if isinstance(v, dict) else v
    return out


def figure_frame(fig, index: int) -> dict[str, dict]:
    """Trace name → the trace as the browser shows it at frame `index` (JSON, as sent)."""
    spec = json.loads(fig.to_json())
    frame = spec["frames"][index]
    data = [dict(t) for t in spec["data"]]
    for i, update in zip(frame["traces"], frame["data"]):
        data[i] = merge(data[i], update)
    return {t["name"]: t for t in data}


def shown_grid(fig, index: int, motion: mv.Motion, panel: int) -> np.ndarray:
    """The text the figure shows on a panel's grid at frame `index`, as a grid of strings."""
    shape, (oy, ox) = mv.grid_part(motion.panels[panel])
    out = np.full(shape, "", dtype=object)
    for name, t in figure_frame(fig, index).items():
        group = name.removeprefix("motion:")
        if not name.startswith("motion:") or motion.where[group] != panel or "text" not in t:
            continue
        x, y, text = decoded(t["x"]), decoded(t["y"]), decoded(t["text"])
        for r, q, s in zip(y, x, text):
            assert s, "a faded cell's text is blank, never empty (plotly would drop its node)"
            if s.strip():
                assert out[round(r) - oy, round(q) - ox] == "", "two numbers on one cell"
                out[round(r) - oy, round(q) - ox] = s
    return out


def text(a: np.ndarray) -> np.ndarray:
    return format_values(a)

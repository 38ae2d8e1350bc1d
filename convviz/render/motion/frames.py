"""A motion as plotly frames: scatter markers with text that glide between keyframes in the
browser (`transition`, no redraw), driven by the page's player (convviz/player/player.js)."""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, replace

import numpy as np
from matplotlib.colors import to_rgb, to_rgba_array
from PIL import Image

from convviz.render.geometry import DIGIT_EM, GridLayout, axis_ids
from convviz.render.motion.model import (
    HOLLOW,
    MOTION_FRAME_MS,
    ROLES,
    Cells,
    Motion,
    Scene,
    backdrop_cells,
    grid_part,
    legend_items,
    shown_cells,
)
from convviz.render.panel import Panel
from convviz.render.plotly.adapter import Figure
from convviz.render.plotly.frames import animated_figure, deep_update, grid_lines_trace
from convviz.render.plotly.grid_figure import (
    base_layout,
    layout_with_legend,
    panel_axes,
    panel_header,
)
from convviz.render.plotly.grids import click_overlay, format_values
from convviz.render.plotly.shapes import remainder_shapes
from convviz.render.theme import FAINT_GRID, FONT_FAMILY, THEME, Theme


def _faint_grid(i: int, panel: Panel, geo: GridLayout, outline: bool = False) -> dict:
    """Light cell borders of a panel's extent: the places cells move into; with `outline`, the
    extent's outline alone (a picture's cells lie under the traces: borders would cross them)."""
    shape, origin = grid_part(panel)  # not the room a turn needs around it
    trace = grid_lines_trace(i, shape, origin, geo, FAINT_GRID, 1, "extent")
    if outline:
        (h, w), (oy, ox) = shape, origin
        x0, x1, y0, y1 = ox - 0.5, ox + w - 0.5, oy - 0.5, oy + h - 0.5
        trace |= {"x": [x0, x1, x1, x0, x0], "y": [y0, y0, y1, y1, y0]}
    return trace


# A faded cell's text: blank but not empty. Plotly removes the SVG text of an empty one, and a
# transition without redraw never adds it back: a number that appears later (a sum as it is
# computed, a cell after a jump back) would stay undrawn until the next full redraw.
BLANK = " "


def _text(c: Cells, show: bool) -> np.ndarray | None:
    """Numbers of the visible cells (BLANK where a cell is faded out)."""
    if not show or c.role in HOLLOW:
        return None
    return np.where(c.opacity > 0.5, format_values(c.value), BLANK).astype(object)


def _trace_state(c: Cells, show: bool, look: _Look | None = None) -> dict:
    state = {
        "x": np.round(c.col, 3).astype(np.float32),
        "y": np.round(c.row, 3).astype(np.float32),
        "marker.opacity": np.round(c.opacity, 3).astype(np.float32),
        "marker.color": c.color if c.role not in HOLLOW else None,
        "marker.line.color": c.color if c.role in HOLLOW else None,
        "textfont.color": c.ink if show and c.role not in HOLLOW else None,
        "text": _text(c, show),
    }
    if c.size is not None and look is not None:  # cells that grow or shrink (a turning kernel)
        state["marker.size"] = np.round(_marker_px(look.cell) * c.size, 1).astype(np.float32)
        if show:
            state["textfont.size"] = np.round(look.font * c.size, 1).astype(np.float32)
    return {k: v for k, v in state.items() if v is not None}


def _nested(flat: dict) -> dict:
    out: dict = {}
    for key, v in flat.items():
        *path, last = key.split(".")
        d = out
        for p in path:
            d = d.setdefault(p, {})
        d[last] = v
    return out


def cell_px(i: int, panel: Panel, geo: GridLayout) -> float:
    """The px edge of panel i's cells, as its axis draws them (a small panel beside a big one may
    get cells of its own: see `geometry.grid_layout`)."""
    x0, x1 = geo.x_domains[i]
    return (x1 - x0) * geo.plot_w / panel.shape[1]


@dataclass(frozen=True)
class _Look:
    """How one panel's cells are drawn: their px edge, their numbers' px, whether numbers show,
    and the px of a tap's name in a whole cell (None: too small for names)."""

    cell: float
    font: int
    show: bool
    label: float | None = None


def _looks(motion: Motion, theme: Theme, geo: GridLayout) -> list[_Look]:
    """Each panel's look; its numbers smaller where the widest number any scene writes on it
    would not fit its cells (a 4-digit ∂L/∂x ran into its neighbours), as the still grids'."""
    widest = [1] * len(motion.panels)
    for scene in motion.scenes:
        for name, c in scene.groups.items():
            if len(c.value):
                i = motion.where[name]
                widest[i] = max(widest[i], max(map(len, format_values(np.unique(c.value)))))
    looks = []
    for i, p in enumerate(motion.panels):
        cell = cell_px(i, p, geo)
        show = max(p.shape) <= theme.max_text_cells and cell >= 16
        font = theme.cell_font(round(cell))
        if show:
            font = max(8, min(font, int(0.9 * cell / (DIGIT_EM * widest[i]))))
        label = theme.tap_label_font(cell, font) if show else None
        looks.append(_Look(cell, font, show, label))
    return looks


NAMES = ":names"  # the suffix of a group's track of tap names (w₀₂), beside its cells


def _tracks(groups: dict, motion: Motion, looks: list[_Look]) -> list[str]:
    """The traces a motion's groups draw: each group's cells, and where its cells carry names
    and its panel has room for them, their names (`name + NAMES`)."""
    out = []
    for g, c in groups.items():
        if not len(c.value):  # an empty role: no trace
            continue
        out.append(g)
        if c.label is not None and looks[motion.where[g]].label is not None:
            out.append(g + NAMES)
    return out


def _label_state(c: Cells, look: _Look) -> dict:
    """A names track's frame: each name at its square's top-left corner, in the cell's ink,
    shrinking with its square; blank where the cell is faded out."""
    rows, cols = c.label_corner()
    return {
        "x": np.round(cols, 3).astype(np.float32),
        "y": np.round(rows, 3).astype(np.float32),
        "text": np.where(c.opacity > 0.5, c.label, BLANK).astype(object),
        "textfont.color": c.ink,
        "textfont.size": (np.floor(look.label * c.scale * 10) / 10).astype(np.float32),
    }


def _label_trace(name: str, i: int) -> dict:
    xa, ya = axis_ids(i)
    return {
        "type": "scatter",
        "mode": "text",
        "name": f"names:{name.removesuffix(NAMES)}",  # not a group's numbers ("motion:…")
        "xaxis": xa,
        "yaxis": ya,
        "textposition": "bottom right",  # hangs from its corner into the square
        "textfont": {"family": FONT_FAMILY},
        "hoverinfo": "skip",
        "showlegend": False,
        "cliponaxis": False,
    }


def _gap(cell: float) -> int:
    """The px between two cells' squares: none when they are small."""
    return 2 if cell >= 20 else 1 if cell >= 8 else 0


def _marker_px(cell: float) -> float:
    """A filled cell's square, in px: the cell less the gap between two."""
    return max(cell - _gap(cell), 3)


def _group_trace(name: str, c: Cells, i: int, look: _Look) -> dict:
    _, _, outline = ROLES[c.role]
    cell = look.cell
    size = _marker_px(cell)
    line = {"width": 0}
    if c.role in HOLLOW:
        line = {"width": max(2.0, cell / 9)}
        size = max(cell - 2, 3)
    elif outline:
        line = {"width": max(1.5, cell / 14), "color": outline}
    xa, ya = axis_ids(i)
    trace = {
        "type": "scatter",
        "mode": "markers+text" if _text(c, look.show) is not None else "markers",
        "name": f"motion:{name}",
        "xaxis": xa,
        "yaxis": ya,
        "marker": {"symbol": "square", "size": size, "line": line},
        "textposition": "middle center",
        "textfont": {"size": look.font, "family": FONT_FAMILY},
        "hoverinfo": "skip",
        "showlegend": False,
        "cliponaxis": False,
    }
    if c.role in HOLLOW:
        trace["marker"]["color"] = "rgba(0,0,0,0)"
    return trace


# Still cells this many are one picture, not a marker each: 20,000 SVG markers (qa-channels' x̃
# under the weight window, its ∂L/∂y beside it) cost the browser seconds to style and lay out.
PICTURE_CELLS = 32 * 32


def _pictured(c: Cells, look: _Look) -> bool:
    """Whether still cells are drawn as an image: many, numberless, filled (no outline), each
    on a whole cell (an image survives the transitions that move the other cells: it is layout)."""
    _, _, outline = ROLES[c.role]
    return (
        len(c.value) >= PICTURE_CELLS
        and not look.show
        and outline is None
        and c.role not in HOLLOW
        and np.array_equal(c.row, np.round(c.row))
        and np.array_equal(c.col, np.round(c.col))
    )


def _picture(c: Cells, i: int, look: _Look) -> dict:
    """Cells as a layout image on panel i's axes, drawn at the px the figure shows them (cells
    look.cell px apart, the gap between markers in the faint grid's colour; transparent where
    there is no cell)."""
    top, left = int(c.row.min()), int(c.col.min())
    rows, cols = (c.row - top).astype(int), (c.col - left).astype(int)
    h, w = rows.max() + 1, cols.max() + 1
    rgba = np.zeros((h, w, 4), np.uint8)
    rgba[rows, cols, :3] = np.round(255 * to_rgba_array(c.color)[:, :3])
    rgba[rows, cols, 3] = np.round(255 * c.opacity)

    def px_cells(n: int) -> tuple[np.ndarray, np.ndarray]:
        """Per px along n cells: its cell, and whether it is inside that cell's square."""
        at = (np.arange(max(1, round(n * look.cell))) + 0.5) / look.cell
        into = (at % 1) * look.cell  # px into the cell
        gap = _gap(look.cell) / 2
        return np.minimum(at.astype(int), n - 1), (into >= gap) & (into < look.cell - gap)

    (r, r_in), (q, q_in) = px_cells(h), px_cells(w)
    image = rgba[r[:, None], q[None, :]]
    image[~np.outer(r_in, q_in), :3] = np.round(255 * np.array(to_rgb(FAINT_GRID)))
    png = io.BytesIO()
    Image.fromarray(image, "RGBA").save(png, "png")
    xa, ya = axis_ids(i)
    return {
        "source": "data:image/png;base64," + base64.b64encode(png.getvalue()).decode(),
        "xref": xa,
        "yref": ya,
        "x": left - 0.5,
        "y": top - 0.5,  # the top edge: rows run down the reversed axis
        "sizex": w,
        "sizey": h,
        "xanchor": "left",
        "yanchor": "top",
        "sizing": "stretch",
        "layer": "below",
    }


def motion_figure(
    motion: Motion, theme: Theme = THEME, *, title: str | None = None, start: int | None = None
) -> Figure:
    """A motion as plotly frames (scatter markers + text) that the page's player drives.

    start : the frame it opens on; None: the last (the stage's result, as the stills showed it).

    Only what changes over the motion is in the frames (positions, opacity, and the numbers or
    colours of groups whose values update); the base state is frame `start`.
    """
    frames = motion.frames()
    start = len(frames) - 1 if start is None else int(np.clip(start, 0, len(frames) - 1))
    layout, geo = _motion_layout(motion, theme, title)
    looks = _looks(motion, theme, geo)
    tracks = _tracks(frames[0].groups, motion, looks)
    names = [t.removesuffix(NAMES) for t in tracks]  # each track's group
    shown = [looks[motion.where[g]] for g in names]
    states = [
        [
            _label_state(f.groups[g], lk)
            if t.endswith(NAMES)
            else _trace_state(f.groups[g], lk.show, lk)
            for t, g, lk in zip(tracks, names, shown)
        ]
        for f in frames
    ]
    varying = [_varying([s[gi] for s in states]) for gi in range(len(names))]
    animated, moving = [], [gi for gi in range(len(names)) if varying[gi]]
    # still cells (a backdrop, a group that never changes) as markers or an image, not a
    # heatmap: a transition (no redraw) drops the layers of trace types it does not animate on
    # those axes (the heatmap vanished)
    stills = {("backdrop", i): backdrop_cells(p) for i, p in motion.backdrops.items()}
    for gi, g in enumerate(names):
        if gi not in moving and not tracks[gi].endswith(NAMES):
            stills[g, motion.where[g]] = frames[start].groups[g]
    pictured = {key: c for key, c in stills.items() if _pictured(c, looks[key[1]])}
    layout["images"] = [_picture(c, i, looks[i]) for (_, i), c in pictured.items()]
    framed = {i for _, i in pictured}
    data = [_faint_grid(i, p, geo, i in framed) for i, p in enumerate(motion.panels)]
    for i in motion.backdrops:
        if ("backdrop", i) not in pictured:
            back = stills["backdrop", i]
            trace = _group_trace("backdrop", back, i, looks[i])
            data.append(deep_update(trace, _nested(_trace_state(back, looks[i].show))))
    for gi, g in enumerate(names):
        where = motion.where[g]
        if tracks[gi].endswith(NAMES):
            trace = _label_trace(tracks[gi], where)
        elif (g, where) in pictured:
            continue
        else:
            trace = _group_trace(g, frames[0].groups[g], where, looks[where])
        trace = deep_update(trace, _nested(states[start][gi]))
        if gi in moving:  # groups that never change stay out of the frames
            animated.append(len(data))
        data.append(trace)
    # a transition (no redraw) drops every trace of a panel none of whose traces it moves (the
    # ∂L/∂y of a stride-1 layer's weight window vanished at the first step): such a panel's
    # faint grid goes into the frames, unchanged
    still = sorted(set(range(len(motion.panels))) - {motion.where[names[gi]] for gi in moving})
    frame_dicts = [
        {
            "name": str(fi),
            "data": [{} for _ in still]
            + [_nested({k: s[gi][k] for k in varying[gi]}) for gi in moving],
        }
        for fi, s in enumerate(states)
    ]
    animated = still + animated  # the faint grids are the first traces, one per panel
    # a click on any cell selects it, during the motion too (∂L/∂x̃ → ∂L/∂x: the cell of x it
    # becomes). No hover label: it would tell a cell's final value while the motion is still
    # computing it.
    overlays = [
        _unlabelled(_selecting_grad_x(overlay, p))
        for i, p in enumerate(motion.panels)
        if (overlay := click_overlay(p, i, geo, *shown_cells(motion, i))) is not None
    ]
    data += overlays
    # every trace in every frame, the still ones unchanged: a transition recomputes every trace
    # but replots only its frame's, and a click on a panel with a trace it did not replot threw
    # in plotly's selection (the trace's drawing no longer linked): it selected nothing during
    # a motion or after it
    rest = [i for i in range(len(data)) if i not in animated]
    animated += rest
    for frame in frame_dicts:
        frame["data"] += [{} for _ in rest]
    player, steps = _player(motion, frames, theme), np.arange(len(frames))
    return animated_figure(data, layout, frame_dicts, animated, steps, start, player)


def _unlabelled(overlay: dict) -> dict:
    """Click markers without a hover label (and without its text, the payload's largest part)."""
    overlay = {k: v for k, v in overlay.items() if k not in ("hovertext", "hovertemplate")}
    return overlay | {"hoverinfo": "none"}


def _selecting_grad_x(overlay: dict, panel: Panel) -> dict:
    """The click markers of ∂L/∂x̃ → ∂L/∂x: a cell of x selects its ∂L/∂x cell (what the mask
    makes of it), a cell of the padded ring its ∂L/∂x̃ cell (dropped, or folded onto x); any
    other panel's cells select themselves."""
    if panel.key != "grad_x_padded":
        return overlay
    ring = panel.mask("pad_mask").ravel()
    oy, ox = panel.origin
    overlay["customdata"] = [
        [key, r, c] if on_ring else ["grad_x", r + oy, c + ox]
        for (key, r, c), on_ring in zip(overlay["customdata"], ring)
    ]
    return overlay


def _motion_layout(motion: Motion, theme: Theme, title: str | None):
    """(layout, geometry): the panels' axes and headers, the legend.

    On a projector there is no title and no panel subtitles (each panel's title stays): fewer
    words, bigger cells (the sizing rule is `geometry.grid_layout`'s, for the room left).
    """
    shown_title = title if theme.show_secondary else None
    top = theme.title_font_size + 18 if shown_title else 6
    panels = motion.panels
    if not theme.show_secondary:
        panels = tuple(replace(p, subtitle="") for p in panels)
    geo, legend = layout_with_legend(panels, legend_items(motion), theme, top)
    layout = base_layout(geo, theme, shown_title)
    for i, p in enumerate(panels):
        layout.update(panel_axes(i, p, theme, geo))
        layout["shapes"].extend(remainder_shapes(p, i, geo))
        layout["annotations"].append(panel_header(i, p, theme, geo, _coloured(motion, i)))
    if legend is not None:
        layout["annotations"].append(legend)
    return layout, geo


VALUE_COLOURED = ("value", "ring", "fold")  # roles filled by the value scale


def _coloured(motion: Motion, i: int) -> np.ndarray:
    """The numbers of the value-coloured cells drawn on panel i (its colour scale's range)."""
    drawn = [
        g.value
        for name, g in motion.scenes[0].groups.items()
        if motion.where[name] == i and g.role in VALUE_COLOURED
    ]
    if i in motion.backdrops:  # a still grid under the moving cells (x̃ under the weight window)
        drawn.append(np.ravel(motion.backdrops[i].values))
    return np.concatenate(drawn) if drawn else np.zeros(1)


def _player(motion: Motion, frames: list[Scene], theme: Theme) -> dict:
    """What the player needs of a motion's frames besides the frames (see ui/player.js)."""
    return {
        "labels": [motion.label(f.stage) for f in frames],
        "prefix": "stage " if theme.show_secondary else "",  # a projector's bar: one row
        "suffix": "",
        "sampled": 1,
        "link": None,
        "captions": [[f.caption] for f in frames],
        "frame_ms": MOTION_FRAME_MS,
        "smooth": True,  # markers glide between frames (no full redraw)
        # the stages in order: the player shows which one a frame is in
        "stages": [motion.label(s) for s in motion.stages] if len(motion.stages) > 1 else [],
        # per frame, the engine cell whose sum it computes (Scene.cell), for the page's formulas
        "cells": [list(f.cell) for f in frames],
        # the keyframes' frames: a step (← →) goes from one to the next, not onto a frame on the
        # way (its window half a cell across, its formula the cell not yet written)
        "keys": np.cumsum([0, *motion.tweens]).tolist(),
    }


def _varying(states: list[dict]) -> list[str]:
    """The keys of a trace whose value differs between some frames."""
    keys = []
    for key in states[0]:
        first = states[0][key]
        if any(not np.array_equal(s[key], first) for s in states[1:]):
            keys.append(key)
    return keys

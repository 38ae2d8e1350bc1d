"""The Learning page's animations, driven by the page's player (convviz/player/player.js) like every
other: one gradient step (w before → w after, each tap counting from its old value to its new one)
and a training run (its grids at each kept step, under them the loss curve with the step shown).

Each is a still figure per frame (`grid_figure.panels_figure`), the frames the traces that change
(`animation_frames.stills_animation`): the player applies one per update, in the browser, so
scrubbing a run's steps asks nothing of the server. A selected cell is outlined in every grid of
its shape, and the line under the player follows it (a tap's update, its value and gradient).
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from convviz.engine.terms import Symbol
from convviz.engine.text import cell_name, number
from convviz.learning.sgd import Step
from convviz.learning.training import Run
from convviz.render.geometry import axis_ids, ticks_px
from convviz.render.panel import Panel
from convviz.render.plotly.adapter import Figure, figure
from convviz.render.plotly.frames import stills_animation
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.story.learning import loss_curve, run_panels, step_panels
from convviz.render.theme import MUTED_TEXT, THEME, Theme

STEP_FRAMES = 12  # frames from w before to w after
STEP_FRAME_MS = 150  # the step plays in ~2 s
RUN_FRAME_MS = 200  # a run plays in ~8 s at 1×, 2 s at 4×
KERNEL_PANELS = ("w_before", "delta_w", "w_after", "w", "target_w", "grad_w")  # a tap's grids
OUTPUT_PANELS = ("y", "target")  # an output cell's grids


def _selecting(panels: list[Panel], selected) -> list[Panel]:
    """The panels with the selected cell (panel key, row, col) outlined in every grid of its
    shape (a tap in every kernel grid, an output cell in y and t)."""
    if selected is None:
        return panels
    key, r, c = selected
    group = KERNEL_PANELS if key in KERNEL_PANELS else OUTPUT_PANELS if key in OUTPUT_PANELS else ()
    return [
        replace(p, selected=(r, c))
        if p.key in group and 0 <= r < p.shape[0] and 0 <= c < p.shape[1]
        else p
        for p in panels
    ]


def _tap(selected, shape) -> tuple[int, int] | None:
    """The selected tap (row, col), if a kernel grid's cell is selected."""
    if selected is None or selected[0] not in KERNEL_PANELS:
        return None
    r, c = selected[1:]
    return (r, c) if 0 <= r < shape[0] and 0 <= c < shape[1] else None


# --- one step ------------------------------------------------------------------------------------


def step_motion(
    step: Step,
    theme: Theme = THEME,
    k: int = 0,
    c: int = 0,
    *,
    start: int | None = None,
    selected: tuple[str, int, int] | None = None,
) -> Figure:
    """The step as frames: w before, the move Δw of each tap, and w moving from before to after
    (each tap counting from its old value to its new one, in its colour). start : the frame it
    opens on (None: the last, the step's result)."""
    before, delta, after = step_panels(step, k, c)
    w0, dw = before.values, delta.values

    def panels(f: int) -> list[Panel]:
        part = f / STEP_FRAMES
        moving = replace(
            after,
            values=w0 + part * dw,
            title="w after" if f == STEP_FRAMES else f"w moving ({round(100 * part)} %)",
            subtitle=after.subtitle if f == STEP_FRAMES else f"w + {number(part)}·Δw",
        )
        return _selecting([before, delta, moving], selected)

    figs = [panels_figure(panels(f), theme) for f in range(STEP_FRAMES + 1)]
    parts = [f / STEP_FRAMES for f in range(STEP_FRAMES + 1)]
    labels = ["w before", *(f"w + {number(p)}·Δw" for p in parts[1:-1]), "w after"]
    lr, (L0, L1) = number(step.lr), (number(step.before.value), number(step.after.value))
    rule = f"w ← w − η·∂L/∂w with η = {lr}: L {L0} → {L1}"
    tap = _tap(selected, w0.shape)
    if tap is not None:  # the selected tap's own update, with its numbers
        name = Symbol("w", tap).text()
        g = step.grad_w[k, c][tap]
        rule = (f"{name} ← {name} − η·∂L/∂{name} = {number(w0[tap])} − {lr}·({number(g)}) = "
                f"{number(step.w_after[k, c][tap])}")  # fmt: skip
    player = {
        "labels": labels,
        "prefix": "",
        "suffix": "",
        "sampled": 1,
        "link": None,
        "captions": [[rule]] * len(figs),
        "frame_ms": STEP_FRAME_MS,
        "keys": [0, STEP_FRAMES],  # ← → from w before to w after
    }
    return stills_animation(figs, player, STEP_FRAMES if start is None else start)


# --- a training run ------------------------------------------------------------------------------


RUN_FRAMES = 40  # frames of a run at most (the browser's payload: ~3.5 KB a frame)
_MARKS = {m * 10**e for e in range(4) for m in (1, 2, 5)}  # steps 1, 2, 5, 10, 20, 50, … shown


def shown_steps(kept) -> list[int]:
    """The steps a run's frames show: steps 0, 1, 2, 5, 10, 20, 50, … (where the loss falls
    fastest) and evenly spaced kept steps, RUN_FRAMES in all at most, the last included."""
    kept = [int(s) for s in kept]
    marks = [s for s in kept if s in _MARKS or s in (kept[0], kept[-1])]
    even = np.linspace(0, len(kept) - 1, max(RUN_FRAMES - len(marks), 2)).round().astype(int)
    return sorted(set(marks) | {kept[i] for i in even})


def curve_px(theme: Theme) -> int:
    """The loss curve's height under a run's grids (its title and step labels included)."""
    return max(170, round(0.38 * theme.figure_h)) if not theme.show_secondary else 240


def run_figure(
    run: Run,
    theme: Theme = THEME,
    *,
    n: int = 0,
    k: int = 0,
    c: int = 0,
    target_kernel=None,
    log: bool = True,
    start: int | None = None,
    selected: tuple[str, int, int] | None = None,
) -> Figure:
    """The run as frames, one per shown step (`shown_steps`): w (the target kernel beside it,
    when one made the target), y, t and ∂L/∂w at that step, and the loss curve under them with
    the step shown. start : the frame it opens on (None: the last step)."""
    kept = shown_steps(run.kept)
    below = curve_px(theme)
    grid_theme = replace(theme, figure_h=max(200, theme.figure_h - below))
    target = None if target_kernel is None else np.asarray(target_kernel)[k, c]
    figs, captions = [], []
    for s in kept:
        panels = _selecting(run_panels(run, s, n, k, c, target_kernel), selected)
        grids = panels_figure(panels, grid_theme)
        figs.append(_with_curve(grids, loss_curve(run, theme, log=log, at=s), below, theme))
        captions.append(_run_lines(run, run.index(s), s, target, selected, n, k, c))
    player = {
        "labels": [f"step {s}" for s in kept],
        "prefix": "",
        "suffix": "",
        "sampled": 1,
        "link": None,
        "captions": captions,
        "frame_ms": RUN_FRAME_MS,  # every frame a step the scrub may rest on (no keyframes)
    }
    return stills_animation(figs, player, len(kept) - 1 if start is None else start)


def _run_lines(run: Run, i: int, s: int, target, selected, n: int, k: int, c: int) -> list[str]:
    """The lines under the player at kept step s (index i): the loss, how far w is from the
    target kernel, the selected cell's numbers."""
    w = run.w[i, k, c]
    line = f"step {s}: L = {number(run.loss[s])}"
    if target is not None:
        line += f" · max |w − target kernel| = {number(np.abs(w - target).max())}"
    tap = _tap(selected, w.shape)
    if tap is not None:
        name = Symbol("w", tap).text()
        return [line, f"{name} = {number(w[tap])}, ∂L/∂{name} = {number(run.grad_w[i, k, c][tap])}"]
    if selected is not None and selected[0] in OUTPUT_PANELS:
        r, q = selected[1:]
        y = run.y[i, n, k]
        if 0 <= r < y.shape[0] and 0 <= q < y.shape[1]:
            t = run.target[n, k, r, q]
            return [line, f"{cell_name('y', r, q)} = {number(y[r, q])}, t = {number(t)}"]
    return [line]


def _with_curve(grids: Figure, curve: Figure, below: int, theme: Theme) -> Figure:
    """The grids with the loss curve under them (`below` px: its title, its plot, its step
    labels). The grids' plot area grows down, their axes and what is placed on paper y keep
    their px: the room under them (their column indices, a legend) now lies between them and
    the curve."""
    lay = grids.layout_dict
    (top, under), H = (lay["margin"]["t"], lay["margin"]["b"]), grids.layout_dict["height"]
    plot = H - top - under
    title, labels = theme.title_font_size + 12, ticks_px(theme) + 8
    curve_h = max(60, below - title - labels)
    grown = plot + under + title + curve_h

    def moved(y: float) -> float:  # a paper y of the grids' plot area, on the grown one
        return (y * plot + under + title + curve_h) / grown

    layout = {**lay, "height": top + grown + labels, "margin": {**lay["margin"], "b": labels}}
    for name, axis in lay.items():
        if re.fullmatch(r"yaxis\d*", name):
            layout[name] = {**axis, "domain": [moved(d) for d in axis["domain"]]}
    layout["annotations"] = [
        {**a, "y": moved(a["y"])} if a.get("yref") == "paper" else a for a in lay["annotations"]
    ]
    panels = sum(1 for name in lay if re.fullmatch(r"xaxis\d*", name))
    xa, ya = axis_ids(panels)
    left = 4.5 * theme.font_size  # the curve's L labels, inside the plot area
    width = lay["width"] - lay["margin"]["l"] - lay["margin"]["r"]
    cl = curve.layout_dict
    layout[f"xaxis{xa[1:]}"] = {**cl["xaxis"], "domain": [left / width, 1], "anchor": ya}
    layout[f"yaxis{ya[1:]}"] = {**cl["yaxis"], "domain": [0, curve_h / grown], "anchor": xa}
    layout["annotations"].append({
        "text": cl["title"]["text"], "xref": "paper", "yref": "paper", "x": 0, "xanchor": "left",
        "y": curve_h / grown, "yanchor": "bottom", "yshift": 6, "showarrow": False,
        "font": {"size": theme.title_font_size, "color": MUTED_TEXT},
    })  # fmt: skip
    traces = [{**t, "xaxis": xa, "yaxis": ya} for t in curve.traces]
    return figure([*grids.traces, *traces], layout)

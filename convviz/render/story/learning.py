"""Figures of how the layer learns: the loss and its ∂L/∂y, one gradient step, a training run.

They take the engine's records (`convviz.learning.loss`'s Loss, `sgd`'s Step, `training`'s Run) and
return figures: grids as `Panel`s (drawn by `grid_figure.panels_figure` in the app and
`static.panels_figure` in exports), the loss curve in plotly (the app) and matplotlib (its SVG),
and the run as a GIF (the step and the run as the player's frames: `learning_frames`). Every
number is the engine's; a kernel's taps keep their colours from w before a step to w after it.
"""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
from matplotlib.figure import Figure as MplFigure
from PIL import Image  # Pillow is a dependency of matplotlib

from convviz.engine.text import number, shape_text
from convviz.learning.loss import Loss
from convviz.learning.sgd import Step
from convviz.learning.training import Run
from convviz.render.mpl import static
from convviz.render.panel import Panel
from convviz.render.plotly.adapter import Figure, figure
from convviz.render.theme import (
    BACKGROUND,
    DROPPED_COLOR,
    EDGE_COLOR,
    FAINT_GRID,
    FONT_FAMILY,
    GIF_DPI,
    MUTED_TEXT,
    SELECTED_COLOR,
    TEXT_COLOR,
    THEME,
    Theme,
)


def _taps(shape: tuple[int, int]) -> np.ndarray:
    """Each cell of a kernel is its own tap (its colour follows it from step to step)."""
    return np.arange(shape[0] * shape[1]).reshape(shape)


def signed(v: float) -> str:
    """A change written with its sign (+0.5, −1.2), as a step's deltas are."""
    return number(v) if v < 0 else f"+{number(v)}"


def loss_panels(loss: Loss, n: int = 0, k: int = 0) -> list[Panel]:
    """y, the target t and ∂L/∂y of sample n, filter k: the loss's terms, cell by cell."""
    N = loss.y.shape[0]
    shape = shape_text(loss.y.shape[2:])
    grad_title = "∂L/∂y = y − t" if loss.scale == 1 else f"∂L/∂y = (y − t)/{N}"
    return [
        Panel(loss.y[n, k], "y", "y", subtitle=shape),
        Panel(loss.target[n, k], "target t", "target", subtitle=shape),
        Panel(loss.grad_out[n, k], grad_title, "grad_out", subtitle=shape),
    ]


def cell_gradient_text(loss: Loss, n: int, k: int, cell: tuple[int, int]) -> str:
    """∂L/∂y of one cell of y, worked out: (y − t), divided by N for a mean over the batch."""
    i, j = cell
    y, t, g = (a[n, k, i, j] for a in (loss.y, loss.target, loss.grad_out))
    over = "" if loss.scale == 1 else f"/{loss.y.shape[0]}"
    minus_t = f"({number(t)})" if t < 0 else number(t)
    return (f"∂L/∂y[{i}, {j}] = (y[{i}, {j}] − t[{i}, {j}]){over} = ({number(y)} − {minus_t})"
            f"{over} = {number(g)}")  # fmt: skip


def loss_sum_text(loss: Loss, most: int = 6) -> str:
    """L written out: ½·((y − t)² + …) with the numbers of the first cells, and its value."""
    diff = loss.diff.ravel()
    terms = " + ".join(f"({number(d)})²" for d in diff[:most])
    more = f" + … ({diff.size - most} more)" if diff.size > most else ""
    scale = "" if loss.scale == 1 else f"1/{loss.y.shape[0]} · "
    return f"L = {scale}½·({terms}{more}) = {number(loss.value)}"


def step_panels(step: Step, k: int = 0, c: int = 0) -> list[Panel]:
    """w before the step, the move −η·∂L/∂w of each tap, and w after it (filter k, channel c);
    each tap in its colour in all three."""
    w0, w1, dw = step.w_before[k, c], step.w_after[k, c], step.delta_w[k, c]
    taps = _taps(w0.shape)
    rate = f"η = {number(step.lr)}"
    return [
        Panel(w0, "w before", "w_before", taps=taps, subtitle=f"L = {number(step.before.value)}"),
        Panel(dw, "Δw = −η·∂L/∂w", "delta_w", taps=taps, subtitle=rate),
        Panel(w1, "w after", "w_after", taps=taps, subtitle=f"L = {number(step.after.value)}"),
    ]


def bias_text(step: Step, k: int = 0) -> str:
    """b ← b − η·∂L/∂b with this step's numbers, for filter k."""
    b0, gb, b1 = step.b_before[k], step.grad_b[k], step.b_after[k]
    return f"b ← b − η·∂L/∂b = {number(b0)} − {number(step.lr)}·({number(gb)}) = {number(b1)}"


def run_panels(
    run: Run, step: int, n: int = 0, k: int = 0, c: int = 0, target_kernel=None
) -> list[Panel]:
    """w, y and ∂L/∂w at a kept step of the run (and the kernel that made the target, if one
    did, beside w; and t beside y)."""
    i = run.index(step)
    if i is None:
        raise ValueError(f"step {step} is not kept by this run")
    w = run.w[i, k, c]
    taps = _taps(w.shape)
    panels = [
        Panel(w, f"w at step {step}", "w", taps=taps, subtitle=f"L = {number(run.loss[step])}")
    ]
    if target_kernel is not None:
        panels.append(
            Panel(
                np.asarray(target_kernel)[k, c],
                "target kernel",
                "target_w",
                taps=taps,
                subtitle=f"|w − it| ≤ {number(np.abs(w - np.asarray(target_kernel)[k, c]).max())}",
            )
        )
    panels += [
        Panel(run.y[i, n, k], f"y at step {step}", "y"),
        Panel(run.target[n, k], "target t", "target"),
        Panel(run.grad_w[i, k, c], f"∂L/∂w at step {step}", "grad_w"),
    ]
    return panels


# --- the loss curve --------------------------------------------------------------------------


def loss_curve(
    run: Run, theme: Theme = THEME, *, log: bool = False, at: int | None = None, height: int = 0
) -> Figure:
    """L at every step of the run (plotly): a line, the steps where L rose (the rate
    overshoots) marked, and the step the player shows (`at`) as a dot."""
    steps = np.arange(run.steps_done + 1)
    loss = np.asarray(run.loss, dtype=float)
    positive = loss > 0
    shown = np.where(positive, loss, np.nan) if log else loss  # log: a loss of 0 is off-scale
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": steps,
            "y": shown,
            "name": "L",
            "line": {"color": EDGE_COLOR, "width": 3},
            "hovertemplate": "step %{x}: L = %{y:.4g}<extra></extra>",
        }
    ]
    rises = run.rises
    if len(rises):
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": rises,
                "y": shown[rises],
                "name": "L rose",
                "marker": {"color": DROPPED_COLOR, "size": 9, "symbol": "x"},
                "hovertemplate": "step %{x}: L rose to %{y:.4g}<extra></extra>",
            }
        )
    if at is not None and 0 <= at <= run.steps_done:
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": [at],
                "y": [shown[at]],
                "name": "shown",
                "marker": {
                    "color": SELECTED_COLOR,
                    "size": 14,
                    "line": {"color": BACKGROUND, "width": 2},
                },
                "hovertemplate": "step %{x}: L = %{y:.4g}<extra></extra>",
            }
        )
    font = theme.font_size
    height = height or max(220, min(360, theme.figure_h // 2))
    margin = {"l": 16 + 4 * font, "r": 16, "t": font + 20, "b": font + 16}
    plot_h = height - margin["t"] - margin["b"]
    axis = {
        "gridcolor": FAINT_GRID,
        "zeroline": False,
        "color": TEXT_COLOR,
        "tickfont": {"size": font},
        "title": {"font": {"size": font}},
    }
    layout = {
        "width": min(theme.figure_w, 900),
        "height": height,
        "margin": margin,
        "paper_bgcolor": BACKGROUND,
        "plot_bgcolor": BACKGROUND,
        "font": {"family": FONT_FAMILY, "size": font, "color": TEXT_COLOR},
        "showlegend": False,
        "title": {
            "text": f"<b>Loss L{' (log scale)' if log else ''}, steps 0…{run.steps_done}</b>",
            "x": 0,
            "xanchor": "left",
            "font": {"size": theme.title_font_size},
        },
        "xaxis": {
            **axis,
            "range": [-0.5, max(run.steps_asked, 1) + 0.5],  # the title says these are steps
        },
        "yaxis": {
            **axis,
            "type": "log" if log else "linear",
            **({"dtick": _decade_step(loss, plot_h, font)} if log else {}),
            "exponentformat": "power",
        },
    }
    return figure(data, layout)


def _decade_step(loss: np.ndarray, plot_h: float, font: int) -> int:
    """Powers of 10 between the log axis's labels: each label a line of text apart at least."""
    positive = loss[loss > 0]
    if not len(positive):
        return 1
    decades = max(np.log10(positive.max() / positive.min()), 1)
    return max(1, int(np.ceil(decades * 2 * font / max(plot_h, 1))))


def loss_curve_static(run: Run, theme: Theme = THEME, *, log: bool = False) -> MplFigure:
    """The loss curve in matplotlib, for its SVG: the same line, the rises marked."""
    fig = MplFigure(figsize=(8, 4.5), facecolor=BACKGROUND)
    ax = fig.add_subplot()
    steps = np.arange(run.steps_done + 1)
    loss = np.asarray(run.loss, dtype=float)
    ax.plot(steps, loss, color=EDGE_COLOR, linewidth=2.5)
    if len(run.rises):
        ax.plot(run.rises, loss[run.rises], "x", color=DROPPED_COLOR, markersize=8)
    if log and (loss > 0).all():
        ax.set_yscale("log")
    ax.set_xlabel("step", color=TEXT_COLOR)
    ax.set_ylabel("L (log scale)" if log else "L", color=TEXT_COLOR)
    ax.set_title(f"Loss L, steps 0…{run.steps_done}", color=TEXT_COLOR, loc="left")
    ax.grid(color=FAINT_GRID)
    ax.tick_params(colors=MUTED_TEXT)
    fig.tight_layout()
    return fig


# --- the run as a GIF ------------------------------------------------------------------------

# frames of a run's GIF at most (evenly spaced kept steps, the last included); each is a
# matplotlib figure of ~0.4 s on a busy core
GIF_FRAMES = 24


def _gif(frames: list[tuple[list[Panel], str]], theme: Theme, fps: float) -> bytes:
    """Panels drawn with matplotlib, a frame each (title under the figure's top), as a GIF that
    holds its last frame."""
    images, size = [], None
    for panels, title in frames:  # one figure per frame (a GIF is made on request, not per rerun)
        fig = static.panels_figure(panels, theme, title=title)
        image = Image.open(io.BytesIO(static.to_png(fig, dpi=GIF_DPI))).convert("RGB")
        size = size or image.size
        images.append(image.resize(size))
    out = io.BytesIO()
    durations = [int(1000 / fps)] * (len(images) - 1) + [2000]  # hold the last frame
    images[0].save(
        out, format="GIF", save_all=True, append_images=images[1:], loop=0, duration=durations
    )
    return out.getvalue()


def run_gif(
    run: Run,
    theme: Theme = THEME,
    *,
    n: int = 0,
    k: int = 0,
    c: int = 0,
    target_kernel=None,
    fps: float = 4,
) -> bytes:
    """The training run as a GIF: w, y and ∂L/∂w at evenly spaced steps (matplotlib frames)."""
    kept = run.kept
    picks = kept[
        np.unique(np.linspace(0, len(kept) - 1, min(GIF_FRAMES, len(kept))).round().astype(int))
    ]
    frames = [(run_panels(run, int(s), n, k, c, target_kernel),
               f"step {s}: L = {number(run.loss[s])}") for s in picks]  # fmt: skip
    return _gif(frames, theme, fps)


def step_gif(step: Step, theme: Theme = THEME, *, k: int = 0, c: int = 0, frames: int = 6,
             fps: float = 3) -> bytes:  # fmt: skip
    """One step as a GIF: w before, each tap's move, and w moving to w after in `frames`."""
    before, delta, after = step_panels(step, k, c)
    out = []
    for f in range(frames + 1):
        part = f / frames
        last = f == frames
        moving = replace(after, values=before.values + part * delta.values,
                         title="w after" if last else f"w moving ({round(100 * part)} %)",
                         subtitle=after.subtitle if last else f"w + {number(part)}·Δw")  # fmt: skip
        L = number(step.after.value if f == frames else step.before.value)
        out.append(([before, delta, moving], f"w ← w − η·∂L/∂w (η = {number(step.lr)}): L = {L}"))
    return _gif(out, theme, fps)

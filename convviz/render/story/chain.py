"""What the two-layer page draws (convviz.learning.chain): the forward chain, layer 2's ∂L/∂h, the
grid handed from layer 2 to layer 1 through the ReLU's gate (a motion), and both weight gradients.
Layer 1's own dilate, pad, rotate and mask are the input gradient's (`input_story`) on its stages.

A slice: sample n, layer 1's input channel c and its filter k (h's channel, which layer 2
reads); layer 2 has one output channel, 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from convviz.engine.text import count, number, shape_text, slice_name
from convviz.learning.chain import TwoLayerPass
from convviz.model.lecture import LECTURE
from convviz.render.motion.model import Motion, Scene, cells, even_tweens, scale_of, within_budget
from convviz.render.panel import Panel
from convviz.render.plotly.adapter import Figure
from convviz.render.selection import tap_grid
from convviz.render.story.input_grad import Focus, stage_motion
from convviz.render.theme import GATE_COLOR

HANDOVER = "handover"  # the lecture's stage key of the motion
GAP = 1  # columns between layer 2's ∂L/∂h and layer 1's ∂L/∂y on the handover's panel
SHUT_WORDS = "ReLU gate shut: pre ≤ 0, gradient 0"  # what an outlined cell of the gate means


@dataclass(frozen=True)
class ChainSlice:
    """The slice the page draws: sample n, layer 1's input channel c and filter k."""

    n: int = 0
    k: int = 0
    c: int = 0


def shut(p: TwoLayerPass, s: ChainSlice) -> np.ndarray:
    """(H₁, W₁) bool: the cells of h[n, k] whose ReLU gate is shut (pre ≤ 0)."""
    return ~p.gate[s.n, s.k]


def forward_panels(p: TwoLayerPass, s: ChainSlice) -> list[Panel]:
    """x, layer 1's output before the ReLU (with one), h, y and the target t."""
    n, k, c = s.n, s.k, s.c
    one = p.spec.first
    # keys of their own: a click here selects no cell of the other pages' grids ("x" is x̃ there)
    panels = [Panel(p.first.forward.x[n, c], slice_name("x", n=n, c=c), "x_chain",
                    subtitle=shape_text(one.in_size))]  # fmt: skip
    closed = shut(p, s)
    if p.spec.relu:
        panels.append(
            Panel(p.pre[n, k], slice_name("pre", n=n, k=k), "pre",
                  subtitle="conv₁(x) + b₁", highlight=closed if closed.any() else None)
        )  # fmt: skip
    panels += [
        Panel(p.h[n, k], slice_name("h", n=n, k=k), "h",
              subtitle="ReLU(pre)" if p.spec.relu else "conv₁(x) + b₁, no ReLU"),
        Panel(p.y[n, 0], slice_name("y", n=n, k=0), "y2", subtitle="conv₂(h) + b₂"),
        Panel(p.loss.target[n, 0], slice_name("t", n=n, k=0), "t", subtitle="target"),
    ]  # fmt: skip
    return panels


def grad_h_panels(p: TwoLayerPass, s: ChainSlice) -> list[Panel]:
    """Layer 2's backward pass: ∂L/∂y = y − t, its kernel w₂ and what it ends in, ∂L/∂h."""
    n, k = s.n, s.k
    kH, kW = p.spec.second.kernel_size
    return [
        Panel(p.loss.grad_out[n, 0], slice_name("∂L/∂y", n=n, k=0), "grad_y2",
              subtitle="y − t"),
        Panel(p.second.forward.w[0, k], slice_name("w₂", k=0, c=k), "w2",
              taps=tap_grid(kH, kW), subtitle="layer 2's kernel"),
        Panel(p.grad_h[n, k], slice_name("∂L/∂h", n=n, c=k), "grad_h",
              subtitle="layer 2's ∂L/∂x"),
    ]  # fmt: skip


def gate_panels(p: TwoLayerPass, s: ChainSlice) -> list[Panel]:
    """The gate cell by cell: pre, ∂L/∂h and layer 1's ∂L/∂y = ∂L/∂h · [pre > 0], the shut
    cells outlined."""
    n, k = s.n, s.k
    closed = shut(p, s)
    marks = {"highlight": closed} if closed.any() else {}
    return [
        Panel(p.pre[n, k], slice_name("pre", n=n, k=k), "pre", subtitle="before the ReLU",
              **marks),
        Panel(p.grad_h[n, k], slice_name("∂L/∂h", n=n, c=k), "grad_h",
              subtitle="from layer 2"),
        Panel(p.grad_pre[n, k], slice_name("∂L/∂y₁", n=n, k=k), "grad_pre",
              subtitle="∂L/∂h · [pre > 0]", **marks),
    ]  # fmt: skip


def weight_panels(p: TwoLayerPass, s: ChainSlice) -> list[Panel]:
    """∂L/∂w₁[k, c] and ∂L/∂w₂[0, k], each beside its layer's kernel."""
    k, c = s.k, s.c
    taps1 = tap_grid(*p.spec.first.kernel_size)
    taps2 = tap_grid(*p.spec.second.kernel_size)
    return [
        Panel(p.first.forward.w[k, c], slice_name("w₁", k=k, c=c), "w1", taps=taps1),
        Panel(p.grads["w1"][k, c], slice_name("∂L/∂w₁", k=k, c=c), "grad_w1",
              subtitle="x̃ ⋆ dilate(∂L/∂y₁)"),
        Panel(p.second.forward.w[0, k], slice_name("w₂", k=0, c=k), "w2", taps=taps2),
        Panel(p.grads["w2"][0, k], slice_name("∂L/∂w₂", k=0, c=k), "grad_w2",
              subtitle="h̃ ⋆ dilate(∂L/∂y)"),
    ]  # fmt: skip


# The still grids of the page's stages that do not move, by the lecture's stage key
PANELS = {
    "chain-forward": forward_panels,
    "chain-grad-h": grad_h_panels,
    "chain-weights": weight_panels,
}


def gate_caption(p: TwoLayerPass, s: ChainSlice) -> str:
    """What the gate did to this slice, in words."""
    if not p.spec.relu:
        return "No ReLU between the layers: ∂L/∂h passes unchanged, it is layer 1's ∂L/∂y."
    closed = int(shut(p, s).sum())
    if not closed:
        return (
            "ReLU gate: every pre > 0 here, so all of ∂L/∂h passes (a negative bias b₁ shuts "
            "some cells)."
        )
    verb = "passes" if closed == 1 else "pass"
    return (
        f"ReLU gate: {count(closed, 'cell')} with pre ≤ 0 (outlined) {verb} 0, the others "
        "∂L/∂h unchanged: layer 1's ∂L/∂y = ∂L/∂h · [pre > 0]."
    )


def handover_motion(p: TwoLayerPass, s: ChainSlice, tweens: int = 8) -> Motion:
    """∂L/∂h[n, k] leaves layer 2's side of the panel and lands on layer 1's ∂L/∂y grid; then
    the ReLU's gate zeroes (and outlines) the cells whose pre ≤ 0.

    One panel holds both sides: layer 2's on the left (columns −W−GAP…−GAP−1, no grid) and
    layer 1's ∂L/∂y grid on the right (columns 0…W−1), so that the cells travel between them.
    """
    g, closed = p.grad_h[s.n, s.k], shut(p, s)
    H, W = g.shape
    off = W + GAP
    i, j = np.indices(g.shape).reshape(2, -1)
    flat, shut_flat = g.ravel(), closed.ravel()
    scale = scale_of(g)
    start = {
        "open": cells("value", i, j - off, flat, scale).only(~shut_flat),
        "gated": cells("value", i, j - off, flat, scale).only(shut_flat),
        "shut": _outlines(i, j, shut_flat, 0.0),
    }
    h_name = slice_name("∂L/∂h", n=s.n, c=s.k)
    scenes = [
        Scene(HANDOVER, f"Layer 2's backward pass ends in {h_name}: the gradient of its input h.",
              start),
        Scene(HANDOVER, f"{h_name} is handed to layer 1: the gradient of its output, its ∂L/∂y.",
              {**start, "open": start["open"].at(col=j[~shut_flat]),
               "gated": start["gated"].at(col=j[shut_flat])}),
    ]  # fmt: skip
    if p.spec.relu:
        landed = scenes[-1].groups
        zeros = cells("value", i[shut_flat], j[shut_flat], np.zeros(int(shut_flat.sum())), scale)
        gate = {**landed, "gated": zeros, "shut": _outlines(i, j, shut_flat, 1.0)}
        scenes.append(Scene(HANDOVER, gate_caption(p, s), gate))
    panel = Panel(
        np.zeros((H, W + off)),
        f"{h_name} → {slice_name('∂L/∂y₁', n=s.n, k=s.k)}",
        "grad_pre",
        origin=(0, -off),
        indexed=(H, W),
        subtitle=f"layer 2 → layer 1, {shape_text((H, W))}",
    )
    stage = LECTURE.stage(HANDOVER)
    motion = Motion(
        HANDOVER, (panel,), dict.fromkeys(start, 0), tuple(scenes), even_tweens(scenes, tweens),
        stages=(HANDOVER,), names={HANDOVER: LECTURE.label(stage)},
    )  # fmt: skip
    return within_budget(motion)


def layer_one_motion(
    p: TwoLayerPass, key: str, s: ChainSlice, focus: Focus | None = None
) -> Motion:
    """Layer 1's input-gradient stage `key` (the lecture's "chain-dilate" …) on its ∂L/∂y, the
    gated ∂L/∂h: the input gradient's own motion, named as this page's stage (following the
    focus's selected ∂L/∂x or ∂L/∂x̃ cell, as the Input gradient page does)."""
    own = key.removeprefix("chain-")
    focus = focus or Focus(s.n, s.k, s.c)
    motion = stage_motion(own, p.first.input_grad, None, focus)
    return replace(motion, names={own: LECTURE.label(LECTURE.stage(key))})


def _outlines(i, j, keep, opacity: float):
    """Outlines of the shut cells on layer 1's grid (GATE_COLOR), at `opacity`."""
    ring = cells("shut", i[keep], j[keep], np.zeros(int(keep.sum())), opacity=opacity)
    return replace(ring, color=np.full(int(keep.sum()), GATE_COLOR, object))


# --- a selected cell -----------------------------------------------------------------------------

# The page's grids that share a shape, by panel key: a cell selected in one is outlined in each
FAMILIES = (
    ("pre", "h", "grad_h", "grad_pre"),  # layer 1's output
    ("y2", "t", "grad_y2"),  # layer 2's output
    ("x_chain",),
    ("w1", "grad_w1"),
    ("w2", "grad_w2"),
)


def _grids(p: TwoLayerPass, s: ChainSlice) -> dict[str, np.ndarray]:
    """Every grid the page draws of this slice, by panel key (layer 1's ∂L/∂x, ∂L/∂x̃ too)."""
    n, k, c = s.n, s.k, s.c
    ig = p.first.input_grad
    return {
        "pre": p.pre[n, k], "h": p.h[n, k], "grad_h": p.grad_h[n, k],
        "grad_pre": p.grad_pre[n, k], "y2": p.y[n, 0], "t": p.loss.target[n, 0],
        "grad_y2": p.loss.grad_out[n, 0], "x_chain": p.first.forward.x[n, c],
        "w1": p.first.forward.w[k, c], "grad_w1": p.grads["w1"][k, c],
        "w2": p.second.forward.w[0, k], "grad_w2": p.grads["w2"][0, k],
        "grad_x": ig.grad_x[n, c], "grad_x_padded": ig.grad_x_padded[n, c],
    }  # fmt: skip


def handed_over(fig: Figure, p: TwoLayerPass) -> Figure:
    """The handover's figure (`handover_motion` drawn), its clicks on the grids its cells stand
    for: a cell on layer 2's side selects ∂L/∂h's, on layer 1's grid ∂L/∂y₁'s (the gap none)."""
    W = p.grad_h.shape[-1]
    for trace in fig.traces:
        if trace.get("name") != "grad_pre:click":
            continue
        cols = np.array([c for _, _, c in trace["customdata"]])  # the panel's array columns
        keep = (cols < W) | (cols >= W + GAP)
        trace["customdata"] = [
            ["grad_h", r, c] if c < W else ["grad_pre", r, c - W - GAP]
            for (_, r, c), kept in zip(trace["customdata"], keep)
            if kept
        ]
        for name in ("x", "y"):
            trace[name] = [v for v, kept in zip(trace[name], keep) if kept]
    return fig


def selected_cell(p: TwoLayerPass, s: ChainSlice, sel) -> tuple[str, int, int] | None:
    """A click (panel key, row, col) as a cell of the page's grids: on layer 1's dilated or
    padded ∂L/∂y₁ the cell it came from (none on an inserted zero or the padding); None when
    it lies in no grid."""
    if sel is None:
        return None
    key, r, c = sel
    one = p.spec.first
    if key in ("dilated", "padded"):
        if key == "padded":
            (gt, _), (gl, _) = one.full_padding
            r, c = r - gt, c - gl
        (sh, sw) = one.stride
        if r % sh or c % sw:
            return None
        key, r, c = "grad_pre", r // sh, c // sw
    grid = _grids(p, s).get(key)
    if grid is None or not (0 <= r < grid.shape[0] and 0 <= c < grid.shape[1]):
        return None
    return key, r, c


def outlined(panels: list[Panel], cell: tuple[str, int, int] | None) -> list[Panel]:
    """The panels with the selected cell outlined in each grid of its family."""
    family = next((f for f in FAMILIES if cell and cell[0] in f), ())
    return [replace(q, selected=cell[1:]) if q.key in family else q for q in panels]


def cell_words(p: TwoLayerPass, s: ChainSlice, cell: tuple[str, int, int] | None) -> str:
    """The selected cell's numbers along the chain, in one line ("" for none): through the
    ReLU for layer 1's output, against the target for y, a weight and its gradient."""
    if cell is None:
        return ""
    key, r, c = cell
    g = {k: v[r, c] for k, v in _grids(p, s).items() if v.shape[0] > r and v.shape[1] > c}
    at = f"[{r}, {c}]"
    if key in FAMILIES[0]:
        relu = f"h{at} = ReLU(pre) = {number(g['h'])}" if p.spec.relu else f"h{at} = pre"
        gate = f"[{number(g['pre'])} > 0]" if p.spec.relu else "1 (no ReLU)"
        return (f"pre{at} = {number(g['pre'])} · {relu} · ∂L/∂h{at} = {number(g['grad_h'])} · "
                f"∂L/∂y₁{at} = ∂L/∂h · {gate} = {number(g['grad_pre'])}")  # fmt: skip
    if key in FAMILIES[1]:
        return (f"y{at} = {number(g['y2'])} · t{at} = {number(g['t'])} · "
                f"∂L/∂y{at} = y − t = {number(g['grad_y2'])}")  # fmt: skip
    if key in FAMILIES[3] or key in FAMILIES[4]:
        w = "w₁" if key in FAMILIES[3] else "w₂"
        wk = "w1" if key in FAMILIES[3] else "w2"
        return f"{w}{at} = {number(g[wk])} · ∂L/∂{w}{at} = {number(g['grad_' + wk])}"
    names = {"x_chain": "x", "grad_x": "∂L/∂x", "grad_x_padded": "∂L/∂x̃"}
    return f"{names[key]}{at} = {number(g[key])}"

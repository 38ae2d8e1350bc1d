"""What a quiz question gives the student: the operands, never the answer."""

from __future__ import annotations

from convviz.render.panel import Panel
from convviz.render.selection import tap_grid
from convviz.stages import Layer

# the slice axis a sum question adds over (beside the taps): ∂L/∂x over the filters, an output
# cell over the input channels, ∂L/∂w over the batch
SUMMED = {"grad_x": "k", "y": "c", "grad_w": "n"}


def given_rows(lay: Layer, n: int, k: int, c: int, kind: str) -> list[list[Panel]]:
    """The grids a question of `kind` is worked from, a row per slice it adds over: w[k, c] and
    ∂L/∂y[n, k] of every filter k for a cell of ∂L/∂x, x[n, c] and w[k, c] of every channel c for
    an output cell, x[n, c] and ∂L/∂y[n, k] of every sample n for ∂L/∂w; for the others (and
    when that axis has one slice) x[n, c], w[k, c] and ∂L/∂y[n, k] in one row."""
    spec = lay.forward.spec
    size = {"n": spec.batch, "c": spec.in_channels, "k": spec.out_channels}
    axis = SUMMED.get(kind)
    if axis is None or size[axis] == 1:
        return [given_panels(lay, n, k, c)]
    rows = []
    for i in range(size[axis]):
        x, w, g = given_panels(lay, **{"n": n, "k": k, "c": c, axis: i})
        rows.append({"k": [w, g], "c": [x, w], "n": [x, g]}[axis])
    return rows


def given_panels(lay: Layer, n: int, k: int, c: int) -> list[Panel]:
    """x[n, c] (unpadded), w[k, c] in its tap colours, and ∂L/∂y[n, k]: the slice's operands,
    and none of the numbers asked for."""
    fw, g = lay.forward, lay.input_grad.grad_out
    spec = fw.spec
    (pt, pb), (pl, pr) = spec.padding
    if len({pt, pb, pl, pr}) == 1:
        pad = f"padding {pt} ({spec.padding_mode})" if pt else "no padding"
    else:
        pad = f"padding top {pt}, bottom {pb}, left {pl}, right {pr} ({spec.padding_mode})"
    tags = spec.batch > 1 or spec.in_channels > 1 or spec.out_channels > 1
    return [
        Panel(fw.x[n, c], f"x[n={n}, c={c}]" if tags else "x", "x", subtitle=pad),
        Panel(
            fw.w[k, c],
            f"w[k={k}, c={c}]" if tags else "w",
            "w",
            taps=tap_grid(*spec.kernel_size),
            subtitle=f"stride {spec.stride[0]}×{spec.stride[1]}, "
            f"dilation {spec.dilation[0]}×{spec.dilation[1]}",
        ),
        Panel(g[n, k], f"∂L/∂y[n={n}, k={k}]" if tags else "∂L/∂y", "g"),
    ]

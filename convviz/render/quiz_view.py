"""What a quiz question gives the student: the operands, never the answer."""

from __future__ import annotations

from convviz.render.panel import Panel
from convviz.render.selection import tap_grid
from convviz.stages import Layer


def given_panels(lay: Layer, n: int, k: int, c: int) -> list[Panel]:
    """x[n, c] (unpadded), w[k, c] in its tap colours, and ∂L/∂y[n, k]: enough to work any
    question of the slice by hand, and none of the numbers asked for."""
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

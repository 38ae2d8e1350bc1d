"""Stories: engine stages turned into the Panels each page draws, with captions and links.

The forward pass, the weight gradient, the overview and the channels page live here; the input
gradient's storyboard, and a gradient cell in words (the windows that read it, or why none does),
in `convviz.render.story.input_grad`; which cells a selection lights up (windows, readers, zoomed
crops) in `convviz.render.selection`. No arithmetic on values happens here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from convviz.engine.arrays import ForwardArrays, Layer, WeightGradArrays
from convviz.engine.spec import ConvSpec
from convviz.engine.sweeps import Sweep
from convviz.engine.text import count, shape_text, slice_name
from convviz.render.motion.model import Motion
from convviz.render.motion.motions import (
    weight_motion,
)
from convviz.render.panel import Panel, SweepPanels
from convviz.render.selection import (
    adds_cells,
    grad_x_marks,
    in_panel,
    step_of,
    tap_grid,
    tap_names,
    users_of,
    window_mask,
)


def _padded_title(name: str, padding) -> str:
    """'input x[n=0, c=0], padded', or without ', padded' when the padding adds nothing."""
    return f"{name}, padded" if adds_cells(padding) else name


def _summed(a: np.ndarray, over: int, what: str) -> str:
    """'2×2', or '2×2, Σ over 3 channels' when each cell adds up the slices of `over` others
    (a slice's cells alone do not add up to it)."""
    return shape_text(a.shape) + (f", Σ over {count(over, what)}" if over > 1 else "")


def _padded_note(spec) -> str:
    """'5×5 → padded 7×7', or '5×5, no padding' when the padding adds nothing."""
    if spec.in_size == spec.padded_size:
        return f"{shape_text(spec.in_size)}, no padding"
    return f"{shape_text(spec.in_size)} → padded {shape_text(spec.padded_size)}"


def forward_panels(
    fw: ForwardArrays,
    sweep: Sweep,
    n: int,
    k: int,
    c: int,
    selected: tuple[int, int] | None = None,
    reading: tuple[int, int] | None = None,
) -> SweepPanels:
    """x_padded[n, c], w[k, c] and y[n, k]; a selected y cell lights up its window, a selected
    x̃ cell (`reading`, padded-array indices) the y cells whose windows read it."""
    spec = fw.spec
    (pt, _), (pl, _) = spec.padding
    highlight = taps = None
    names = tap_names(*spec.kernel_size)  # the window's taps named as the kernel's (w₀₀ …)
    if selected is not None:
        highlight, taps = window_mask(spec.padded_size, sweep, step_of(sweep, selected))
    panels = SweepPanels(
        Panel(
            fw.x_padded[n, c],
            _padded_title(f"input {slice_name('x', n=n, c=c)}", spec.padding),
            "x",
            pad_mask=fw.pad_mask,
            remainder_mask=fw.remainder_mask,
            unread_mask=fw.unread_mask,
            taps=taps,
            tap_names=names,
            highlight=highlight,
            origin=(-pt, -pl),
            subtitle=_padded_note(fw.spec),
        ),
        Panel(
            fw.w[k, c],
            f"kernel {slice_name('w', k=k, c=c)}",
            "w",
            taps=tap_grid(*spec.kernel_size),
            tap_names=names,
            subtitle=f"{shape_text(fw.w[k, c].shape)}, "
            f"dilation {spec.dilation[0]}×{spec.dilation[1]}",
        ),
        Panel(
            fw.y[n, k],
            f"output {slice_name('y', n=n, k=k)}",
            "y",
            selected=selected,  # outlined red: not also "linked to the selection"
            subtitle=f"{_summed(fw.y[n, k], spec.in_channels, 'channel')}, "
            f"stride {spec.stride[0]}×{spec.stride[1]}",
        ),
    )
    if reading is not None:  # the input cell (marked selected) and the outputs that read it
        panels = panels._replace(
            operand=replace(panels.operand, selected=reading),
            output=users_of(panels.output, sweep, reading),
        )
    return panels


def written_out(panels: SweepPanels) -> SweepPanels:
    """The panels of a slide whose output cell is lit only because its sum is written out (nothing
    is selected): that cell outlined solid black, as an animation outlines the cell it computes,
    not red as a selection; its window stays lit."""
    out = panels.output
    return panels._replace(output=replace(out, selected=None, written=out.selected))


def followed_only(panels: Sequence[Panel]) -> list[Panel]:
    """A storyboard slide's panels when nothing is selected: the cell the page follows (marked
    `selected`) is outlined as the cell written out below, and no cell is lit as linked to a
    selection (the slide shows none)."""
    return [replace(p, highlight=None, selected=None, written=p.selected) for p in panels]


def weight_grad_panels(
    wg: WeightGradArrays,
    sweep: Sweep,
    n: int,
    k: int,
    c: int,
    selected: tuple[int, int] | None = None,
) -> SweepPanels:
    """x_padded[n, c], grad_out[n, k] (the sliding 'kernel', dilated by the stride) and grad_w.

    x̃ is drawn whole, as on the Forward page: the rows and columns no window reaches (a stride's
    remainder) are marked, not cut off.
    """
    spec = wg.spec
    (pt, _), (pl, _) = spec.padding
    operand = wg.x_padded[n, c]
    highlight = taps = None
    if selected is not None:
        highlight, taps = window_mask(operand.shape, sweep, step_of(sweep, selected))
    return SweepPanels(
        Panel(
            operand,
            _padded_title(f"input {slice_name('x', n=n, c=c)}", spec.padding),
            "x",
            pad_mask=wg.pad_mask,
            remainder_mask=wg.remainder_mask,
            unread_mask=wg.unread_mask,
            taps=taps,
            highlight=highlight,
            origin=(-pt, -pl),
            subtitle=_padded_note(spec),
        ),
        Panel(
            wg.grad_out[n, k],
            slice_name("∂L/∂y", n=n, k=k),
            "grad_out",
            taps=tap_grid(*spec.out_size),
            subtitle=f"{shape_text(wg.grad_out[n, k].shape)}, "
            f"spread by the stride {spec.stride[0]}×{spec.stride[1]}",
        ),
        Panel(
            wg.grad_w[k, c],
            slice_name("∂L/∂w", k=k, c=c),
            "grad_w",
            selected=selected,
            subtitle=_summed(wg.grad_w[k, c], spec.batch, "sample"),
        ),
    )


def overview_panels(
    lay: Layer, n: int, k: int, c: int, selected: tuple[str, int, int] | None = None
) -> tuple[list[Panel], list[Panel]]:
    """The layer at a glance: (x padded, w, y) and (grad_out, grad_x, grad_w) for one slice;
    `selected` (panel key, row, col) is outlined in its panel."""
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    (pt, _), (pl, _) = fw.spec.padding
    forward = [
        Panel(
            fw.x_padded[n, c],
            _padded_title(slice_name("x", n=n, c=c), fw.spec.padding),
            "x",
            pad_mask=fw.pad_mask,
            remainder_mask=fw.remainder_mask,
            unread_mask=fw.unread_mask,
            origin=(-pt, -pl),
            subtitle=_padded_note(fw.spec),
        ),
        Panel(
            fw.w[k, c],
            slice_name("w", k=k, c=c),
            "w",
            taps=tap_grid(*fw.spec.kernel_size),
            subtitle=shape_text(fw.w[k, c].shape),
        ),
        Panel(
            fw.y[n, k],
            slice_name("y", n=n, k=k),
            "y",
            subtitle=_summed(fw.y[n, k], fw.spec.in_channels, "channel"),
        ),
    ]
    backward = [
        Panel(ig.grad_out[n, k], slice_name("∂L/∂y", n=n, k=k), "grad_out", subtitle="given"),
        Panel(
            ig.grad_x[n, c],
            slice_name("∂L/∂x", n=n, c=c),
            "grad_x",
            subtitle=_summed(ig.grad_x[n, c], fw.spec.out_channels, "filter"),
            **grad_x_marks(ig),
        ),
        Panel(
            wg.grad_w[k, c],
            slice_name("∂L/∂w", k=k, c=c),
            "grad_w",
            subtitle=_summed(wg.grad_w[k, c], fw.spec.batch, "sample"),
        ),
    ]
    return [_outlined(p, selected) for p in forward], [_outlined(p, selected) for p in backward]


def grad_x_panel(ig, n: int, c: int, selected: tuple[int, int] | None = None) -> Panel:
    """∂L/∂x[n, c] alone, its cells no window reads marked (a close-up's whole grid)."""
    return Panel(ig.grad_x[n, c], slice_name("∂L/∂x", n=n, c=c), "grad_x", selected=selected,
                 **grad_x_marks(ig))  # fmt: skip


def _outlined(panel: Panel, selected: tuple[str, int, int] | None) -> Panel:
    cell = in_panel(panel.key, selected)
    inside = cell is not None and all(0 <= i < s for i, s in zip(cell, panel.shape))
    return replace(panel, selected=tuple(cell)) if inside else panel


def shape_rows(lay: Layer) -> list[dict]:
    """One row per array of the layer: its name, shape and role."""
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    rows = [
        ("x", fw.x, "input (N, C_in, H, W)"),
        (
            "x padded",
            fw.x_padded,
            "input with the padding ring" if fw.pad_mask.any() else "no padding: x itself",
        ),
        ("w", fw.w, "kernel (C_out, C_in, kH, kW)"),
        ("y", fw.y, "output (N, C_out, oH, oW)"),
        ("∂L/∂y", ig.grad_out, "gradient from the next layer"),
        (
            "∂L/∂y dilated",
            ig.dilated,
            "stride − 1 zeros between cells" if ig.dilation_mask.any() else "no zeros to insert",
        ),
        ("∂L/∂y dilated, padded", ig.padded, "ready for the full correlation"),
        ("∂L/∂x̃", ig.grad_x_padded, "gradient on the padded input, ring included"),
        ("∂L/∂x", ig.grad_x, "input gradient, after the mask"),
        ("∂L/∂w", wg.grad_w, "weight gradient, Σ over the batch"),
        ("∂L/∂b", wg.grad_b, "bias gradient, Σ over batch and space"),
    ]
    return [
        {"array": name, "shape": " × ".join(map(str, a.shape)), "what": what}
        for name, a, what in rows
    ]


def window_motion(wg: WeightGradArrays, sweep: Sweep, n: int, k: int, c: int) -> Motion:
    """∂L/∂y[n, k] spreads by the stride into the window that sweeps x̃[n, c] (sweep: (k, c))."""
    return weight_motion(wg, sweep, n, k, c)


@dataclass(frozen=True)
class Grid:
    """A rows × cols grid of small heatmaps for the channels page."""

    key: str
    title: str
    arrays: np.ndarray  # (rows, cols, h, w)
    row_labels: list[str]
    col_labels: list[str]
    caption: str = ""
    selected: tuple[int, int] | None = None  # the tile of the slice the other views show
    fields: tuple[str | None, str | None] = (None, None)  # the slice (n, k, c) a row, a column is
    click_cols: int | None = None  # only the first click_cols columns are slices (not a sum)
    unread: np.ndarray | None = None  # (h, w) cells of every tile no window reads: gradient 0

    @property
    def outlined(self) -> str:
        """The slice of the outlined tile, e.g. "k=0, c=1" ("" when none is)."""
        if self.selected is None:
            return ""
        picks = sorted((("nkc".index(f), f, i) for f, i in zip(self.fields, self.selected) if f))
        return ", ".join(f"{f}={i}" for _, f, i in picks)

    def across(self) -> Grid:
        """The grid with its longer side across (a wide screen): rows and columns swapped when
        there are more rows."""
        if len(self.row_labels) <= len(self.col_labels):
            return self
        return replace(
            self,
            arrays=self.arrays.transpose(1, 0, 2, 3),
            row_labels=self.col_labels,
            col_labels=self.row_labels,
            selected=None if self.selected is None else self.selected[::-1],
            fields=self.fields[::-1],
        )


def channel_grids(
    lay: Layer, n: int, c: int, contributions: np.ndarray | None, k: int | None = None
) -> list[Grid]:
    """x[n] by channel, grad_w as filters × channels, grad_x[n, c] as a sum over filters.

    contributions : (C_out, H, W), each filter's share of grad_x[n, c] (engine data); None:
        no grid of that sum (`filter_sum_grid` makes it on its own);
    k : the filter the other views show; its tiles are outlined (with channel c).
    """
    fw, ig, wg = lay.forward, lay.input_grad, lay.weight_grad
    K, C = fw.spec.out_channels, fw.spec.in_channels
    chans = [f"c={i}" for i in range(C)]
    unread = ig.unread_x_mask if ig.unread_x_mask.any() else None
    zeros = _zeros_words(unread)
    return [
        Grid(
            "x",
            f"input {slice_name('x', n=n)}: {count(C, 'channel')}",
            fw.x[n][None],
            [""],
            chans,
            selected=None if k is None else (0, c),
            fields=(None, "c"),
        ),
        Grid(
            "grad_w",
            f"∂L/∂w: {count(K, 'filter')} × {count(C, 'channel')}, each a small correlation",
            wg.grad_w,
            [f"k={i}" for i in range(K)],
            chans,
            "The tile of filter k and channel c is Σ over the batch n of x̃[n, c] ⋆ "
            "dilate(∂L/∂y[n, k])"
            + (
                f"; outlined: k={k}, c={c}, drawn with its operands below."
                if k is not None
                else "."
            ),
            None if k is None else (k, c),
            ("k", "c"),
        ),
        *([] if contributions is None else [filter_sum_grid(lay, n, c, contributions, k)]),
        Grid(
            "grad_x",
            f"{slice_name('∂L/∂x', n=n)}: every channel",
            ig.grad_x[n][None],
            [""],
            chans,
            zeros.strip(),
            selected=None if k is None else (0, c),
            fields=(None, "c"),
            unread=unread,
        ),
    ]


def filter_sum_grid(
    lay: Layer, n: int, c: int, contributions: np.ndarray, k: int | None = None
) -> Grid:
    """∂L/∂x[n, c] as the sum of each filter's full correlation (`contributions`), then the sum."""
    ig, K = lay.input_grad, lay.forward.spec.out_channels
    unread = ig.unread_x_mask if ig.unread_x_mask.any() else None
    zeros = _zeros_words(unread)
    return Grid(
        "sum_k",
        f"{slice_name('∂L/∂x', n=n, c=c)} = Σ over "
        + ("the " + count(K, "filter") if K > 1 else "its 1 filter"),
        np.concatenate([contributions, ig.grad_x[n, c][None]])[None],
        [""],
        [*(f"from k={i}" for i in range(K)), "Σ = ∂L/∂x"],
        "Each filter sends back its own full correlation; the channel's gradient is their "
        "sum." + zeros,
        None if k is None else (0, k),
        (None, "k"),
        click_cols=K,  # the last column is their sum, no filter
        unread=unread,
    )


def _zeros_words(unread) -> str:
    """What the channel grids' wash means, if they have one."""
    if unread is None:
        return ""
    return (
        " Washed red: the cells no window reads (between the windows or in the remainder); "
        "their gradient is 0 in every channel."
    )


def layer_summary(spec: ConvSpec, n: int) -> str:
    """One line: the input's channels, the filters and the output, e.g. for the Channels page."""
    (H, W), (kH, kW), (oH, oW) = spec.in_size, spec.kernel_size, spec.out_size
    C, K = spec.in_channels, spec.out_channels
    return (
        f"**Input {slice_name('x', n=n)}**: {count(C, 'channel')} of {H}×{W}; "
        f"**{count(K, 'filter')}** of {C}×{kH}×{kW}; **output** {K}×{oH}×{oW}."
    )

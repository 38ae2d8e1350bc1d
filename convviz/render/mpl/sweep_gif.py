"""The sliding-window GIF: operand, kernel, products and the output filling, frame by frame.

Frames are blitted (the still parts drawn once); Pillow writes the GIF with one shared palette.
The caption of every frame is the sum it shows, each number the engine's.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, replace

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from PIL import Image  # Pillow is a dependency of matplotlib

from convviz.engine.sweeps import Sweep
from convviz.engine.text import AXIS_WORDS, MINUS, cell_name, number
from convviz.render.mpl.legend import legend_band, legend_marks, place_legend
from convviz.render.mpl.panel import (
    CORNERS,
    GRID_LW,
    HIGHLIGHT_LW,
    LINE,
    MARGIN,
    SELECTED_LW,
    Drawn,
    cell_box,
    cell_colors,
    draw,
    font_families,
    tap_box,
    text_colors,
    value_cmap,
    value_norm,
)
from convviz.render.mpl.static import new_figure, row_layout
from convviz.render.panel import Panel
from convviz.render.selection import GIF_FRAMES, gif_steps, taps_told_apart
from convviz.render.theme import (
    GIF_DPI,
    GRID_LINE,
    HIGHLIGHT_COLOR,
    TEXT_COLOR,
    THEME,
    Theme,
    tap_colors,
)

# GIF palette: slots for the most frequent colours, taken exactly, and the closest (per channel)
# another colour may come to one already taken
_EXACT_COLORS, _NEAR_LEVELS = 128, 8


# --- the sliding-window GIF -------------------------------------------------------------------


def _term(a: float, b: float) -> str:
    wrap = lambda s: f"({s})" if s.startswith(MINUS) else s  # noqa: E731
    return f"{wrap(number(a))}·{wrap(number(b))}"


# What a sweep's output is and what its channel axis runs over, by the output panel's key: the
# forward sums over input channels c, the full correlation over filters k, ∂L/∂w over samples n.
SWEEP_AXES = {"y": ("y", "c"), "grad_x_padded": ("∂L/∂x̃", "k"), "grad_w": ("∂L/∂w", "n")}
# What slides over the window, by the output panel's key (the products panel's second factor).
SLIDING = {"y": "kernel", "grad_x_padded": "rot180(w)", "grad_w": "∂L/∂y"}


def sweep_caption(
    sweep: Sweep,
    t: int,
    channel: int = 0,
    max_terms: int = 9,
    output: str = "y",
    origin: tuple[int, int] = (0, 0),
    every: int = 1,
) -> str:
    """'step t/T · y[i, j]: a·b + … = s' for step t, with the sum over channels (or filters, or
    samples: by the output's key, SWEEP_AXES) and the bias when there are any.

    The cell is named as the output's axes label it (origin: the label of its top-left cell,
    −1 for x̃'s padded ring); every > 1: 1 step in `every` is a frame, which it says.
    Past max_terms products the rest is one bracket that says what it adds up to.
    """
    name, axis = SWEEP_AXES.get(output, (output, "c"))
    one, many = AXIS_WORDS[axis]
    i, j = sweep.targets[t] + np.asarray(origin)
    x = sweep.operand[channel][np.ix_(sweep.rows[t], sweep.cols[t])].ravel()
    k = sweep.kernel[channel].ravel()
    terms = [_term(a, b) for a, b in zip(x, k)]
    if len(terms) > max_terms:  # cut as formulas.Formula cuts: max_terms written, then the rest
        hidden = sweep.products[t, channel].ravel()[max_terms:]
        terms = [*terms[:max_terms], f"[{hidden.size} more terms = {number(hidden.sum())}]"]
    step = f"step {t + 1}/{sweep.steps}" + (f" (1 step in {every} shown)" if every > 1 else "")
    text = f"{step} · {cell_name(name, i, j)}:  {' + '.join(terms)} = "
    text += number(sweep.partial[t, channel])
    K, bias = sweep.kernel.shape[0], " + bias" if sweep.offset else ""
    if K > 1:
        text += f" ({one} {axis}={channel});  Σ over the {K} {many}{bias} = "
        text += number(sweep.sums[t])
    elif bias:
        text += f"{bias} {number(sweep.offset)} = {number(sweep.sums[t])}"
    return text


@dataclass
class _Frames:
    """What a GIF frame repaints over the saved background (every artist here is animated)."""

    taps: list[Rectangle]  # per tap: its coloured border on the operand (none when too many)
    operand_cell_pt: float
    window: Rectangle  # the window's span on the operand
    products: Drawn  # the products panel: its mesh and numbers change every frame
    products_above: list  # its tap borders, repainted over the new mesh
    products_sum: object  # its subtitle, "Σ = …"
    current: Rectangle  # the output cell being written
    caption: object
    output: Drawn  # its numbers are animated: each is painted once, when its cell is written


def _animated(artist):
    artist.set_animated(True)
    return artist


def _kernel_taps(kernel: Panel) -> np.ndarray:
    """The tap index of each kernel cell: the panel's own (rot180 keeps each tap's colour), or
    row-major when the panel has none."""
    kh, kw = kernel.shape
    return np.arange(kh * kw).reshape(kh, kw) if kernel.taps is None else np.asarray(kernel.taps)


def _products_panel(
    sweep: Sweep, steps: np.ndarray, channel: int, taps: np.ndarray, sliding: str = "kernel"
) -> tuple[Panel, Normalize]:
    """The kernel-shaped grid of window · kernel for the first step, on a norm fit for all steps.

    taps : (kh, kw) the kernel's tap index per cell, so each product wears its tap's colour.
    sliding : what the kernel is (∂L/∂y for a weight gradient), for the panel's title.
    """
    kw = sweep.kernel.shape[2]
    prods = sweep.products[steps, channel]  # (frames, kh, kw)
    panel = Panel(
        prods[0],
        f"window × {sliding}",
        "products",
        taps=taps,
        subtitle=f"Σ = {number(-np.abs(sweep.partial[:, channel]).max())}",  # the widest it gets
    )
    return panel, value_norm(replace(panel, values=prods.reshape(-1, kw)))


def _frame_artists(fig, axes, drawn, taps_of, theme) -> _Frames:
    """Create every artist the frames move; the output starts blank (the scale's neutral middle).

    taps_of : (kh, kw) tap index of each kernel cell; the border that follows kernel cell (a, b)
    over the operand wears that tap's colour (after rot180, the colour the tap had before);
    None: more taps than colours tell apart, the window's outline alone.
    """
    (ax_op, _, ax_prod, ax_out), (op, _, prod, out) = axes, drawn
    taps = []
    if taps_of is not None:
        colors = tap_colors(1, int(taps_of.max()) + 1)  # a tap's colour depends only on its index
        taps = [
            ax_op.add_patch(_animated(tap_box((0, 0), colors[t], op.cell_pt)))
            for t in taps_of.ravel()  # row-major, as _place_step walks the kernel
        ]
    window = cell_box((0, 0), HIGHLIGHT_COLOR, HIGHLIGHT_LW * op.cell_pt, 4.5, "highlight")
    for artist in [prod.mesh, *prod.texts.values()]:
        _animated(artist)
    above = [_animated(p) for p in ax_prod.patches if p.get_label() == "tap"]
    # black as on screen: red is the first kernel tap's colour (and the selection's)
    current = cell_box((0, 0), HIGHLIGHT_COLOR, SELECTED_LW * out.cell_pt, 5.0, "selected")
    caption = fig.text(
        0.5,
        0.0,
        "",
        ha="center",
        va="center",
        color=TEXT_COLOR,
        fontsize=theme.font_size,
        fontfamily=font_families(),
        animated=True,
    )
    out.mesh.set_array(np.broadcast_to(value_cmap()(0.5), out.fills.shape))
    for text in out.texts.values():
        _animated(text)
    return _Frames(
        taps,
        op.cell_pt,
        ax_op.add_patch(_animated(window)),
        prod,
        above,
        _animated(ax_prod.xaxis.label),
        ax_out.add_patch(_animated(current)),
        caption,
        out,
    )


def _place_step(fr: _Frames, sweep: Sweep, t: int, channel: int, scene: _GifScene) -> None:
    """Move the window to step t, show its products and their sum, point at its output cell."""
    rows, cols = sweep.rows[t], sweep.cols[t]
    for tap, (a, b) in zip(fr.taps, np.ndindex(sweep.kernel.shape[1:])):
        tap.set_xy(tap_box((int(rows[a]), int(cols[b])), "none", fr.operand_cell_pt).get_xy())
    fr.window.set_bounds(
        cols[0] - 0.5, rows[0] - 0.5, cols[-1] - cols[0] + 1, rows[-1] - rows[0] + 1
    )
    panel = Panel(sweep.products[t, channel], "", "products")
    fills = cell_colors(panel, scene.norm)
    fr.products.mesh.set_array(fills)
    colors = text_colors(panel, fills)
    for (i, j), text in fr.products.texts.items():
        text.set(text=number(panel.values[i, j]), color=colors[i, j])
    fr.products_sum.set_text(f"Σ = {number(sweep.partial[t, channel])}")
    i, j = sweep.targets[t]
    fr.current.set_xy((j - 0.5, i - 0.5))
    caption = sweep_caption(
        sweep, t, channel, output=scene.output_key, origin=scene.origin, every=scene.every
    )
    fr.caption.set_text(_wrap_caption(caption, scene.wrap_chars))


@dataclass
class _GifScene:
    """A GIF's figure, the artists its frames move, and the steps it samples."""

    fig: Figure
    axes: list[Axes]
    frames: _Frames
    steps: np.ndarray
    norm: Normalize
    wrap_chars: int
    output_key: str  # the sweep's output panel: what its caption names (SWEEP_AXES)
    origin: tuple[int, int]  # the label of the output's top-left cell
    every: int  # steps from one frame to the next (1: every step is a frame)


def _gif_scene(
    sweep: Sweep,
    operand: Panel,
    kernel: Panel,
    output: Panel,
    theme: Theme,
    channel: int,
    max_frames: int,
) -> _GifScene:
    """Lay out and draw the still parts of a sweep's GIF; create the artists each frame moves."""
    taps = _kernel_taps(kernel)
    kernel = replace(kernel, taps=taps)
    if not taps_told_apart(kernel, theme.max_text_cells):  # the kernel shows its values
        taps, kernel = None, replace(kernel, taps=None)
    steps = gif_steps(sweep.steps, max_frames)  # frames the browser shows too
    products, norm = _products_panel(sweep, steps, channel, taps, SLIDING.get(output.key, "kernel"))
    bare = dict(taps=None, highlight=None, selected=None)
    panels = [replace(operand, **bare), kernel, products, replace(output, **bare)]
    caption = 2 * LINE * theme.font_size
    marks = [*legend_marks(panels), "window"]  # what each frame moves
    width = row_layout(panels, theme, None, caption).size[0]
    legend = legend_band(marks, theme, width)
    layout = row_layout(panels, theme, None, caption + legend)
    fig, axes = new_figure(layout, None, theme, dpi=GIF_DPI)
    drawn = [draw(ax, p, theme) for ax, p in zip(axes, panels)]
    fr = _frame_artists(fig, axes, drawn, taps, theme)
    middle = layout.bottom[0] + (legend + caption / 2) / 72  # the caption over the legend
    fr.caption.set_position((0.5, middle / layout.size[1]))
    place_legend(fig, marks, theme, layout)
    wrap_chars = int((layout.size[0] - 2 * MARGIN) * 72 / (0.5 * theme.font_size))
    every = int(steps[1] - steps[0]) if len(steps) > 1 else 1
    return _GifScene(fig, axes, fr, steps, norm, wrap_chars, output.key, output.origin, every)


def sweep_gif(
    sweep: Sweep,
    operand: Panel,
    kernel: Panel,
    output: Panel,
    theme: Theme = THEME,
    *,
    channel: int = 0,
    max_frames: int = GIF_FRAMES,
    fps: float = 4,
) -> bytes:
    """An animated GIF of the sliding window: operand, kernel, products, the output filling.

    sweep : the sweep whose steps animate; operand, kernel, output : its panels (showing
    sweep.operand[channel], sweep.kernel[channel] and sweep.result()). The operand's and output's
    own taps, highlight and selection give way to the animation's; a kernel without taps gets
    them row-major. Each tap keeps the kernel panel's colour on the operand and in the products
    (so a rot180 kernel's taps wear the colours they had before the flip). A products panel
    (window × kernel, tap by tap, and their sum) sits before the output. More than max_frames
    steps are sampled as `selection.gif_steps` says (frames the browser shows too, the last kept);
    every frame shows all output cells up to its step.

    Frames are blitted: the still parts are drawn once and each frame repaints only what moves
    (FuncAnimation and PillowWriter would redraw the whole figure per frame, several times
    slower); Pillow writes the GIF with one shared palette.
    """
    return gif_bytes(sweep_frames(sweep, operand, kernel, output, theme, channel=channel,
                                  max_frames=max_frames), fps)  # fmt: skip


def sweep_frames(
    sweep: Sweep,
    operand: Panel,
    kernel: Panel,
    output: Panel,
    theme: Theme = THEME,
    *,
    channel: int = 0,
    max_frames: int = GIF_FRAMES,
) -> list[np.ndarray]:
    """The frames of `sweep_gif`, as RGB arrays (h, w, 3) (the MP4 takes them as they are)."""
    scene = _gif_scene(sweep, operand, kernel, output, theme, channel, max_frames)
    fig, axes, fr = scene.fig, scene.axes, scene.frames
    canvas = fig.canvas
    fr.products_sum.set_alpha(0)  # an Axis draws its label even when animated: keep it blank
    canvas.draw()
    fr.products_sum.set_alpha(1)
    background, shown = canvas.copy_from_bbox(fig.bbox), 0
    frames = []
    for t in scene.steps:
        canvas.restore_region(background)
        _paint_cells(axes[-1], fr.output, sweep.targets[shown : t + 1])  # written for good
        background, shown = canvas.copy_from_bbox(fig.bbox), t + 1
        _place_step(fr, sweep, int(t), channel, scene)
        moving = [*fr.taps, fr.window, fr.products.mesh, *fr.products.texts.values()]
        for artist in [*moving, *fr.products_above, fr.products_sum, fr.current, fr.caption]:
            fig.draw_artist(artist)
        frames.append(np.asarray(canvas.buffer_rgba())[..., :3].copy())
    return frames


def _paint_cells(ax: Axes, out: Drawn, cells: np.ndarray) -> None:
    """Paint output cells (n, 2) with their colour and number onto the canvas, once."""
    i, j = cells[:, 0], cells[:, 1]
    squares = np.stack([np.stack([j + dx, i + dy], 1) for dx, dy in CORNERS], 1)  # (n, 4, xy)
    patch = PolyCollection(squares, facecolors=out.fills[i, j], edgecolors=GRID_LINE,
                           linewidths=GRID_LW * out.cell_pt, animated=True)  # fmt: skip
    ax.add_collection(patch, autolim=False)
    ax.draw_artist(patch)
    patch.remove()  # the pixels stay; the figure does not grow a collection per frame
    for cell in zip(i.tolist(), j.tolist()):
        if cell in out.texts:
            ax.draw_artist(out.texts[cell])


def shared_palette(rgb: np.ndarray) -> Image.Image:
    """A palette image for the frames: the most frequent colours exactly, so flat fills (white,
    PAD_COLOR, cell colours) stay true, then a median cut of the rest for anti-aliased edges.

    rgb (h, w, 3) should hold the colours of every frame (the first and last frames do). Pillow
    maps pixels to a palette through a coarse cache, so a colour within a few levels of one
    already taken is left out: otherwise white could come out as (252, 252, 252).
    """
    pixels = rgb.reshape(-1, 3)[::3].astype(np.int32)  # a sample is plenty for a histogram
    keys, counts = np.unique(pixels @ np.array([1 << 16, 1 << 8, 1]), return_counts=True)
    top = keys[np.argsort(-counts)[:256]]
    exact = np.stack([top >> 16, (top >> 8) & 255, top & 255], axis=1)  # (n, 3), by frequency
    cut = np.array(Image.fromarray(rgb).quantize(256).getpalette()).reshape(-1, 3)
    kept: list[np.ndarray] = []
    for color in [*exact[:_EXACT_COLORS], *cut, *exact[_EXACT_COLORS:]]:
        if len(kept) == 256:
            break
        if not kept or np.abs(np.array(kept) - color).max(axis=1).min() > _NEAR_LEVELS:
            kept.append(color)
    palette = Image.new("P", (1, 1))
    palette.putpalette(np.array(kept, int).ravel().tolist())
    return palette


GIF_HOLD_MS = 2500  # the last frame (the finished result) stays this long before the loop


def gif_bytes(frames: list[np.ndarray], fps: float, hold_ms: int = GIF_HOLD_MS) -> bytes:
    """An endlessly looping GIF of RGB frames (h, w, 3), quantised to one shared palette, that
    holds its last frame for hold_ms."""
    palette = shared_palette(np.concatenate([frames[0], frames[-1]]))
    images = [
        Image.fromarray(f).quantize(palette=palette, dither=Image.Dither.NONE) for f in frames
    ]
    buf = io.BytesIO()
    images[0].save(
        buf,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=[round(1000 / max(fps, 0.1))] * (len(images) - 1) + [max(hold_ms, 20)],
        loop=0,
    )
    return buf.getvalue()


def _wrap_caption(text: str, chars: int) -> str:
    """Break a caption that is too long for the figure once, before a ' + '."""
    if len(text) <= chars:
        return text
    cut = text.rfind(" + ", 0, chars)
    return text if cut < 0 else text[:cut] + "\n" + text[cut + 1 :]

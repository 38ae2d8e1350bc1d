"""A motion's frames drawn with matplotlib (Agg) into a GIF: the same frames the browser plays
(`Motion.frames`), so the export cannot drift from the app."""

from __future__ import annotations

import io
import math

import numpy as np

from convviz.engine.text import number
from convviz.render.motion.model import (
    HOLLOW,
    MOTION_FRAME_MS,
    ROLES,
    Cells,
    Motion,
    backdrop_cells,
    grid_part,
    legend_items,
)
from convviz.render.mpl.panel import font_families
from convviz.render.panel import Panel
from convviz.render.plotly.grids import format_values
from convviz.render.theme import BACKGROUND, FAINT_GRID, MUTED_TEXT, TEXT_COLOR, THEME

GAP = 1.5  # cells between two panels
TOP = 2.4  # rows of room above the grids: the stage line and the titles
STAGE_ROW = 1.0  # of TOP: the stage line's
FONT = 0.36  # cell numbers' size in points per pixel of cell; titles 0.9 of it
SMALL = 0.62  # captions and the legend, of the cells' font
EM = SMALL * FONT * 100 / 72  # the small text's size in cells (at 100 dpi, any cell size)
LINE = 1.25 * EM  # a line of small text, in cells
INDEX = 0.6  # rows under the grids for their column indices (row indices sit in the gaps)
LEFT = 1.4  # cells left of the first grid: its row indices
GIF_LABEL_PX = 10  # a tap's name (w₀₂) at least, in a GIF's pixels (a 40 px cell leaves 10.4)


def panel_columns(motion: Motion) -> list[float]:
    """Each panel's column, in cells: its grid, or its title where the title is wider (a small
    layer's 2×2 kernel under "w[0, 0] → rot180"), so titles never run into each other.

    Titles scale with the cell like everything else, so this holds at every cell size.
    """
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    bold = FontProperties(weight="bold")
    # a title's width in cells: its width at 1 pt × (FONT · 0.9 pt per px of cell) × 100/72 px/pt
    scale = FONT * 0.9 * 100 / 72
    titles = [
        TextPath((0, 0), p.title, size=1, prop=bold).get_extents().width for p in motion.panels
    ]
    return [max(p.shape[1], t * scale + 0.4) for p, t in zip(motion.panels, titles)]


def gif_size_cells(motion: Motion) -> tuple[float, float]:
    """(width, height) of motion_gif's frame in cells (× cell_px: pixels)."""
    columns = panel_columns(motion)
    high = max(p.shape[0] for p in motion.panels)
    width = sum(columns) + GAP * (len(columns) - 1) + LEFT
    return width, high + _top(motion) + _bottom(motion, width)


def _top(motion: Motion) -> float:
    """Rows above the grids: the titles, and the stage line when there are stages to name."""
    return TOP if len(motion.stages) > 1 else TOP - STAGE_ROW


def _bottom(motion: Motion, width: float) -> float:
    """Rows under the grids: the longest caption's lines, then the legend's."""
    legend = len(_legend_rows(motion, width))
    caption = _caption_lines(motion, width) * LINE
    return INDEX + 0.7 + caption + (0.3 + legend * LINE if legend else 0.0) + 0.4


def _text_cells(text: str) -> float:
    """The width of small text in cells, spaces included (a path's outline would drop them)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    return TextToPath().get_text_width_height_descent(text, FontProperties(size=1), False)[0] * EM


def _caption_lines(motion: Motion, width: float) -> int:
    """Lines of the longest caption (cut at 150 characters) wrapped to the frame's width."""
    longest = max(_text_cells(s.caption[:150]) for s in motion.scenes)
    return max(1, math.ceil(longest / (width - 2.5)))  # words wrap whole: some room


def _legend_rows(motion: Motion, width: float) -> list[list[tuple[str, str]]]:
    """The legend's (text, colour) pieces, wrapped to lines that fit the frame's width."""
    rows, x = [], width
    for glyph, colour, words in legend_items(motion):
        item = [(glyph, colour), (f" {words}    ", MUTED_TEXT)]
        w = sum(_text_cells(t) for t, _ in item)
        if x + w > width - 1.5:
            rows.append([])
            x = 0.0
        rows[-1] += item
        x += w
    return rows


def motion_frames(motion: Motion, *, cell_px: int = 40) -> list[np.ndarray]:
    """The motion's frames drawn with matplotlib (Agg), as RGB arrays (h, w, 3).

    The same frames as the browser's (`Motion.frames`). Blitted: the still parts (titles,
    indices, legend, backdrops) are drawn once; each frame restores them and draws only its
    cells, numbers, stage line and caption (a full redraw per frame spent most of an export's
    time laying out the same still text again).
    """
    canvas, ax, shift, font = _gif_stills(motion, cell_px)
    label_px = THEME.tap_label_font(cell_px, font * 100 / 72, GIF_LABEL_PX)
    label = None if label_px is None else label_px * 72 / 100  # points, as `font`
    H = max(p.shape[0] for p in motion.panels)
    canvas.draw()
    background = canvas.copy_from_bbox(ax.figure.bbox)
    stamps = _Numbers(ax)
    out = []
    for f in motion.frames():
        canvas.restore_region(background)
        drawn, numbers = [], []
        for name, c in f.groups.items():
            dy, dx = shift[motion.where[name]]
            drawn += _gif_cells(ax, c, dy, dx, font, numbers, label)
        if len(motion.stages) > 1:
            drawn.append(ax.text(-0.5, -1.9, _stage_line(motion, f.stage),
                                 fontsize=font, weight="bold", color=TEXT_COLOR))  # fmt: skip
        drawn.append(ax.text(-0.5, H + INDEX + 0.2, f.caption[:150], fontsize=font * SMALL,
                             color=MUTED_TEXT, va="top", wrap=True))  # fmt: skip
        for artist in sorted(drawn, key=lambda a: a.get_zorder()):  # as a full draw orders them
            ax.draw_artist(artist)
        rgb = np.asarray(canvas.buffer_rgba())[..., :3].copy()
        stamps.stamp(rgb, numbers)  # over the squares; outlines (a window) stay visible around
        out.append(rgb)
        for artist in drawn:
            artist.remove()
    return out


def motion_durations(count: int, frame_ms: int = MOTION_FRAME_MS) -> list[int]:
    """How long each of a motion's frames shows: its start and its result held longer."""
    return ([frame_ms * 8] + [frame_ms] * (count - 2) + [frame_ms * 20])[:count]


def motion_gif(motion: Motion, *, cell_px: int = 40, frame_ms: int = MOTION_FRAME_MS) -> bytes:
    """The motion's frames (`motion_frames`) as GIF bytes, with one shared palette."""
    frames = motion_frames(motion, cell_px=cell_px)
    return frames_gif(frames, motion_durations(len(frames), frame_ms))


def frames_gif(frames: list[np.ndarray], durations: list[int]) -> bytes:
    """A looping GIF of RGB frames shown for `durations` ms each (a motion's, when empty),
    quantised to one palette of the colours its first, middle and last frames hold."""
    from PIL import Image

    from convviz.render.mpl.sweep_gif import shared_palette

    durations = durations or motion_durations(len(frames))
    palette = shared_palette(np.concatenate([frames[0], frames[len(frames) // 2], frames[-1]]))
    images = [
        Image.fromarray(f).quantize(palette=palette, dither=Image.Dither.NONE) for f in frames
    ]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:],
                   duration=durations[: len(images)], loop=0)  # fmt: skip
    return out.getvalue()


def _stage_line(motion: Motion, stage: str) -> str:
    """A frame's stage line: 'stage 2/6 · dilate', its place among the motion's stages and its
    name (a lecture stage's label without its number)."""
    words = motion.label(stage).partition(" · ")
    return f"stage {motion.stages.index(stage) + 1}/{len(motion.stages)} · {words[2] or words[0]}"


def _gif_stills(motion: Motion, cell_px: int):
    """The figure with what every frame shares (panel extents, titles, backdrops) drawn once:
    (canvas, axes, per panel the shift from label to drawing coordinates, the cells' font)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from convviz.render.mpl.panel import draw_outline  # matplotlib: loaded for a GIF only

    columns = panel_columns(motion)
    W, Hc = gif_size_cells(motion)
    H = max(p.shape[0] for p in motion.panels)
    fig = Figure(figsize=(W * cell_px / 100, Hc * cell_px / 100), dpi=100)
    fig.patch.set_facecolor(BACKGROUND)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-LEFT, W - LEFT)
    ax.set_ylim(H - 0.5 + _bottom(motion, W), -0.5 - _top(motion))
    ax.set_axis_off()
    font = cell_px * FONT
    shift, left = [], 0.0  # label coordinates → drawing coordinates, per panel
    for i, (p, col) in enumerate(zip(motion.panels, columns)):
        x0 = left + (col - p.shape[1]) / 2  # the grid centred in its column
        dy, dx = -p.origin[0], x0 - p.origin[1]
        shift.append((dy, dx))
        _gif_extent(ax, p, dy, dx)
        _gif_indices(ax, p, dy, dx, font * SMALL)
        ax.text(left + col / 2 - 0.5, -0.8, p.title, ha="center", va="bottom",
                fontsize=font * 0.9, weight="bold", color=TEXT_COLOR)  # fmt: skip
        if i in motion.backdrops:
            _gif_cells(ax, backdrop_cells(motion.backdrops[i]), dy, dx, font)
        # rows and columns no window reaches, as the stills mark them (drawn where index [0, 0] is)
        draw_outline(ax, p.mask("remainder_mask"), "remainder", cell_px * 0.72,
                     (dx + p.origin[1], dy + p.origin[0]))  # fmt: skip
        draw_outline(ax, p.between(), "unread", cell_px * 0.72,
                     (dx + p.origin[1], dy + p.origin[0]))  # fmt: skip
        left += col + GAP
    legend_top = H + INDEX + 0.2 + _caption_lines(motion, W) * LINE + 0.3  # under the caption
    for r, row in enumerate(_legend_rows(motion, W)):
        x = -0.5
        for text, ink in row:
            ax.text(x, legend_top + (r + 0.5) * LINE, text, fontsize=font * SMALL, color=ink,
                    va="center")  # fmt: skip
            x += _text_cells(text)
    return canvas, ax, shift, font


def _gif_extent(ax, p: Panel, dy: float, dx: float) -> None:
    """Faint cell borders of a panel's grid (as `_faint_grid` in the browser)."""
    (h, w), (oy, ox) = grid_part(p)
    x0, y0 = dx + ox - 0.5, dy + oy - 0.5
    for q in range(w + 1):
        ax.plot([x0 + q, x0 + q], [y0, y0 + h], color=FAINT_GRID, lw=1, zorder=0)
    for r in range(h + 1):
        ax.plot([x0, x0 + w], [y0 + r, y0 + r], color=FAINT_GRID, lw=1, zorder=0)


def _gif_indices(ax, p: Panel, dy: float, dx: float, font: float) -> None:
    """A panel's row indices left of its grid and column indices under it, as the browser
    labels them (array index + origin: a padded grid counts from −padding)."""
    (h, w), (oy, ox) = grid_part(p)
    for r in range(oy, oy + h):
        ax.text(dx + ox - 0.62, dy + r, number(r), ha="right", va="center", fontsize=font,
                color=MUTED_TEXT)  # fmt: skip
    for q in range(ox, ox + w):
        ax.text(dx + q, dy + oy + h - 0.38, number(q), ha="center", va="top", fontsize=font,
                color=MUTED_TEXT)  # fmt: skip


def _gif_cells(
    ax, c: Cells, dy: float, dx: float, font: float, numbers: list | None = None, label=None
):
    """Squares (one collection) and numbers of the visible cells; returns the artists. With
    `numbers`, the numbers are appended to it as (x, y, text, ink, points, anchor) instead of
    drawn, and with `label` (points) the taps' names too, hanging from their squares' corners."""
    from matplotlib.collections import PatchCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Rectangle

    seen = c.opacity > 0.02
    if not seen.any():
        return []
    _, _, outline = ROLES[c.role]
    rows, cols = c.row[seen] + dy, c.col[seen] + dx
    alpha = c.opacity[seen]
    colors = [to_rgba(col, a) for col, a in zip(c.color[seen], alpha)]
    sizes = 0.92 * c.scale[seen]  # a turning kernel's taps shrink with the turn
    boxes = [Rectangle((q - z / 2, r - z / 2), z, z) for r, q, z in zip(rows, cols, sizes)]
    if c.role in HOLLOW:
        coll = PatchCollection(boxes, facecolors="none", edgecolors=colors, lw=3, zorder=4)
        return [ax.add_collection(coll)]
    edge = [to_rgba(outline, a) for a in alpha] if outline else "none"
    coll = PatchCollection(boxes, facecolors=colors, edgecolors=edge, lw=1.5, zorder=2)
    artists = [ax.add_collection(coll)]
    text = format_values(c.value[seen])
    for r, q, s, ink, a, z in zip(rows, cols, text, c.ink[seen], alpha, c.scale[seen]):
        if a > 0.5 and numbers is not None:
            numbers.append((q, r, s, ink, font * z, "mm"))
        elif a > 0.5:
            artists.append(ax.text(q, r, s, ha="center", va="center", fontsize=font * z,
                                   color=ink, zorder=3))  # fmt: skip
    if c.label is not None and label is not None and numbers is not None:
        corner_r, corner_q = c.label_corner()
        on = seen & (c.opacity > 0.5)
        for r, q, name, ink, z in zip(
            corner_r[on] + dy, corner_q[on] + dx, c.label[on], c.ink[on], c.scale[on]
        ):
            if label * z * 100 / 72 >= GIF_LABEL_PX - 1e-6:  # mid-turn, too small: left out
                numbers.append((q, r, name, ink, label * z, "lt"))
    return artists


class _Numbers:
    """Cell numbers stamped as sprites: each (text, ink, size) is set once in the export's font
    (PIL), then blended where a frame's cells are. Laying out a matplotlib Text per cell per
    frame took half a motion's drawing time for the same few numbers again and again."""

    def __init__(self, ax):
        from matplotlib.font_manager import FontProperties, findfont

        self.ax = ax
        # the first of the export's fonts that has a text's characters (Liberation Sans has no
        # subscript digits: a tap's name w₀₂ is set in DejaVu Sans, as matplotlib falls back)
        self.paths = [findfont(FontProperties(family=[f])) for f in font_families()]
        self.sprites: dict = {}

    def path(self, text: str) -> str:
        from matplotlib.ft2font import FT2Font

        for path in self.paths:
            face = FT2Font(path)
            if all(face.get_char_index(ord(ch)) for ch in text if not ch.isspace()):
                return path
        return self.paths[0]

    def sprite(self, text: str, ink: str, points: float, anchor: str = "mm"):
        """(alpha, colour, left, top) of the text, its offset from the anchor point (PIL's
        anchor: "mm" its middle, "lt" its left and top)."""
        key = (text, ink, round(points * 4) / 4, anchor)
        if key not in self.sprites:
            from matplotlib.colors import to_rgb
            from PIL import Image, ImageDraw, ImageFont

            face = ImageFont.truetype(self.path(text), size=max(1, round(points * 100 / 72)))
            x0, y0, x1, y1 = face.getbbox(text, anchor=anchor)
            im = Image.new("L", (x1 - x0 + 2, y1 - y0 + 2), 0)
            ImageDraw.Draw(im).text((1 - x0, 1 - y0), text, font=face, fill=255, anchor=anchor)
            alpha = np.asarray(im, np.float32)[..., None] / 255
            self.sprites[key] = (alpha, 255 * np.array(to_rgb(ink), np.float32), x0 - 1, y0 - 1)
        return self.sprites[key]

    def stamp(self, rgb: np.ndarray, numbers: list) -> None:
        """Blend the numbers (x, y, text, ink, points, anchor), data coordinates, into rgb."""
        if not numbers:
            return
        h, w = rgb.shape[:2]
        xy = self.ax.transData.transform([(x, y) for x, y, *_ in numbers])
        for (px, py), (_, _, text, ink, points, anchor) in zip(xy, numbers):
            alpha, color, ox, oy = self.sprite(text, ink, points, anchor)
            left, top = round(px) + ox, round(h - py) + oy
            sh, sw = alpha.shape[:2]
            a0, b0 = max(0, -top), max(0, -left)
            a1, b1 = min(sh, h - top), min(sw, w - left)
            if a0 >= a1 or b0 >= b1:
                continue
            region = rgb[top + a0 : top + a1, left + b0 : left + b1].astype(np.float32)
            a = alpha[a0:a1, b0:b1]
            rgb[top + a0 : top + a1, left + b0 : left + b1] = region * (1 - a) + color * a

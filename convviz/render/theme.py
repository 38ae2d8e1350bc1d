"""The one home of colours, fonts and sizes, shared by the plotly views and matplotlib exports."""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise

# Cell roles. Real cells are coloured by value (VALUE_SCALE); the roles below override that.
PAD_COLOR = "#d9d9d9"  # cells the padding added (hatched in exports)
PAD_TEXT = "#6e6e6e"
DILATION_COLOR = "#fde9c8"  # zeros that dilation inserted
DILATION_TEXT = "#b7791f"
REMAINDER_COLOR = "#b23a48"  # outline of rows/cols no window reaches
DROPPED_COLOR = "#b23a48"  # cross over gradient the mask drops
HOVER_COLOR = "#2b6cb0"  # outlines of the cells linked to the one under the pointer
HIGHLIGHT_COLOR = "#111111"  # outline of cells linked to the selection
SELECTED_COLOR = "#e53e3e"
HALO_COLOR = "#ffffff"  # under the selected outline, so it shows on a red tap too
GRID_LINE = "#ffffff"
TEXT_COLOR = "#1a202c"
BACKGROUND = "#ffffff"
# Diverging scale centred on 0: negative blue, positive orange, so signs read at a glance. Both
# ends are light enough for black numbers at 7:1 (the high-contrast bar), so every value cell of
# every renderer takes one ink (`VALUE_INK`); the blue was #3b6fb6 (white numbers, 4.9:1).
VALUE_SCALE = [[0.0, "#749cd2"], [0.5, "#f7f7f7"], [1.0, "#d9822b"]]
FONT_FAMILY = "Liberation Sans, Arial, Helvetica, sans-serif"
EXPORT_SCALE = 3  # toolbar PNG at 3× for slides

# Static exports (matplotlib). A cell is Theme.cell_px / EXPORT_PX_PER_INCH inches (0.55 in by
# default), so the theme's font sizes, read as points, fit the cells as they do on screen.
EXPORT_PX_PER_INCH = 80
EXPORT_DPI = 200  # PNG
GIF_DPI = 100  # animation frames: smaller files, still sharp on a slide
EXPORT_MAX_INCHES = (16.0, 9.0)  # width, height; bigger grids get smaller cells
PAD_HATCH = "#a9a9a9"  # the '//' hatching over padded cells
TEXT_ON_DARK = "#ffffff"  # cell numbers on dark cells (`text_color` chooses)
MUTED_TEXT = "#4a5568"  # subtitles, axis indices, captions
MATH_FONTSET = "cm"  # LaTeX-like formulas (matplotlib mathtext)

# Text on the white page or paper, each ≥ 4.5:1 on white (tests/test_a11y_colours.py), most
# ≥ 7:1: a formula's vanishing terms (the formula box, the .tex export) and the .tex marks.
GREY_TERM = MUTED_TEXT  # 7.5:1 (KaTeX's and xcolor's own gray, #808080, is 3.9:1)
TEX_COLORS = {
    "cvpadc": PAD_TEXT,
    "cvinsc": "#2b6cb0",
    "cvremc": REMAINDER_COLOR,
    "cvgrey": GREY_TERM,
}
# The page around the figures (Streamlit's theme, a11y.css, the player): an accent on which white
# text reads (Streamlit's primary button, a selected segmented control, a stage now) and the
# greys of captions and hints. The value scale keeps its own orange (VALUE_SCALE[-1]): white on it
# was 2.9:1. High contrast darkens them to 7:1.
ACCENT = "#9c5c1c"  # 5.3:1 under white (.streamlit/config.toml's primaryColor, checked equal)
ACCENT_HIGH = "#6b3f12"  # 9.0:1
CAPTION_TEXT = "#595959"  # Streamlit's captions and key hints (#828180, 3.9:1): 7.0:1
HINT_TEXT = "#5a6473"  # the player's keys hint (#718096, 4.0:1)
FOCUS_RING = "#1a56db"  # a control's keyboard focus (6.2:1 on white, 2 px off the control)
LINK_TEXT = "#1d4ed8"  # a link (6.7:1)


def a11y_css_variables(high_contrast: bool = False) -> str:
    """The page's accessibility colours as CSS custom properties (:root), which a11y.css, the
    player's shadow root (custom properties inherit into it) and the HTML export read; high
    contrast holds every text to 7:1."""
    names = {
        "caption": "#3d3d3d" if high_contrast else CAPTION_TEXT,  # 11:1 / 7.0:1
        "hint": MUTED_TEXT if high_contrast else HINT_TEXT,  # 7.5:1 / 6.0:1
        "link": "#1e3a8a" if high_contrast else LINK_TEXT,  # 10.4:1 / 6.7:1
        "accent": ACCENT_HIGH if high_contrast else ACCENT,
        "on-accent": BACKGROUND,
        "focus": FOCUS_RING,
        "text": "#000000" if high_contrast else TEXT_COLOR,
    }
    return ":root { " + " ".join(f"--cv-a11y-{k}: {v};" for k, v in names.items()) + " }"


# Plotly views (browser).
PENDING_COLOR = "#eceff3"  # output cells an animation has not computed yet
FAINT_GRID = "#e2e8f0"  # the cells a motion's cells move into; rules between sections
EDGE_COLOR = "#4363d8"  # a big window's edge: blue, clear of the value scale's oranges
GATE_COLOR = "#7b2cbf"  # a shut ReLU gate's outline (two layers): purple, clear of the red

# The page around the figures beside ACCENT and HINT_TEXT (above): the player, the stage bar, the
# offline lecture
ACCENT_SOFT = "#fdf2e7"  # a stage done, the speed chosen
CONTROL_BORDER = "#cbd5e0"
ARROW_TEXT = "#a0aec0"  # the arrows between a player's stages
BLANK_COLOR = "#000000"  # a blanked screen (a clicker's B or .), as slide software


def css_variables() -> str:
    """The theme's colours and fonts as CSS custom properties (:root), for every stylesheet and
    script the browser gets: they read var(--cv-…), never a colour of their own."""
    names = {
        "text": TEXT_COLOR,
        "muted": MUTED_TEXT,
        "hint": HINT_TEXT,
        "arrow": ARROW_TEXT,
        "background": BACKGROUND,
        "accent": ACCENT,
        "accent-soft": ACCENT_SOFT,
        "border": CONTROL_BORDER,
        "rule": FAINT_GRID,
        "blank": BLANK_COLOR,
        "font": FONT_FAMILY,
    }
    return ":root { " + " ".join(f"--cv-{k}: {v};" for k, v in names.items()) + " }"


# Widest plotly figure: the main column at a 1280 px window (980 px less its padding).
MAX_FIGURE_PX = 820
REM_PX = 16.0  # a page's rem, unless presentation mode grows it with the screen
# The screen a figure is sized for until the browser reports its own (main column width, window
# height, rem): 1280×720, the sidebar open (normal mode) or folded (presentation mode, 1.5 rem of
# padding each side).
DEFAULT_VIEWPORT = (MAX_FIGURE_PX, 720, REM_PX)
PRESENTATION_VIEWPORT = (1232, 720, REM_PX)
# The main column the presentation player's bar needs on one row (its keys hint wraps below it,
# at a 1152 px window of a 4:3 projector's 1024 or a 1152 px one), at a 16 px rem.
PLAYER_ROW_PX = 1120


# A kernel tap's second cue, beside its colour: its index in the original kernel (w₀₂) in its
# cell's top-left corner, clear of the centred number. Kernels up to TAP_LABEL_MAX_SIDE a side,
# where it fits above the number (`Theme.tap_label_font`: a 44 px cell's 19 px number leaves
# 12 px above it, a 40 px cell too little).
TAP_LABEL_MAX_SIDE = 5
TAP_LABEL_MIN_PX = 12
TAP_LABEL_INSET = 0.06  # of the cell's edge, from its top and left sides


@dataclass(frozen=True)
class Theme:
    """Sizes for one display mode and the box a figure may fill.

    Cells are as large as the box allows, up to cell_px; cell numbers scale with the cell
    (cell_font_size at cell_px). A figure never grows taller than figure_h unless its cells would
    drop below min_cell_px, and never wider than figure_w.

    Sizes are for a page whose rem is 16 px. A projector's page grows its rem with the screen
    (presentation.css: 24 px at 1920×1080); `fitted` grows the fonts and the largest cell with it.
    """

    font_size: int = 14
    cell_font_size: int = 19  # numbers in a cell of cell_px_for_font; they scale with the cell
    title_font_size: int = 17
    cell_px: int = 44  # largest pixel edge of a grid cell
    min_cell_px: int = 28  # to fit the height, no smaller (the page scrolls instead)
    max_text_cells: int = 24  # per side; bigger grids are drawn without per-cell numbers
    show_secondary: bool = True
    figure_w: int = MAX_FIGURE_PX  # px the main column offers
    figure_h: int = DEFAULT_VIEWPORT[1] - 300  # px left for a figure below the page's header
    cell_px_for_font: int = 44
    rem: float = REM_PX  # px of the page's rem
    high_contrast: bool = False  # every text at 7:1 (a washed-out projector): `needed_contrast`

    def tap_label_font(
        self,
        cell: float,
        number: float,
        least: float = TAP_LABEL_MIN_PX,
        inset: float = TAP_LABEL_INSET,
    ) -> float | None:
        """The size of a tap's index (w₀₂) in the top-left corner of a cell `cell` wide whose
        number (centred) is `number` big: what fits between the cell's top and the number's
        digits (0.72 em tall), the page's text size at most; None when that is under `least`
        (12 px on screen; an export at 200 dpi passes its own, in points)."""
        room = cell * (0.5 - inset) - 0.36 * number  # inset: of the cell, from its corner
        size = min(room, self.font_size)
        return math.floor(size * 10) / 10 if size >= least else None  # never over the room

    def cell_font(self, cell: int) -> int:
        """The size of the numbers in a cell `cell` px wide."""
        return max(
            8,
            min(round(self.cell_font_size * cell / self.cell_px_for_font), 2 * self.cell_font_size),
        )

    @property
    def scale(self) -> float:
        """The page's rem over 16 px: what page sizes measured at 16 px are multiplied by."""
        return self.rem / REM_PX

    def fitted(self, width: int, height: int, rem: float = REM_PX) -> Theme:
        """This theme sized for a main column `width` px wide in a window `height` px tall, on a
        page whose rem is `rem` px."""
        theme = self.scaled(rem / self.rem) if rem != self.rem else self
        chrome = 300  # page title, player and formula (a laptop's page scrolls)
        if not self.show_secondary:  # measured in Chromium; the player's bar is one row wide
            one_row = width >= PLAYER_ROW_PX * theme.scale  # from PLAYER_ROW_PX, else two
            chrome = round((175 if one_row else 201) * theme.scale)
        return replace(theme, figure_w=max(320, width), figure_h=max(240, height - chrome))

    def scaled(self, factor: float) -> Theme:
        """Fonts and the largest cell `factor` times as big (a page whose rem grew with it)."""
        sizes = ("font_size", "cell_font_size", "title_font_size", "cell_px", "cell_px_for_font")
        grown = {name: round(getattr(self, name) * factor) for name in sizes}
        return replace(self, rem=self.rem * factor, **grown)

    def reserve(self, px: int) -> Theme:
        """Less height for the figure: the page shows `px` more above the fold (px measured on a
        page whose rem is 16 px; they grow with the page's rem)."""
        return replace(self, figure_h=max(200, self.figure_h - round(px * self.scale)))


THEME = Theme()
# A projector: cells grow to fill the screen (numbers ≥ 20 px from 48 px cells up).
PRESENTATION = Theme(
    font_size=20,
    cell_font_size=22,
    title_font_size=24,
    cell_px=110,
    min_cell_px=1,  # the whole figure and its player on the screen: never scroll a projector
    show_secondary=False,
    cell_px_for_font=48,
)


def theme_for(
    presentation: bool, viewport: tuple[float, ...] | None = None, high_contrast: bool = False
) -> Theme:
    """The theme of a display mode, fitted to the main column width and window height (and the
    page's rem, when given); with `high_contrast` every text is held to 7:1."""
    if viewport is None:
        viewport = PRESENTATION_VIEWPORT if presentation else DEFAULT_VIEWPORT
    theme = (PRESENTATION if presentation else THEME).fitted(*viewport)
    return replace(theme, high_contrast=True) if high_contrast else theme


# Twelve tap colours, chosen so that a 3×3 kernel's nine stay apart for every reader: the
# smallest CAM02-UCS difference between two of the first nine is 15.2 under simulated
# protanopia, deuteranopia and tritanopia (and 17.3 with full colour vision), where the earlier
# palette (#e6194b, #3cb44b, … a red and a green first) had 3.8 under protanopia. Each is dark
# enough for white numbers or light enough for black ones at 7:1 (luminance ≤ 0.10 or ≥ 0.30),
# and at least 15 apart from the value scale, the selection red, the hover blue, the padding and
# inserted-zero fills (6 under each simulation). Found by a max-min search over an sRGB grid
# (tests/test_a11y_colours.py measures it); the first four (a 2×2 kernel) are 28 apart.
TAP_PALETTE = (
    "#872d87",
    "#a5ff00",
    "#ff87ff",
    "#5aa569",
    "#b40000",
    "#690ff0",
    "#ff5ab4",
    "#a5c300",
    "#87003c",
    "#005a5a",
    "#1eff87",
    "#d269ff",
)


# Distinct tap colours, at most: an 11×11 kernel (the largest) gets one each; past it (∂L/∂y as the
# window of the weight gradient, up to 150×150 cells) they repeat, which keeps every colour scale
# of tap indices small (a 22,500-step scale cost plotly seconds to validate on each rerun).
TAP_CYCLE = 121


def tap_colors(kH: int, kW: int) -> list[str]:
    """One distinct colour per kernel tap (row-major), kept through the 180° flip.

    Beyond the palette, golden-ratio hue steps keep neighbouring taps apart; past TAP_CYCLE taps
    the colours repeat (tap t has the colour of tap t mod TAP_CYCLE).
    """
    colors = []
    for t in range(kH * kW):
        t %= TAP_CYCLE
        if t < len(TAP_PALETTE):
            colors.append(TAP_PALETTE[t])
            continue
        hue = (t * 0.618033988749895) % 1.0
        r, g, b = colorsys.hls_to_rgb(hue, 0.45, 0.70)
        colors.append(readable_fill(f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"))
    return colors


# --- the one rule for a number on a fill (WCAG 2.1) -------------------------------------------
# Every renderer (plotly grids, motions, sweeps, channels; matplotlib PNG/SVG/GIF/MP4; the HTML
# and .tex exports) writes a cell's number in `text_color(fill, px, bold)`: black or white,
# whichever stands out more. One of the two always reaches 4.58:1 (the AA bar of 4.5:1 holds on
# any fill); the high-contrast bar of 7:1 does not, so fills drawn there are chosen for it
# (`readable_fill`: the tap palette and the value scale already are).
INK_DARK, INK_LIGHT = "#000000", "#ffffff"
LARGE_PX, LARGE_BOLD_PX = 24.0, 18.66  # WCAG's large text: 18 pt, or 14 pt bold


def _rgb(color: str) -> tuple[float, float, float]:
    """'#rrggbb' (or '#rgb') as three floats in 0…1."""
    h = color.lstrip("#")
    if len(h) == 3:
        h = "".join(ch * 2 for ch in h)
    return tuple(int(h[i : i + 2], 16) / 255 for i in (0, 2, 4))


@lru_cache(maxsize=4096)
def luminance(color: str) -> float:
    """WCAG 2.1 relative luminance of '#rrggbb'."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in _rgb(color)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2.1 contrast ratio of two colours, 1…21."""
    la, lb = sorted((luminance(a), luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def needed_contrast(px: float, bold: bool = False, high: bool = False) -> float:
    """The ratio text of `px` px needs: 4.5:1 (3:1 large: ≥ 24 px, or bold ≥ 18.66 px); under
    high contrast 7:1 (4.5:1 large), WCAG's AAA."""
    large = px >= LARGE_PX or (bold and px >= LARGE_BOLD_PX)
    if high:
        return 4.5 if large else 7.0
    return 3.0 if large else 4.5


@lru_cache(maxsize=4096)
def text_color(fill: str, px: float = 14, bold: bool = False, high: bool = False) -> str:
    """The colour of a number drawn on `fill`: black or white, whichever contrasts more (the
    size decides only whether that is enough: `readable`)."""
    dark, light = contrast(fill, INK_DARK), contrast(fill, INK_LIGHT)
    return INK_DARK if dark >= light else INK_LIGHT


def readable(fill: str, px: float = 14, bold: bool = False, high: bool = False) -> bool:
    """Whether `text_color`'s ink on `fill` reaches the bar for this size."""
    return contrast(fill, text_color(fill, px, bold, high)) >= needed_contrast(px, bold, high)


@lru_cache(maxsize=1024)
def readable_fill(fill: str, px: float = 14, bold: bool = False, high: bool = True) -> str:
    """`fill`, or its nearest darker or lighter shade (same hue and saturation) on which a number
    of this size reaches its bar: a fill that cannot carry a readable number is changed."""
    if readable(fill, px, bold, high):
        return fill
    h, lightness, s = colorsys.rgb_to_hls(*_rgb(fill))
    for step in range(1, 101):
        for sign in (-1, 1):
            shade = colorsys.hls_to_rgb(h, min(max(lightness + sign * step / 200, 0), 1), s)
            candidate = "#" + "".join(f"{round(c * 255):02x}" for c in shade)
            if readable(candidate, px, bold, high):
                return candidate
    return INK_DARK  # unreachable: black carries white numbers at 21:1


def text_colors(fills, px: float = 14, bold: bool = False, high: bool = False) -> list[str]:
    """text_color of each fill, in order."""
    return [text_color(f, px, bold, high) for f in fills]


def scale_ink(scale, px: float = 14, bold: bool = False, high: bool = False) -> str | None:
    """The ink every colour of a plotly colour scale takes (sampled finely), None if they differ."""
    inks = {text_color(scale_fill(scale, t / 64), px, bold, high) for t in range(65)}
    return inks.pop() if len(inks) == 1 else None


def scale_fill(scale, t: float) -> str:
    """The colour a plotly colour scale [[t, '#rrggbb'], …] gives at t in 0…1 (linear in sRGB, as
    plotly.js interpolates), as '#rrggbb'."""
    t = min(max(t, 0.0), 1.0)
    for (t0, c0), (t1, c1) in pairwise(scale):
        if t <= t1:
            f = (t - t0) / (t1 - t0) if t1 > t0 else 0.0
            a, b = _rgb(c0), _rgb(c1)
            return "#" + "".join(f"{round(255 * (x + f * (y - x))):02x}" for x, y in zip(a, b))
    return scale[-1][1]


VALUE_INK = scale_ink(VALUE_SCALE, high=True)  # black: one ink for every value cell (test)

"""The one home of colours, fonts and sizes, shared by the plotly views and matplotlib exports."""

from __future__ import annotations

import colorsys
from dataclasses import dataclass, replace

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
# Diverging scale centred on 0: negative blue, positive orange, so signs read at a glance.
VALUE_SCALE = [[0.0, "#3b6fb6"], [0.5, "#f7f7f7"], [1.0, "#d9822b"]]
FONT_FAMILY = "Liberation Sans, Arial, Helvetica, sans-serif"
EXPORT_SCALE = 3  # toolbar PNG at 3× for slides

# Static exports (matplotlib). A cell is Theme.cell_px / EXPORT_PX_PER_INCH inches (0.55 in by
# default), so the theme's font sizes, read as points, fit the cells as they do on screen.
EXPORT_PX_PER_INCH = 80
EXPORT_DPI = 200  # PNG
GIF_DPI = 100  # animation frames: smaller files, still sharp on a slide
EXPORT_MAX_INCHES = (16.0, 9.0)  # width, height; bigger grids get smaller cells
PAD_HATCH = "#a9a9a9"  # the '//' hatching over padded cells
TEXT_ON_DARK = "#ffffff"  # cell numbers on saturated cells
MUTED_TEXT = "#4a5568"  # subtitles, axis indices, captions
MATH_FONTSET = "cm"  # LaTeX-like formulas (matplotlib mathtext)

# Plotly views (browser).
PENDING_COLOR = "#eceff3"  # output cells an animation has not computed yet
FAINT_GRID = "#e2e8f0"  # the cells a motion's cells move into; rules between sections
EDGE_COLOR = "#4363d8"  # a big window's edge: blue, clear of the value scale's oranges

# The page around the figures: the player, the stage bar, the offline lecture, Streamlit's own
# accent (.streamlit/config.toml's primaryColor holds a copy, checked equal by a test).
ACCENT = VALUE_SCALE[-1][1]  # the app's orange: a stage now, a player's hover, Streamlit's primary
ACCENT_SOFT = "#fdf2e7"  # a stage done, the speed chosen
CONTROL_BORDER = "#cbd5e0"
HINT_TEXT = "#718096"  # the keys' hint under a player, a file's footer
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


def theme_for(presentation: bool, viewport: tuple[float, ...] | None = None) -> Theme:
    """The theme of a display mode, fitted to the main column width and window height (and the
    page's rem, when given)."""
    if viewport is None:
        viewport = PRESENTATION_VIEWPORT if presentation else DEFAULT_VIEWPORT
    return (PRESENTATION if presentation else THEME).fitted(*viewport)


# Twelve hand-picked, clearly distinct tap colours (a 3×3 kernel uses the first nine).
TAP_PALETTE = (
    "#e6194b",
    "#3cb44b",
    "#4363d8",
    "#f58231",
    "#911eb4",
    "#42d4f4",
    "#f032e6",
    "#9a6324",
    "#469990",
    "#808000",
    "#000075",
    "#bfef45",
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
        colors.append(f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}")
    return colors

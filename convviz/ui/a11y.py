"""The page's accessibility stylesheet (a11y.css; high_contrast.css with hc=1) with the theme's
colours as its --cv-a11y-* variables: the page, the player's shadow root and the HTML export
read the same ones (theme.a11y_css_variables)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from convviz.render.theme import a11y_css_variables

_HERE = Path(__file__).parent
A11Y_CSS = (_HERE / "a11y.css").read_text()
HIGH_CONTRAST_CSS = (_HERE / "high_contrast.css").read_text()


@cache
def a11y_css(high_contrast: bool) -> str:
    """The stylesheet a page adds to its own (two variants, made once)."""
    extra = HIGH_CONTRAST_CSS if high_contrast else ""
    return a11y_css_variables(high_contrast) + A11Y_CSS + extra

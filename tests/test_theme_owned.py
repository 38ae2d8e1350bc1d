"""The theme's colours are owned once (render/theme.py): the browser's stylesheets and scripts,
the offline lecture and LaTeX read them as data or CSS variables; the one copy that cannot
import Python (.streamlit/config.toml) is checked equal here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from convviz import player
from convviz.render import theme
from convviz.ui import assets

ROOT = Path(__file__).resolve().parents[1]
COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b")


def test_streamlits_primary_colour_is_the_themes_accent():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["theme"]["primaryColor"].lower() == theme.ACCENT.lower()


def test_no_colour_literal_outside_the_theme():
    files = [*ROOT.glob("convviz/**/*.py"), *ROOT.glob("convviz/**/*.js"),
             *ROOT.glob("convviz/**/*.css")]  # fmt: skip
    found = {
        str(p.relative_to(ROOT)): COLOUR.findall(p.read_text())
        for p in files
        if p.name != "theme.py" and COLOUR.search(p.read_text())
    }
    assert not found, found


def test_every_variable_a_stylesheet_reads_is_one_the_theme_defines():
    defined = set(re.findall(r"--cv-[\w-]+", theme.css_variables() + theme.a11y_css_variables()))
    css = player.css() + player.page_css() + "".join(assets.sections().values())
    css += (ROOT / "convviz" / "export" / "html.py").read_text()
    used = set(re.findall(r"var\((--cv-[\w-]+)\)", css))
    assert used and used <= defined, used - defined


def test_the_stylesheet_has_its_three_modes():
    assert set(assets.sections()) == {"all", "normal", "presentation"}
    assert ":root { font-size: clamp" in assets.page_css(True)
    assert ":root { font-size: clamp" not in assets.page_css(False)

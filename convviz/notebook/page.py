"""A notebook view as HTML: an output's fragment, the scripts it needs once a page, a whole page.

The scripts (`assets`): plotly.js (as the package ships it, no CDN), the app's player
(convviz/player, as a classic script) and notebook.js, which mounts each output. A notebook's
first output carries them; the others find them on the page (or wait for them: an output run
before the one that carries them). A front end that runs each output in a frame of its own
(Colab) gets them in every output. An output without its scripts run (an untrusted notebook,
a viewer that runs none) shows the stage's PNG and says to run the cell.
"""

from __future__ import annotations

import html
import json
import sys
from functools import cache
from pathlib import Path

from plotly.offline import get_plotlyjs

from convviz import player
from convviz.notebook.view import View
from convviz.render.plotly.grids import PLOTLY_CONFIG
from convviz.render.theme import a11y_css_variables, css_variables

NOTEBOOK_JS = Path(__file__).with_name("notebook.js")
RUN_THE_CELL = ("This animation plays once its cell has run in a trusted notebook: run the cell "
                "(or trust the notebook). Its still:")  # fmt: skip

# The output's own look (its words above the figure); the theme's colours as every page gets them
_OUTPUT_CSS = """
.convviz-nb { font-family: "Source Sans Pro", var(--cv-font); color: var(--cv-text);
  background: var(--cv-background); padding: 4px 0; max-width: 100%; overflow-x: auto; }
.convviz-nb:focus { outline: none; }
.convviz-nb:focus-visible { outline: 2px solid var(--cv-a11y-focus); }
.convviz-nb .cv-heading { font-size: 16px; font-weight: 600; margin: 0 0 2px; }
.convviz-nb .cv-caption, .convviz-nb .cv-note { font-size: 14px; color: var(--cv-muted);
  margin: 0 0 4px; max-width: 820px; }
.convviz-nb .cv-formula { font-size: 1.05rem; }
.convviz-nb .cv-selected { white-space: pre-line; font-size: 1.05rem; margin-top: 4px; }
.convviz-nb .cv-words { font-size: 14px; max-width: 820px; margin-top: 4px; }
.convviz-nb .cv-words summary { cursor: pointer; color: var(--cv-muted); }
"""


def _json(data) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


@cache
def plotly_script() -> str:
    """plotly.js as the package ships it, its UMD wrapper told there is no module loader (so it
    defines window.Plotly where a page has one, as a notebook's may), defined once a page."""
    return (
        "if (!window.Plotly) { (function (define, module, exports) {\n"
        f"{get_plotlyjs()}\n}}).call(window); }}\n"
    )


@cache
def player_script() -> str:
    """The player, notebook.js, the player's look and the outputs' (each defined once a page),
    then the outputs waiting for them mounted."""
    return (
        f"if (!window.convvizPlayer) {{ (function () {{\n{player.global_script()}\n}})(); }}\n"
        f"{NOTEBOOK_JS.read_text()}\n"
        f"window.convvizNotebook.css = {_json(player.css())};\n"
        f"window.convvizNotebook.style = {_json(style())};\n"
        f"window.convvizNotebook.config = {_json(PLOTLY_CONFIG)};\n"
        f"window.convvizNotebook.gridWords = {_json(player.grid_words())};\n"
        "window.convvizNotebook.ready();\n"
    )


def assets() -> str:
    """The scripts every output needs, as one classic script."""
    return plotly_script() + player_script()


def style() -> str:
    """The styles an output carries (~2 KB: every output has its own)."""
    return css_variables() + a11y_css_variables() + player.page_css() + _OUTPUT_CSS


# Mounts the output this script ends, now or when the scripts arrive.
_BOOT = """(function (root) {
  var go = function () { window.convvizNotebook.mount(root); };
  var nb = window.convvizNotebook;
  if (nb && nb.css && window.Plotly && window.convvizPlayer) go();
  else (window.__convvizQueue = window.__convvizQueue || []).push(go);
})(document.currentScript.parentElement);"""


def fragment(view: View, *, with_assets: bool) -> str:
    """The HTML of one output: the stage's words, its still until a script runs, the chart, the
    player's place and the view's data; `with_assets`: the scripts too."""
    size = view.figure.layout_dict
    note = f'<p class="cv-note">{html.escape(view.note)}</p>' if view.note else ""
    formula = "".join(f"<div>{html.escape(line)}</div>" for line in view.lines)
    scripts = f"<script>{assets()}</script>" if with_assets else ""
    # a sliding window's figure has the heading as its title
    said = html.escape(view.heading)
    heading = "" if view.kind == "sweep" else f'<p class="cv-heading">{said}</p>'
    long = f"cv-nb-long-{view.number}"
    return (
        f'<div class="convviz-nb" data-stage="{view.stage.key}">'
        f"<style>{style()}</style>{heading}"
        f'<p class="cv-caption">{html.escape(view.caption)}</p>{note}'
        f'<div class="cv-fallback"><p>{html.escape(RUN_THE_CELL)}</p>'
        f'<img alt="{html.escape(view.heading)}" src="data:image/png;base64,{view.png_base64}">'
        "</div>"
        f'<div class="cv-chart" role="figure" aria-label="{html.escape(view.told.short)}" '
        f'aria-describedby="{long}"><div class="cv-plot" style="width: {size["width"]}px; '
        f'height: {size["height"]}px"></div></div>'
        f'<div class="cv-player"></div><div class="cv-formula">{formula}</div>'
        f'<details class="cv-words"><summary>In words</summary><p id="{long}">'
        f"{html.escape(view.told.long)}</p></details>"
        f'<script type="application/json" class="cv-view">{_json(view.data(""))}</script>'
        f"{scripts}<script>{_BOOT}</script></div>"
    )


def page(view: View) -> str:
    """A whole page of one view, its scripts inside: it plays from a file, offline."""
    title = f"convviz · {view.heading}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title></head>\n<body>\n"
        f"{fragment(view, with_assets=True)}\n</body></html>\n"
    )


class Sent:
    """Whether this kernel's page has the scripts: the first output carries them. A front end
    that puts each output in a frame of its own (Colab) needs them in every one."""

    done = False

    @classmethod
    def needed(cls) -> bool:
        if "google.colab" in sys.modules or not cls.done:
            cls.done = True
            return True
        return False

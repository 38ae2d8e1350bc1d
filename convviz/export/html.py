"""Standalone, offline HTML: an animation with the app's player, or the whole lecture.

One file holds everything it needs: plotly.js (inlined, no CDN), the figures with their frames,
and the app's own player (convviz/ui/player.js and player.css, inlined), so it plays, steps,
scrubs, changes speed, answers the keys and shows each frame's formula lines as the app does,
from a USB stick, with no server and no network. The player finds its chart by the class
Streamlit gives a keyed element (`st-key-chart_<name>`); the page here gives it the same.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import plotly.io as pio
from plotly.offline import get_plotlyjs

from convviz.export.story import Animation, Story
from convviz.formulas import FULL_TERMS, Formula
from convviz.presets import PRESETS_BY_KEY
from convviz.render.animation_frames import (
    KEYS_HINT,
    NO_CAPTION,
    cell_lines,
    player_meta,
    writes_captions,
)
from convviz.render.grids import PLOTLY_CONFIG, panels_figure
from convviz.render.motion_plotly import PICTURE_CSS, motion_figure
from convviz.render.plotly_adapter import Figure, wire
from convviz.render.sweep_animations import sweep_figure
from convviz.render.theme import THEME, Theme, a11y_css_variables
from convviz.text import bias_gradient, number

_UI = Path(__file__).resolve().parent.parent / "ui"

_PAGE_CSS = """
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; color: #1a202c;
       margin: 1.5rem auto; max-width: 1100px; padding: 0 1rem; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.3rem; margin-top: 2.2rem; border-bottom: 1px solid #e2e8f0; }
h3 { font-size: 1.1rem; margin-top: 1.6rem; }
p.note, p.layer { color: #4a5568; margin: 0.2rem 0 0.6rem; }
section.figure { margin: 0.8rem 0 1.6rem; }
pre.formula { font-family: inherit; font-size: 1.05rem; white-space: pre-wrap; margin: 0.3rem 0; }
footer { margin-top: 3rem; color: var(--cv-a11y-hint); font-size: 0.85rem; }
"""

# The player is an ES module for Streamlit's components (`export default function (component)`);
# here it becomes a global the page calls once per chart.
_MOUNT = """
document.querySelectorAll("[data-convviz-player]").forEach(function (node) {
  var data = JSON.parse(node.querySelector("script[type='application/json']").textContent);
  window.convvizPlayer({ parentElement: node, data: data });
});
"""


def player_script() -> str:
    """player.js as a classic script defining window.convvizPlayer(component)."""
    js = (_UI / "player.js").read_text()
    marker = "export default function (component)"
    if marker not in js:
        raise RuntimeError("player.js no longer has its default export; update export/html.py")
    return js.replace(marker, "window.convvizPlayer = function (component)")


def _json(data) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(data, ensure_ascii=False).replace("</", "<\\/")


def _formula_lines(formula: Formula) -> list[str]:
    return [formula.text(numeric=n, max_terms=FULL_TERMS) for n in (False, True)]


def animation_figure(anim: Animation, theme: Theme = THEME) -> tuple[Figure, list[list[str]]]:
    """The animation's plotly figure (as the app draws it) and each frame's formula lines."""
    if anim.sweep is None:
        motion = anim.motion()
        start = 0 if anim.name == "backward-pass" else None  # as the pages open them
        fig = motion_figure(motion, theme, start=start)
        meta = player_meta(fig)
        if anim.cell_formula is None:
            return fig, meta["captions"]
        return fig, cell_lines(meta, anim.cell_formula, _formula_lines)  # as the pages write
    sweep = anim.sweep
    fig = sweep_figure(
        sweep, *anim.panels, theme, channel=anim.channel, start=sweep.steps - 1,
        title=anim.title,
    )  # fmt: skip
    steps = player_meta(fig)["steps"]
    if anim.formula_of is None or not writes_captions(sweep, len(steps)):
        return fig, [[NO_CAPTION]] * len(steps)
    targets = sweep.targets[steps]
    return fig, [_formula_lines(anim.formula_of(int(r), int(c))) for r, c in targets]


def _figure_div(fig: Figure, key: str) -> str:
    size = fig.layout_dict
    return pio.to_html(
        wire(fig), validate=False, full_html=False, include_plotlyjs=False, auto_play=False,
        config=PLOTLY_CONFIG, div_id=f"fig-{key}", default_width=f"{size['width']}px",
        default_height=f"{size['height']}px",
    )  # fmt: skip


def player_block(fig: Figure, captions: list[list[str]], key: str, primary: bool) -> str:
    """A chart and its player: the chart inside an element of class st-key-chart_<key>."""
    data = {
        **player_meta(fig),
        "captions": captions,
        "chart": f"chart_{key}",
        "primary": primary,
        "pres": False,
        "hint": KEYS_HINT,
    }
    return (
        f'<div class="st-key-chart_{key}">{_figure_div(fig, key)}</div>\n'
        f'<div class="st-key-player_{key}" data-convviz-player>'
        f'<script type="application/json">{_json(data)}</script></div>'
    )


def _page(title: str, body: str) -> str:
    css = a11y_css_variables() + (_UI / "player.css").read_text()
    css += (_UI / "player_a11y.css").read_text()
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{_PAGE_CSS}{PICTURE_CSS}{css}</style>
<script>{get_plotlyjs()}</script>
</head><body>
{body}
<footer>Made with convviz. Offline: plotly.js and the player are inside this file.</footer>
<script>{player_script()}
{_MOUNT}</script>
</body></html>
"""


def layer_line(story: Story) -> str:
    """One line that says which layer this is, e.g. for a page's subtitle."""
    spec = story.spec
    preset = PRESETS_BY_KEY.get(story.preset)
    name = preset.title if preset else "custom layer"
    (sh, sw), (dh, dw) = spec.stride, spec.dilation
    (pt, pb), (pl, pr) = spec.padding
    return (
        f"{name}: x {'×'.join(map(str, spec.input_shape))}, w "
        f"{'×'.join(map(str, spec.weight_shape))}, stride {sh}×{sw}, padding "
        f"({pt}, {pb}) × ({pl}, {pr}) {spec.padding_mode}, dilation {dh}×{dw}; "
        f"slice n={story.n}, k={story.k}, c={story.c}"
    )


def _section(anim: Animation, theme: Theme, primary: bool, level: str = "h3") -> str:
    """An animation with its heading (a sweep's figure has its own title) and caption."""
    fig, captions = animation_figure(anim, theme)
    heading = "" if anim.sweep is not None else f"<{level}>{html.escape(anim.title)}</{level}>"
    return (
        f"<section class='figure'>{heading}"
        f"<p class='note'>{html.escape(anim.caption)}</p>"
        f"{player_block(fig, captions, anim.name.replace('-', '_'), primary)}</section>"
    )


def animation_html(story: Story, anim: Animation, theme: Theme = THEME) -> str:
    """One animation of the story as a standalone page."""
    body = (
        f"<h1>{html.escape(anim.title)}</h1><p class='layer'>{html.escape(layer_line(story))}</p>"
        + _section(anim, theme, primary=True)
    )
    return _page(f"convviz · {anim.title}", body)


def _still(story: Story, index: int, theme: Theme) -> str:
    still = story.stills()[index]
    fig = panels_figure(still.panels, theme)
    return (
        f"<section class='figure'><h3>{html.escape(still.title)}</h3>"
        f"<p class='note'>{html.escape(still.caption)}</p>"
        f"{_figure_div(fig, still.name)}</section>"
    )


def _formula(f) -> str:
    """A cell's sum in symbols and in numbers, and whether it adds up (plain text, no MathJax)."""
    lines = [f.text(numeric=n, max_terms=FULL_TERMS) for n in (False, True)]
    head = f"<h3>The cell {html.escape(f.name())}</h3>"
    return (
        head
        + "".join(f"<pre class='formula'>{html.escape(s)}</pre>" for s in lines)
        + (f"<p class='note'>{html.escape(f.check(FULL_TERMS))}</p>")
    )


def lecture_html(story: Story, theme: Theme = THEME, progress=None) -> str:
    """The whole story in order: forward, the input gradient stage by stage with the whole
    backward pass in motion, the weight gradient. progress(done, total) is told per figure."""
    anims = {a.name: a for a in story.animations()}
    parts: list[str] = []
    plan = [
        ("h2", "1. Forward pass"),
        ("anim", "forward"),
        ("formula", story.forward_formula),
        ("h2", "2. Input gradient ∂L/∂x"),
        ("still", 1),
        ("anim", "input-grad-step2"),
        ("anim", "input-grad-step3"),
        ("anim", "input-grad-step4"),
        ("anim", "input-grad-step5"),
        ("anim", "input-grad-step6"),
        ("formula", story.input_grad_formula),
        ("anim", "backward-pass"),
        ("h2", "3. Weight gradient ∂L/∂w"),
        ("anim", "weight-grad"),
        ("formula", story.weight_grad_formula),
        ("anim", "weight-window"),
    ]
    total = sum(kind in ("anim", "still") for kind, _ in plan)
    done, first = 0, True
    for kind, what in plan:
        if kind == "h2":
            parts.append(f"<h2>{html.escape(what)}</h2>")
        elif kind == "formula":
            parts.append(_formula(what))
        elif kind == "still":
            parts.append(_still(story, what, theme))
        else:
            parts.append(_section(anims[what], theme, primary=first))
            first = False
        if kind in ("anim", "still"):
            done += 1
            if progress:
                progress(done, total)
    grad_b = story.layer.weight_grad.grad_b[story.k]
    parts.append(f"<p class='note'>Bias gradient {bias_gradient(story.k)} = {number(grad_b)}.</p>")
    head = (
        "<h1>How a convolution learns: forward and backward, with real numbers</h1>"
        f"<p class='layer'>{html.escape(layer_line(story))}</p>"
        "<p class='note'>Each animation: ▶ plays, ◀ ▶ step, the slider scrubs; keys ← → space "
        "Home End act on the last one used.</p>"
    )
    return _page(f"convviz lecture · {story.preset}", head + "\n".join(parts))

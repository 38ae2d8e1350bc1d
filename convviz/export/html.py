"""Standalone, offline HTML: the lecture as the app's presentation mode without a server.

One file holds everything it needs: plotly.js (inlined, no CDN), the figures with their frames,
the app's own player (convviz/player/core.js + player.js, inlined) and its styles. The lecture
is a deck of the lecture's stages (`convviz.model.lecture`), one per screen, drawn at the app's
presentation sizes (designed at 1280×720, grown with the window as the app grows its rem): the
stage bar and a counter on top, the stage's heading, its figure, the player and each frame's
formula under it. The keys are the app's (`lecture.KEYS`): PageDown / PageUp and n / p the next
and previous stage, ← → space Home End the player, a the whole pass, b or . a blank screen, F5 or f
full screen. One animation alone is a deck of one stage.
"""

from __future__ import annotations

import html
import json
from functools import partial
from pathlib import Path

import plotly.io as pio
from plotly.offline import get_plotlyjs

from convviz import player
from convviz.export.story import Animation, Still, Story
from convviz.model.lecture import Stage
from convviz.model.pages import label
from convviz.model.presets import PRESETS_BY_KEY
from convviz.render.motion.frames import motion_figure
from convviz.render.motion.model import gif_fits
from convviz.render.plotly.adapter import Figure, wire
from convviz.render.plotly.frames import (
    NO_CAPTION,
    cell_lines,
    formula_lines,
    player_meta,
    stepwise,
    writes_captions,
)
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.plotly.grids import PLOTLY_CONFIG
from convviz.render.plotly.spoken import figure_alt, motion_says, say_sums
from convviz.render.plotly.sweeps import sweep_figure
from convviz.render.story.board import sums_of
from convviz.render.story.describe import Description, describe
from convviz.render.theme import Theme, a11y_css_variables, css_variables, theme_for

DECK_PX = (1280, 720)  # the screen a deck is drawn for; a bigger window zooms it whole
DECK_HEAD_PX = 48  # the stage bar above the figure (as the app's, presentation.css)
FORMULA_LINES_PX = 72  # a still's two formula lines (as the app's)
_DECK_JS = Path(__file__).with_name("deck.js")

# The page around the deck: its box at 1280×720, the bar, the heading; colours the theme's.
_PAGE_CSS = """
html, body { margin: 0; height: 100%; background: var(--cv-background); color: var(--cv-text);
  font-family: "Source Sans Pro", var(--cv-font); overflow: hidden; }
#deck { position: relative; transform-origin: 0 0; }
#deck-head { display: flex; align-items: center; gap: 0.3rem; height: 44px; padding: 0 24px;
  flex-wrap: nowrap; overflow: hidden; }
#deck-head button { font: inherit; font-size: 15px; padding: 4px 8px; white-space: nowrap;
  border: 1px solid var(--cv-border); border-radius: 6px; background: var(--cv-background);
  color: var(--cv-text); cursor: pointer; }
#deck-head button[data-cv-now="1"] { background: var(--cv-accent); border-color: var(--cv-accent);
  color: var(--cv-background); font-weight: 600; }
#deck-head .page { color: var(--cv-muted); font-size: 13px; margin: 0 4px 0 6px; }
#deck-head .group { display: none; align-items: center; gap: 0.3rem; }
#deck-head .group.now { display: inline-flex; }
#deck-counter { margin-left: auto; color: var(--cv-muted); font-size: 16px; white-space: nowrap; }
section.stage { position: absolute; top: 44px; left: 0; right: 0; bottom: 0;
  padding: 0 24px; box-sizing: border-box; visibility: hidden; }
section.stage.shown { visibility: visible; }
section.stage h2 { font-size: 22px; margin: 2px 0 2px; font-weight: 600; }
section.stage .figure { display: flex; justify-content: center; }
#deck-nav { display: none; }
"""


def _json(data) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(data, ensure_ascii=False).replace("</", "<\\/")


def deck_theme() -> Theme:
    """The app's presentation theme at 1280×720, less the deck's stage bar."""
    width, height = DECK_PX
    return theme_for(True, (width - 48, height, 16.0)).reserve(DECK_HEAD_PX)


def animation_figure(anim: Animation, theme: Theme | None = None):
    """The animation's plotly figure (as the app draws it, opened on its first frame) and each
    frame's formula lines (as the app writes them on a projector)."""
    theme = theme or deck_theme()
    lines_of = partial(formula_lines, theme=theme)
    if anim.figure is not None:  # its renderer's own frames, their lines in its player data
        return anim.figure.figure(theme, start=0), None
    if anim.sweep is None:
        fig = motion_figure(anim.motion(), theme, start=0)
        fig = anim.dressed(fig) if anim.dressed else fig
        meta = player_meta(fig)
        if anim.cell_formula is None:
            return fig, meta["captions"]
        return fig, cell_lines(meta, anim.cell_formula, lines_of, theme.show_secondary)
    sweep = anim.sweep
    fig = sweep_figure(sweep, *anim.panels, theme, channel=anim.channel, start=0, title=anim.title)
    steps = player_meta(fig)["steps"]
    if anim.formula_of is None or not writes_captions(sweep, len(steps)):
        return fig, [[NO_CAPTION]] * len(steps)
    return fig, [lines_of(anim.formula_of(int(r), int(c))) for r, c in sweep.targets[steps]]


def _figure_div(fig: Figure, key: str) -> str:
    size = fig.layout_dict
    shown = wire(fig, frames=not stepwise(fig))  # a stepwise animation's: its player's data
    return pio.to_html(
        shown, validate=False, full_html=False, include_plotlyjs=False, auto_play=False,
        config=PLOTLY_CONFIG, div_id=f"fig-{key}", default_width=f"{size['width']}px",
        default_height=f"{size['height']}px",
    )  # fmt: skip


def _lecture_data(whole: int | None, heavy: bool = False) -> dict:
    """What every player of the deck is told of the lecture: the deck's own Back / Next
    buttons and bar (deck.js moves the deck), the whole pass's button."""
    return {
        "buttons": {"next": "#deck-next", "back": "#deck-back", "bar": "#deck-head .stage-button"},
        "whole": None if whole is None else {"toggle": whole},
        "heavy": heavy,  # too big to play by itself
    }


def figure_block(fig, key: str, told: Description | None = None) -> str:
    """A chart in the element its player and keyboard grid look in: a figure named by its short
    description (else `figure_alt`), its long one beside it for a screen reader."""
    alt = told.short if told else figure_alt(fig)
    long = (f'<p class="cv-sr" data-cv-describes="chart_{key}">{html.escape(told.long)}</p>'
            if told else "")  # fmt: skip
    return (
        f'<div class="figure st-key-chart_{key}" role="figure" aria-label="{html.escape(alt)}">'
        f"{_figure_div(fig, key)}</div>{long}"
    )


def player_block(
    fig, captions, key: str, lecture: dict, told: Description | None = None, says=None
) -> str:
    """A chart and its player: the chart inside the element its player looks in; told: the
    stage's descriptions (the announcer says its arrival); says: per frame, what its step does
    (where the figure has none: a motion's)."""
    data = player.player_data(
        fig, captions, chart=f"chart_{key}", find=f".st-key-chart_{key}", stage=key,
        presentation=True, primary=False, arrived=told.arrived if told else "", says=says,
        **lecture,
    )  # fmt: skip
    return (
        f"{figure_block(fig, key, told)}\n"
        f'<div class="st-key-player_{key}" data-convviz-player>'
        f'<script type="application/json">{_json(data)}</script></div>'
    )


def _still_block(still: Still, key: str, theme: Theme, told: Description, sums) -> str:
    """A stage of still grids, its sum in the two lines a player writes under its figure."""
    fig = panels_figure(still.panels, theme.reserve(FORMULA_LINES_PX), highlight=still.highlight)
    if sums is not None:
        say_sums(fig, sums)
    lines = formula_lines(still.formula, theme) if still.formula else []
    words = "".join(f"<div>{html.escape(line)}</div>" for line in lines)
    return f'{figure_block(fig, key, told)}<div class="cv-formula">{words}</div>'


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


def deck_stages(story: Story) -> list[Stage]:
    """The stages a deck shows: the layer's lecture, each with a picture or an animation (the
    channels' tiles are the app's alone)."""
    return [s for s in story.stages() if s.animated or s.still]


def _head(story: Story, stages: list[Stage]) -> str:
    """The stage bar: the stages of each page as a group of buttons (the shown stage's group is
    the one on screen), and the counter."""
    out, page = [], None
    for i, stage in enumerate(stages):
        if stage.page != page:
            if page is not None:
                out.append("</span>")
            page = stage.page
            name = label(page)
            out.append(f'<span class="group"><span class="page">{html.escape(name)}</span>')
        out.append(f'<button type="button" class="stage-button" data-stage="{i}">'
                   f"{html.escape(story.lecture.label(stage))}</button>")  # fmt: skip
    out.append('</span><span id="deck-counter"></span>')
    return f'<div id="deck-head">{"".join(out)}</div>'


def _stage_section(story: Story, stage: Stage, i: int, theme: Theme, lecture: dict) -> str:
    key = stage.key.replace("-", "_")
    heading = story.words(stage)[0]
    number = story.lecture.number(stage)
    title = f"{number}. {heading}" if number else heading
    told, sums = describe(story, stage), sums_of(story, stage)
    if stage.animated:
        anim = story.animation(stage)
        fig, captions = animation_figure(anim, theme)
        if sums is not None:
            say_sums(fig, sums)
        says = None if anim.sweep is not None else motion_says(player_meta(fig), anim.cell_formula)
        body, chart = player_block(fig, captions, key, lecture, told, says), f"chart_{key}"
    else:
        body, chart = _still_block(story.still(stage), key, theme, told, sums), ""
    return (
        f'<section class="stage" data-stage="{i}" data-chart="{chart}" data-key="{stage.key}"'
        f"{' data-covers' if stage.covers else ''}>"
        f"<h2>{html.escape(title)}</h2>{body}</section>"
    )


def deck_html(story: Story, stages: list[Stage], title: str, progress=None) -> str:
    """A deck of these stages (one per screen), offline; progress(done, total) per stage."""
    theme = deck_theme()
    whole = next((i for i, s in enumerate(stages) if s.covers), None)
    lecture = _lecture_data(whole, not gif_fits(story.spec))
    sections = []
    for i, stage in enumerate(stages):
        sections.append(_stage_section(story, stage, i, theme, lecture))
        if progress:
            progress(i + 1, len(stages))
    nav = ('<div id="deck-nav"><button id="deck-back" type="button"></button>'
           '<button id="deck-next" type="button"></button></div>')  # fmt: skip
    css = css_variables() + a11y_css_variables() + player.page_css() + player.css() + _PAGE_CSS
    width, height = DECK_PX
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<meta name="description" content="{html.escape(layer_line(story))}">
<style>{css}</style>
<script>{get_plotlyjs()}</script>
</head><body>
<div id="deck" style="width: {width}px; height: {height}px" data-width="{width}"
 data-height="{height}">{_head(story, stages)}{"".join(sections)}</div>{nav}
<script>{player.global_script()}
{_MOUNT % _json(player.grid_words())}</script>
<script>{_DECK_JS.read_text()}</script>
</body></html>
"""


# The player is an ES module for Streamlit's components (`export default function (component)`);
# here it becomes a global the page calls once per chart.
_MOUNT = """
window.convvizGrids({ data: %s });
document.querySelectorAll("[data-convviz-player]").forEach(function (node) {
  var data = JSON.parse(node.querySelector("script[type='application/json']").textContent);
  window.convvizPlayer({ parentElement: node, data: data });
});
"""


def animation_html(story: Story, anim: Animation, theme: Theme | None = None) -> str:
    """One animation of the story as a standalone page (a deck of its one stage)."""
    return deck_html(story, [anim.stage], f"convviz · {anim.title}")


def lecture_html(story: Story, theme: Theme | None = None, progress=None) -> str:
    """The whole lecture as one offline deck: forward, the input gradient stage by stage, the
    whole backward pass, the weight gradient. progress(done, total) is told per stage."""
    return deck_html(story, deck_stages(story), f"convviz lecture · {story.preset}", progress)

"""The player: one animated plotly chart's buttons, keys, hover links and formulas, in the browser.

Every host embeds the same files: the Streamlit pages (`convviz.ui.player`, `convviz.ui.grids`),
the offline deck (`convviz.export.html`) and the notebook view.
- `player.js`: the player (step, play, scrub, speed, the clicker's keys, the frame's formula, each
  step said by the announcer);
- `grid.js`: the page's keyboard grids (every figure's cells walked with the arrow keys, each
  named by a sentence), its skip link, long descriptions, CSV downloads and still stages' words;
- `dom.js`: what both share of the page: an element made, the one announcer (a live region);
- `core.js`: their rules as pure functions (`node --test tests/js`, linted by Biome);
- `player.css`, `a11y.css`: its look, inside its own element; `page.css`: what it needs of the
  page that holds it (the blank screen, a still's formula lines, crisp big grids);
- this module: the data a player is handed (`player_data`), the words the grids are handed
  (`grid_words`), and their scripts and styles.
No host's package is imported here: a host says where its chart is (`find`) and which of its
buttons the clicker's keys press.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from convviz.engine.text import MINUS
from convviz.model.lecture import KEYS, keys_hint
from convviz.render.panel import ROLE_WORDS
from convviz.render.plotly.adapter import wired_frames
from convviz.render.plotly.frames import NO_CAPTION, player_meta, stepwise

if TYPE_CHECKING:
    from convviz.render.plotly.adapter import Figure

HERE = Path(__file__).parent
_DEFAULT = "export default function (component)"


# What an announcer and a keyboard grid say, as templates the browser fills in ({names}): the
# words are here, the browser holds the behaviour
STEP_WORDS = "step {step} of {count}: {said}"
GRID_WORDS = {
    "cell": "{name} row {row}, column {col}: {value}",
    "blank": "no number",
    "minus": MINUS,  # a negative row or column, as the grids write it
    "roles": ROLE_WORDS,
    "grid": "{figure} Keyboard grid: the arrow keys move from cell to cell, Home and End to a "
    "row's ends, Ctrl+Home and Ctrl+End to the first and the last cell; Enter selects the cell, "
    "Escape leaves the grid.",
    "skip": "Skip to the figure's keyboard grid",
}


def _read(name: str) -> str:
    """A file of the player's, its `export` words dropped (it is inlined into one script)."""
    return re.sub(r"^export (?!default)", "", (HERE / name).read_text(), flags=re.MULTILINE)


def script() -> str:
    """core.js, dom.js, then player.js: the player as one ES module for the browser."""
    return "\n".join(_read(name) for name in ("core.js", "dom.js", "player.js"))


def grid_script() -> str:
    """core.js, dom.js, then grid.js: the page's keyboard grids as one ES module (a component
    mounted once a page, handed `grid_words`)."""
    return "\n".join(_read(name) for name in ("core.js", "dom.js", "grid.js"))


def _as_global(js: str, name: str) -> str:
    if _DEFAULT not in js:
        raise RuntimeError(f"{name} no longer has its default export; update convviz/player")
    return js.replace(_DEFAULT, f"window.{name} = function (component)")


def global_script() -> str:
    """The player and the keyboard grids as a classic script defining
    window.convvizPlayer(component) and window.convvizGrids(component), for a page without a
    module loader (the offline deck, a notebook's output)."""
    shared = "\n".join(_read(name) for name in ("core.js", "dom.js"))
    grids = _as_global(_read("grid.js"), "convvizGrids")
    return "\n".join((shared, grids, _as_global(_read("player.js"), "convvizPlayer")))


def grid_words() -> dict:
    """What the keyboard grids are handed (grid.js reads nothing else of the page's words)."""
    return GRID_WORDS


def css() -> str:
    """The player's own look: player.css, then accessibility's colours over it (a11y.css)."""
    return (HERE / "player.css").read_text() + (HERE / "a11y.css").read_text()


def page_css() -> str:
    """What the player needs of the page that holds it (page.css)."""
    return (HERE / "page.css").read_text()


def player_data(
    fig: Figure,
    captions: list[list[str]] | None,
    *,
    chart: str,
    find: str,
    stage: str,
    presentation: bool,
    play: str = "auto",
    primary: bool = True,
    hint: str | None = None,
    hint_all: str | None = None,
    follow: dict[str, int] | None = None,
    buttons: dict[str, str] | None = None,
    whole: dict | None = None,
    reduced: bool = False,
    strip: bool = True,
    selection: str = "",
    heavy: bool = False,
    within: str | None = None,
    arrived: str = "",
    says: list[str] | None = None,
) -> dict:
    """What the player of `fig` is told (player.js reads nothing else).

    chart : the key its chart is drawn under; find : the selector of the element its chart is
        drawn in (the host's); stage : what the screen shows (a new one is an
        arrival: the playback policy opens it); follow : for a motion through stages,
        {stage label: index of its button} in the page's stage bar, which the frames light up;
    buttons : {"next", "back", "bar"}: the selectors of the buttons a clicker presses;
    whole : {"toggle": the bar's button the whole-pass key presses}, where the page has one;
    reduced : the reader asked for reduced motion (still=1): as prefers-reduced-motion, it wins;
    strip : a motion through stages without a stage bar to light shows its own strip of them
        (the app's projector leaves it out: its label names the stage, the room is the grid's);
    within : the keys act only when the keyboard is inside an element this selector matches (a
        notebook's output: the notebook's own keys stay its own elsewhere); None: anywhere.
    arrived : what the announcer says when the stage is entered (`descriptions.arrived`);
    says : per frame, what its step does, where the figure's meta has none (a motion's:
        `spoken.motion_says`); the announcer says "step 4 of 17: " and it.
    """
    meta = dict(player_meta(fig))
    if stepwise(fig):  # it applies the frames itself (plotly is sent the figure without them)
        meta["frames"] = wired_frames(fig)
    if captions is not None:
        meta["captions"] = captions
    meta.setdefault("captions", [[NO_CAPTION]] * len(meta["names"]))
    if says is not None:
        meta["says"] = says
    return {
        **meta,
        "chart": chart,
        "find": find,
        "stage": stage,
        "primary": primary,
        "pres": presentation,
        "play": play,
        "hint": keys_hint() if hint is None else hint,
        "hint_all": hint_all or keys_hint(),  # the hint's tooltip: every key
        "keymap": {action: list(keys) for action, keys in KEYS.items()},
        "buttons": buttons or {},
        "follow": follow,
        "whole": whole,
        "reduced": reduced,
        "strip": strip,
        "selection": selection,  # a new one: the player opens where the server drew it
        "heavy": heavy,  # too big to play by itself (player_core.arrival)
        "within": within,
        "arrived": arrived,
        "words": {"step": STEP_WORDS},
    }

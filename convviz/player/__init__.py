"""The player: one animated plotly chart's buttons, keys, hover links and formulas, in the browser.

Every host embeds the same files: the Streamlit pages (`convviz.ui.player`), the offline deck
(`convviz.export.html`) and the notebook view.
- `player.js`: the player (step, play, scrub, speed, the clicker's keys, the frame's formula);
- `core.js`: its rules as pure functions (`node --test tests/js`, linted by Biome);
- `player.css`, `a11y.css`: its look, inside its own element; `page.css`: what it needs of the
  page that holds it (the blank screen, a still's formula lines, crisp big grids);
- this module: the data a player is handed (`player_data`) and its script and styles.
No host's package is imported here: a host says where its chart is (`find`) and which of its
buttons the clicker's keys press.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from convviz.model.lecture import KEYS, keys_hint
from convviz.render.plotly.adapter import wired_frames
from convviz.render.plotly.frames import NO_CAPTION, player_meta, stepwise

if TYPE_CHECKING:
    from convviz.render.plotly.adapter import Figure

HERE = Path(__file__).parent
_DEFAULT = "export default function (component)"


def script() -> str:
    """core.js (its `export` words dropped) then player.js: one ES module for the browser."""
    core = re.sub(r"^export ", "", (HERE / "core.js").read_text(), flags=re.MULTILINE)
    return core + "\n" + (HERE / "player.js").read_text()


def global_script() -> str:
    """The player as a classic script defining window.convvizPlayer(component), for a page
    without a module loader (the offline deck, a notebook's output)."""
    js = script()
    if _DEFAULT not in js:
        raise RuntimeError("player.js no longer has its default export; update convviz/player")
    return js.replace(_DEFAULT, "window.convvizPlayer = function (component)")


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
    """
    meta = dict(player_meta(fig))
    if stepwise(fig):  # it applies the frames itself (plotly is sent the figure without them)
        meta["frames"] = wired_frames(fig)
    if captions is not None:
        meta["captions"] = captions
    meta.setdefault("captions", [[NO_CAPTION]] * len(meta["names"]))
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
    }

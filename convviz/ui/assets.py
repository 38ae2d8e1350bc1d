"""What the browser is sent besides figures: the page's stylesheet (streamlit.css) cut into its
modes after the theme's CSS variables, the player's script and its stylesheet.

No Streamlit here: the offline lecture (export/html.py) takes the same files.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from convviz.lecture import KEYS, keys_hint
from convviz.render.animation_frames import NO_CAPTION, player_meta, stepwise
from convviz.render.plotly_adapter import wired_frames
from convviz.render.theme import css_variables

if TYPE_CHECKING:
    from convviz.render.plotly_adapter import Figure

HERE = Path(__file__).parent
STYLESHEET = HERE / "streamlit.css"
MODES = ("all", "normal", "presentation")


@cache
def sections() -> dict[str, str]:
    """The stylesheet's rules by mode ("@mode all", "@mode normal", "@mode presentation")."""
    parts = re.split(r"/\* @mode (\w+) \*/", STYLESHEET.read_text())
    found = dict(zip(parts[1::2], parts[2::2]))
    if set(found) != set(MODES):
        raise ValueError(f"{STYLESHEET.name} has modes {sorted(found)}, not {MODES}")
    return found


@cache
def page_css(presentation: bool) -> str:
    """What a page of the app is styled with: the variables, then its mode's rules, then the
    rules for phones and tablets (narrow.css: media queries under 600 px)."""
    mode = "presentation" if presentation else "normal"
    narrow = (HERE / "narrow.css").read_text()
    return css_variables() + sections()["all"] + sections()[mode] + narrow


def player_script() -> str:
    """player_core.js (its `export` words dropped) then player.js: one module for the browser."""
    core = re.sub(r"^export ", "", (HERE / "player_core.js").read_text(), flags=re.MULTILINE)
    return core + "\n" + (HERE / "player.js").read_text()


def player_css() -> str:
    """player.css, then accessibility's colours over it (player_a11y.css, issue 31)."""
    return (HERE / "player.css").read_text() + (HERE / "player_a11y.css").read_text()


def keyed(key: str) -> str:
    """The selector of the element Streamlit draws under `key` (its documented st-key-* class)."""
    return f".st-key-{key}"


def player_data(
    fig: Figure,
    captions: list[list[str]] | None,
    *,
    chart: str,
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
) -> dict:
    """What the player of `fig` is told (player.js reads nothing else).

    chart : the key its chart is drawn under; stage : what the screen shows (a new one is an
        arrival: the playback policy opens it); follow : for a motion through stages,
        {stage label: index of its button} in the page's stage bar, which the frames light up;
    buttons : {"next", "back", "bar"}: the selectors of the buttons a clicker presses;
    whole : {"toggle": the bar's button the whole-pass key presses}, where the page has one;
    reduced : the reader asked for reduced motion (still=1): as prefers-reduced-motion, it wins;
    strip : a motion through stages without a stage bar to light shows its own strip of them
        (the app's projector leaves it out: its label names the stage, the room is the grid's).
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
        "find": keyed(chart),
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
    }

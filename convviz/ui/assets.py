"""The app's page stylesheet: streamlit.css cut into its modes after the theme's CSS variables,
the player's page rules and narrow.css; the selector of an element Streamlit draws; and the
data a component of ours is sent."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import orjson

from convviz import player
from convviz.render.theme import css_variables

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
    """What a page of the app is styled with: the variables, the player's page rules, then its
    mode's rules, then the rules for phones and tablets (narrow.css: media queries under 600 px)."""
    mode = "presentation" if presentation else "normal"
    narrow = (HERE / "narrow.css").read_text()
    return css_variables() + player.page_css() + sections()["all"] + sections()[mode] + narrow


def keyed(key: str) -> str:
    """The selector of the element Streamlit draws under `key` (its documented st-key-* class)."""
    return f".st-key-{key}"


def component_data(data) -> bytes:
    """`data` as the JSON bytes a component of ours is sent (orjson: ~5× json's speed on a
    player's frames; keys made strings as json's are). Bytes go to the browser as they are: a
    dict would be serialized on every rerun, twice, and each value checked for a dataframe."""
    return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)

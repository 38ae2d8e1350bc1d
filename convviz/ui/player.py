"""The player under an animated chart: an HTML control bar and the formula of the frame shown.

The chart's frames are built by `convviz.render.plotly.frames`; the player (player.js, its
rules in player_core.js) drives them in the browser with plotly's animate, so stepping, playing,
scrubbing, the keys and hover linking never wait for the server. Everything the browser needs is
sent from here as data (`player_data`): the frames' names, keyframes and cells, the captions, the
key names (`convviz.model.lecture.KEYS`), the buttons the clicker presses, where its chart is drawn,
and the inputs of the playback policy (the URL's play=, presentation mode).
"""

from __future__ import annotations

import streamlit as st

from convviz import player as embedded
from convviz.render.plotly.adapter import Figure
from convviz.ui.assets import component_data, keyed

_COMPONENT = st.components.v2.component(
    "convviz_player", html="<div></div>", css=embedded.css(), js=embedded.script()
)


def player(fig: Figure, chart_key: str, captions: list[list[str]] | None, **mount) -> None:
    """Mount the player of `fig` (drawn by `views.chart` under key `chart_key`); `mount`: the
    rest of `player_data`'s arguments."""
    _COMPONENT(key=f"player_{chart_key}", data=_encoded(fig, captions, chart_key, mount))


def _encoded(fig: Figure, captions, chart_key: str, mount: dict) -> bytes:
    """The player's data as JSON bytes, encoded once per shared figure, captions and mount.

    Bytes go to the browser as they are; a dict would be serialized on every rerun, twice
    (once to send, once sorted to identify the element), measured ~5% of a rerun's server time
    with 50 sessions, for captions that a shared view keeps built.
    """
    kept = fig.__dict__.get("_convviz_player")
    if kept is not None and kept[0] is captions and kept[1] == (chart_key, mount):
        return kept[2]
    chart = f"chart_{chart_key}"
    data = embedded.player_data(fig, captions, chart=chart, find=keyed(chart), **mount)
    encoded = component_data(data)
    fig._convviz_player = (captions, (chart_key, mount), encoded)
    return encoded

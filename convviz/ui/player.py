"""The player under an animated chart: an HTML control bar and the formula of the frame shown.

The chart's frames are built by `convviz.render.animation_frames`; the player (player.js) drives
them in the browser with plotly's animate, so stepping, playing, scrubbing, the keys and hover
linking never wait for the server. The formula lines of each frame come from the engine's formulas.
"""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from convviz.render.animation_frames import KEYS_HINT, NO_CAPTION, player_meta
from convviz.render.plotly_adapter import Figure

_HERE = Path(__file__).parent
_COMPONENT = st.components.v2.component(
    "convviz_player",
    html="<div></div>",
    # accessibility's colours last, a separate file (issue 31): see player_a11y.css
    css=(_HERE / "player.css").read_text() + (_HERE / "player_a11y.css").read_text(),
    js=(_HERE / "player.js").read_text(),
)


def player(
    fig: Figure,
    chart_key: str,
    captions: list[list[str]] | None,
    *,
    presentation: bool,
    primary: bool = True,
    hint: str = KEYS_HINT,
    follow: dict[str, int] | None = None,
    reduced: bool = False,
) -> None:
    """Mount the player of `fig` (drawn by `views.chart` under key `chart_key`).

    captions : per frame, the lines to show under the bar (e.g. the symbolic and the numeric
        formula of the cell that frame computes); None keeps the figure's own.
    follow : for a motion through stages, {stage label: index of its button} in the page's
        stage bar (the segmented control `w_step`): the player lights up the button of the
        frame's stage. Without it a motion's player shows its own strip of stages.
    reduced : the reader asked for reduced motion (still=1): no gliding, no autoplay, as the
        browser's prefers-reduced-motion does.
    """
    mount = {
        "chart": f"chart_{chart_key}",
        "primary": primary,
        "pres": presentation,
        "hint": hint,
        "follow": {"key": "w_step", "buttons": follow} if follow else None,
        "reduced": reduced,
    }
    _COMPONENT(key=f"player_{chart_key}", data=_encoded(fig, captions, mount))


def _encoded(fig: Figure, captions: list[list[str]] | None, mount: dict) -> bytes:
    """The player's data as JSON bytes, encoded once per shared figure and captions.

    Bytes go to the browser as they are; a dict would be serialized on every rerun, twice
    (once to send, once sorted to identify the element), measured ~5% of a rerun's server time
    with 50 sessions, for captions that a shared view keeps built.
    """
    kept = fig.__dict__.get("_convviz_player")
    if kept is not None and kept[0] is captions and kept[1] == mount:
        return kept[2]
    meta = dict(player_meta(fig))
    if captions is not None:
        meta["captions"] = captions
    meta.setdefault("captions", [[NO_CAPTION]] * len(meta["names"]))
    encoded = json.dumps({**meta, **mount}).encode()
    fig._convviz_player = (captions, mount, encoded)
    return encoded

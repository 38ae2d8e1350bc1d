"""The player under an animated chart: an HTML control bar and the formula of the frame shown.

The chart's frames are built by `convviz.render.animation_frames`; the player (player.js) drives
them in the browser with plotly's animate, so stepping, playing, scrubbing, the keys and hover
linking never wait for the server. The formula lines of each frame come from the engine's formulas.
"""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

from convviz.render.animation_frames import KEYS_HINT, NO_CAPTION, player_meta

_HERE = Path(__file__).parent
_COMPONENT = st.components.v2.component(
    "convviz_player",
    html="<div></div>",
    css=(_HERE / "player.css").read_text(),
    js=(_HERE / "player.js").read_text(),
)


def player(
    fig: go.Figure,
    chart_key: str,
    captions: list[list[str]] | None,
    *,
    presentation: bool,
    primary: bool = True,
    hint: str = KEYS_HINT,
    follow: dict[str, int] | None = None,
) -> None:
    """Mount the player of `fig` (drawn by `views.chart` under key `chart_key`).

    captions : per frame, the lines to show under the bar (e.g. the symbolic and the numeric
        formula of the cell that frame computes); None keeps the figure's own.
    follow : for a motion through stages, {stage label: index of its button} in the page's
        stage bar (the segmented control `w_step`): the player lights up the button of the
        frame's stage. Without it a motion's player shows its own strip of stages.
    """
    meta = dict(player_meta(fig))
    if captions is not None:
        meta["captions"] = captions
    meta.setdefault("captions", [[NO_CAPTION]] * len(meta["names"]))
    _COMPONENT(
        key=f"player_{chart_key}",
        data={
            **meta,
            "chart": f"chart_{chart_key}",
            "primary": primary,
            "pres": presentation,
            "hint": hint,
            "follow": {"key": "w_step", "buttons": follow} if follow else None,
        },
    )

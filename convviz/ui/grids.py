"""The page's keyboard grids, skip link, descriptions and CSV downloads (convviz/player/grid.js):
one empty element a page, mounted once (`keyboard_grids`), handed the words it says. Everything
else it reads from the page: each figure's cells (their click markers' meta), the long
descriptions and number tables the views write. No server widget is added per grid or table.
"""

from __future__ import annotations

import json

import streamlit as st

from convviz import player

_COMPONENT = st.components.v2.component(
    "convviz_grids", html="<div></div>", js=player.grid_script()
)
_WORDS = json.dumps(player.grid_words()).encode()  # sent as bytes: encoded once


def keyboard_grids() -> None:
    """Mount the page's keyboard grids (an empty element; the browser does the rest). Keyless:
    its data never changes, and a keyed component's state is read by every keyed widget's run
    (Streamlit's `filtered_state`), ~1 % of a rerun's server time each."""
    _COMPONENT(data=_WORDS, height=0)

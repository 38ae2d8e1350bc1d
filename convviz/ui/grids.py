"""The page's keyboard grids, skip link, descriptions and CSV downloads (convviz/player/grid.js):
run by the sidebar's component (sidebar.py), which every page draws, handed the words it says.
Everything else it reads from the page: each figure's cells (their click markers' meta), the long
descriptions and number tables the views write. No server element is added per grid or table,
nor one a page.
"""

from __future__ import annotations

import json

from convviz import player

SCRIPT = player.grid_script()  # an ES module: its default export installs the grids once a page
WORDS = json.dumps(player.grid_words())  # what the grids say, written into the page's script

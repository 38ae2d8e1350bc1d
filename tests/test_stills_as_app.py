"""A stage's PNG/SVG draws it as the app does: rot180's taps filled with their own colours (the
still filled w's cells by value with tap-coloured outlines while the app filled them)."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgba_array

from convviz.export.story import Story
from convviz.render.mpl import panel as static_panel
from convviz.render.theme import tap_colors


def test_the_rotate_stills_kernels_wear_their_taps_colours_as_in_the_app():
    story = Story.of("recitation-s2")
    rotate = next(s for s in story.stills() if s.stage.key == "rotate")
    for panel in rotate.panels:  # w and rot180 w
        fills = static_panel.cell_colors(panel)
        want = to_rgba_array(tap_colors(3, 3))[np.asarray(panel.taps)]
        assert np.allclose(fills, want), panel.title
    w, w_rot = rotate.panels
    assert np.allclose(static_panel.cell_colors(w_rot), static_panel.cell_colors(w)[::-1, ::-1])
    # numbers in the ink the one rule gives their fill (theme.text_color)
    inks = static_panel.text_colors(w_rot, static_panel.cell_colors(w_rot))
    assert inks.shape == w_rot.shape

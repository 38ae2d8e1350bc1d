"""Renderers: engine data in, figures out; never Streamlit. Grouped by what they are:

- `theme.py` (every colour, font and size), `panel.py` (one grid with the masks that say what
  each cell is), `geometry.py`, `selection.py`, `mask_geometry.py`: shared by every renderer;
- `story/`: what each stage and page shows, as Panels; `plotly/`: the browser's figures;
  `mpl/`: the exports' matplotlib figures; `motion/`: the backward pass in motion.
"""

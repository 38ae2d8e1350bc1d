"""What the browser draws: plotly figures as plain dicts (never Streamlit).

- `adapter.py`: a figure as the dicts plotly.js reads; `probe.js`: what plotly.js has drawn,
  read by tests and scripts;
- `grids.py`: a grid's traces; `grid_figure.py`: grids side by side as one figure, with their
  headers and legend; `shapes.py`: the outlines over them; `channels.py`: the filters ×
  channels tiles;
- `sweeps.py`: the sliding windows and the scatter route as frames; `frames.py`: the frames and
  the player's data every animated figure shares.
"""

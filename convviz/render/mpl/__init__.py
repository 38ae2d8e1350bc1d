"""What the exports draw with matplotlib (Agg figures, never pyplot).

- `static.py`: a stage's panels side by side as PNG/SVG with their formula; `panel.py`: one
  panel on an Axes; `legend.py`: the marks it draws, in words; `sweep_gif.py`: a sliding window
  as a GIF.
"""

"""convviz in a notebook: the app's figures and player, inline in Jupyter, and in the HTML pages
made of a notebook (nbconvert, Jupyter Book), with no server of convviz's own.

- `arguments.py`: what `show` and `Widget` are told (a preset, a link, keywords, arrays), read by
  the app's own readers into the `Story` every export draws from;
- `view.py`: one stage drawn from the storyboard (the figure, the player's data, the still);
- `page.py` with `notebook.js`: a view as an output's HTML, the scripts it needs once a page
  (plotly.js, the player), a page that plays offline;
- `show.py`: `convviz.show(...)`; `widget.py` with `widget.js`: `convviz.Widget`, two-way
  (anywidget: `pip install convviz[notebook]`).

`import convviz` imports none of it: `convviz.show` and `convviz.Widget` load it when called.
"""

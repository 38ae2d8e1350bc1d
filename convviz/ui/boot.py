"""What every page imports first: the libraries the pages draw with, imported in one thread.

A server process imports the pages when its first sessions open them, often many at once (a class
opening the link as a process starts). Two threads entering a library's circular imports from two
ends (matplotlib: `matplotlib` and `matplotlib.axes`) deadlock, and Python hands one of them a
half-imported module ("cannot import name ..."): seen with 50 sessions arriving within 10 s.
A page's first statement imports this module by its full name, so a second session waits on its
one import lock, holding no other, until the first has imported them all.

It also sets the process's garbage collector for a server that keeps many figures (`compute.CACHE`):
- the objects the imports made are frozen (`gc.freeze`): they live as long as the process, and a
  full collection no longer walks them;
- a full collection waits for a hundred middle ones, not ten. A cache of a thousand figures
  holds ~800,000 containers: each full collection walked them all, ~0.18 s holding every
  session's thread (with 50 sessions, 12 in a minute: ~9 % of the server's CPU, and the tail of
  its latency). What the app frees it frees by reference counts; the cycles left wait longer.
"""

import gc

import matplotlib
import matplotlib.figure  # noqa: F401  (axes, colors, patches, ...)
import pandas  # noqa: F401
import plotly.graph_objects  # noqa: F401

import convviz.ui.views  # noqa: F401  (the pages' own parts, with these libraries)

GC_THRESHOLDS = (2000, 20, 100)  # young, middle, full (Python's defaults: 700, 10, 10)
gc.collect()
gc.freeze()
gc.set_threshold(*GC_THRESHOLDS)

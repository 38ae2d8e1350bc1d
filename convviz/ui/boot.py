"""What every page imports first: the libraries the pages draw with, imported in one thread.

A server process imports the pages when its first sessions open them, often many at once (a class
opening the link as a process starts). Two threads entering a library's circular imports from two
ends (matplotlib: `matplotlib` and `matplotlib.axes`) deadlock, and Python hands one of them a
half-imported module ("cannot import name ..."): seen with 50 sessions arriving within 10 s.
A page's first statement imports this module by its full name, so a second session waits on its
one import lock, holding no other, until the first has imported them all.
"""

import matplotlib
import matplotlib.figure  # noqa: F401  (axes, colors, patches, ...)
import pandas  # noqa: F401
import plotly.graph_objects  # noqa: F401

import convviz.ui.views  # noqa: F401  (the pages' own parts, with these libraries)

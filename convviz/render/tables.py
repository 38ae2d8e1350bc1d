"""A grid's numbers as a table a screen reader walks: a caption, the axes' labels as header cells,
each number as the grid writes it with its role ("0, padding"), and its full-precision number for
the CSV download the browser builds from it (convviz/player/grid.js: a button per table, no server
widget). Plain HTML, no plotting library, for any host (the app's pages, the notebook).
"""

from __future__ import annotations

import re
from html import escape

import numpy as np

from convviz.engine.text import number, shape_text
from convviz.render.panel import ROLE_WORDS, Panel

_TAG = re.compile(r"<[^>]+>")


def full(v: float) -> str:
    """A number with every digit it has (the CSV's): '3', '-0.125', '0.1'; '' for NaN."""
    v = float(v)
    if np.isnan(v):
        return ""
    return str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)


# How a role's cells look in a table (page.css: .cv-p, .cv-z, …), said in its caption
LOOKS = {"p": "grey", "z": "in italics", "d": "struck through", "u": "underlined"}


def caption(panel: Panel) -> str:
    """What a table is: the grid's name and size, and how its cells with a role are marked."""
    name, roles = _TAG.sub("", panel.title), panel.roles()
    marks = [f"{LOOKS[letter]}, {np.count_nonzero(roles == letter)} {words}"
             for letter, words in ROLE_WORDS.items() if (roles == letter).any()]  # fmt: skip
    said = f"{name}, {shape_text(panel.shape)}"
    return f"{said} (cells marked: {'; '.join(marks)})" if marks else said


def table_html(panel: Panel, file_name: str) -> str:
    """The grid as a `<table>` in a `.cv-table` box with its CSV button (`file_name`)."""
    values = np.asarray(panel.values, dtype=float)
    (oy, ox), roles = panel.origin, panel.roles()
    head = "".join(f'<th scope="col">{c + ox}</th>' for c in range(values.shape[1]))
    name = escape(_TAG.sub("", panel.title))
    rows = []
    for r, row in enumerate(values):
        cells = []
        for c, v in enumerate(row):
            role = ROLE_WORDS.get(roles[r, c])
            said = f'<span class="cv-sr">, {escape(role)}</span>' if role else ""
            look = f' class="cv-{roles[r, c]}"' if role else ""  # seen: page.css's mark
            cells.append(f'<td data-v="{full(v)}"{look}>{escape(number(v))}{said}</td>')
        rows.append(f'<tr><th scope="row">{r + oy}</th>{"".join(cells)}</tr>')
    return (
        f'<div class="cv-table"><table><caption>{escape(caption(panel))}</caption>'
        f'<thead><tr><th scope="col">{name}</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
        f'<button type="button" data-cv-csv="{escape(file_name)}">⬇ {name} as CSV</button></div>'
    )

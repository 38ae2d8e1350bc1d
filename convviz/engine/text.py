"""How the app writes a number: one rule for cells, formulas, captions and exports."""

from __future__ import annotations

import math
import re
import unicodedata

MINUS = "\u2212"  # a typographic minus: "−3" reads better on a slide than "-3"


def number(v: float, minus: str = MINUS) -> str:
    """Whole numbers plain, others to two decimals (trailing zeros dropped), the smallest to two
    significant digits; "" for NaN (a cell left blank), "∞" for infinity.

    >>> [number(v) for v in (3.0, -2.0, 0.5, -1.256, 0.001, -0.0, float("nan"))]
    ['3', '−2', '0.5', '−1.26', '0.001', '0', '']
    """
    v = float(v)
    if math.isnan(v):
        return ""
    if math.isinf(v):
        s = "-∞" if v < 0 else "∞"
    elif abs(v - round(v)) < 1e-9:
        s = str(round(v))
    elif abs(v) >= 0.005:
        s = f"{v:.2f}".rstrip("0").rstrip(".")
    else:
        s = f"{v:.2g}"
    return "0" if s in ("-0", "-0.0") else s.replace("-", minus)


# How the app names what it shows. A slice of a 4-D array names its axes, y[n=0, k=1]; a cell
# of a 2-D grid is plain indices, y[1, 1] (in a formula the subscript y₁₁). Indices start at 0.
AXIS_WORDS = {"n": ("sample", "samples"), "c": ("channel", "channels"), "k": ("filter", "filters")}


def slice_name(name: str, **axes: int) -> str:
    """A 2-D slice with its axes named: slice_name("y", n=0, k=1) == "y[n=0, k=1]"."""
    return f"{name}[{', '.join(f'{a}={v}' for a, v in axes.items())}]"


def cell_name(name: str, row: int, col: int) -> str:
    """A cell of a grid by its indices: cell_name("y", 1, 2) == "y[1, 2]"."""
    return f"{name}[{row}, {col}]"


def bias_gradient(k: int) -> str:
    """What filter k's bias gradient sums, in the grids' indices (no NumPy slice)."""
    return f"∂L/∂b[{k}] = Σ over n, i, j of ∂L/∂y[n, {k}, i, j]"


def count(n: int, word: str, plural: str = "") -> str:
    """'1 row', '2 rows', '0 rows': a count with its noun in the right number."""
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


RECITATION_NOTE = (
    "Comparing with the recitation: indices here start at 0 (its x₁₁ is x[0, 0] here), and its "
    "“full convolution with the rotated filter” is this app's full correlation with rot180(w): "
    "in deep learning “convolution” means cross-correlation (no flip), so the flip is the "
    "explicit rot180."
)


def shape_text(shape) -> str:
    """A shape as a student writes it: shape_text((5, 7)) == "5×7"."""
    return "×".join(map(str, shape))


def grey(term: str, color: str = "gray") -> str:
    """A vanishing term (a padded or an inserted zero) in a cell's formula: grey. KaTeX's and
    xcolor's \\color is a switch that would grey every term after it, so \\textcolor with the
    term as its argument (the formula box and the .tex export both write it so). color: a name
    or, for KaTeX, '#rrggbb' (the callers pass theme.GREY_TERM, readable on white)."""
    return rf"\textcolor{{{color}}}{{{term}}}"


ECHO_CHARS = 40  # what a person sent is quoted back at most this long


def echo(sent: object, most: int = ECHO_CHARS) -> str:
    """What a person sent (a URL value, a typed value, a file's name, another program's error),
    quoted in a message as literal text: a Markdown code span, in which no emphasis, link,
    heading, HTML or maths is rendered; its line breaks and other invisible characters are
    shown (⏎, �) so that they cannot start a block; shortened to `most` characters.

    >>> echo("**b** http://example.com"), echo("x\\n===")
    ('`**b** http://example.com`', '`x⏎===`')
    """
    text = "".join(map(_visible, str(sent)))
    if len(text) > most:
        text = text[: most - 1] + "…"
    if not text:
        return "(empty)"
    fence = "`" * (1 + max(map(len, re.findall("`+", text)), default=0))
    # a span that starts or ends with a space or a backtick is written with one space inside
    # each end: Markdown strips exactly those
    pad = " " if text[0] in " `" or text[-1] in " `" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _visible(ch: str) -> str:
    """A character as `echo` quotes it: a line break as ⏎, a tab as a space, other invisible
    or unassigned ones as �."""
    if ch in "\r\n\u2028\u2029\x0b\x0c\x85":
        return "⏎"
    if ch == "\t":
        return " "
    return "�" if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") else ch

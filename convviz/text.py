"""How the app writes a number: one rule for cells, formulas, captions and exports."""

from __future__ import annotations

import math

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

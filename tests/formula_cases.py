"""What the formula tests share: Keras' 'same' example (a hand-worked 3×3 input and 3×3 kernel,
padding 'same'), and a formula's (left, right) symbol pairs of its terms that count.
Shared by test_formulas.py, test_formulas_text.py and test_formulas_padding.py.
"""

from __future__ import annotations

import numpy as np
from oracles import grid

from convviz.engine.formulas import Formula
from convviz.engine.spec import ConvSpec


def pairs(f: Formula) -> list[tuple[str, str]]:
    return [(t.left.text(), t.right.text()) for t in f.terms if not t.vanishes]


def keras_same():
    spec = ConvSpec.create((1, 1, 3, 3), (1, 1, 3, 3), padding="same")
    x = grid([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    w = grid([[1, 0, -1], [2, 0, -2], [1, 0, -1]])
    return spec, x, w, np.ones(spec.output_shape)

"""Presets: one table of named configurations, the seeds' worked examples first.

The UI's preset menu and the tests both iterate `PRESETS`; nothing else lists configurations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convviz.engine.spec import ConvSpec
from convviz.engine.values import example_grad_out, layer_values


@dataclass(frozen=True)
class Preset:
    key: str
    title: str
    note: str
    input_shape: tuple[int, int, int, int]  # (N, C_in, H, W)
    weight_shape: tuple[int, int, int, int]  # (C_out, C_in, kH, kW)
    stride: tuple[int, int] = (1, 1)
    padding: object = 0  # any form ConvSpec parses
    dilation: tuple[int, int] = (1, 1)
    padding_mode: str = "zeros"
    kernel: str = "random"  # a name from values.NAMED_KERNELS, or "random"
    grad_out: str = "ones"  # a kind from values.GRAD_OUT_KINDS
    seed: int = 0
    x: tuple | None = None  # explicit input values (H rows of W), for hand-worked examples
    w: tuple | None = None  # explicit 2D kernel values
    g: tuple | None = None  # explicit 2D grad_out values (oH rows of oW)
    worked: tuple[tuple[str, int, int], ...] = ()  # (grid, row, col) the note works out

    def spec(self) -> ConvSpec:
        return ConvSpec.create(
            self.input_shape,
            self.weight_shape,
            stride=self.stride,
            padding=self.padding,
            dilation=self.dilation,
            padding_mode=self.padding_mode,
        )

    def values(self) -> tuple[np.ndarray, np.ndarray]:
        """(x, w) of this preset: its explicit numbers, or the seeded examples (as a link to it
        draws them: `values.layer_values`)."""
        spec = self.spec()
        given = {
            name: np.broadcast_to(np.array(v, float), shape).copy()
            for name, v, shape in (
                ("x", self.x, spec.input_shape),
                ("w", self.w, spec.weight_shape),
                ("g", self.g, spec.output_shape),
            )
            if v is not None
        }
        x, w, _ = layer_values(spec, self.seed, self.kernel, self.grad_out, **given)
        return x, w

    def grad_out_for(self, y: np.ndarray) -> np.ndarray:
        """grad_out of this preset: its explicit numbers, or the kind it names."""
        spec = self.spec()
        if self.g is not None:
            return np.broadcast_to(np.array(self.g, float), spec.output_shape).copy()
        return example_grad_out(spec, y, self.seed, self.grad_out)


PRESETS: tuple[Preset, ...] = (
    # The recitation's two examples are symbolic; their numbers here are chosen so that no
    # weight, input or gradient is 0: every term of every sum shows both of its factors.
    Preset(
        "recitation-s1",
        "Recitation: 3×3 ⋆ 2×2, stride 1",
        "The CNN back-propagation recitation's first example: ∂L/∂x (its ∂L/∂X) is the full "
        "correlation of ∂L/∂y (its ∂L/∂O) with the 180°-rotated kernel. "
        "∂L/∂x₁₁ = 1·4 + (−2)·3 + 3·2 + (−1)·1 = 3.",
        (1, 1, 3, 3),
        (1, 1, 2, 2),
        x=((1, 2, 3), (4, 5, 6), (7, 8, 9)),
        w=((1, 2), (3, 4)),
        g=((1, -2), (3, -1)),
        worked=(("grad_x", 1, 1),),
    ),
    Preset(
        "recitation-s2",
        "Recitation: 5×5 ⋆ 3×3, stride 2",
        "The recitation's stride-2 example: ∂L/∂y is dilated (one zero between cells) and "
        "padded by 2 = kernel − 1 per side (not 'by the stride'). ∂L/∂x₂₂ has four terms: "
        "1·9 + 2·7 + 3·3 + 4·1 = 36.",
        (1, 1, 5, 5),
        (1, 1, 3, 3),
        stride=(2, 2),
        x=tuple(tuple(1 + (5 * r + c) % 9 for c in range(5)) for r in range(5)),
        w=((1, 2, 3), (4, 5, 6), (7, 8, 9)),
        g=((1, 2), (3, 4)),
        worked=(("grad_x", 2, 2),),
    ),
    Preset(
        "keras-same",
        "Keras answer: 1..9 with a Sobel kernel, 'same'",
        "Zero padding in back-propagation: the gradient that lands on padded cells is "
        "computed, then dropped by the mask. grad_out is all ones (loss = Σ y).",
        (1, 1, 3, 3),
        (1, 1, 3, 3),
        padding="same",
        kernel="sobel x",
        x=((1, 2, 3), (4, 5, 6), (7, 8, 9)),
    ),
    Preset(
        "qa-channels",
        "Q&A: 5×100×100 input, 10 filters of 5×5×5",
        "Depths differ, yet nothing is padded to match: ∂L/∂w[k, c] = x[c] ⋆ ∂L/∂y[k] (the "
        "Q&A's ∂E/∂F = X ⋆ ∂E/∂O) for every filter k and channel c; ∂L/∂x[c] sums over the 10 "
        "filters.",
        (1, 5, 100, 100),
        (10, 5, 5, 5),
        grad_out="random",
    ),
    Preset(
        "d2l",
        "d2l: [[0,1,2],[3,4,5],[6,7,8]] ⋆ [[0,1],[2,3]]",
        "Dive into Deep Learning's first cross-correlation: the answer is [[19, 25], [37, 43]].",
        (1, 1, 3, 3),
        (1, 1, 2, 2),
        x=((0, 1, 2), (3, 4, 5), (6, 7, 8)),
        w=((0, 1), (2, 3)),
        worked=(("y", 0, 0), ("y", 0, 1), ("y", 1, 0), ("y", 1, 1)),
    ),
    Preset(
        "classroom",
        "Classroom: 7×7 ⋆ 3×3, stride 2, padding 1",
        "Every backward stage at once: dilation by the stride, padding by kernel − 1, the flip, "
        "and the ring the mask drops.",
        (1, 1, 7, 7),
        (1, 1, 3, 3),
        stride=(2, 2),
        padding=1,
        grad_out="random",
    ),
    Preset(
        "even-same",
        "Even kernel with 'same' padding",
        "A 4×4 kernel cannot be centred: 'same' pads 1 at the top/left and 2 at the "
        "bottom/right (TensorFlow's rule).",
        (1, 1, 6, 6),
        (1, 1, 4, 4),
        padding="same",
        grad_out="random",
    ),
    Preset(
        "dilation-2",
        "Dilation 2",
        "A 3×3 kernel with dilation 2 spans 5×5; in the input gradient the rotated kernel "
        "keeps its holes.",
        (1, 1, 7, 7),
        (1, 1, 3, 3),
        padding=2,
        dilation=(2, 2),
        grad_out="random",
    ),
    Preset(
        "remainder",
        "Stride that leaves a remainder",
        "6 rows, kernel 3, stride 2: the windows reach 5 rows; the last row gets no gradient.",
        (1, 1, 6, 6),
        (1, 1, 3, 3),
        stride=(2, 2),
        grad_out="random",
    ),
    Preset(
        "reflect",
        "Reflect padding",
        "With reflect padding the ring copies real cells: its gradient is not dropped but "
        "added back onto the cells it was copied from.",
        (1, 1, 5, 5),
        (1, 1, 3, 3),
        padding=1,
        padding_mode="reflect",
        grad_out="random",
    ),
    Preset(
        "channels-small",
        "Channels: 2 in, 3 out, batch 2",
        "A small multi-channel layer: grad_w is a 3 × 2 grid of correlations summed over the "
        "batch; grad_x[c] sums over the 3 filters.",
        (2, 2, 5, 5),
        (3, 2, 3, 3),
        padding=1,
        grad_out="random",
    ),
)
PRESETS_BY_KEY = {p.key: p for p in PRESETS}
DEFAULT_PRESET = PRESETS_BY_KEY["classroom"]

"""ConvSpec: the one owner of a 2D convolution's shape arithmetic.

Every size the project shows or computes (padding per side, padded input, effective kernel span,
output size, remainder rows/columns) is derived here and nowhere else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from convviz.engine.numbers import ConvSpecError, Range, take
from convviz.engine.text import echo

PADDING_MODES = ("zeros", "reflect", "replicate", "circular")
PADDING_WORDS = ("valid", "same", "full")
# The same padding rules under the names numpy.pad and torch.nn.functional.pad give them.
NUMPY_PAD_MODES = {
    "zeros": "constant",
    "reflect": "reflect",
    "replicate": "edge",
    "circular": "wrap",
}
TORCH_PAD_MODES = {
    "zeros": "constant",
    "reflect": "reflect",
    "replicate": "replicate",
    "circular": "circular",
}

Pair = tuple[int, int]
Sides = tuple[Pair, Pair]


# The most a size, stride, dilation or padding may be, and the most values an array of the layer
# (its padded input, its output) may hold: past them NumPy fails deep inside (a MemoryError, "array
# is too big"); a layer anyone draws or trains here is far smaller.
MAX_SIDE = 1_000_000
MAX_VALUES = 2**28  # 2 GiB of float64


def _said(value) -> str:
    """A Python argument quoted in a message (shortened: it may be a 30,000-character string)."""
    return echo(repr(value))


def _int(value, name: str, *, minimum: int) -> int:
    """A whole number (an int, never 2.0) in minimum…MAX_SIDE, or ConvSpecError naming it."""
    return take(value, name, Range(minimum, MAX_SIDE, whole=True))


def _pair(value, name: str, *, minimum: int) -> Pair:
    """An int or a pair of ints, as (rows, cols)."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ConvSpecError(
                f"{name} takes one number or a (rows, cols) pair, got {_said(value)}"
            )
        return (
            _int(value[0], f"{name} (rows)", minimum=minimum),
            _int(value[1], f"{name} (cols)", minimum=minimum),
        )
    v = _int(value, name, minimum=minimum)
    return (v, v)


def _shape(shape, names: str, what: str) -> tuple[int, ...]:
    """A shape of positive ints, one per letter of `names` (e.g. 'NCHW')."""
    if isinstance(shape, np.ndarray) and shape.ndim == 1:
        shape = tuple(shape.tolist())
    if not isinstance(shape, (tuple, list)) or len(shape) != len(names):
        raise ConvSpecError(
            f"{what} must have {len(names)} dimensions ({', '.join(names)}), got {_said(shape)}"
        )
    return tuple(_int(s, f"{what} size {n}", minimum=1) for n, s in zip(names, shape))


def same_padding(size: int, kernel: int, stride: int, dilation: int) -> Pair:
    """TensorFlow/Keras 'same' padding of one axis: out = ceil(size / stride), extra at the end."""
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + dilation * (kernel - 1) + 1 - size, 0)
    return (total // 2, total - total // 2)


def parse_padding(padding, size: Pair, kernel: Pair, stride: Pair, dilation: Pair) -> Sides:
    """Padding as ((top, bottom), (left, right)) from an int, a pair, per-side pairs or a word."""
    if isinstance(padding, str):
        word = padding  # strict, as PyTorch: 'same', never ' Same '
        if word == "valid":
            return ((0, 0), (0, 0))
        if word == "same":
            return tuple(same_padding(*a) for a in zip(size, kernel, stride, dilation))
        if word == "full":
            return tuple((d * (k - 1),) * 2 for k, d in zip(kernel, dilation))
        raise ConvSpecError(
            f"padding {_said(padding)} is not known: use a number, (rows, cols), "
            f"((top, bottom), (left, right)) or one of {', '.join(PADDING_WORDS)}"
        )
    if isinstance(padding, (tuple, list)) and len(padding) == 2:
        if all(isinstance(p, (tuple, list)) for p in padding):
            names = (("top", "bottom"), ("left", "right"))
            return tuple(
                tuple(_int(v, f"padding {n}", minimum=0) for v, n in zip(_pair_of(p), nm))
                for p, nm in zip(padding, names)
            )
        rows, cols = _pair(padding, "padding", minimum=0)
        return ((rows, rows), (cols, cols))
    v = _int(padding, "padding", minimum=0)
    return ((v, v), (v, v))


def _pair_of(p) -> tuple:
    if len(p) != 2:
        raise ConvSpecError(f"each side pair of padding needs two numbers, got {_said(p)}")
    return tuple(p)


@dataclass(frozen=True)
class ConvSpec:
    """Geometry of one conv layer: shapes, stride, dilation, per-side padding, padding mode.

    Build it with `ConvSpec.create`; the fields are already validated and normalised.
    `input_shape` is (N, C_in, H, W); `weight_shape` is (C_out, C_in, kH, kW).

    Examples:
        The recitation's stride-2 layer: 5×5 ⋆ 3×3 gives 2×2; its ∂L/∂y dilates to 3×3 and
        pads by 2 per side for the full correlation.

        >>> spec = ConvSpec.create((1, 1, 5, 5), (1, 1, 3, 3), stride=2)
        >>> spec.out_size, spec.dilated_out_size, spec.full_padding
        ((2, 2), (3, 3), ((2, 2), (2, 2)))
        >>> ConvSpec.create((1, 1, 5, 5), (1, 1, 2, 2), padding="same").padding  # extra: bottom
        ((0, 1), (0, 1))
    """

    input_shape: tuple[int, int, int, int]
    weight_shape: tuple[int, int, int, int]
    stride: Pair = (1, 1)
    padding: Sides = ((0, 0), (0, 0))
    dilation: Pair = (1, 1)
    padding_mode: str = "zeros"

    @classmethod
    def create(
        cls, input_shape, weight_shape, *, stride=1, padding=0, dilation=1, padding_mode="zeros"
    ) -> ConvSpec:
        """Validate and normalise every argument; raise ConvSpecError with a fix if impossible."""
        x_shape = _shape(input_shape, "NCHW", "the input")
        w_shape = _shape(weight_shape, ("C_out", "C_in", "kH", "kW"), "the kernel")
        if x_shape[1] != w_shape[1]:
            raise ConvSpecError(
                f"the input has {x_shape[1]} channels but the kernel expects {w_shape[1]}: "
                f"give the kernel shape (C_out, {x_shape[1]}, kH, kW) or change the input channels"
            )
        strides = _pair(stride, "stride", minimum=1)
        dilations = _pair(dilation, "dilation", minimum=1)
        if not isinstance(padding_mode, str) or padding_mode not in PADDING_MODES:
            raise ConvSpecError(
                f"padding mode {_said(padding_mode)} is not known: use one of "
                f"{', '.join(PADDING_MODES)}"
            )
        sides = parse_padding(padding, x_shape[2:], w_shape[2:], strides, dilations)
        spec = cls(x_shape, w_shape, strides, sides, dilations, padding_mode)
        spec._check()
        spec._check_size()
        return spec

    def kwargs(self) -> dict:
        """stride, padding, dilation and padding_mode as the keywords `create` and `conv2d` take.

        `ConvSpec.create(spec.input_shape, spec.weight_shape, **spec.kwargs())` rebuilds the spec;
        `conv2d(x, w, **spec.kwargs())` computes its layer.
        """
        return dict(
            stride=self.stride,
            padding=self.padding,
            dilation=self.dilation,
            padding_mode=self.padding_mode,
        )

    def _check(self) -> None:
        for ax, unit in enumerate(("rows", "columns")):
            size, d = self.in_size[ax], self.dilation[ax]
            lo, hi = self.padding[ax]
            span, padded = self.span[ax], self.padded_size[ax]
            if span > padded:  # the shortfall, split between the two sides
                short, sides = span - padded, (("above", "below"), ("left", "right"))[ax]
                split = f"{math.ceil(short / 2)} {sides[0]}, {short // 2} {sides[1]}"
                raise ConvSpecError(
                    f"the {self.kernel_size[0]}×{self.kernel_size[1]} kernel with dilation {d} "
                    f"spans {span} {unit}, but the padded input has only {padded}: reduce the "
                    f"kernel or dilation, or pad {short} more {unit if short > 1 else unit[:-1]} "
                    f"({split if short > 1 else 'on either side'})"
                )
            mode = self.padding_mode
            if mode == "reflect" and max(lo, hi) >= size:
                raise ConvSpecError(
                    f"reflect padding of {max(lo, hi)} {unit} needs an input larger than that, "
                    f"but it has {size}: pad by at most {size - 1} or use 'replicate'"
                )
            if mode == "circular" and max(lo, hi) > size:
                raise ConvSpecError(
                    f"circular padding of {max(lo, hi)} {unit} wraps past the whole input of "
                    f"{size}: pad by at most {size} or use 'zeros'"
                )

    def _check_size(self) -> None:
        for what, shape in (("padded input", self.padded_shape), ("output", self.output_shape)):
            if math.prod(shape) > MAX_VALUES:
                raise ConvSpecError(
                    f"the {what} would hold {math.prod(shape):,} values "
                    f"({'×'.join(map(str, shape))}); convviz computes arrays of up to "
                    f"{MAX_VALUES:,}: lower the padding, the sizes or the channels"
                )

    # --- sizes, each a (rows, cols) pair ---------------------------------------------------------
    @cached_property
    def batch(self) -> int:
        return self.input_shape[0]

    @cached_property
    def in_channels(self) -> int:
        return self.input_shape[1]

    @cached_property
    def out_channels(self) -> int:
        return self.weight_shape[0]

    @cached_property
    def in_size(self) -> Pair:
        return self.input_shape[2], self.input_shape[3]

    @cached_property
    def kernel_size(self) -> Pair:
        return self.weight_shape[2], self.weight_shape[3]

    @cached_property
    def span(self) -> Pair:
        """Effective (dilated) kernel size: dil*(k-1) + 1."""
        return tuple(d * (k - 1) + 1 for k, d in zip(self.kernel_size, self.dilation))

    @cached_property
    def padded_size(self) -> Pair:
        return tuple(s + lo + hi for s, (lo, hi) in zip(self.in_size, self.padding))

    def padded_label(self, index: Pair) -> Pair:
        """The label of a padded-input cell: its array index less the top/left padding."""
        return tuple(i - lo for i, (lo, _) in zip(index, self.padding))

    def padded_index(self, cell: Pair) -> Pair:
        """Where input cell `cell` sits in the padded input (the inverse of `padded_label`)."""
        return tuple(i + lo for i, (lo, _) in zip(cell, self.padding))

    @cached_property
    def out_size(self) -> Pair:
        """floor((H + pad_top + pad_bottom - dil*(k-1) - 1) / stride) + 1 per axis."""
        return tuple((p - e) // s + 1 for p, e, s in zip(self.padded_size, self.span, self.stride))

    @cached_property
    def reach(self) -> Pair:
        """Rows/columns of the padded input that some window covers: (out-1)*stride + span."""
        return tuple((o - 1) * s + e for o, s, e in zip(self.out_size, self.stride, self.span))

    @cached_property
    def remainder(self) -> Pair:
        """Rows at the bottom / columns at the right of the padded input no window reaches."""
        return tuple(p - r for p, r in zip(self.padded_size, self.reach))

    @cached_property
    def dilated_out_size(self) -> Pair:
        """grad_out with stride-1 zeros between cells: (out-1)*stride + 1."""
        return tuple((o - 1) * s + 1 for o, s in zip(self.out_size, self.stride))

    @cached_property
    def full_padding(self) -> Sides:
        """Padding of the dilated grad_out for the full correlation: dil*(k-1) + the remainder."""
        return tuple((e - 1, e - 1 + r) for e, r in zip(self.span, self.remainder))

    @cached_property
    def output_shape(self) -> tuple[int, int, int, int]:
        return (self.batch, self.out_channels, *self.out_size)

    @cached_property
    def padded_shape(self) -> tuple[int, int, int, int]:
        return (self.batch, self.in_channels, *self.padded_size)

    def describe(self) -> str:
        """The output-size arithmetic of both axes, in words a student can check."""
        lines = []
        for ax, name in enumerate(("H", "W")):
            (lo, hi), d, k = self.padding[ax], self.dilation[ax], self.kernel_size[ax]
            lines.append(
                f"out_{name} = floor(({self.in_size[ax]} + {lo} + {hi} - {d}·({k}-1) - 1) / "
                f"{self.stride[ax]}) + 1 = {self.out_size[ax]}"
            )
        return "\n".join(lines)


def spec_of_call(input_shape, weight_shape, stride, padding, dilation, padding_mode) -> ConvSpec:
    """The ConvSpec of a conv2d-style call: its two shapes and its four geometry arguments."""
    return ConvSpec.create(
        input_shape,
        weight_shape,
        stride=stride,
        padding=padding,
        dilation=dilation,
        padding_mode=padding_mode,
    )

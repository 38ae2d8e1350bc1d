"""Example values: small integers from a seed, named kernels, and grad_out choices.

Values default to small integers so a student can check every sum by hand.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from convviz.engine.fastpath import forward_padded, input_grad_padded, weight_grad_padded
from convviz.engine.ops import pad, unpad
from convviz.engine.spec import ConvSpec

# Named 3×3 kernels; `named_kernel` resizes the ones that have a natural size-free form.
NAMED_KERNELS = {
    "identity": None,
    "box": None,
    "sobel x": np.array([[1, 0, -1], [2, 0, -2], [1, 0, -1]]),
    "sobel y": np.array([[1, 2, 1], [0, 0, 0], [-1, -2, -1]]),
    "laplacian": np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]]),
    "sharpen": np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]]),
}
GRAD_OUT_KINDS = ("ones", "random", "mse")
GRAD_OUT_LABELS = {
    "ones": "ones (loss = sum of y)",
    "random": "random integers",
    "mse": "from a loss: ½‖y − target‖²",
}


def named_kernel(name: str, size: tuple[int, int]) -> np.ndarray | None:
    """A (kH, kW) float kernel by name, or None if that name has no kernel of this size."""
    kH, kW = size
    if name == "identity":
        k = np.zeros(size)
        k[(kH - 1) // 2, (kW - 1) // 2] = 1
        return k
    if name == "box":
        return np.ones(size)
    k = NAMED_KERNELS.get(name)
    return k.astype(float) if k is not None and k.shape == tuple(size) else None


# How random values are drawn. Draw 2 (every new link): no zero input, kernel tap or ∂L/∂y
# cell, and, on layers small enough to read cell by cell, no zero output or cell a page opens
# on (`_zeros`; the values are drawn again, from the same seed, until there is none). Draw 1:
# every link made before draw 2 (a zero kernel tap made a whole layer 0).
DRAWS = (1, 2)
DRAW = 2
CHECKED_CELLS = 4096  # draw 2 draws again while a zero output shows, up to this many outputs
REDRAWS = 16


def random_ints(shape, seed: int, low: int, high: int) -> np.ndarray:
    """Integers in [low, high] as floats, from a seeded Generator (no global random state)."""
    return np.random.default_rng(seed).integers(low, high + 1, size=shape).astype(float)


def _ints(shape, seed, low: int, high: int, nonzero: bool = False) -> np.ndarray:
    """Integers in [low, high] (without 0 if nonzero), as floats, from a seed or a seed sequence
    (draw 2's independent streams: [seed, array, attempt])."""
    rng = np.random.default_rng(seed)
    if not nonzero:
        return rng.integers(low, high + 1, size=shape).astype(float)
    pool = np.array([v for v in range(low, high + 1) if v != 0], dtype=float)
    return rng.choice(pool, size=shape)


def example_x(spec: ConvSpec, seed: int, draw: int = DRAW, attempt: int = 0) -> np.ndarray:
    if draw == 1:
        return random_ints(spec.input_shape, seed, 0, 9)
    return _ints(spec.input_shape, [seed, 0, attempt], 1, 9)


def example_w(
    spec: ConvSpec, seed: int, kernel: str = "random", draw: int = DRAW, attempt: int = 0
) -> np.ndarray:
    """The layer's weights: a named kernel on every (k, c) pair, or integers in [-2, 2] (draw 2:
    never 0)."""
    k2d = named_kernel(kernel, spec.kernel_size)
    if k2d is not None:
        return np.broadcast_to(k2d, spec.weight_shape).copy()
    if draw == 1:
        return random_ints(spec.weight_shape, seed + 1, -2, 2)
    return _ints(spec.weight_shape, [seed, 1, attempt], -2, 2, nonzero=True)


def example_grad_out(
    spec: ConvSpec, y: np.ndarray, seed: int, kind: str = "ones", draw: int = DRAW
) -> np.ndarray:
    """grad_out = ∂L/∂y: ones (L = Σy), random integers, or y − target for L = ½‖y − target‖²
    (draw 2: no cell 0, a target equal to y is one more)."""
    if kind == "ones":
        return np.ones(spec.output_shape)
    if kind == "random":
        if draw == 1:
            return random_ints(spec.output_shape, seed + 2, -2, 2)
        return _ints(spec.output_shape, [seed, 2], -2, 2, nonzero=True)
    if kind == "mse":
        return y - mse_target(spec, y, seed, draw)
    raise ValueError(f"grad_out kind {kind!r} is not one of {', '.join(GRAD_OUT_KINDS)}")


def mse_target(spec: ConvSpec, y: np.ndarray | None, seed: int, draw: int = DRAW) -> np.ndarray:
    """The random target t of L = ½‖y − t‖²: integers in [−5, 5] (draw 2: one more where it
    equals y, so that no cell of ∂L/∂y = y − t is 0; y None: as drawn)."""
    if draw == 1:
        return random_ints(spec.output_shape, seed + 3, -5, 5)
    target = _ints(spec.output_shape, [seed, 3], -5, 5)
    return target if y is None else target + (target == y)


def layer_values(
    spec: ConvSpec,
    seed: int,
    kernel: str = "random",
    grad_out: str = "ones",
    *,
    draw: int = DRAW,
    x=None,
    w=None,
    g=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, w, grad_out) of a layer: the arrays given (e.g. a user's edits), seeded examples else
    (`draw`: how; see DRAW)."""
    given_x = None if x is None else np.asarray(x, float).reshape(spec.input_shape)
    given_w = None if w is None else np.asarray(w, float).reshape(spec.weight_shape)
    given_g = None if g is None else np.asarray(g, float).reshape(spec.output_shape)
    random_operand = given_x is None or given_w is None
    attempts = REDRAWS if draw > 1 and _readable(spec) and random_operand else 1
    best = None
    for attempt in range(attempts):  # a few small layers at most, each vectorized
        xa = example_x(spec, seed, draw, attempt) if given_x is None else given_x
        wa = example_w(spec, seed, kernel, draw, attempt) if given_w is None else given_w
        x_pad = pad(xa, spec.padding, spec.padding_mode)
        y = forward_padded(x_pad, wa, spec)
        ga = example_grad_out(spec, y, seed, grad_out, draw) if given_g is None else given_g
        zeros = _zeros(spec, x_pad, wa, ga, y) if attempts > 1 else 0
        if best is None or zeros < best[0]:
            best = (zeros, xa, wa, ga)
        if zeros == 0:
            break
    return best[1:]


def _readable(spec: ConvSpec) -> bool:
    """Whether a student reads the layer's outputs cell by cell (draw 2 then avoids zeros)."""
    return spec.batch * spec.out_channels * int(np.prod(spec.out_size)) <= CHECKED_CELLS


def _zeros(spec: ConvSpec, x_pad, w, g, y) -> int:
    """Zeros where the pages point by default: any output, ∂L/∂x's centre cell (if a window
    reads it), ∂L/∂w's centre and last taps (the cells they open on and write out).

    x_pad : the padded input. The gradients come from the fast path alone (the textbook
    route's intermediate arrays are the pages' to make, for the values drawn in the end)."""
    (H, W), (kH, kW) = spec.in_size, spec.kernel_size
    grad_x = _grad_x(spec, w, g)[..., H // 2, W // 2]
    read = _centre_read(spec)
    grad_w = weight_grad_padded(x_pad, g, spec)
    taps = grad_w[..., [kH // 2, kH - 1], [kW // 2, kW - 1]]
    return int((y == 0).sum() + (grad_x[read] == 0).sum() + (taps == 0).sum())


@lru_cache(maxsize=256)
def _centre_read(spec: ConvSpec) -> np.ndarray:
    """Whether a window reads the input's centre cell, per (n, c): the same for every draw of a
    layer's shape (its ∂L/∂x there is a sum of ones)."""
    (H, W) = spec.in_size
    ones = _grad_x(spec, np.ones(spec.weight_shape), np.ones(spec.output_shape))
    read = ones[..., H // 2, W // 2] != 0
    read.flags.writeable = False
    return read


def _grad_x(spec: ConvSpec, w, g) -> np.ndarray:
    """∂L/∂x (N, C_in, H, W): the padded input's gradient, its ring folded back (`unpad`)."""
    return unpad(input_grad_padded(g, w, spec), spec.padding, spec.padding_mode)


def _samples(h: int, w: int, size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Rows (H,) and columns (W,) of an h×w image nearest to the centres of an H×W grid."""
    rows = ((np.arange(size[0]) + 0.5) * h / size[0]).astype(int)  # (H,)
    cols = ((np.arange(size[1]) + 0.5) * w / size[1]).astype(int)  # (W,)
    return rows, cols


def image_to_input(gray: np.ndarray, size: tuple[int, int], levels: int = 10) -> np.ndarray:
    """A grayscale image (h, w) with values 0–255, sampled to (H, W) and quantised to 0…levels-1.

    Nearest-cell sampling keeps edges crisp; small integers keep the sums checkable by hand.
    For an array already in memory (a script, the tests); the app's uploads go through
    `load_image`, which samples and quantises the same way.
    """
    rows, cols = _samples(*gray.shape, size)
    return np.round(gray[np.ix_(rows, cols)] / 255 * (levels - 1))


MAX_IMAGE_PIXELS = 16_000_000  # checked from the header, before any pixel is decoded
WHITE_BEHIND = ("LA", "La", "PA", "RGBA", "RGBa")  # transparent pixels show the page: white


def _gray_255(pixels: np.ndarray, mode: str) -> np.ndarray:
    """Sampled pixels of one Pillow mode as gray levels 0–255 (float), every mode on one scale.

    1: 0 or 255; L, RGB (ITU-R 601 luma, as Pillow's own 'L'), with alpha over white;
    I;16* and I within 0–65535: scaled from 16 bits, so a 16-bit ramp keeps its steps; F within
    0–1: scaled; other I and F ranges stretched from their minimum to their maximum.
    """
    a = pixels.astype(float)
    if mode == "1":
        return a * 255
    if mode.startswith("I;16"):
        return a * (255 / 65535)
    if mode in ("I", "F"):
        a = np.nan_to_num(a, nan=0.0, posinf=0.0, neginf=0.0)
        lo, hi = a.min(initial=0), a.max(initial=0)
        if mode == "F" and lo >= 0 and hi <= 1:
            return a * 255
        if mode == "I" and lo >= 0 and hi <= 65535:  # 16-bit samples in a 32-bit mode
            return a * (255 / 65535)
        return (a - lo) * (255 / (hi - lo)) if hi > lo else np.zeros_like(a)
    if a.ndim == 2:  # L
        return a
    luma = a[..., :3] @ np.array([0.299, 0.587, 0.114]) if a.shape[-1] >= 3 else a[..., 0]
    if mode in WHITE_BEHIND:
        alpha = a[..., -1] / 255
        return luma * alpha + 255 * (1 - alpha)
    return luma


def read_image(file, size: tuple[int, int]) -> tuple[np.ndarray, str | None]:
    """An uploaded image sampled to (H, W) as gray levels 0–255, and a note for the reader.

    The size is read from the header and checked before any pixel is decoded (a JPEG is decoded
    at a reduced scale); every Pillow mode maps to the same 0–255 scale (see `_gray_255`); an
    animation's first frame is used, and the note says so. Raises ValueError with a message
    for an unreadable or too large file.
    """
    from PIL import Image  # only the upload needs Pillow

    try:
        with Image.open(file) as im:  # reads the header only
            im.draft("RGB" if im.mode in ("RGB", "CMYK", "YCbCr") else "L", (512, 512))
            w, h = im.size
            if w * h > MAX_IMAGE_PIXELS:
                raise ValueError(
                    f"the image is {w}×{h} pixels; up to {MAX_IMAGE_PIXELS / 1e6:g} million "
                    "are read: scale it down"
                )
            frames = getattr(im, "n_frames", 1)
            im.seek(0)
            mode = im.mode
            if mode in ("P", "PA"):
                mode = "RGBA" if "transparency" in im.info or mode == "PA" else "RGB"
                im = im.convert(mode)
            elif mode not in ("1", "L", "LA", "RGB", "RGBA", "I", "F") and not mode.startswith(
                "I;16"
            ):
                mode = "RGB"  # CMYK, YCbCr, LAB, HSV, …: Pillow's own conversion
                im = im.convert(mode)
            rows, cols = _samples(h, w, size)
            gray = _gray_255(np.asarray(im)[np.ix_(rows, cols)], mode)
    except Image.DecompressionBombError:
        raise ValueError("the image declares too many pixels to read") from None
    except (OSError, SyntaxError, EOFError) as exc:  # what Pillow raises for a broken file
        raise ValueError(f"the file is not a readable image ({type(exc).__name__})") from None
    note = (
        f"The file holds {frames} frames (an animation): its first frame is used."
        if frames > 1
        else None
    )
    return gray, note


def load_image(file, size: tuple[int, int], levels: int = 10) -> tuple[np.ndarray, str | None]:
    """An uploaded image as an (H, W) input of integers 0…levels-1, and a note (see read_image)."""
    gray, note = read_image(file, size)
    return np.round(gray / 255 * (levels - 1)), note

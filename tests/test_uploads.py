"""Uploaded images: bounded before decoding, every Pillow mode on one 0–255 scale, animations."""

from __future__ import annotations

import io
import tracemalloc

import numpy as np
import pytest
from PIL import Image

from convviz.engine.values import MAX_IMAGE_PIXELS, load_image, read_image


def saved(im: Image.Image, fmt: str = "PNG", **kwargs) -> io.BytesIO:
    buf = io.BytesIO()
    im.save(buf, fmt, **kwargs)
    buf.seek(0)
    return buf


def ramp(dtype, top: int, width: int = 10) -> np.ndarray:
    """A horizontal ramp from 0 to `top` over `width` columns, 4 rows."""
    return np.tile(np.linspace(0, top, width).round().astype(dtype), (4, 1))


def test_a_16_bit_ramp_keeps_its_steps():
    """Pillow's I;16 → L conversion clips at 255: the old loader turned this ramp into all 9s."""
    im = Image.fromarray(ramp(np.uint16, 65535))
    buf = saved(im)
    assert Image.open(buf).mode == "I;16"
    x, note = load_image(buf, (4, 10))
    assert note is None
    np.testing.assert_array_equal(x[0], np.arange(10))


WHITE, BLACK = 255.0, 0.0


@pytest.mark.parametrize(
    "make, fmt, expected",
    [
        pytest.param(lambda: Image.new("1", (4, 4), 1), "PNG", WHITE, id="1 white"),
        pytest.param(lambda: Image.new("L", (4, 4), 128), "PNG", 128.0, id="L"),
        pytest.param(lambda: Image.new("LA", (4, 4), (0, 0)), "PNG", WHITE, id="LA transparent"),
        pytest.param(lambda: Image.new("LA", (4, 4), (0, 255)), "PNG", BLACK, id="LA opaque black"),
        pytest.param(lambda: Image.new("RGB", (4, 4), (255, 0, 0)), "PNG", 76.245, id="RGB red"),
        pytest.param(
            lambda: Image.new("RGBA", (4, 4), (0, 0, 0, 0)), "PNG", WHITE, id="RGBA transparent"
        ),
        pytest.param(
            lambda: Image.new("RGBA", (4, 4), (0, 0, 255, 255)), "PNG", 29.07, id="RGBA blue"
        ),
        pytest.param(
            lambda: Image.new("RGB", (4, 4), (0, 255, 0)).convert("P"), "PNG", 149.685, id="P"
        ),
        pytest.param(lambda: Image.new("CMYK", (4, 4), (0, 0, 0, 255)), "JPEG", BLACK, id="CMYK"),
        pytest.param(lambda: Image.new("I", (4, 4), 65535), "TIFF", WHITE, id="I 16-bit top"),
        pytest.param(lambda: Image.new("F", (4, 4), 0.5), "TIFF", 127.5, id="F 0-1"),
    ],
)
def test_every_mode_maps_to_the_gray_it_shows(make, fmt, expected):
    im = make()
    buf = saved(im, fmt)
    gray, _ = read_image(buf, (2, 2))
    np.testing.assert_allclose(gray, expected, atol=2.5 if fmt == "JPEG" else 1e-6)


def test_a_transparent_palette_colour_is_white():
    im = Image.new("P", (4, 4), 0)
    im.putpalette([0, 0, 0, 255, 255, 255])
    gray, _ = read_image(saved(im, "PNG", transparency=0), (2, 2))
    np.testing.assert_allclose(gray, WHITE)


def test_a_float_image_beyond_0_1_is_stretched():
    a = np.tile(np.linspace(-3.0, 5.0, 9, dtype=np.float32), (2, 1))
    x, _ = load_image(saved(Image.fromarray(a), "TIFF"), (2, 9))
    np.testing.assert_array_equal(x[0], [0, 1, 2, 3, 4, 6, 7, 8, 9])


def test_an_animated_gif_says_its_first_frame_is_used():
    frames = [Image.new("L", (4, 4), v) for v in (255, 0, 128)]
    buf = io.BytesIO()
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:], duration=100)
    buf.seek(0)
    x, note = load_image(buf, (2, 2))
    assert "3 frames" in note and "first frame" in note
    np.testing.assert_array_equal(x, 9)


def test_too_many_pixels_are_refused_from_the_header_before_decoding():
    side = int(MAX_IMAGE_PIXELS**0.5) + 100
    buf = saved(Image.new("1", (side, side)))  # a few kB that would decode to tens of MB
    assert buf.getbuffer().nbytes < 100_000
    tracemalloc.start()
    with pytest.raises(ValueError, match=f"{side}×{side} pixels"):
        read_image(buf, (8, 8))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2_000_000, f"{peak / 1e6:.1f} MB allocated: the pixels were decoded"


def test_a_large_jpeg_is_decoded_at_a_reduced_scale():
    im = Image.new("RGB", (4000, 3000), (255, 255, 255))
    buf = saved(im, "JPEG", quality=50)
    tracemalloc.start()
    gray, _ = read_image(buf, (3, 4))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_allclose(gray, WHITE, atol=1)
    assert peak < 8_000_000, f"{peak / 1e6:.1f} MB: the full 12 Mpx image was decoded"


@pytest.mark.parametrize(
    "data",
    [b"not an image at all", saved(Image.new("L", (64, 64), 3)).getvalue()[:80]],
    ids=["garbage", "truncated png"],
)
def test_an_unreadable_file_gets_a_message(data):
    with pytest.raises(ValueError, match="not a readable image"):
        read_image(io.BytesIO(data), (2, 2))


def test_the_app_loads_an_upload_through_the_bounded_reader(monkeypatch):
    """editors._load_image (the uploader's callback) takes x from load_image: a 16-bit ramp keeps
    its steps, an animation's note reaches the page, a broken file gets a message."""
    from convviz.model.fields import DEFAULTS, decode_array
    from convviz.ui import editors
    from convviz.ui.controls import STATE

    state = dict(DEFAULTS, H=4, W=10, batch=1, cin=1)
    session = {STATE: state}
    monkeypatch.setattr(editors.st, "session_state", session)

    def upload(buf: io.BytesIO) -> None:
        buf.size = len(buf.getvalue())
        session["upload_x"] = buf
        editors._load_image("upload_x")

    upload(saved(Image.fromarray(ramp(np.uint16, 65535))))
    x = decode_array(state["x"], (1, 1, 4, 10), "input")
    np.testing.assert_array_equal(x[0, 0, 0], np.arange(10))
    frames = [Image.new("L", (10, 4), v) for v in (0, 255)]
    upload(saved(frames[0], "GIF", save_all=True, append_images=frames[1:]))
    assert "first frame" in session.pop(editors.UPLOAD_NOTE)
    upload(io.BytesIO(b"not an image"))
    assert session.pop(editors.UPLOAD_PROBLEM)

"""GIF and MP4 of an animation: one set of frames, decoded back and counted."""

from __future__ import annotations

import io

import imageio_ffmpeg
import numpy as np
import pytest
from PIL import Image

from convviz.export import video
from convviz.export.story import Story

pytestmark = pytest.mark.encoder  # GIFs and MP4s (ffmpeg), decoded back


@pytest.fixture(scope="module")
def story():
    return Story.of("recitation-s1")


def _anim(story, name):
    return next(a for a in story.animations() if a.name == name)


def _mp4(data: bytes, tmp_path) -> tuple[dict, list[np.ndarray]]:
    """The MP4's metadata (ffmpeg's) and every decoded frame (RGB)."""
    path = tmp_path / "a.mp4"
    path.write_bytes(data)
    reader = imageio_ffmpeg.read_frames(str(path))
    meta = reader.__next__()
    w, h = meta["size"]
    frames = [np.frombuffer(f, np.uint8).reshape(h, w, 3) for f in reader]
    return meta, frames


@pytest.mark.parametrize("name", ["forward", "input-grad-step4"])  # a sweep, a motion (rot180)
def test_gif_and_mp4_hold_the_same_frames(story, name, tmp_path):
    anim = _anim(story, name)
    if anim.sweep is not None:
        drawn = video.sweep_rendered(anim.sweep, anim.panels, channel=anim.channel)
        assert drawn.frames.images.__len__() == anim.sweep.steps
    else:
        drawn = video.motion_rendered(anim.motion())
        assert len(drawn.frames.images) == len(anim.motion().frames())
    with Image.open(io.BytesIO(drawn.gif)) as gif:
        assert gif.n_frames == len(drawn.frames.images)
    meta, frames = _mp4(video.mp4_bytes(drawn.frames), tmp_path)
    w, h = meta["size"]
    assert meta["codec"].startswith("h264") and w >= 1280 and w % 2 == 0 and h % 2 == 0
    assert meta["fps"] == video.VIDEO_FPS
    counts = video.repeats(drawn.frames.durations_ms, video.VIDEO_FPS)
    assert len(frames) == sum(counts)
    # the video's last frame is the GIF's last frame (the finished result), centred, not scaled
    last = drawn.frames.images[-1]
    lh, lw = last.shape[:2]
    x0, y0 = (w - lw) // 2, (h - lh) // 2
    crop = frames[-1][y0 : y0 + lh, x0 : x0 + lw].astype(int)
    assert np.abs(crop - last).mean() < 6  # H.264 is lossy, the picture is the same
    first_shown = frames[0][y0 : y0 + lh, x0 : x0 + lw].astype(int)
    assert np.abs(first_shown - drawn.frames.images[0]).mean() < 6


def test_each_frame_keeps_its_time():
    assert video.repeats([250, 250, 2500], 20) == [5, 5, 50]
    assert video.repeats([110] * 10, 20) == [2, 2, 3, 2, 2, 2, 2, 3, 2, 2]
    assert sum(video.repeats([110] * 10, 20)) == 22


def test_odd_frames_get_even_sides_at_least_1280_wide():
    frames = video.Frames([np.zeros((301, 517, 3), np.uint8)] * 2, [100, 100])
    assert video.video_size(*frames.size) == (1280, 302)
    assert video.video_size(1921, 1081) == (1922, 1082)

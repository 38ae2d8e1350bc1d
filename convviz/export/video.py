"""GIF and MP4 of an animation from one set of frames.

The renderers draw an animation's frames once (`render.mpl.sweep_gif.sweep_frames` for a sliding
window, `render.motion.gif.motion_frames` for a motion); the GIF and the MP4 are both made from
those frames and their timings, so they cannot differ (the MP4 without the GIF's palette). The
video is H.264 (yuv420p, what every player and slide tool reads), at least 1280 px wide and with
even sides, encoded by the ffmpeg binary that the imageio-ffmpeg wheel ships (no system package).
"""

from __future__ import annotations

import io
import math
import os
import subprocess
import tempfile
from dataclasses import dataclass

import numpy as np
from PIL import Image

from convviz.render.motion.gif import (
    frames_gif,
    gif_size_cells,
    motion_durations,
    motion_frames,
)
from convviz.render.motion.model import Motion
from convviz.render.mpl import sweep_gif
from convviz.render.theme import THEME, Theme

MIN_WIDTH, MAX_HEIGHT = 1280, 1080  # a 1080p screen shows the video at its own size
VIDEO_FPS = 20
MOTION_CELL_PX = (12, 96)  # the smallest and largest cell a motion's frames are drawn with


class VideoError(RuntimeError):
    """ffmpeg is missing or failed; the message says which."""


@dataclass(frozen=True)
class Frames:
    """An animation's frames, RGB (h, w, 3) uint8 each, and how long each shows (ms)."""

    images: list[np.ndarray]
    durations_ms: list[int]

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        h, w = self.images[0].shape[:2]
        return w, h


@dataclass(frozen=True)
class Rendered:
    """An animation drawn once: its GIF bytes and the frames decoded from them."""

    gif: bytes
    frames: Frames


def gif_frames(gif: bytes) -> Frames:
    """Every frame of a GIF as RGB, with its duration (Pillow composes partial frames)."""
    images, durations = [], []
    with Image.open(io.BytesIO(gif)) as im:
        for i in range(im.n_frames):
            im.seek(i)
            images.append(np.asarray(im.convert("RGB")).copy())
            durations.append(int(im.info.get("duration", 100)))
    return Frames(images, durations)


def sweep_rendered(sweep, panels, theme: Theme = THEME, *, channel: int = 0, fps: float = 4):
    """A sliding window's GIF (as the app's download draws it) and its frames, drawn once for
    both (the MP4 takes them as drawn, not decoded back from the GIF)."""
    frames = sweep_gif.sweep_frames(sweep, *panels, theme, channel=channel)
    gif = sweep_gif.gif_bytes(frames, fps)
    step = round(1000 / max(fps, 0.1))
    return Rendered(gif, Frames(frames, [step] * (len(frames) - 1) + [sweep_gif.GIF_HOLD_MS]))


def motion_cell_px(motion: Motion) -> int:
    """The cell size at which motion_gif's frame fills MIN_WIDTH × MAX_HEIGHT as far as it can
    (its size in cells: `motion_gif.gif_size_cells`)."""
    wide, high = gif_size_cells(motion)
    fit = min(MIN_WIDTH / wide, MAX_HEIGHT / high)
    return int(np.clip(math.floor(fit), *MOTION_CELL_PX))


def motion_rendered(motion: Motion) -> Rendered:
    """A motion's GIF at about the video's size and its frames, drawn once for both."""
    frames = motion_frames(motion, cell_px=motion_cell_px(motion))
    durations = motion_durations(len(frames))
    return Rendered(frames_gif(frames, durations), Frames(frames, durations))


def rendered(anim, theme: Theme = THEME) -> Rendered:
    """An animation of the story (`export.story.Animation`) drawn once for its GIF and its MP4:
    a sliding window's frames, a motion's, or the GIF its stage's renderer makes."""
    if anim.sweep is not None:
        return sweep_rendered(anim.sweep, anim.panels, theme, channel=anim.channel)
    if anim.motion is not None:
        return motion_rendered(anim.motion())
    gif = anim.figure.gif()
    return Rendered(gif, gif_frames(gif))


def ffmpeg_exe() -> str:
    """The ffmpeg binary of the imageio-ffmpeg wheel (or IMAGEIO_FFMPEG_EXE)."""
    try:
        import imageio_ffmpeg
    except ImportError as exc:
        raise VideoError("MP4 needs imageio-ffmpeg: pip install imageio-ffmpeg") from exc
    return imageio_ffmpeg.get_ffmpeg_exe()


def video_size(width: int, height: int) -> tuple[int, int]:
    """The video's (width, height): at least MIN_WIDTH wide, even sides."""
    return max(MIN_WIDTH, width + width % 2), height + height % 2


def _fit(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A frame centred on a white canvas of size = (width, height): never scaled, so the cells'
    numbers stay as sharp as the renderer drew them."""
    h, w = image.shape[:2]
    if (w, h) == size:
        return image
    canvas = np.full((size[1], size[0], 3), 255, np.uint8)
    x0, y0 = (size[0] - w) // 2, (size[1] - h) // 2
    canvas[y0 : y0 + h, x0 : x0 + w] = image
    return canvas


def repeats(durations_ms: list[int], fps: float) -> list[int]:
    """How many video frames each image fills: its span of the timeline at fps, at least one."""
    ends = np.cumsum(durations_ms) * fps / 1000.0
    edges = np.round(np.concatenate([[0.0], ends])).astype(int)
    return np.maximum(np.diff(edges), 1).tolist()


def mp4_bytes(frames: Frames, fps: int = VIDEO_FPS) -> bytes:
    """H.264 MP4 of the frames, each held for its duration; raw RGB piped to ffmpeg."""
    size = video_size(*frames.size)
    counts = repeats(frames.durations_ms, fps)
    with tempfile.TemporaryDirectory(prefix="convviz-mp4-") as tmp:
        path = os.path.join(tmp, "out.mp4")
        cmd = [
            ffmpeg_exe(), "-y", "-loglevel", "error",
            "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{size[0]}x{size[1]}",
            "-r", str(fps), "-i", "-",
            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-preset", "veryfast", "-crf", "20",
            "-tune", "stillimage", "-movflags", "+faststart", path,
        ]  # fmt: skip
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            for image, count in zip(frames.images, counts):
                data = np.ascontiguousarray(_fit(image, size)).tobytes()
                for _ in range(count):
                    proc.stdin.write(data)
            proc.stdin.close()
        except BrokenPipeError:
            pass
        err = proc.stderr.read().decode(errors="replace")
        if proc.wait() != 0:
            raise VideoError(f"ffmpeg failed: {err.strip()[-300:]}")
        with open(path, "rb") as f:
            return f.read()

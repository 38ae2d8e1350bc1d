"""`python -m convviz export`: every stage of a layer in every chosen format, from a shell.

The layer is a preset or the app's share link; files are named as the app's downloads
(convviz-{preset}-{name}.{ext}). A layer too wide for a motion's GIF in the app (its padded
grid over `render.motion.MAX_GIF_SIDE` cells) gets no motion GIF or MP4 here either, and one
line on stderr says so. Each file is written under a temporary name in the output
folder and renamed when complete, so an interrupted run leaves no half-written file.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from convviz.engine.numbers import ConvSpecError, Range, read
from convviz.engine.text import echo
from convviz.export.story import Animation, ExportError, Story
from convviz.model.presets import PRESETS_BY_KEY
from convviz.render.motion.model import GIF_TOO_WIDE, MAX_GIF_SIDE

FORMATS = ("png", "svg", "gif", "mp4", "html", "tex", "pdf", "py")
WHAT = {
    "png": "every stage as a PNG for slides (200 dpi)",
    "svg": "every stage as an SVG (numbers stay editable text)",
    "gif": f"every animation as a GIF (a motion when the grid is <= {MAX_GIF_SIDE} cells wide)",
    "mp4": "every animation as an H.264 MP4 (>= 1280 px wide), from the GIF's own frames",
    "html": "every animation as an offline HTML page, and the whole lecture in one page",
    "tex": "the stages as bmatrix blocks and the cells' formulas, a standalone .tex",
    "pdf": "a handout: one stage per page with its caption and formula",
    "py": "a runnable NumPy snippet and a PyTorch snippet that print y, dL/dx, dL/dw",
}


WORKERS = Range(1, 64, whole=True)


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr (and exit code 2), not the usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parser() -> argparse.ArgumentParser:
    formats = "\n".join(f"  {f:<5} {WHAT[f]}" for f in FORMATS)
    p = _Parser(
        prog="python -m convviz export",
        description="Write every stage of a convolution layer, forward and backward, as files "
        "for slides, notes and handouts.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"formats:\n{formats}\n\nexamples:\n"
        "  python -m convviz export --preset recitation-s2 --formats gif,mp4 --out slides\n"
        "  python -m convviz export --link 'http://host/?preset=classroom&sh=1' --out notes",
    )
    layer = p.add_mutually_exclusive_group()
    layer.add_argument(
        "--preset",
        metavar="NAME",
        help=f"a preset: {', '.join(PRESETS_BY_KEY)} (default: classroom)",
    )
    layer.add_argument(
        "--link",
        metavar="URL",
        help="the app's share link, or only its query string ('?preset=...&H=...'): the "
        "exact layer, values, slice and selected cell the link shows",
    )
    p.add_argument(
        "--formats",
        default=",".join(FORMATS),
        metavar="LIST",
        help=f"comma-separated, any of {','.join(FORMATS)} (default: all)",
    )
    p.add_argument(
        "--out",
        default=".",
        metavar="DIR",
        help="folder to write into, created if missing (default: the current folder)",
    )
    p.add_argument(
        "--force", action="store_true", help="replace files of the same names already in --out"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar; still list the files")
    p.add_argument(
        "--workers",
        default=str(min(2, os.cpu_count() or 1)),
        metavar="N",
        help=f"processes that draw side by side, {WORKERS} (default: 2, or 1 on one core)",
    )
    return p


@dataclass(frozen=True)
class Job:
    """One file to write: its name and what makes its bytes; jobs of one group share work (an
    animation's GIF and MP4 its frames) and run in one process."""

    name: str
    make: Callable[[], bytes]
    group: str = ""


def _formats(text: str) -> list[str]:
    chosen = [f.strip().lower() for f in text.split(",") if f.strip()]
    unknown = [f for f in chosen if f not in FORMATS]
    if unknown or not chosen:
        raise ExportError(
            f"unknown format {echo((unknown or [text])[0])} (choose from {','.join(FORMATS)})"
        )
    return list(dict.fromkeys(chosen))


def jobs(story: Story, formats: list[str]) -> list[Job]:
    """Every file the chosen formats make for the story, in lecture order."""
    anims = story.animations()
    return [
        *_still_jobs(story, formats),
        *_animation_jobs(story, anims, formats),
        *_html_jobs(story, anims, formats),
        *_document_jobs(story, formats),
    ]


def _still_jobs(story: Story, formats: list[str]) -> list[Job]:
    """A PNG and an SVG of every stage, as chosen."""
    from convviz.render.mpl import static

    def figure(still):
        return static.stage_figure(still.panels, still.formula, title=still.title,
                                   highlight=still.highlight)  # fmt: skip

    stills = story.stills()
    out: list[Job] = []
    for ext, save in (("png", static.to_png), ("svg", static.to_svg)):
        if ext in formats:
            out += [
                Job(story.file_name(s.name, ext), lambda s=s, save=save: save(figure(s)))
                for s in stills
            ]
    return out


def _animation_jobs(story: Story, anims: list[Animation], formats: list[str]) -> list[Job]:
    """A GIF and an MP4 of every animation, as chosen; each draws its frames once for both."""
    from convviz.export import video

    rendered: dict[str, video.Rendered] = {}  # frames drawn once, for the GIF and the MP4

    def draw(anim) -> video.Rendered:
        if anim.name not in rendered:
            rendered[anim.name] = video.rendered(anim)
        return rendered[anim.name]

    out: list[Job] = []
    for anim in filter(story.drawable, anims):  # a wide layer's motions: see skipped()
        if "gif" in formats:
            name = story.file_name(anim.name, "gif")
            out.append(Job(name, lambda a=anim: draw(a).gif, anim.name))
        if "mp4" in formats:
            name = story.file_name(anim.name, "mp4")
            out.append(Job(name, lambda a=anim: _mp4(draw, rendered, a), anim.name))
    return out


def skipped(story: Story, formats: list[str]) -> str | None:
    """One line naming the motions whose GIF and MP4 a wide layer leaves out, and why (None
    when nothing is left out): the app offers a motion's GIF only up to MAX_GIF_SIDE cells."""
    videos = [f.upper() + "s" for f in ("gif", "mp4") if f in formats]
    motions = [a for a in story.animations() if a.motion is not None]
    left_out = [a.name for a in motions if not story.drawable(a)] if videos else []
    if not left_out:
        return None
    kinds = " and ".join(videos)
    return (
        f"skipped {len(left_out)} motion {kinds} ({', '.join(left_out)}): {GIF_TOO_WIDE} "
        f"(this one is {max(story.spec.padded_size)}); "
        f"the PNG/SVG stills and the sliding-window {kinds} cover this layer"
    )


def _html_jobs(story: Story, anims: list[Animation], formats: list[str]) -> list[Job]:
    """An offline page per animation and the whole lecture in one page, if HTML is chosen."""
    from convviz.export import html

    if "html" not in formats:
        return []
    return [
        *(
            Job(story.file_name(a.name, "html"), lambda a=a: html.animation_html(story, a).encode())
            for a in anims
        ),
        Job(story.file_name("lecture", "html"), lambda: html.lecture_html(story).encode()),
    ]


def _document_jobs(story: Story, formats: list[str]) -> list[Job]:
    """The .tex of the stages, the PDF handout and the NumPy / PyTorch snippets, as chosen."""
    from convviz.export import latex, snippet
    from convviz.export.handout import handout_pdf

    out: list[Job] = []
    if "tex" in formats:
        out.append(Job(story.file_name("stages", "tex"), lambda: latex.stages_tex(story).encode()))
    if "pdf" in formats:
        out.append(Job(story.file_name("handout", "pdf"), lambda: handout_pdf(story)))
    if "py" in formats:
        out.append(
            Job(story.file_name("numpy", "py"), lambda: snippet.numpy_snippet(story).encode())
        )
        out.append(
            Job(story.file_name("torch", "py"), lambda: snippet.torch_snippet(story).encode())
        )
    return out


def _mp4(draw, rendered: dict, anim) -> bytes:
    """The MP4 of an animation; its frames are forgotten afterwards (the GIF, if asked, came
    first in the job list)."""
    from convviz.export.video import mp4_bytes

    data = mp4_bytes(draw(anim).frames)
    rendered.pop(anim.name, None)
    return data


# --- making the files, on every core -------------------------------------------------------------

_GROUPS: list[list[Job]] = []  # what the forked workers make (they inherit it, nothing pickled)


def _make_group(i: int) -> list[tuple[str, bytes]]:
    return [(job.name, job.make()) for job in _GROUPS[i]]


def made(todo: list[Job], workers: int):
    """Each job's (name, bytes), in the jobs' order; groups (`Job.group`) made side by side in
    `workers` forked processes (one: here, one after the other)."""
    global _GROUPS
    groups: dict[str, list[Job]] = {}
    for job in todo:
        groups.setdefault(job.group or job.name, []).append(job)
    _GROUPS = list(groups.values())
    if workers < 2 or len(_GROUPS) < 2 or "fork" not in mp.get_all_start_methods():
        for i in range(len(_GROUPS)):
            yield from _make_group(i)
        return
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
        # the longest first (the handout, the lecture's page, the animations), so that no worker
        # ends alone on one of them; the files still come in the jobs' order
        first = sorted(range(len(_GROUPS)), key=lambda i: _weight(_GROUPS[i]))
        futures = {i: pool.submit(_make_group, i) for i in first}
        for i in range(len(_GROUPS)):
            yield from futures[i].result()


def _weight(group: list[Job]) -> int:
    """A group's place in the workers' queue: the handout, the lecture's page, an animation's
    GIF and MP4, then the rest (a still, a snippet)."""
    name = group[0].name
    if name.endswith(".pdf"):
        return 0
    if name.endswith("-lecture.html"):
        return 1
    return 2 if group[0].group else 3


def write_atomic(path: Path, data: bytes) -> None:
    """Write data to path through a temporary file in the same folder, renamed when complete."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the export is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Progress:
    """A one-line progress bar on stderr (when it is a terminal, or forced), the file it makes."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self.start = total, enabled, time.monotonic()

    def show(self, done: int, label: str) -> None:
        if not self.enabled:
            return
        width = 28
        filled = round(width * done / max(self.total, 1))
        bar = "#" * filled + "-" * (width - filled)
        elapsed = time.monotonic() - self.start
        sys.stderr.write(f"\r[{bar}] {done}/{self.total} {elapsed:5.1f}s {label[:48]:<48}")
        sys.stderr.flush()

    def end(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def main(argv: list[str] | None = None) -> int:
    """Run the export; returns the exit code (0 done, 1 a file failed, 2 bad arguments)."""
    p = parser()
    args = p.parse_args(argv)
    if not args.out.strip():
        p.error("--out is empty: name a folder (--out . for the current one)")
    out = Path(args.out)
    try:
        workers = read(args.workers, "--workers", WORKERS)
        formats = _formats(args.formats)
        story = (
            Story.of(args.preset, args.link)
            if (args.preset or args.link)
            else Story.of("classroom")
        )
    except (ExportError, ConvSpecError) as exc:
        p.error(str(exc))
    if out.exists() and not out.is_dir():
        p.error(f"--out {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        p.error(f"cannot create --out {out}: {exc.strerror}")
    todo = jobs(story, formats)
    there = [job.name for job in todo if (out / job.name).exists()]
    if there and not args.force:
        p.error(
            f"--out {out} already holds {len(there)} of these files ({', '.join(there[:3])}"
            f"{', …' if len(there) > 3 else ''}): add --force to replace them"
        )
    note = skipped(story, formats)
    if note:
        print(note, file=sys.stderr)
    bar = Progress(len(todo), not args.quiet and sys.stderr.isatty())
    written = []
    try:
        bar.show(0, todo[0].name if todo else "")
        for name, data in made(todo, workers):
            path = out / name
            write_atomic(path, data)
            written.append(path)
            bar.show(len(written), name)
        bar.show(len(todo), "done")
    except KeyboardInterrupt:
        bar.end()
        print(f"interrupted: {len(written)} of {len(todo)} files written", file=sys.stderr)
        return 130
    except Exception as exc:  # a renderer or ffmpeg failed: say which file, keep the others
        bar.end()
        print(f"failed on {todo[len(written)].name}: {exc}", file=sys.stderr)
        _list(written)
        return 1
    bar.end()
    _list(written)
    return 0


def _list(paths: list[Path]) -> None:
    for path in paths:
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")

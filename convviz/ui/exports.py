"""More exports for authors, in a popover beside each stage's PNG/SVG buttons.

Nothing here is built until its button is clicked: every download's data is a callable that
Streamlit runs on the click. The files are the command line's (`python -m convviz export`),
for the layer, slice and selection on screen.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from convviz.engine.formulas import Formula
from convviz.export import html, latex, snippet, video
from convviz.export.handout import handout_pdf
from convviz.export.story import ANIMATIONS, Animation, Story
from convviz.model.lecture import LECTURE
from convviz.render.motion.model import GIF_TOO_WIDE
from convviz.ui.controls import Context

BACKWARD = LECTURE.stage("whole").export
LECTURE_PAGE = {s.export: s.page for s in LECTURE.stages if s.export}
MOTION_EXPORTS = {s.export for s in LECTURE.on_page(LECTURE.stage("whole").page)}


def story_of(ctx: Context) -> Story:
    """The exports' view of the page's layer, slice and selection."""
    return Story(ctx.state, ctx.layer, (ctx.n, ctx.k, ctx.c), ctx.selection)


def _animation(ctx: Context, name: str) -> Animation | None:
    return next((a for a in story_of(ctx).animations() if a.name == name), None)


def _drawn(ctx: Context, anim: Animation) -> video.Rendered:
    return video.rendered(anim, ctx.theme)


def _mp4(ctx: Context, name: str) -> bytes:
    return video.mp4_bytes(_drawn(ctx, _animation(ctx, name)).frames)


def _gif(ctx: Context, name: str) -> bytes:
    return _drawn(ctx, _animation(ctx, name)).gif


def _html(ctx: Context, name: str) -> bytes:
    story = story_of(ctx)
    anim = next(a for a in story.animations() if a.name == name)
    return html.animation_html(story, anim).encode()


def _download(ctx: Context, stage: str, label: str, data, file: str, ext: str, mime: str,
              tip: str) -> None:  # fmt: skip
    """A download whose data (a callable) is made on the click; keyed by the stage's row."""
    st.download_button(
        label,
        data,
        file_name=f"convviz-{ctx.state['preset']}-{file}.{ext}",
        mime=mime,
        on_click="ignore",
        key=f"more_{stage}_{file}_{ext}",
        help=tip,
        width="stretch",
    )


_EVERY_STAGE = (  # label, make(story) -> bytes, file name, extension, mime type, tip
    ("⬇ The whole lecture (HTML)", lambda s: html.lecture_html(s).encode(), "lecture", "html",
     "text/html", "forward, input gradient, weight gradient in one offline file"),
    ("⬇ LaTeX of the stages (.tex)", lambda s: latex.stages_tex(s).encode(), "stages", "tex",
     "application/x-tex", "bmatrix blocks and the formulas; compiles standalone"),
    ("⬇ NumPy snippet (.py)", lambda s: snippet.numpy_snippet(s).encode(), "numpy", "py",
     "text/x-python", "prints y, ∂L/∂x, ∂L/∂w with these exact values"),
    ("⬇ PyTorch snippet (.py)", lambda s: snippet.torch_snippet(s).encode(), "torch", "py",
     "text/x-python", "the same through torch autograd"),
    ("⬇ Handout (PDF)", handout_pdf, "handout", "pdf", "application/pdf",
     "one stage per page with its caption and formula, for printing"),
)  # fmt: skip


def more_exports(ctx: Context, name: str, formula: Formula | None = None) -> None:
    """A "More exports" popover: this stage's animation as MP4 (and GIF, HTML) if it has one,
    the whole lecture as offline HTML, the stages in LaTeX, the NumPy and PyTorch snippets, the
    handout PDF, and the cell's formula as LaTeX to copy.

    name : the stage's export name (`convviz.model.lecture.Stage.export`), as in export_buttons.
    """
    popover = st.popover(
        "More exports", icon=":material/ios_share:", key=f"more_{name}", on_change="rerun"
    )
    if not popover.open:  # its buttons are made only when someone opens it (a rerun each way)
        return
    with popover:
        animated = [n for n in (name, BACKWARD) if n in ANIMATIONS]
        if LECTURE_PAGE.get(name) != LECTURE.stage("whole").page:  # the page of the whole pass
            animated = animated[:1]
        story = story_of(ctx)
        for anim in dict.fromkeys(animated):
            what = "the whole backward pass" if anim == BACKWARD else "this animation"
            videos = [("mp4", "video/mp4", _mp4, "H.264, ≥ 1280 px wide, from the GIF's frames")]
            if anim != name or name in MOTION_EXPORTS:  # no GIF button beside it yet
                videos.append(("gif", "image/gif", _gif, "the same frames as the MP4"))
            if not story.drawable(_animation(ctx, anim)):
                st.caption(f"No MP4 or GIF of {what} at this size: {GIF_TOO_WIDE}; its HTML plays.")
                videos = []
            for ext, mime, make, tip in videos:
                data = partial(make, ctx, anim)
                _download(ctx, name, f"⬇ {ext.upper()} of {what}", data, anim, ext, mime, tip)
            _download(ctx, name, f"⬇ HTML of {what}", lambda a=anim: _html(ctx, a), anim, "html",
                      "text/html", "one offline file that plays, steps and scrubs")  # fmt: skip
        for label, make, file, ext, mime, tip in _EVERY_STAGE:
            _download(ctx, name, label, lambda make=make: make(story_of(ctx)), file, ext, mime, tip)
        if formula is not None:
            # a text box, not st.code: a code block loads a 1.5 MB highlighter on every page
            st.text_area(
                "The cell's formula in LaTeX (select all, copy)",
                latex.cell_latex(formula),
                height=90,
                key=f"latex_{name}",
            )

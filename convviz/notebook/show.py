"""`convviz.show(...)`: a stage of the lecture as a notebook output, or a file.

The object it returns is displayed by any Jupyter front end (its MIME bundle: the HTML that plays,
the PNG still for a front end that runs no script, a line of text) and `save(path)` writes the
same as a page that plays offline.
"""

from __future__ import annotations

from pathlib import Path

from convviz.notebook import page
from convviz.notebook.arguments import stage_of, story_of
from convviz.notebook.view import View


class Output:
    """One stage of one layer, ready to display (`view`: what it draws)."""

    def __init__(self, view: View):
        self.view = view

    def html(self, *, with_assets: bool = True) -> str:
        """The output's HTML (with the scripts it needs, unless the page has them)."""
        return page.fragment(self.view, with_assets=with_assets)

    def save(self, path) -> Path:
        """Write the stage as a page that plays offline (plotly.js and the player inside)."""
        path = Path(path)
        path.write_text(page.page(self.view), encoding="utf-8")
        return path

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {
            "text/html": self.html(with_assets=page.Sent.needed()),
            "image/png": self.view.png_base64,
            "text/plain": repr(self),
        }

    def __repr__(self) -> str:
        v = self.view
        return (f"convviz · {v.heading} ({v.stage.key}, {v.story.preset}): run the cell in a "
                "trusted notebook to play it")  # fmt: skip


def show(
    preset: str | None = None,
    link: str | None = None,
    *,
    stage: str = "forward",
    step: int | None = None,
    n: int = 0,
    k: int = 0,
    c: int = 0,
    selected: tuple[str, int, int] | None = None,
    width: int | None = None,
    **layer,
) -> Output:
    """A stage of the lecture, as the app draws it, with the app's player (see `convviz.show`)."""
    story = story_of(preset, link, n=n, k=k, c=c, selected=selected, **layer)
    return Output(View(story, stage_of(story, stage), step=step, width=width))

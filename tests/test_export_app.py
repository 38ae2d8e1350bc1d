"""The app's "More exports": offered on every export row, built only when clicked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import imageio_ffmpeg
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from convviz.export.story import Story

pytestmark = pytest.mark.apptest  # the pages' export rows in AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
COMMON = ["The whole lecture (HTML)", "LaTeX of the stages (.tex)", "NumPy snippet (.py)",
          "PyTorch snippet (.py)", "Handout (PDF)"]  # fmt: skip


def _page(path: str, stage: str, **query) -> AppTest:
    """The page with the export row of `stage` (its export name) opened on "More exports"."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"preset": "recitation-s1", **query})
    at.run()
    at.switch_page(path).run()
    assert not _more(at), "the popover's buttons are made only once it is opened"
    at.session_state[f"more_{stage}"] = True  # what opening the popover sends
    at.run()
    assert not at.exception
    return at


def _more(at: AppTest) -> dict[str, object]:
    """The More-exports downloads by label (without the arrow), as sent to the browser."""
    out = {}
    for d in at.get("download_button"):
        if "-more_" in d.proto.id:
            out[d.proto.label.removeprefix("⬇ ")] = d.proto
    return out


@pytest.mark.parametrize(
    "path, stage, query, animated",
    [
        ("pages/1_Forward.py", "forward", {}, ["MP4 of this animation", "HTML of this animation"]),
        (
            "pages/2_Input_gradient.py",
            "input-grad-step3",
            {"step": "3"},  # the padding motion
            [
                "MP4 of this animation",
                "GIF of this animation",
                "HTML of this animation",
                "MP4 of the whole backward pass",
                "GIF of the whole backward pass",
                "HTML of the whole backward pass",
            ],
        ),
        (
            "pages/3_Weight_gradient.py",
            "weight-grad",
            {},
            ["MP4 of this animation", "HTML of this animation"],
        ),
    ],
)
def test_more_exports_are_offered_and_deferred(path, stage, query, animated):
    at = _page(path, stage, **query)
    more = _more(at)
    assert list(more) == animated + COMMON
    for proto in more.values():
        assert proto.deferred_file_id and not proto.url  # made on the click, not on the run


def test_a_layer_too_wide_for_motion_videos_offers_their_html_and_says_why():
    """qa-channels' storyboard offered the MP4 and GIF of its 100-wide motions: one click cost
    minutes (`render.motion.gif_fits`, the command line's rule). The sliding windows keep theirs."""
    at = _page("pages/2_Input_gradient.py", "input-grad-step3", preset="qa-channels", step="3")
    assert list(_more(at)) == ["HTML of this animation", "HTML of the whole backward pass", *COMMON]
    said = [c.value for c in at.caption if c.value.startswith("No MP4 or GIF")]
    assert said == [
        f"No MP4 or GIF of {what} at this size: grids wider than 12 cells take minutes to draw; "
        "its HTML plays."
        for what in ("this animation", "the whole backward pass")
    ]
    forward = _more(_page("pages/1_Forward.py", "forward", preset="qa-channels"))
    assert list(forward) == ["MP4 of this animation", "HTML of this animation", *COMMON]


def test_the_cells_formula_is_there_to_copy():
    at = _page("pages/1_Forward.py", "forward", sel="y:1:0")
    (box,) = [t for t in at.text_area if "LaTeX" in t.label]
    story = Story.of(link="?preset=recitation-s1&sel=y:1:0")
    assert box.value.strip() == story_latex(story).strip()
    assert "= 67" in box.value  # y[1, 0] = 4·1 + 5·2 + 7·3 + 8·4


def story_latex(story: Story) -> str:
    from convviz.export.latex import cell_latex

    return cell_latex(story.forward_formula)


@pytest.mark.browser
@pytest.mark.encoder  # the server encodes the MP4, and the test decodes it
def test_snippet_and_mp4_download_from_the_popover(tab, app_url, tmp_path):
    from live import SETTLE_MS, goto

    # the page reruns once to fit the screen: a click into that run can land on a replaced
    # button; `goto` returns once the page has settled
    goto(tab, f"{app_url}/Forward?preset=recitation-s1")
    tab.get_by_role("button", name="More exports").click()
    with tab.expect_download(timeout=SETTLE_MS) as py:
        tab.get_by_role("button", name="NumPy snippet (.py)").click()
    assert py.value.suggested_filename == "convviz-recitation-s1-numpy.py"
    script = tmp_path / "snippet.py"
    script.write_bytes(Path(py.value.path()).read_bytes())
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert run.returncode == 0 and "dL/dx =" in run.stdout
    y = Story.of("recitation-s1").layer.forward.y
    assert " ".join(run.stdout.split()).startswith(f"y = [[[[{y[0, 0, 0, 0]:g}. ")

    button = tab.get_by_role("button", name="MP4 of this animation")
    if not button.is_visible():  # the popover may have closed after the first download
        tab.get_by_role("button", name="More exports").click()
    with tab.expect_download(timeout=SETTLE_MS) as mp4:
        button.click()
    assert mp4.value.suggested_filename == "convviz-recitation-s1-forward.mp4"
    reader = imageio_ffmpeg.read_frames(mp4.value.path())
    meta = next(reader)
    frames = [np.frombuffer(f, np.uint8) for f in reader]
    assert meta["size"][0] >= 1280 and len(frames) > 4


@pytest.mark.parametrize("step", ["1", "2", "4", "5", "6"])
def test_storyboard_exports_carry_the_followed_cells_formula(step):
    """A storyboard stage's export row carries the formula the page writes out (the followed
    ∂L/∂x cell's sum): under the PNG/SVG and as LaTeX to copy (issue 8.9: stills carry their
    formula)."""
    name = f"input-grad-step{step}"
    at = _page("pages/2_Input_gradient.py", name, step=step)
    areas = [t for t in at.text_area if t.label.startswith("The cell's formula in LaTeX")]
    assert len(areas) == 1, f"step {step}: the export row has the formula"
    # the full correlation writes ∂L/∂x̃ (the grid it fills), in padded indices
    x = r"\tilde{x}" if step == "5" else "x"
    assert rf"\frac{{\partial L}}{{\partial {x}" in areas[0].value


def test_the_gif_animates_the_figures_panels_not_the_slides(monkeypatch):
    """With nothing selected the PNG/SVG slide outlines the cell it writes out (`written`); the
    GIF was drawn from those panels too: each frame outlined that cell as well as the one being
    written, and its legend listed three black squares."""
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.testing.v1 import app_test

    from convviz.render.mpl import sweep_gif as static_gif

    made: dict[str, object] = {}

    class Recording(MediaFileManager):
        def add_deferred(self, data_callable, *args, **kwargs):
            file_id = super().add_deferred(data_callable, *args, **kwargs)
            made[file_id] = data_callable
            return file_id

    drawn = []
    monkeypatch.setattr(app_test, "MediaFileManager", Recording)
    # sweep_gif(sweep, *panels, theme, ...): the panels it animates
    monkeypatch.setattr(static_gif, "sweep_gif", lambda sweep, *args, **_: drawn.append(args[:-1]))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["preset"] = "recitation-s2"
    at.switch_page("pages/1_Forward.py").run()
    buttons = {d.proto.label: d.proto for d in at.get("download_button")}
    made[buttons["⬇ GIF animation"].deferred_file_id]()
    (panels,) = drawn
    assert [p.key for p in panels[:1]] == ["x"] and all(p.written is None for p in panels)

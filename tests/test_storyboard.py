"""The storyboard is the one place a stage's picture is decided: a toy stage added to a copy of the
lecture with one drawing appears in every reader of the lecture (the stage bar, the step= range,
the offline deck, the handout, the CLI's file list, the .tex, the quiz's order), and the same
copy without its drawing fails the board's check with the stage's name."""

from __future__ import annotations

import numpy as np
import pytest

from convviz.export import cli, handout, html, latex
from convviz.export.story import Story
from convviz.model.fields import step_field
from convviz.model.lecture import INPUT_PAGE, LECTURE, Stage
from convviz.model.quiz.model import KIND_STAGES, story_order
from convviz.render.panel import Panel
from convviz.render.story.board import BOARD, BoardError, Drawing, StillDrawing, check

TOY = Stage("toy", INPUT_PAGE, "toy", "A toy stage: ∂L/∂y doubled", "Twice the gradient.",
            "still", "toy-stage", still=True)  # fmt: skip
TOY_LECTURE = LECTURE.with_stage(TOY, after="pad")


def _doubled(s) -> StillDrawing:
    return StillDrawing([Panel(2 * s.layer.input_grad.grad_out[s.n, s.k], "2·∂L/∂y", "toy")])


TOY_BOARD = {**BOARD, "toy": Drawing(still=_doubled)}


@pytest.fixture(scope="module")
def story() -> Story:
    return Story.of("recitation-s2", lecture=TOY_LECTURE, board=TOY_BOARD)


def test_the_board_holds_the_lecture():
    check()  # the app's own (it runs at import too)
    check(TOY_LECTURE, TOY_BOARD)


def test_a_stage_without_its_drawing_is_named():
    with pytest.raises(BoardError, match="'toy' has no drawing"):
        check(TOY_LECTURE, BOARD)
    with pytest.raises(BoardError, match="'toy' has no stage"):
        check(LECTURE, TOY_BOARD)
    animated = LECTURE.with_stage(Stage("toy", INPUT_PAGE, "toy", "", "", "motion", "toy",
                                        animated=True), after="pad")  # fmt: skip
    with pytest.raises(BoardError, match="'toy' has no motion, an animation"):
        check(animated, TOY_BOARD)


def test_the_toy_is_in_the_stage_bar_and_the_step_range():
    labels = [TOY_LECTURE.label(s) for s in TOY_LECTURE.on_page(INPUT_PAGE)]
    assert labels[3] == "4 · toy" and labels[4] == "5 · rotate 180°"  # the ones after move on
    assert len(labels) == len(LECTURE.on_page(INPUT_PAGE)) + 1
    for lecture in (LECTURE, TOY_LECTURE):  # step= reaches the last stage of the fullest page
        assert step_field(lecture).hi == max(len(lecture.on_page(p)) for p in lecture.pages())


def test_the_clicker_stops_on_the_toy_and_the_deck_has_as_many_stages(story):
    """PageDown walks the toy's lecture through the toy (after pad, before rotate, its step= one
    past pad's) and the offline deck shows the same stages in the same order."""
    walk = TOY_LECTURE.walk(story.spec)
    keys = [stop.stage.key for stop in walk if stop.stage]
    assert keys.index("toy") == keys.index("pad") + 1 and keys[keys.index("toy") + 1] == "rotate"
    stops = {stop.stage.key: stop for stop in walk if stop.stage}
    assert stops["toy"].page == INPUT_PAGE and stops["toy"].step == stops["pad"].step + 1
    assert len(keys) == len(LECTURE.walk(story.spec)) - len(LECTURE.coda) + 1
    assert [s.key for s in html.deck_stages(story)] == keys


def test_the_toy_is_in_every_export(story):
    html_text = html.lecture_html(story)
    assert "4 · toy" in html_text and "A toy stage" in html_text
    names = [j.name for j in cli.jobs(story, ["png", "svg", "tex"])]
    assert "convviz-recitation-s2-toy-stage.png" in names
    assert "convviz-recitation-s2-toy-stage.svg" in names
    tex = latex.stages_tex(story)
    assert "4. A toy stage" in tex
    doubled = 2 * story.layer.input_grad.grad_out[0, 0]
    assert " & ".join(f"{v:g}" for v in doubled[0]) in tex.replace(".0 ", " ")
    assert story.stills()[[s.stage.key for s in story.stills()].index("toy")].panels[0].values[
        0, 0
    ] == pytest.approx(doubled[0, 0])


def test_the_handout_has_a_page_for_the_toy(story, monkeypatch):
    from matplotlib.backends.backend_pdf import PdfPages

    titles = []
    real = PdfPages.savefig

    def recording(self, figure=None, **kw):
        titles.append(figure.texts[0].get_text())
        return real(self, figure, **kw)

    monkeypatch.setattr(PdfPages, "savefig", recording)
    monkeypatch.setattr(handout, "_stage_png", lambda still: np.zeros((2, 2, 3), np.uint8))
    handout.handout_pdf(story)
    assert "A toy stage: ∂L/∂y doubled" in titles


def test_the_quiz_follows_the_lecture():
    """The quiz asks in the lecture's order: a lecture that rotates the kernel before it pads
    asks the flip before the padded cell; a toy stage's question takes its place."""
    assert story_order(KIND_STAGES) == ("y", "dilated", "padded", "flip", "grad_x", "masked",
                                        "grad_w", "bias")  # fmt: skip
    stages = list(LECTURE.stages)
    pad, rot = (next(i for i, s in enumerate(stages) if s.key == k) for k in ("pad", "rotate"))
    stages[pad], stages[rot] = stages[rot], stages[pad]
    swapped = type(LECTURE)(tuple(stages))
    assert story_order(KIND_STAGES, swapped).index("flip") < story_order(
        KIND_STAGES, swapped
    ).index("padded")
    with_toy = story_order([*KIND_STAGES, "toy"], TOY_LECTURE, {**KIND_STAGES, "toy": "toy"})
    assert with_toy.index("padded") < with_toy.index("toy") < with_toy.index("flip")


def test_a_drawing_draws_the_engines_numbers(story):
    """Each still of the layer's own stages holds arrays of the engine (no copy made up)."""
    ig = story.layer.input_grad
    still = story.still(LECTURE.stage("dilate"))
    np.testing.assert_array_equal(still.panels[0].values, ig.dilated[0, 0])

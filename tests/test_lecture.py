"""The lecture is one model (convviz.model.lecture): its order, numbers, titles and file names are
read by the stage bar, the URL's step= range, the clicker's keys and every export, and spelled in
one
production file only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from convviz.export.story import Story
from convviz.model.fields import FIELDS, step_field
from convviz.model.lecture import (
    CHAIN_PAGE,
    INPUT_PAGE,
    KEYS,
    LECTURE,
    WEIGHT_PAGE,
    Seen,
    Stage,
    keys_hint,
)
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import from_query, to_query

ROOT = Path(__file__).resolve().parents[1]
PRODUCTION = [
    *ROOT.glob("convviz/**/*.py"),
    *ROOT.glob("convviz/**/*.js"),
    *ROOT.glob("pages/*.py"),
    ROOT / "app.py",
]


def test_the_lecture_walks_forward_the_input_gradient_the_whole_pass_the_weight_gradient():
    keys = [s.key for s in LECTURE.stages]
    assert keys == ["forward", "grad-out", "dilate", "pad", "rotate", "correlate", "mask",
                    "whole", "weight-grad", "weight-window", "loss", "step", "train",
                    "chain-forward", "chain-grad-h", "handover", "chain-dilate", "chain-pad",
                    "chain-rotate", "chain-correlate", "chain-mask", "chain-weights",
                    "channels"]  # fmt: skip
    labels = [LECTURE.label(s) for s in LECTURE.on_page(INPUT_PAGE)]
    assert labels == ["1 · ∂L/∂y", "2 · dilate", "3 · pad", "4 · rotate 180°", "5 · correlate",
                      "6 · mask", "1–6 · whole pass"]  # fmt: skip
    assert [LECTURE.label(s) for s in LECTURE.on_page(WEIGHT_PAGE)] == [
        "1 · ∂L/∂w", "2 · stride → dilation"]  # fmt: skip
    assert LECTURE.label(LECTURE.stage("forward")) == "forward"  # a page of one stage: no number


def test_channels_are_a_stage_where_the_layer_has_several():
    one = PRESETS_BY_KEY["recitation-s2"].spec()
    many = PRESETS_BY_KEY["qa-channels"].spec()
    assert "channels" not in [s.key for s in LECTURE.of(one)]
    assert "channels" in [s.key for s in LECTURE.of(many)]
    assert LECTURE.counter(LECTURE.stage("whole"), one) == (8, 22)


def test_the_words_fit_the_layer():
    """The mask's heading says what this layer's ring does."""
    mask = LECTURE.stage("mask")
    assert mask.heading_for(Seen(PRESETS_BY_KEY["recitation-s1"].spec())).startswith("No ring")
    assert mask.heading_for(Seen(PRESETS_BY_KEY["classroom"].spec())).startswith("Mask the padded")
    reflect = PRESETS_BY_KEY["reflect"].spec()
    assert mask.heading_for(Seen(reflect)).startswith("Fold the ring's gradient back (reflect)")
    whole = LECTURE.stage("whole").heading_for(Seen(reflect))
    assert whole == (
        "The whole backward pass: ∂L/∂y → dilate → pad → rotate → correlate → mask → ∂L/∂x"
    )


def test_the_url_step_ranges_over_the_most_stages_a_page_has_and_reads_an_older_whole_link():
    assert len(LECTURE.on_page(INPUT_PAGE)) == 7
    assert FIELDS["step"].hi == len(LECTURE.on_page(CHAIN_PAGE)) == 9  # the most stages a page has
    state, problems = from_query({"preset": "recitation-s2", "whole": "1"})
    assert not problems and state["step"] == LECTURE.step_of(LECTURE.stage("whole"))
    assert "whole" not in to_query(state)  # read, never written
    state, problems = from_query({"preset": "recitation-s2", "play": "stills"})
    assert not problems and state["play"] == "stills" and to_query(state)["play"] == "stills"
    _, problems = from_query({"play": "sometimes"})
    assert problems and "play=sometimes" in problems[0]


def new_stage() -> Stage:
    """A stage the lecture does not have yet: the sum over the filters, after the mask."""
    return Stage("sum-filters", INPUT_PAGE, "Σ filters", "Sum the filters' ∂L/∂x̃",
                 "Each filter's correlation adds up.", "still", "input-grad-sum",
                 still=True)  # fmt: skip


def test_a_stage_added_to_the_model_appears_in_the_bar_the_url_range_and_the_exports():
    lecture = LECTURE.with_stage(new_stage(), after="mask")
    bar = [lecture.label(s) for s in lecture.on_page(INPUT_PAGE)]
    assert bar[6] == "7 · Σ filters" and bar[-1] == "1–6 · whole pass"
    assert len(lecture.on_page(INPUT_PAGE)) == 8 and step_field(lecture).hi == 9
    assert "input-grad-sum" in lecture.export_names()
    assert "input-grad-sum" not in LECTURE.export_names()  # the copy, not the lecture, changed
    before, after = lecture.neighbours(lecture.stage("sum-filters"))
    assert (before.key, after.key) == ("mask", "whole")


def test_exports_name_and_order_their_files_by_the_model():
    story = Story.of("recitation-s2")
    spec = story.spec
    stills = [s.name for s in story.stills()]
    animations = [a.name for a in story.animations()]
    assert stills == [s.export for s in LECTURE.of(spec) if s.still]
    assert animations == [s.export for s in LECTURE.of(spec) if s.animated]
    assert sorted(set(stills) | set(animations)) == sorted(LECTURE.export_names(spec))
    # titles and captions are the lecture's, for this layer
    mask = next(s for s in story.stills() if s.stage.key == "mask")
    assert (mask.title, mask.caption) == story.words(LECTURE.stage("mask"))


def test_keys_are_one_table_and_the_hint_says_them():
    assert KEYS["next"][0] == "PageDown" and "n" in KEYS["next"]
    assert "b" in KEYS["blank"] and "." in KEYS["blank"]
    hint = keys_hint()
    assert "PgUp/PgDn stage" in hint and "a whole pass" in hint and "b blank" in hint
    assert "F5 full screen" in hint


def _literal(text: str) -> re.Pattern:
    return re.compile(r"""["']""" + re.escape(text) + r"""["']""")


def _files_with(text: str) -> list[str]:
    quoted = _literal(text)
    return [str(p.relative_to(ROOT)) for p in PRODUCTION if quoted.search(p.read_text())]


@pytest.mark.parametrize("stage", LECTURE.stages, ids=lambda s: s.key)
def test_a_stage_is_spelled_in_one_production_file(stage):
    """Its heading and its export file name appear as a literal in convviz/model/lecture.py alone
    (an export name that is also the stage's key, "forward", is a name in use elsewhere); its
    title with its number ('2 · dilate', '1–6 · whole pass') in no file at all: the number is
    its place in the model. (A title alone is often also a name in use: "pad", "∂L/∂y".)"""
    spelled = [stage.heading] if isinstance(stage.heading, str) else []
    spelled += [stage.export] if stage.export and stage.export != stage.key else []
    for text in spelled:
        assert _files_with(text) == ["convviz/model/lecture.py"], text
    number = LECTURE.number(stage)
    for label in (f"{number} · {stage.title}", f"{number}. {stage.title}") if number else ():
        assert not [p for p in PRODUCTION if label in p.read_text()], label


def test_the_one_file_check_can_fail():
    """A literal written in several production files is seen in each (the check reads them)."""
    assert len(_files_with("grad_x_padded")) > 3
    assert _files_with("Output size") == ["app.py"]

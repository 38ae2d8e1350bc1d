"""The handout PDF: a cover and one page per stage, each with its grids and words."""

from __future__ import annotations

import re

import pytest
from matplotlib.backends.backend_pdf import PdfPages

from convviz.export.handout import handout_pdf
from convviz.export.story import Story


@pytest.fixture(scope="module")
def story():
    return Story.of("recitation-s2")


PAGES: list[list[str]] = []  # the texts of each page as it went into the PDF


@pytest.fixture(scope="module")
def pdf(story):
    save = PdfPages.savefig

    def recording(self, figure=None, **kw):
        PAGES.append([t.get_text() for t in figure.texts])
        return save(self, figure, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(PdfPages, "savefig", recording)
        return handout_pdf(story)


def test_one_page_per_stage_after_a_cover(story, pdf):
    assert pdf.startswith(b"%PDF") and pdf.rstrip().endswith(b"%%EOF")
    pages = re.findall(rb"/Type /Page\b", pdf)
    stages = [s for s in story.stages() if s.still]  # every stage with a picture, in order
    assert len(pages) == len(story.stills()) + 1 == len(stages) + 1
    images = re.findall(rb"/Subtype /Image", pdf)
    assert len(images) == len(story.stills())  # each stage's grids, once


def test_pages_carry_their_headings_captions_and_formulas(story, pdf):
    stills = story.stills()
    assert len(PAGES) == len(stills) + 1
    assert all(s.title in PAGES[0][-1] for s in stills)  # the cover lists every stage
    for i, (page, still) in enumerate(zip(PAGES[1:], stills)):
        assert page[0] == still.title
        assert " ".join(page[1].split()) == " ".join(still.caption.split())
        if still.formula is not None:  # the formula in symbols, whole or with its remainder
            assert page[2].replace("\n", " ").startswith(still.formula.name())
        assert page[-1] == f"{i + 2} / {len(stills) + 1}"
    assert b"convviz handout: recitation-s2" in pdf  # the document's title

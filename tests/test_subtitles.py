"""Panel subtitles are never cut short: in presentation mode the notes after " · " give way first
and the first part is kept whole (wrapped if it must be); in normal mode every word is kept."""

import numpy as np
import pytest

from convviz.render.geometry import HIDDEN_NOTE, _wrap_clauses, subtitle_lines, title_lines
from convviz.render.panel import Panel
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.theme import PRESENTATION, THEME

PROJECTOR = PRESENTATION.fitted(1232, 720)
LAPTOP = THEME.fitted(820, 720)


def panel(subtitle: str) -> Panel:
    return Panel(values=np.zeros((2, 2)), title="∂L/∂y[n=0, k=0]", key="g", subtitle=subtitle)


def words(lines: list[str]) -> list[str]:
    return " ".join(lines).split()


@pytest.mark.parametrize("column", [120, 150, 220, 400, 900])
def test_projector_keeps_the_first_part_whole_and_drops_notes_from_the_end(column):
    sub = "5×5 → padded 7×7 · window coloured by kernel tap · grey: padding"
    lines = subtitle_lines(panel(sub), PROJECTOR, column, hidden=False)
    shown = " ".join(lines)
    assert "…" not in shown
    kept = sub.split(" · ")
    assert any(words(lines) == " · ".join(kept[:n]).split() for n in range(1, len(kept) + 1))
    assert shown.startswith("5×5 → padded 7×7")


def test_projector_drops_clauses_after_a_comma_too_and_wraps_only_a_first_clause_too_wide():
    # the weight gradient's ∂L/∂y of a 2×2 output: its column is two cells wide
    lines = subtitle_lines(panel("2×2, spread by the stride 1×1"), PROJECTOR, 150, hidden=False)
    assert lines == ["2×2"]
    wide = "rows 43…53 of the padded gradient"  # one clause: wrapped, never cut
    lines = subtitle_lines(panel(wide), PROJECTOR, 150, hidden=False)
    assert len(lines) >= 2 and words(lines) == wide.split()


@pytest.mark.parametrize("column", [120, 300, 900])
def test_laptop_keeps_every_word(column):
    """Every word, and a ' · ' between clauses on one line; a line broken there does not end
    with it ('7×7 → padded 9×9 ·' / 'window coloured by kernel tap')."""
    sub = "5×5 → padded 7×7 · window coloured by kernel tap"
    lines = subtitle_lines(panel(sub), LAPTOP, column, hidden=True)
    assert not any(line.endswith("·") or line.startswith("·") for line in lines)
    said = [w for w in words(lines) if w != "·"]
    assert said == [w for w in f"{sub} {HIDDEN_NOTE}".split() if w != "·"]
    if len(lines) == 1:
        assert lines[0].count(" · ") == 2


def test_hidden_note_alone_is_kept_on_a_projector():
    lines = subtitle_lines(panel(""), PROJECTOR, 400, hidden=True)
    assert " ".join(lines) == HIDDEN_NOTE


@pytest.mark.parametrize("column", [100, 120, 150, 180, 200, 260])
def test_lines_never_leave_a_last_word_alone_nor_grow_for_clauses(column):
    """'4×4, spread by the stride 2×2' wrapped as '4×4, spread by the stride' / '2×2': the
    second line read as a second shape. Breaking between clauses is preferred, but not at the
    cost of a line (a taller header makes the grids smaller)."""
    import textwrap

    sub = "4×4, spread by the stride 2×2"
    lines = subtitle_lines(panel(sub), LAPTOP, column, hidden=False)
    assert words(lines) == sub.split()
    assert not any(line == "2×2" for line in lines)
    chars = max(len(line) for line in lines)
    assert len(lines) <= len(textwrap.wrap(sub, max(chars, 1))) + 1
    if lines == ["4×4,", "spread by the stride 2×2"] or len(lines) == 1:
        return
    assert len(lines) <= 2  # the first clause with words of the second, one line more at most


def test_titles_of_a_row_stand_at_one_height_whatever_their_subtitles():
    """Each header hangs from the top of the headers' room: a panel whose subtitle wraps onto
    more lines reaches lower, instead of lifting its title above the others."""
    long = "9×9 · window coloured by ∂L/∂y cell · grey: padding · the ring is summed too"
    panels = [panel(long), panel("3×3"), panel("")]
    fig = panels_figure(panels, LAPTOP)
    heads = [a for a in fig.layout.annotations if a.yref and a.yref.endswith(" domain")]
    assert len(heads) == 3 and len({a.text.count("<br>") for a in heads}) == 3
    assert {(a.y, a.yanchor, a.yshift) for a in heads} == {(1.0, "top", heads[0].yshift)}
    tallest = max(a.text.count("<br>") + 1 for a in heads)
    assert heads[0].yshift >= tallest * 1.3 * LAPTOP.title_font_size  # room for the tallest
    assert heads[0].yshift <= fig.layout.margin.t  # inside the figure


def test_an_index_is_never_broken_across_lines():
    """Matrix view's 'x[i, j] is column 5·i + j of M' wrapped as 'x[i,' / 'j] is …': the comma
    inside an index read as a place to break."""
    text = "5×5; x[i, j] is column 5·i + j of M"
    for chars in range(8, 40):
        lines = _wrap_clauses(text, chars)
        assert " ".join(lines) == text
        assert any("x[i, j]" in line for line in lines), (chars, lines)


@pytest.mark.parametrize(
    ("title", "lines"),
    [
        ("w[k=0, c=0] → rot180", ["w[k=0, c=0]", "→ rot180"]),
        (
            "∂L/∂x̃[n=0, c=0] → ∂L/∂x (Σ over 3 filters)",
            ["∂L/∂x̃[n=0, c=0]", "→ ∂L/∂x (Σ over 3 filters)"],
        ),
        ("∂L/∂y[n=0, k=0] dilated and padded", ["∂L/∂y[n=0, k=0]", "dilated and padded"]),
    ],
)
def test_a_title_too_wide_breaks_before_its_arrow(title, lines):
    """Side by side in the whole pass, two wrapped titles broke on either side of their arrows
    ("w[k=0, c=0]" / "→ rot180" beside "∂L/∂x̃[n=0, c=0] →" / "∂L/∂x …"). What a stage makes
    now opens every second line; a title without an arrow still breaks where its longest line
    is shortest."""
    narrow = Panel(values=np.zeros((2, 2)), title=title, key="g")
    assert title_lines(narrow, PROJECTOR, 40) == lines

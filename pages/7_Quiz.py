"""Predict, then reveal: the app hides a number of this layer; the student types it."""

import math
import secrets

import streamlit as st

from convviz import quiz
from convviz.presets import PRESETS_BY_KEY
from convviz.render.grids import PLOTLY_CONFIG
from convviz.render.quiz_view import given_figures, given_rows
from convviz.spec import ConvSpecError
from convviz.state import DEFAULTS, EXPLICIT, PAGE_FIELDS, parse_field, typed_number
from convviz.ui.compute import compute_layer, shared_view
from convviz.ui.controls import (
    LAST_VALID,
    PROBLEMS,
    controls,
    converted,
    page_config,
    self_rerun,
)
from convviz.ui.views import formula_box, page_end, page_header

PAGE = "pages/7_Quiz.py"
SEED, INDEX, SCORE, ANSWERS = "quiz_seed", "quiz_index", "quiz_score", "quiz_answers"
ANSWERED = "quiz_answered"  # an answer was just checked: the next run says its verdict aloud
PARAM_SEED, PARAM_INDEX = "quiz", "qn"  # the page's own URL query: the same questions again
# measured on a projector's page at a 16 px rem: the player's rows that Theme.fitted leaves room
# for; a paragraph's line (1.35 rem) and the space under it; an info box's padding
PLAYER_PX, LINE_PX, GAP_PX, BOX_PX = 115, 35, 8, 26


def _from_url(param: str, key: str) -> None:
    """Take the page's value from the URL on the session's first visit; a malformed one is not
    taken (the state's one reader, `parse_field`) and said with the link's other problems."""
    if key in st.session_state:
        return
    raw = st.query_params.get(param)
    value, problem = parse_field(param, raw) if raw is not None else (None, None)
    st.session_state[key] = PAGE_FIELDS[param].default if value is None else value
    if problem:
        st.session_state.setdefault(PROBLEMS, []).append(f"{problem}; kept {st.session_state[key]}")


@st.cache_data(max_entries=32, show_spinner=False)
def questions_for(key: tuple, n: int, k: int, c: int, seed: int, word: str, worked):
    return quiz.questions(compute_layer(key), n, k, c, seed, word, worked)


def paragraph_px(text: str, theme) -> int:
    """Px (at a 16 px rem) a paragraph takes on a projector's page: its lines, wrapped at ~0.46
    em a character (the page's sans serif; its markdown's ** are not drawn), and the space under
    it."""
    chars = theme.figure_w / (0.46 * 1.35 * theme.rem)
    return LINE_PX * math.ceil(len(text.replace("**", "")) / chars) + GAP_PX


def _next(count: int) -> None:
    st.session_state[INDEX] = (st.session_state[INDEX] + 1) % count


def _new_seed() -> None:
    st.session_state[SEED] = secrets.randbelow(1_000_000)
    st.session_state[INDEX] = 0


_from_url(PARAM_SEED, SEED)
_from_url(PARAM_INDEX, INDEX)
page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "Predict, then reveal",
    "The app hides one number of this layer. Work it out by hand from the other pages, type "
    "it, and see the formula, with the terms that are easy to miss. Change the layer in the "
    "sidebar for new questions; the seed in the link asks the same ones again.",
)
word = (ctx.state if ctx.error is None else st.session_state.get(LAST_VALID, DEFAULTS))["pad"]
word = None if word == EXPLICIT else word  # amounts per side: the quiz states them
preset = PRESETS_BY_KEY.get(ctx.state["preset"]) if ctx.error is None else None
worked = preset.worked if preset and ctx.n == ctx.k == ctx.c == 0 else ()  # its note's sums
asked = questions_for(ctx.key, ctx.n, ctx.k, ctx.c, st.session_state[SEED], word, worked)
index = st.session_state[INDEX] % len(asked)
q = asked[index]
own = {PARAM_SEED: str(st.session_state[SEED]), PARAM_INDEX: str(index)}
st.query_params.update(own)
score = st.session_state.setdefault(SCORE, {})  # (layer, seed, question) -> first answer right
right = sum(score.values())
heading = (
    f"**Question {index + 1} of {len(asked)}** · seed {st.session_state[SEED]} · "
    f"score this session: **{right} / {len(score)}**"
)
st.markdown(heading)
if note := quiz.by_hand(ctx.layer, asked):
    st.info(note, icon=":material/info:")
st.markdown(q.prompt)
rows = given_rows(ctx.layer, ctx.n, ctx.k, ctx.c, q.kind)
# the grids fill a projector's screen below the question (its page has no player under them)
if ctx.theme.show_secondary:
    above = 120  # the question's two lines (a laptop's page scrolls)
else:
    texts = (heading, q.prompt, note or "")
    above = sum(paragraph_px(t, ctx.theme) for t in texts if t) + BOX_PX * bool(note) - PLAYER_PX
given = shared_view(  # what the question gives: built once per setting, all sessions
    ("quiz", q.kind, ctx.key, ctx.n, ctx.k, ctx.c, ctx.theme, above),
    lambda: given_figures(rows, ctx.theme.reserve(above)),
)
for i, fig in enumerate(given):
    st.plotly_chart(
        converted(fig), key=f"quiz_given_{i}", config=PLOTLY_CONFIG, width="content", theme=None
    )
asked_key = (ctx.key, st.session_state[SEED], index)
form = f"{st.session_state[SEED]}_{index}_{abs(hash(ctx.key))}"  # a fresh field per question
answers = st.session_state.setdefault(ANSWERS, {})
with st.form(f"answer_{form}"):
    typed = st.text_input("Your answer (a number)", key=f"typed_{form}")
    sent = st.form_submit_button("Check my answer", type="primary")
if sent:
    try:
        value = typed_number(typed, "Your answer")
    except ConvSpecError as exc:
        st.warning(f"{exc}.")
    else:
        answers[asked_key] = value
        score.setdefault(asked_key, quiz.grade(q, value).right)
        st.session_state[ANSWERED] = True
        self_rerun()  # the score line above shows this answer

if asked_key in answers:
    verdict = quiz.grade(q, answers[asked_key])
    if verdict.right:
        said, icon, show = f"Right: {quiz.answer_text(q)}.", ":material/check_circle:", st.success
    else:
        said = (
            f"Not quite: you said {quiz.shown(answers[asked_key])}, "
            f"the answer is {quiz.answer_text(q)}."
        )
        icon, show = ":material/cancel:", st.warning
    show(said, icon=icon)
    if st.session_state.pop(ANSWERED, False):  # a short screen has it below its edge: say it
        st.toast(said, icon=icon)
    if not verdict.right and verdict.hint:
        st.info(f"**A common slip.** {verdict.hint}", icon=":material/lightbulb:")
    st.header("How it is computed")
    if q.formula is not None:
        formula_box(q.formula, ctx)
    for note in q.notes:
        st.markdown(f"- {note}")
    with st.container(horizontal=True):
        st.button("Next question ▶", on_click=_next, args=(len(asked),), type="primary")
        st.button("New questions", on_click=_new_seed)
else:
    st.button("Skip ▶", on_click=_next, args=(len(asked),))
page_end(ctx, PAGE, own=own)

"""Predict, then reveal: the app hides a number of this layer; the student types it, and a wrong
answer earns a hint (the stage and the cells that matter), then the working started, then the
answer."""

import math
import secrets

import streamlit as st

import convviz.ui.boot  # noqa: F401  (first: see its docstring)
from convviz.engine.spec import ConvSpecError
from convviz.engine.text import count
from convviz.model import quiz
from convviz.model.fields import DEFAULTS, EXPLICIT, PAGE_FIELDS, parse_field, typed_number
from convviz.model.presets import PRESETS_BY_KEY
from convviz.render.plotly.grids import PLOTLY_CONFIG
from convviz.render.plotly.spoken import figure_alt
from convviz.render.story.quiz import given_figures, given_rows
from convviz.ui.compute import compute_layer, shared_view
from convviz.ui.controls import (
    LAST_VALID,
    PROBLEMS,
    controls,
    converted,
    link_query,
    page_config,
    self_rerun,
)
from convviz.ui.described import figure_in_words
from convviz.ui.views import formula_box, page_end, page_header

PAGE = "pages/9_Quiz.py"
SEED, INDEX = "quiz_seed", "quiz_index"
TRIES, GAVE_UP, SCORE = "quiz_tries", "quiz_gave_up", "quiz_score"  # per question of a session
BASE_RIGHT, BASE_DONE = "quiz_base_right", "quiz_base_done"  # the score a link brought along
ANSWERED = "quiz_answered"  # an answer was just checked: the next run says its verdict aloud
PARAM_SEED, PARAM_INDEX, PARAM_RIGHT, PARAM_DONE = "quiz", "qn", "qr", "qd"
# measured on a projector's page at a 16 px rem: the player's rows that Theme.fitted leaves room
# for; a paragraph's line (1.35 rem) and the space under it; an info box's padding
PLAYER_PX, LINE_PX, GAP_PX, BOX_PX = 115, 35, 8, 26
TRY_WORDS = {1: "at the first try", 2: "at the second try", 3: "at the third try"}


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


def _give_up(asked_key) -> None:
    st.session_state[GAVE_UP].add(asked_key)


def score_line() -> tuple[int, int]:
    """(right, done): the link's score and this session's questions (answered right before the
    answer was shown, of those whose answer was found or shown)."""
    done = st.session_state[SCORE]
    base_done = st.session_state[BASE_DONE]
    base_right = min(st.session_state[BASE_RIGHT], base_done)  # a link cannot score more
    return base_right + sum(done.values()), base_done + len(done)


def verdict(q, tries: list[float], fb: quiz.Feedback, gave_up: bool) -> None:
    """What the answers so far earned: the verdict, then the hints (the stage and the lit cells,
    then the working started); said aloud once after an answer (a short screen has it below its
    edge)."""
    if fb.right:
        said = f"Right: {quiz.answer_text(q)}" + (
            f", {TRY_WORDS[len(tries)]}." if fb.wrong else "."
        )
        icon, show = ":material/check_circle:", st.success
    elif fb.revealed and tries:
        said = f"Not quite: you said {quiz.shown(tries[-1])}; the answer is {quiz.answer_text(q)}."
        icon, show = ":material/cancel:", st.warning
    elif gave_up:
        said, icon, show = f"The answer is {quiz.answer_text(q)}.", ":material/visibility:", st.info
    elif tries:
        left = count(fb.tries_left, "try", "tries")
        said = f"Not yet: you said {quiz.shown(tries[-1])}. {left} left: a hint below."
        icon, show = ":material/cancel:", st.warning
    else:
        return
    show(said, icon=icon)
    if st.session_state.pop(ANSWERED, False):
        st.toast(said, icon=icon)
    if not fb.hints or fb.right:
        return
    slip = fb.mistake
    named = f"**A common slip: {slip.name}.** {slip.hint} " if slip and slip.name else ""
    lit = " Outlined in the grids above, dotted." if fb.lit(q) else ""
    st.info(f"**Hint 1 · {q.stage}.** {named}{q.pointer}{lit}", icon=":material/lightbulb:")
    if fb.hints >= 2 and q.partial:
        st.markdown("**Hint 2 · the working, started** (the answer left to you):")
        st.code("\n".join(q.partial), language=None, wrap_lines=True)


_from_url(PARAM_SEED, SEED)
_from_url(PARAM_INDEX, INDEX)
_from_url(PARAM_RIGHT, BASE_RIGHT)
_from_url(PARAM_DONE, BASE_DONE)
for key, empty in ((TRIES, dict), (GAVE_UP, set), (SCORE, dict)):
    st.session_state.setdefault(key, empty())
page_config(PAGE)
ctx = controls()
page_header(
    ctx,
    "Predict, then reveal",
    "The app hides one number of this layer, one stage of its story at a time. Work it out, "
    "type it: a wrong answer earns a hint (the stage and the cells that matter), a second one "
    f"the working started, and after {quiz.MAX_TRIES} the answer with its formula. The seed "
    "and the score travel in the link.",
)
word = (ctx.state if ctx.error is None else st.session_state.get(LAST_VALID, DEFAULTS))["pad"]
word = None if word == EXPLICIT else word  # amounts per side: the quiz states them
preset = PRESETS_BY_KEY.get(ctx.state["preset"]) if ctx.error is None else None
worked = preset.worked if preset and ctx.n == ctx.k == ctx.c == 0 else ()  # its note's sums
asked = questions_for(ctx.key, ctx.n, ctx.k, ctx.c, st.session_state[SEED], word, worked)
index = st.session_state[INDEX] % len(asked)
q = asked[index]
asked_key = (ctx.key, st.session_state[SEED], index)
tries = st.session_state[TRIES].setdefault(asked_key, [])
gave_up = asked_key in st.session_state[GAVE_UP]
fb = quiz.feedback(q, tries, gave_up)
if fb.revealed and asked_key not in st.session_state[SCORE]:
    st.session_state[SCORE][asked_key] = quiz.score_points(tries, q)
right, done = score_line()
own = {
    PARAM_SEED: str(st.session_state[SEED]),
    PARAM_INDEX: str(index),
    PARAM_RIGHT: str(right),
    PARAM_DONE: str(done),
}
st.query_params.from_dict(link_query(ctx.state, ctx.error, own)[0])
heading = (
    f"**Question {index + 1} of {len(asked)}** · {q.stage} · seed {st.session_state[SEED]} · "
    f"score: **{right} / {done}**"
)
st.markdown(heading)
if note := quiz.by_hand(ctx.layer, asked):
    st.info(note, icon=":material/info:")
st.markdown(q.prompt)
lit = fb.lit(q)
rows = given_rows(ctx.layer, ctx.n, ctx.k, ctx.c, q.kind, lit)
# the grids fill a projector's screen below the question (its page has no player under them)
if ctx.theme.show_secondary:
    above = 120  # the question's two lines (a laptop's page scrolls)
else:
    texts = (heading, q.prompt, note or "")
    above = sum(paragraph_px(t, ctx.theme) for t in texts if t) + BOX_PX * bool(note) - PLAYER_PX
lit_key = (index, st.session_state[SEED], fb.hints, fb.mistake) if lit else None
given = shared_view(  # what the question gives: built once per setting, all sessions
    ("quiz", q.kind, ctx.key, ctx.n, ctx.k, ctx.c, ctx.theme, above, lit_key),
    lambda: given_figures(rows, ctx.theme.reserve(above)),
)
for i, fig in enumerate(given):
    st.plotly_chart(converted(fig), key=f"quiz_given_{i}", alt=figure_alt(fig),
                    config=PLOTLY_CONFIG, width="content", theme=None)  # fmt: skip
figure_in_words("quiz_given_0", "The grids the question gives, to work it out from.",
                [p for row in rows for p in row])  # fmt: skip
form = f"{st.session_state[SEED]}_{index}_{abs(hash(ctx.key))}_{len(tries)}"  # a fresh field
if not fb.revealed:
    with st.form(f"answer_{form}"):
        typed = st.text_input("Your answer (a number)", key=f"typed_{form}")
        sent = st.form_submit_button("Check my answer", type="primary")
    if sent:
        try:
            value = typed_number(typed, "Your answer")
        except ConvSpecError as exc:
            st.warning(f"{exc}.")
        else:
            tries.append(value)
            st.session_state[ANSWERED] = True
            self_rerun()  # the score line above and the lit grids show this answer
verdict(q, tries, fb, gave_up)
if fb.revealed:
    st.header("How it is computed")
    if q.formula is not None:
        formula_box(q.formula, ctx)
    for line in q.notes:
        st.markdown(f"- {line}")
    with st.container(horizontal=True):
        st.button("Next question ▶", on_click=_next, args=(len(asked),), type="primary")
        st.button("New questions", on_click=_new_seed)
else:
    with st.container(horizontal=True):
        st.button("Show the answer", on_click=_give_up, args=(asked_key,))
        st.button("Skip ▶", on_click=_next, args=(len(asked),))
page_end(ctx, PAGE, own=own)

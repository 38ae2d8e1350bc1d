"""The lecture in the app: a page's stage bar, the way back and on, and the keys of a clicker.

The order is the lecture's (`convviz.model.lecture.LECTURE.walk`): Back and Next walk this layer's
stages, across pages, then Matrix → Checks → Quiz; from a page off the walk, the nearest stops.
The stage a page shows is the URL's `step=`. A clicker's keys press these buttons (player.js is
told their keys: `BUTTONS`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import streamlit as st

from convviz.engine.spec import ConvSpec
from convviz.model.lecture import HINT, KEYS, LECTURE, SHORT_HINT, Seen, Stage, Stop, keys_hint
from convviz.model.pages import PAGES
from convviz.render.motion.model import gif_fits
from convviz.ui.assets import keyed
from convviz.ui.controls import SHOWN_PAGE, STATE, Context

NEXT_KEY, BACK_KEY = KEYS["next"][0], KEYS["back"][0]  # what a clicker sends
# the buttons the clicker's keys press (a step on the page; with _page, to another page), and the
# stage bar (player.js is sent their selectors)
BUTTONS = {"next": "nav_next", "back": "nav_back", "bar": "ctl_step"}


@dataclass(frozen=True)
class Way:
    """Where Back or Next leads: a page, the stage to show there, what the button says."""

    path: str
    step: int
    label: str
    same_page: bool


def _label(path: str) -> str:
    return next(label for p, label, _ in PAGES if p == path)


def page_stages(page: str, ctx: Context) -> tuple[Stage, ...]:
    return LECTURE.on_page(page, ctx.spec)


def current_stage(page: str, ctx: Context) -> Stage | None:
    """The stage the page shows (its `step=`), None on a page outside the lecture."""
    if not page_stages(page, ctx):
        return None
    return LECTURE.at(page, ctx.state["step"], ctx.spec)


def way(page: str, ctx: Context, delta: int) -> Way | None:
    """Where Back (delta −1) or Next (+1) leads: the stop before or after on the lecture's walk
    (this layer's stages, then Matrix → Checks → Quiz), which the Overview opens; from a page off
    it (Channels for one channel), the nearest stop after or before it in the sidebar's order. A
    page entered backwards shows its last stage, as slides do; None past the ends."""
    stops = _stops(ctx.spec)
    stage = current_stage(page, ctx)
    here = [i for i, stop in enumerate(stops) if stop.page == page
            and (stage is None or stop.stage == stage)]  # fmt: skip
    if here:
        i = here[0] + delta
        target = stops[i] if 0 <= i < len(stops) else None
    else:
        ahead = [s for s in stops if _ORDER.index(s.page) > _ORDER.index(page)]
        behind = [s for s in stops if _ORDER.index(s.page) < _ORDER.index(page)]
        target = next(iter(ahead if delta > 0 else reversed(behind)), None)
    if target is None:
        return None
    return Way(target.page, target.step, _label(target.page), target.page == page)


_ORDER = [p for p, _, _ in PAGES]


@lru_cache(maxsize=256)
def _stops(spec: ConvSpec) -> tuple[Stop, ...]:
    """The pages before the lecture's first stop (the Overview), then its walk for this layer
    (made once per layer's spec, not twice a rerun)."""
    walk = LECTURE.walk(spec)
    return tuple(Stop(p) for p in _ORDER[: _ORDER.index(walk[0].page)]) + walk


def _to(step: int) -> None:
    st.session_state[STATE]["step"] = step


def _go(target: Way) -> None:
    """Show the stage `target` names; on another page, switch to it."""
    _to(target.step)
    if not target.same_page:
        st.switch_page(target.path)


def _button(target: Way | None, delta: int, key: str, short: bool, shortcut) -> None:
    """A Back (delta −1) or Next button to `target`: a step on this page reruns its body, a
    page switch the page."""
    if target is None:
        return
    arrow = "◀ " if delta < 0 else ""
    end = " ▶" if delta > 0 else ""
    words = "Back" if delta < 0 else "Next"
    if not (target.same_page or short):
        words = target.label if delta < 0 else f"next: {target.label.lower()}"
    kind = "primary" if delta > 0 else "secondary"
    tip = None if target.same_page else f"On to the {target.label.lower()} page"
    # a step on this page in the callback; a page switch after it (its own key: a button whose
    # callback made it lead elsewhere would otherwise take its click again, now for the page)
    if target.same_page:
        st.button(f"{arrow}{words}{end}", key=key, on_click=_to, args=(target.step,),
                  shortcut=shortcut, type=kind, help=tip)  # fmt: skip
    elif st.button(f"{arrow}{words}{end}", key=f"{key}_page", shortcut=shortcut, type=kind,
                   help=tip):  # fmt: skip
        _go(target)


_LEFT = "cv_left_for_whole"  # the step a stage that covers others was entered from


def _pick(stages: tuple[Stage, ...]) -> None:
    labels = [LECTURE.label(s) for s in stages]
    picked = st.session_state[BUTTONS["bar"]]
    if picked in labels:  # None when the shown stage is clicked again
        st.session_state[_LEFT] = st.session_state[STATE]["step"]
        _to(labels.index(picked) + 1)


def mount(ctx: Context) -> dict:
    """What every player on the page is told of the lecture: the buttons a clicker presses, the
    stage bar's button the whole-pass key presses (the whole pass, or from it back to the stage
    it was entered from), the keys' hint, the lecturer's playback choice."""
    page = st.session_state.get(SHOWN_PAGE, "")
    stages = page_stages(page, ctx)
    covering = [i for i, s in enumerate(stages) if s.covers]
    whole = None
    if covering:
        at, now = covering[0], ctx.state["step"] - 1
        back = st.session_state.get(_LEFT, 1) - 1
        whole = {
            "toggle": at if now != at else (back if 0 <= back < len(stages) and back != at else 0)
        }
    hint = HINT if ctx.theme.show_secondary else SHORT_HINT
    hint = hint if whole else tuple(h for h in hint if "whole" not in h[0])
    return {
        "hint_all": keys_hint(HINT),
        "buttons": {
            name: f"{keyed(key)} button"
            if name == "bar"
            else f"{keyed(key)} button, {keyed(key)}_page button"
            for name, key in BUTTONS.items()
        },
        "whole": whole,
        "hint": keys_hint(hint),
        "play": ctx.state["play"],
        "reduced": bool(ctx.state.get("still")),
        "strip": ctx.theme.show_secondary,
        "selection": ctx.state["sel"],
        # a layer whose motions are too big to draw as GIFs is too big to autoplay smoothly
        "heavy": not gif_fits(ctx.spec),
    }


def stage_id(stage: Stage | None, name: str) -> str:
    """What a screen shows, for the player: a new one is an arrival (it opens as the playback
    policy says)."""
    return f"{stage.page}#{stage.key}" if stage is not None else name


def stage_bar(page: str, ctx: Context) -> Stage:
    """Back and Next (PageUp / PageDown), then the page's stages: the stage the page shows.

    On a laptop the stages take a row of their own, which stays put whatever the buttons say;
    on a projector one row, the buttons' words as short at every stage (the bar, and the
    figure under it, do not move from one stage to the next).
    """
    stages = page_stages(page, ctx)
    stage = current_stage(page, ctx)
    short = not ctx.theme.show_secondary
    buttons = st.container(horizontal=True, vertical_alignment="center")
    row = buttons if short else st.container(horizontal=True, vertical_alignment="center")
    with buttons:
        _button(way(page, ctx, -1), -1, BUTTONS["back"], short, BACK_KEY)
        _button(way(page, ctx, 1), 1, BUTTONS["next"], short, NEXT_KEY)
    with row:
        labels = [LECTURE.label(s) for s in stages]
        st.session_state[BUTTONS["bar"]] = LECTURE.label(stage)
        st.segmented_control(
            "Stage",
            labels,
            key=BUTTONS["bar"],
            on_change=_pick,
            args=(stages,),
            label_visibility="collapsed",
        )
    return stage


def stage_words(stage: Stage, ctx: Context) -> tuple[str, str]:
    """(heading, caption) of a stage, for this layer and slice."""
    seen = Seen(ctx.spec, ctx.n, ctx.k, ctx.c)
    return stage.heading_for(seen), stage.caption_for(seen)


def stage_heading(stage: Stage, ctx: Context, laptop_px: int, projector_px: int) -> Context:
    """The stage's numbered heading and caption on a laptop (on a projector the stage bar says
    where we are); the context with the space above the figure (the stage bar, the heading:
    `laptop_px` or `projector_px`) taken from its screen."""
    if ctx.theme.show_secondary:
        heading, caption = stage_words(stage, ctx)
        number = LECTURE.number(stage)
        st.markdown(f"## {number}. {heading}" if number else f"## {heading}")
        st.markdown(caption)
    above = laptop_px if ctx.theme.show_secondary else projector_px
    return replace(ctx, theme=ctx.theme.reserve(above))


def page_nav(page: str, ctx: Context, *, keys: bool = True) -> None:
    """The way back and on at the end of a page.

    keys : the buttons answer to PageUp / PageDown (and p / n): off where a stage bar has them.
    """
    prefix = "nav" if keys else "end"
    with st.container(horizontal=True, horizontal_alignment="distribute"):
        _button(way(page, ctx, -1), -1, f"{prefix}_back", False, BACK_KEY if keys else None)
        _button(way(page, ctx, 1), 1, f"{prefix}_next", False, NEXT_KEY if keys else None)

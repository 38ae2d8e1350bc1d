"""The size of the screen the page is on, reported by the browser (viewport.js).

Figures are sized on the server; the browser tells it the main column's width, the window's
height and the page's rem (presentation mode grows it with the screen) once, and again when they
change (a folded sidebar, a projector), never per frame. The reporter runs in the sidebar's
component (sidebar.py), whose `viewport` state carries its reports: one element fewer a rerun.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from convviz.render.theme import DEFAULT_VIEWPORT, PRESENTATION_VIEWPORT

VIEWPORT = "cv_viewport"  # (width, height, rem) kept across pages
# Streamlit's elements viewport.js reads: the main column it measures, the page links whose click
# silences it (tests/test_browser_lecture.py checks they still match); and the lecture's buttons
# to another page (clicker.py keys them `…_page`), whose click silences it too
STREAMLIT = {
    "main": '[data-testid="stMainBlockContainer"]',
    "links": '[data-testid="stSidebarNav"] a, a[data-testid="stPageLink-NavLink"], a[data-cv-page]',
    "leaves": '[class*="st-key-"][class*="_page"] button',
}
SCRIPT = (Path(__file__).parent / "viewport.js").read_text()


def viewport(presentation: bool) -> tuple[int, int, float]:
    """The last reported (main column width, window height, rem) of this session, or the
    default of the display mode (a fresh session at 1280×720 needs no second run)."""
    size = st.session_state.get(VIEWPORT)
    if size:
        return tuple(size)
    return PRESENTATION_VIEWPORT if presentation else DEFAULT_VIEWPORT


def data(presentation: bool) -> dict:
    """What the reporter is handed: the size the server assumes now, and where to measure."""
    return {"assumed": list(viewport(presentation)), "find": STREAMLIT}


def store(report) -> None:
    """Keep a report (the component's state: {"viewport": [width, height, rem]}), bounded; a
    malformed one is dropped. A report sent as the reader switches pages can arrive after its
    widget's state is gone."""
    size = (report or {}).get("viewport") if isinstance(report, dict) else None
    if isinstance(size, list) and len(size) == 3 and all(isinstance(v, int | float) for v in size):
        width, height, rem = size
        rem = min(max(float(rem), 8.0), 64.0)
        st.session_state[VIEWPORT] = (min(int(width), 4000), min(int(height), 3000), rem)

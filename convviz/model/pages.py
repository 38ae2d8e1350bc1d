"""The app's pages, in the order the sidebar lists them: the one list of them.

A page's file in pages/ carries its place here as its number (1_Forward.py …: Streamlit lists
them by it); its URL is the file's name without the number, /Forward. The lecture names its pages
from this list (`convviz.model.lecture`); tests/test_layers.py holds the folder to it.
"""

from __future__ import annotations

from pathlib import Path

# (file, the sidebar's label, its icon), in order; the Overview is the app's entry, app.py
PAGES: tuple[tuple[str, str, str], ...] = (
    ("app.py", "Overview", ":material/dashboard:"),
    ("pages/1_Forward.py", "Forward", ":material/play_arrow:"),
    ("pages/2_Input_gradient.py", "Input gradient", ":material/undo:"),
    ("pages/3_Weight_gradient.py", "Weight gradient", ":material/tune:"),
    ("pages/4_Learning.py", "How the layer learns", ":material/school:"),
    ("pages/5_Two_layers.py", "Two layers", ":material/stacks:"),
    ("pages/6_Channels.py", "Channels", ":material/layers:"),
    ("pages/7_Matrix.py", "Matrix view", ":material/grid_4x4:"),
    ("pages/8_Checks.py", "Checks", ":material/verified:"),
    ("pages/9_Quiz.py", "Quiz", ":material/quiz:"),
)
(OVERVIEW, FORWARD_PAGE, INPUT_PAGE, WEIGHT_PAGE, LEARN_PAGE, CHAIN_PAGE, CHANNELS_PAGE,
 MATRIX_PAGE, CHECKS_PAGE, QUIZ_PAGE) = (path for path, _, _ in PAGES)  # fmt: skip


def url_path(page: str) -> str:
    """A page's URL path: its file's name without the number ('' for the Overview)."""
    return "" if page == OVERVIEW else Path(page).stem.split("_", 1)[1]


def label(page: str) -> str:
    """The sidebar's name of a page."""
    return next(name for path, name, _ in PAGES if path == page)

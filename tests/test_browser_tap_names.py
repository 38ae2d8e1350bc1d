"""The taps' names (w₀₂) as Chromium draws them at 1280×720: on the rotate and correlate stages
and Forward, in both modes, each name is ≥ 12 px, inside one cell of its chart, over no number,
and reads on the fill under it (4.5:1, the bar for its size); the rotated kernel's top-left
cell says w₂₂."""

from __future__ import annotations

import io

import numpy as np
import pytest
from live import goto, open_tab
from PIL import Image
from playwright.sync_api import Browser

from convviz.render.theme import TAP_LABEL_MIN_PX, contrast, needed_contrast

pytestmark = pytest.mark.browser

VIEWS = [  # (path, query, names expected): the normal mode's correlate has 28 px cells, none
    ("Input_gradient", "preset=recitation-s2&step=4", True),
    ("Input_gradient", "preset=recitation-s2&pres=1&step=4", True),
    ("Input_gradient", "preset=recitation-s2&pres=1&step=5", True),
    ("Forward", "preset=recitation-s2&pres=1", True),
]
# every text a chart draws, with its box, ink and size; names are w and subscript digits
TEXTS = """() => [...document.querySelectorAll('.js-plotly-plot text')].map(t => {
    const r = t.getBoundingClientRect(), inner = t.querySelector('tspan') || t;
    return {s: t.textContent.trim(), box: [r.left, r.top, r.right, r.bottom],
            ink: getComputedStyle(inner).fill, px: parseFloat(getComputedStyle(t).fontSize),
            shown: r.width > 0 && getComputedStyle(t).opacity !== '0'};
  }).filter(t => t.shown && t.s)"""
NAME = "w₀₁₂₃₄"


def is_name(s: str) -> bool:
    return len(s) == 3 and s[0] == "w" and all(ch in NAME[1:] for ch in s[1:])


def _hex(css: str) -> str:
    r, g, b = (int(v) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


# shows the charts' texts of one kind: "names", "numbers" (every other text) or "none"
SHOW = """(which) => { for (const t of document.querySelectorAll('.js-plotly-plot text')) {
    const name = /^w[\u2080-\u2084]{2}$/.test(t.textContent.trim());
    const shown = which === 'names' ? name : which === 'numbers' ? !name : false;
    t.style.visibility = shown ? 'visible' : 'hidden';
  } }"""
INK = 60  # a pixel's change (sum over RGB) that counts as drawn ink, not antialiasing's fringe


def shot(page, which: str) -> np.ndarray:
    page.evaluate(SHOW, which)
    return np.asarray(Image.open(io.BytesIO(page.screenshot())).convert("RGB")).astype(int)


@pytest.fixture(scope="module")
def tab720(browser: Browser):
    page = open_tab(browser, viewport={"width": 1280, "height": 720})
    yield page
    page.context.close()


@pytest.mark.parametrize(("path", "query", "named"), VIEWS, ids=[f"{p}?{q}" for p, q, _ in VIEWS])
def test_names_read_and_stay_clear_of_the_numbers(tab720, app_url, artifacts, path, query, named):
    page = tab720
    goto(page, f"{app_url}/{path}?{query}&play=stills")
    texts = page.evaluate(TEXTS)
    # the stage's figure on the first screen (the scatter route's kernel below is named too)
    names = [t for t in texts if is_name(t["s"]) and t["box"][3] <= 720]
    assert bool(names) == named, f"{len(names)} names"
    page.screenshot(path=artifacts / f"tap-names-{path}-{query.replace('&', '-')}.png")
    problems = [f"{n['s']} at {n['px']} px" for n in names if n["px"] < TAP_LABEL_MIN_PX]
    # ink against ink: the pixels the names draw and those the numbers draw never meet
    bare, with_names, with_numbers = shot(page, "none"), shot(page, "names"), shot(page, "numbers")
    inked_names = np.abs(with_names - bare).sum(axis=2) > INK
    inked_numbers = np.abs(with_numbers - bare).sum(axis=2) > INK
    both = np.argwhere(inked_names & inked_numbers)
    if len(both):
        problems.append(f"{len(both)} px of a name over a number, e.g. at {both[0][::-1]}")
    for n in names:  # the fill under each name: the most common colour of its box
        x0, y0, x1, y1 = (round(v) for v in n["box"])
        box = bare[y0 + 1 : y1 - 1, x0 + 1 : x1 - 1].reshape(-1, 3)
        colours, counts = np.unique(box, axis=0, return_counts=True)
        fill = "#{:02x}{:02x}{:02x}".format(*colours[counts.argmax()])
        ink = _hex(n["ink"])
        if contrast(ink, fill) < needed_contrast(n["px"]):
            problems.append(f"{n['s']}: {ink} on {fill} {contrast(ink, fill):.2f}:1")
    assert not problems, problems[:8]
    if "step=4" in query:  # w, then rot180 w: its top-left cell holds the kernel's last tap
        rot = sorted(names, key=lambda n: n["box"][0])[-9:]  # the right panel's nine
        top_left = min(rot, key=lambda n: (round(n["box"][1] / 10), n["box"][0]))
        assert top_left["s"] == "w₂₂", [n["s"] for n in rot]

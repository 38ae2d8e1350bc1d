r"""LaTeX for notes: a cell's formula, and the stages as bmatrix blocks in a standalone .tex.

Cells are marked by macros the preamble defines, so an author can restyle them in one place:
\cvpad{0} a padded cell, \cvins{0} a zero inserted by dilation, \cvrem{v} a remainder cell no
window reaches, \cvgap{v} a cell between the windows no window reads, \cvdrop{v} gradient on
the zero-padded ring that the mask drops, \cvfold{v} gradient on a reflect/replicate/circular
ring that goes back to the cell it was copied from.
The file needs only amsmath, xcolor and geometry (every TeX distribution has them) and is ASCII.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from convviz.engine.arrays import remainder_mask
from convviz.engine.formulas import FULL_TERMS, Formula
from convviz.engine.text import grey, number
from convviz.export.story import Story
from convviz.model.lecture import LECTURE, Stage
from convviz.model.pages import label
from convviz.render.selection import grad_x_marks
from convviz.render.story.board import BOARD, BoardError, board_of, drawing
from convviz.render.theme import TEX_COLORS

_grey = partial(grey, color="cvgrey")  # a vanishing term, in the preamble's readable grey
MAX_SIDE = 16  # larger grids are named with their shape instead of typeset
MARKS = ("cvpad", "cvins", "cvrem", "cvgap", "cvdrop", "cvfold")

_PREAMBLE = r"""\documentclass[11pt]{article}
\usepackage[a4paper,landscape,margin=1.5cm]{geometry}
\usepackage{amsmath}
\usepackage{xcolor}
\setcounter{MaxMatrixCols}{@COLS@}
@COLORS@
% padded cell (grey, underlined); zero inserted by dilation (blue, overlined);
% remainder cell (red); cell between the windows (red, overlined); dropped ring gradient (red,
% underlined); folded-back ring gradient (grey, overlined)
\newcommand{\cvpad}[1]{\textcolor{cvpadc}{\underline{#1}}}
\newcommand{\cvins}[1]{\textcolor{cvinsc}{\overline{#1}}}
\newcommand{\cvrem}[1]{\textcolor{cvremc}{#1}}
\newcommand{\cvgap}[1]{\textcolor{cvremc}{\overline{#1}}}
\newcommand{\cvdrop}[1]{\textcolor{cvremc}{\underline{#1}}}
\newcommand{\cvfold}[1]{\textcolor{cvpadc}{\overline{#1}}}
\setlength{\parindent}{0pt}
\allowdisplaybreaks
\begin{document}
"""


def _num(v: float) -> str:
    return number(v, minus="-")  # as the app and its formulas write it (LaTeX sets the minus)


def bmatrix(values: np.ndarray, marks: dict[str, np.ndarray] | None = None) -> str:
    r"""A 2-D array as a bmatrix; marks : macro name -> bool mask of the cells it wraps.

    The first mask that holds a cell wins (a padded cell stays \cvpad, not also \cvins).
    """
    values = np.asarray(values, float)
    h, w = values.shape
    if max(h, w) > MAX_SIDE:
        return rf"\text{{({h}$\times${w}: too large to typeset)}}"
    rows = []
    for i in range(h):
        cells = []
        for j in range(w):
            s = _num(values[i, j])
            for macro, mask in (marks or {}).items():
                if mask is not None and mask[i, j]:
                    s = rf"\{macro}{{{s}}}"
                    break
            cells.append(s)
        rows.append(" & ".join(cells))
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


def cell_latex(formula: Formula, per_line: int = 4, max_terms: int = FULL_TERMS) -> str:
    """The formula of one cell in symbols and in numbers, one display each (for \\[ \\])."""
    symbolic = formula.latex(numeric=False, max_terms=max_terms, per_line=per_line, mark=_grey)
    numeric = formula.latex(numeric=True, max_terms=max_terms, per_line=per_line + 3, mark=_grey)
    return f"\\[ {symbolic} \\]\n\\[ {numeric} \\]\n"


def _display(*named: tuple[str, str]) -> str:
    """Named matrices side by side in one display: name = matrix, quad-separated."""
    return "\\[ " + r" \qquad ".join(f"{name} = {m}" for name, m in named) + " \\]\n"


def _stage(title: str, text: str, body: str) -> str:
    return f"\\subsection*{{{title}}}\n{text}\n{body}"


def _intro(story: Story) -> str:
    """The title and a paragraph: the layer's shapes and hyperparameters, the slice, the marks."""
    spec = story.spec
    (sh, sw), (dh, dw) = spec.stride, spec.dilation
    (pt, pb), (pl, pr) = spec.padding
    times = r" \times "
    x_shape, w_shape = (
        times.join(map(str, spec.input_shape)),
        times.join(map(str, spec.weight_shape)),
    )
    return "\n".join(
        [
            r"\section*{convviz: " + story.preset.replace("_", r"\_") + "}",
            rf"Input $x$ of shape ${x_shape}$, weights $w$ of shape "
            rf"${w_shape}$; stride ${sh}\times{sw}$, padding "
            rf"$({pt}, {pb}) \times ({pl}, {pr})$ ({spec.padding_mode}), "
            rf"dilation ${dh}\times{dw}$. "
            rf"Shown: sample $n={story.n}$, filter $k={story.k}$, channel $c={story.c}$. "
            r"Marks: $\cvpad{\text{padded}}$, $\cvins{\text{inserted zero}}$, "
            r"$\cvrem{\text{remainder}}$, $\cvgap{\text{between the windows}}$ (no window "
            r"reads it: its gradient is 0), $\cvdrop{\text{dropped}}$, "
            r"$\cvfold{\text{folded back}}$.",
        ]
    )


def _unread(stages, marks: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """marks, then the cells of x̃ no window reads: the remainder, and those between windows."""
    rem = remainder_mask(stages.spec)
    return {**marks, "cvrem": rem, "cvgap": stages.unread_mask & ~rem}


def _grad_x_marks(ig) -> dict[str, np.ndarray]:
    """The cells of ∂L/∂x no window reads (its gradient is 0): the remainder, between windows."""
    marks = grad_x_marks(ig)
    rem = marks["remainder_mask"]
    return {"cvrem": rem, "cvgap": marks["unread_mask"] & ~rem}


# How a stage's heading is typeset: its symbols as math (the file stays ASCII)
_TEX_WORDS = (
    ("∂L/∂x̃", r"$\partial L/\partial \tilde{x}$"),
    ("∂L/∂x", r"$\partial L/\partial x$"),
    ("∂L/∂y", r"$\partial L/\partial y$"),
    ("∂L/∂w", r"$\partial L/\partial w$"),
    ("∂L/∂h", r"$\partial L/\partial h$"),
    ("∂L/∂b", r"$\partial L/\partial b$"),
    ("rot180(w)", r"$\mathrm{rot180}(w)$"),
    ("180°", r"$180^\circ$"),
    ("x̃", r"$\tilde{x}$"),
    ("h̃", r"$\tilde{h}$"),
    ("⋆", r"$\star$"),
    ("→", r"$\to$"),
    ("←", r"$\leftarrow$"),
    ("–", "--"),
    ("−", "-"),
    ("·", r"$\cdot$"),
    ("×", r"$\times$"),
    ("½", r"$\frac{1}{2}$"),
    ("‖", r"$\|$"),
    ("η", r"$\eta$"),
    ("₁", r"$_1$"),
    ("₂", r"$_2$"),
    ("²", r"$^2$"),
    ("≤", r"$\le$"),
)


def tex_text(text: str) -> str:
    """Words of the lecture (a stage's heading) as LaTeX: specials escaped, symbols as math,
    anything else outside ASCII dropped (the file stays ASCII)."""
    for ch in "\\&%#_{}":
        text = text.replace(ch, "\\" + ch)
    for word, tex in _TEX_WORDS:
        text = text.replace(word, tex)
    return text.encode("ascii", "ignore").decode()


# --- a stage's body: its grids as bmatrix blocks -------------------------------------------------

# a Panel's masks → the macro that marks its cells (the first that holds a cell wins)
_PANEL_MARKS = (
    ("pad_mask", "cvpad"),
    ("dilation_mask", "cvins"),
    ("dropped_mask", "cvdrop"),
    ("remainder_mask", "cvrem"),
    ("unread_mask", "cvgap"),
)


def panels_tex(panels) -> str:
    """A still's grids side by side, each named by its title, its cells marked by its masks."""
    named = []
    for panel in panels:
        marks = {macro: getattr(panel, mask) for mask, macro in _PANEL_MARKS}
        named.append((rf"\text{{{tex_text(panel.title)}}}", bmatrix(panel.values, marks)))
    return _display(*named)


def _input_grad_bodies(story: Story) -> dict:
    """The grids each input-gradient stage typesets, by the lecture's stage key."""
    spec, ig, n, k, c = story.spec, story.layer.input_grad, story.n, story.k, story.c
    ring = story.layer.forward.pad_mask
    fold = "cvdrop" if spec.padding_mode == "zeros" else "cvfold"
    dldy = r"\frac{\partial L}{\partial y}"
    return {
        "grad-out": lambda: _display((dldy, bmatrix(ig.grad_out[n, k]))),
        "dilate": lambda: _display(
            (r"\text{dilated}", bmatrix(ig.dilated[n, k], {"cvins": ig.dilation_mask}))
        ),
        "pad": lambda: _display(
            (
                r"\text{padded}",
                bmatrix(
                    ig.padded[n, k], {"cvpad": ig.padded_ring, "cvins": ig.padded_dilation_mask}
                ),
            )
        ),
        "rotate": lambda: _display(
            ("w", bmatrix(ig.w[k, c])), (r"\mathrm{rot180}(w)", bmatrix(ig.w_rot[c, k]))
        ),
        "correlate": lambda: _display(
            (
                r"\frac{\partial L}{\partial \tilde{x}}",
                bmatrix(ig.grad_x_padded[n, c], _unread(ig, {fold: ring})),
            )
        ),
        "mask": lambda: (
            _display(
                (r"\frac{\partial L}{\partial x}", bmatrix(ig.grad_x[n, c], _grad_x_marks(ig)))
            )
            + cell_latex(story.input_grad_formula)
        ),
    }


def _forward_body(story: Story) -> str:
    """The padded input, the kernel and the output, then the selected output cell's formula."""
    fw, n, k, c = story.layer.forward, story.n, story.k, story.c
    return _display(
        (r"\tilde{x}", bmatrix(fw.x_padded[n, c], _unread(fw, {"cvpad": fw.pad_mask}))),
        ("w", bmatrix(fw.w[k, c])),
        ("y", bmatrix(fw.y[n, k])),
    ) + cell_latex(story.forward_formula)


def _weight_body(story: Story) -> str:
    """The weight and bias gradients of the slice, then the selected weight cell's formula."""
    wg, k, c = story.layer.weight_grad, story.k, story.c
    return _display(
        (r"\frac{\partial L}{\partial w}", bmatrix(wg.grad_w[k, c])),
        (r"\frac{\partial L}{\partial b_{" + str(k) + "}}", _num(wg.grad_b[k])),
    ) + cell_latex(story.weight_grad_formula)


def _window_body(story: Story) -> str:
    """The window of the weight gradient: ∂L/∂y spread by the stride, over the padded input."""
    wg, n, k, c = story.layer.weight_grad, story.n, story.k, story.c
    return _display(
        (r"\mathrm{dilate}(\frac{\partial L}{\partial y})",
         bmatrix(wg.dilated[n, k], {"cvins": wg.dilation_mask})),
        (r"\tilde{x}", bmatrix(wg.x_padded[n, c], _unread(wg, {"cvpad": wg.pad_mask}))),
    )  # fmt: skip


def _handover_body(story: Story) -> str:
    """Layer 2's ∂L/∂h, the ReLU's gate (1 open, 0 shut) and layer 1's ∂L/∂y after it."""
    p, n, k = story.chain, story.n, story.k
    return _display(
        (r"\frac{\partial L}{\partial h}", bmatrix(p.grad_h[n, k])),
        (r"\text{gate}", bmatrix(p.gate[n, k].astype(float))),
        (r"\frac{\partial L}{\partial y_1}", bmatrix(p.first.input_grad.grad_out[n, k],
                                                     {"cvdrop": ~p.gate[n, k]})),
    )  # fmt: skip


# The stages whose body is not their still's grids, by the lecture's stage key (a stage with a
# still and no body here is typeset from its still; one that covers others has none of its own)
BODIES = {
    "forward": _forward_body,
    "weight-grad": _weight_body,
    "weight-window": _window_body,
    "handover": _handover_body,
}


def lacking(lecture=LECTURE, board=BOARD) -> list[str]:
    """The exported stages the .tex could not typeset: no body here and no still to draw."""
    return [
        s.key
        for s in lecture.stages
        if s.export and not s.covers and s.key not in BODIES and board[s.key].still is None
    ]


def stage_body(story: Story, stage: Stage) -> str:
    """A stage's grids as the .tex typesets them."""
    if stage.key in BODIES:
        return BODIES[stage.key](story)
    own = _input_grad_bodies(story).get(stage.key)
    if own is not None:
        return own()
    still = drawing(story, stage).still(story)
    return panels_tex(still.panels) + (cell_latex(still.formula) if still.formula else "")


def _preamble(story: Story) -> str:
    """The preamble, with room for as many matrix columns as the widest typeset grid has."""
    fw, ig = story.layer.forward, story.layer.input_grad
    side = max(max(a.shape[-2:]) for a in (fw.x_padded, ig.padded, fw.y, ig.grad_x_padded))
    colors = "\n".join(
        rf"\definecolor{{{name}}}{{HTML}}{{{hex_[1:].upper()}}}"
        for name, hex_ in TEX_COLORS.items()
    )
    return _PREAMBLE.replace("@COLS@", str(max(10, min(side, MAX_SIDE)))).replace(
        "@COLORS@", colors
    )


def _page_title(page: str) -> str:
    return label(page)


def stages_tex(story: Story) -> str:
    """A standalone document: the layer's stages in lecture order, a section a page, each as
    bmatrix blocks with the selected cells' formulas."""
    missing = lacking(story.lecture, board_of(story))
    if missing:
        raise BoardError(f"the .tex has no body for the stage {missing[0]!r} (no still either)")
    parts, page = [_intro(story)], None
    for stage in story.stages():
        if not stage.export or stage.covers:  # a motion through the others: nothing of its own
            continue
        if stage.page != page:
            page = stage.page
            parts.append(rf"\section*{{{_page_title(page)}}}")
        number = story.lecture.number(stage)
        heading = tex_text(story.words(stage)[0])
        parts.append(_stage(f"{number}. {heading}" if number else heading, "",
                            stage_body(story, stage)))  # fmt: skip
    return _preamble(story) + "\n".join(parts) + "\n\\end{document}\n"


if lacking():
    raise BoardError(f"the .tex has no body for the stages {lacking()} (nor a still)")

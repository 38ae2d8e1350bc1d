"""Page parts shared by every page: charts, formulas, exports, the keyboard cell picker, links."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from functools import partial
from html import escape

import streamlit as st

from convviz.engine.formulas import FULL_TERMS, SHORT_TERMS, Formula
from convviz.engine.sweeps import Sweep
from convviz.engine.text import grey, number
from convviz.model.descriptions import arrived
from convviz.model.lecture import Seen, Stage
from convviz.render.geometry import NARROW_PX
from convviz.render.mpl import static, sweep_gif
from convviz.render.panel import Panel
from convviz.render.plotly.frames import cell_lines, player_meta, writes_captions
from convviz.render.plotly.frames import formula_lines as formula_lines_of
from convviz.render.plotly.grid_figure import panels_figure
from convviz.render.plotly.grids import PLOTLY_CONFIG
from convviz.render.plotly.spoken import Sums, figure_alt, say_sums
from convviz.render.plotly.sweeps import sweep_figure
from convviz.render.selection import close_up as close_up_panel
from convviz.render.selection import zoom_panels
from convviz.render.story.input_grad import unread_text
from convviz.render.tables import table_html
from convviz.render.theme import GREY_TERM
from convviz.ui.clicker import mount, page_nav, stage_id
from convviz.ui.compute import formula_at, input_grad_formula_of, shared_view, words_of
from convviz.ui.controls import (
    CHARTS,
    STATE,
    Context,
    converted,
    link_query,
    share_link,
    with_selection,
)
from convviz.ui.player import player
from convviz.ui.sidebar import sidebar

_grey = partial(grey, color=GREY_TERM)  # a vanishing term, readable on white (KaTeX: a hex)


def page_header(ctx: Context, title: str, intro: str) -> None:
    """The page title and one intro sentence; presentation mode keeps a one-line title only."""
    if ctx.theme.show_secondary:
        st.title(title)
        st.caption(intro)
    else:
        st.container(key="cv_title").markdown(f"**{title}**")


def chart(fig, key: str, alt: str | None = None, sums: Sums | None = None) -> None:
    """A plotly figure whose cell clicks select (handled by `controls` on the next rerun).

    alt : its text alternative (what a screen reader announces); by default what it shows, its
        grids and their sizes (`figure_alt`, made once per shared figure);
    sums : the sums of its grids' cells, said by its keyboard grid (`spoken.say_sums`, once per
        shared figure).
    """
    if sums is not None:
        say_sums(fig, sums)
    st.session_state.setdefault(CHARTS, set()).add(f"chart_{key}")
    st.plotly_chart(
        converted(fig),
        key=f"chart_{key}",
        alt=alt or figure_alt(fig),
        on_select="rerun",
        selection_mode=("points",),
        config=PLOTLY_CONFIG,
        width="content",
        theme=None,
    )


def selection_alt(fig, formula: Formula | None, theme, alt: str | None = None) -> str:
    """The figure's text alternative (`alt`, else `figure_alt`) with the selected cell's sum in
    words (symbols, numbers)."""
    alt = alt or figure_alt(fig)
    if formula is None:
        return alt
    symbols, numbers = frame_caption(formula, theme)
    return f"{alt} Selected cell: {symbols}; in numbers: {numbers}."


def number_tables(ctx: Context, panels: list[Panel], key: str) -> None:
    """Each grid's numbers as a table a screen reader can walk (a caption, header cells, each
    cell's role), each with its CSV download built in the browser (`render.tables`), made only
    while its expander is open (collapsed, a rerun costs nothing)."""
    box = st.expander("The grids' numbers as tables", key=f"cv_tables_{key}", on_change="rerun")
    if not box.open:
        return
    stem = f"convviz-{ctx.state['preset']}-{key}"
    with box:
        st.html("".join(table_html(p, f"{stem}-{p.key}.csv") for p in panels))


def animation(
    ctx: Context,
    sweep: Sweep,
    panels: list[Panel],
    name: str,
    title: str,
    *,
    channel: int,
    start: int,
    formula: Formula | None = None,
    formula_of: Callable[[int, int], Formula] | None = None,
    cell: tuple[int, int] | None = None,
    still: list[Panel] | None = None,
    stage: Stage | None = None,
    words: str = "",
    view: tuple = (),
    alt: str | None = None,
    sums: Sums | None = None,
) -> None:
    """A sweep's animation (opened at step `start`), its player and its PNG/SVG/GIF exports.

    formula_of(row, col) : the formula of an output cell; the player shows the one of the cell
        each frame computes, symbolic and numeric.
    cell : the output cell whose sum the page writes out; a big layer's close-up centres on it.
    still : the panels a PNG or SVG draws beside `formula` (its cell lit), when not `panels`.
    stage : the lecture's stage it shows; words : a line after each frame's sum (the selected
    cell's numbers); view : what else the panels depend on (its cache key); alt : its short text
    alternative; sums : its cells' sums, said by its keyboard grid.
    """

    def build():
        fig = sweep_figure(sweep, *panels, ctx.theme, channel=channel, start=start, title=title)
        steps = player_meta(fig)["steps"]
        if formula_of is None or not writes_captions(sweep, len(steps)):
            return fig, None
        targets = sweep.targets[steps]
        return fig, [frame_caption(formula_of(int(r), int(c)), ctx.theme) for r, c in targets]

    # the panels follow from the layer, the slice and the selection: the key holds them all
    view = (name, ctx.key, ctx.n, ctx.k, ctx.c, ctx.selection, ctx.theme, channel, start, *view)
    fig, captions = shared_view(view, build)
    if words and captions is not None:  # kept: the player's data is encoded once per captions
        said = captions
        captions = shared_view(
            ("captions", *view, words), lambda: [[*lines, words] for lines in said]
        )
    alt = selection_alt(fig, formula, ctx.theme, alt)
    animated_chart(fig, name, ctx, captions, alt=alt, stage=stage, sums=sums)
    number_tables(ctx, panels, name)
    if max(max(p.shape) for p in panels) > ctx.theme.max_text_cells:  # numbers hidden
        st.caption("At this size the grids show colours (scales above them); close up, numbers:")
        zoom = zoom_panels(sweep, *panels, cell=cell)
        if max(panels[2].shape) <= ctx.theme.max_text_cells:  # the result, numbered above
            zoom = zoom[:2]
        chart(panels_figure(zoom, ctx.theme), f"{name}_zoom", sums=sums)

    def gif(fps: float) -> bytes:  # its own panels: not a slide's written-out cell on each frame
        return sweep_gif.sweep_gif(sweep, *panels, ctx.theme, channel=channel, fps=fps)

    export_buttons(still or panels, ctx, name, title, formula, gif)


def close_up(ctx: Context, panels: list[Panel], name: str) -> None:
    """The grids too big to number, close up: the cells around each one's selected cell (else
    its centre), with numbers; a click on one selects it (and moves the close-up there)."""
    big = [p for p in panels if max(p.shape) > ctx.theme.max_text_cells]
    if not big:
        return
    st.caption(
        "At this size the grids show colours; close up, numbers (click a cell to move there, "
        "or pick one with the keyboard):"
    )
    marks = tuple((p.key, p.selected) for p in big)
    view = ("close-up", name, ctx.key, ctx.n, ctx.k, ctx.c, marks, ctx.theme)

    def build():
        return panels_figure([close_up_panel(p, p.selected) for p in big], ctx.theme)

    chart(shared_view(view, build), f"{name}_zoom", sums=layer_sums(ctx))


def layer_sums(ctx: Context) -> Sums:
    """The sums of the page layer's cells (y, ∂L/∂x, ∂L/∂x̃, ∂L/∂w), the app's shared formulas."""

    def formula(kind: str, cell: tuple[int, int]) -> Formula | None:
        if kind == "grad_x_padded":
            return input_grad_formula_of(ctx.key, ctx.n, ctx.c, *cell, True)
        return formula_at(ctx.key, (kind, *cell), ctx.n, ctx.k, ctx.c)

    def words(kind: str, most: int):  # a whole grid's cells, as their formulas say them
        return words_of(ctx.key, kind, ctx.n, ctx.k, ctx.c, most)

    return Sums(ctx.spec, formula, words)


def frame_caption(formula: Formula, theme) -> list[str]:
    """The two lines the player shows for a frame (`animation_frames.formula_lines`)."""
    return formula_lines_of(formula, theme)


FORMULA_LINES_PX = 72  # the two lines of `formula_lines` on a projector (at a 16 px rem)


def formula_lines(formula: Formula, ctx: Context) -> None:
    """A cell's sum in the two lines a player writes under its figure, for a still on a
    projector (it has no player): in symbols, then in numbers."""
    lines = "".join(f"<div>{escape(line)}</div>" for line in frame_caption(formula, ctx.theme))
    st.html(f'<div class="cv-formula">{lines}</div>')  # styled as the player's (presentation.css)


def motion_captions(fig, ctx: Context, formula_of) -> list[list[str]]:
    """Per frame of a motion, the lines under its player (`cell_lines`): the sum of the cell that
    frame computes, symbolic and numeric as under the other animations, then the stage's words;
    on a projector the sum alone."""
    lines_of = partial(frame_caption, theme=ctx.theme)
    return cell_lines(player_meta(fig), formula_of, lines_of, ctx.theme.show_secondary)


def motion_start(ctx: Context, steps: int | None = None) -> int | None:
    """The frame a stage's figure opens on: on a projector under the lecturer's "auto" playback
    (the URL's play=) the first, which it then plays; else the result (None for a motion,
    `steps` − 1 for a sweep). The browser opens a stage entered through the lecture by the one
    policy (player_core.arrival), which may differ (a reader's reduced motion): this only saves
    it a jump."""
    if ctx.state["play"] == "auto" and not ctx.theme.show_secondary:
        return 0
    return None if steps is None else steps - 1


def animated_chart(
    fig,
    name: str,
    ctx: Context,
    captions: list[list[str]] | None,
    primary: bool = True,
    follow: dict[str, int] | None = None,
    alt: str | None = None,
    stage: Stage | None = None,
    sums: Sums | None = None,
    says: list[str] | None = None,
) -> None:
    """An animated figure and the player that drives it (see `player`); alt: its text
    alternative (default `figure_alt`).

    The primary one, the page's main figure, takes the keys; on a projector it and its player
    end the first screen: what follows starts below its edge, never cut by it (streamlit.css).
    stage : the lecture's stage it shows (its arrival opens it as the playback policy says, and
        the announcer says what it did); sums : its cells' sums, said by its keyboard grid;
    says : per frame, what its step does (`spoken.motion_says`), where the figure has none.
    """
    pres = not ctx.theme.show_secondary
    came = arrived(stage, Seen(ctx.spec, ctx.n, ctx.k, ctx.c)) if stage else ""
    with st.container(key="cv_screen") if primary else nullcontext():
        chart(fig, name, alt, sums)
        player(fig, name, captions, stage=stage_id(stage, name), presentation=pres,
               primary=primary, follow=follow, arrived=came, says=says,
               **mount(ctx))  # fmt: skip


def selected_in(ctx: Context, keys: tuple[str, ...], shape: tuple[int, int]):
    """The selected (row, col) if the selection is in one of these panels and inside `shape`."""
    if ctx.selection is None:
        return None
    key, r, c = ctx.selection
    if key in keys and 0 <= r < shape[0] and 0 <= c < shape[1]:
        return r, c
    return None


def formula_box(formula: Formula, ctx: Context, note: str = "", zero: str = "") -> None:
    """A cell's formula, symbolic and with numbers, and whether what is written adds up.

    A cell that padded copies fold onto is written as the sum of its copies, each expandable;
    zero : why the cell's gradient is 0 (no window reads it), shown above its formula.
    """
    if zero:
        st.info(zero, icon=":material/block:")
    most = FULL_TERMS if ctx.theme.show_secondary else SHORT_TERMS
    fractions = formula.target.name.startswith("d")  # ∂L/∂· terms are wide
    tagged = bool(formula.varying)  # so are slice tags (k=0,c=0), written where an axis varies
    wide = fractions + tagged  # ∂L/∂(·) fractions and slice tags (k=0,c=0) each widen a term
    per_line = (6, 4, 3)[wide] if ctx.theme.show_secondary else 3
    more = 3  # numbers are narrower than symbols
    if ctx.theme.figure_w < NARROW_PX:  # a phone: a line fits its column
        per_line, more = (3, 2, 2)[wide], 1
    st.latex(_tex(formula, False, most, per_line))
    st.latex(_tex(formula, True, most, per_line + more))
    for copy in formula.groups:
        taps = f"{copy.name()} = {number(copy.value)}: its {len(copy.terms)} taps"
        with st.expander(taps):
            st.latex(_tex(copy, False, most, per_line))
            st.latex(_tex(copy, True, most, per_line + more))
            st.caption(copy.check(most))
    if ctx.theme.show_secondary:
        why = " Grey terms vanish (a padded or an inserted zero)." if formula.any_vanishing else ""
        st.caption(f"{formula.check(most)}.{why} {note}")


def _tex(formula: Formula, numeric: bool, most: int, per_line: int) -> str:
    """The formula box's LaTeX of `formula`, kept on it: a shared formula (`ui.compute`) is
    written once, not on every rerun that shows it."""
    kept = vars(formula).setdefault("_convviz_tex", {})
    key = (numeric, most, per_line)
    if key not in kept:
        kept[key] = formula.latex(numeric=numeric, max_terms=most, per_line=per_line, mark=_grey)
    return kept[key]


_SUMS = {"y": "y", "grad_x": "∂L/∂x", "grad_w": "∂L/∂w"}  # the grids whose cells are sums


def selected_formula(ctx: Context, grids: tuple[str, ...] = tuple(_SUMS)) -> None:
    """The selected cell's formula (a cell of one of `grids`); an operand's cell is a value."""
    shapes = {"y": ctx.spec.out_size, "grad_x": ctx.spec.in_size, "grad_w": ctx.spec.kernel_size}
    name = ctx.selection[0] if ctx.selection else ""
    cell = selected_in(ctx, (name,), shapes[name]) if name in grids else None
    if cell is None:
        names = [_SUMS[g] for g in grids]
        which = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        st.caption(f"Click a cell of {which} to see the sum that makes it.")
        return
    formula = formula_at(ctx.key, (name, *cell), ctx.n, ctx.k, ctx.c)
    st.header(f"Selected: {formula.name()}")
    formula_box(formula, ctx, zero=unread_text(ctx.spec, cell) if name == "grad_x" else "")


PICKER = "pick_open"  # the keyboard picker's expander (open or not)


# the grids a cell can be picked in, as the pages title them
GRID_NAMES = {
    "y": "y (output)",
    "x": "x̃ (input, padded)",
    "grad_x": "∂L/∂x",
    "grad_x_padded": "∂L/∂x̃ (padded, ring included)",
    "grad_w": "∂L/∂w",
}
PADDED_GRIDS = ("x", "grad_x_padded")  # their rows and columns count from the ring: −padding


def cell_picker(ctx: Context, panels: dict[str, tuple[int, int]], default: str) -> None:
    """Keyboard fallback for clicking: choose a panel, a row and a column, numbered as the
    grid's axes are (its controls are made only while it is open: a rerun each way, none on
    every other rerun)."""
    picker = st.expander("Select a cell with the keyboard", key=PICKER, on_change="rerun")
    if not picker.open:
        return
    with picker:
        names = list(panels)
        sel = ctx.selection
        cur = sel[0] if sel and sel[0] in panels else default
        a, b, c, d = st.columns([2, 1, 1, 1])
        with a:
            key = st.selectbox(
                "Grid", names, index=names.index(cur), format_func=GRID_NAMES.get, key="pick_grid"
            )
        (h, w), (top, left) = panels[key], (0, 0)
        if key in PADDED_GRIDS:
            (top, _), (left, _) = ctx.spec.padding
        row, col = (min(sel[1], h - 1), min(sel[2], w - 1)) if sel and sel[0] == key else (0, 0)
        with b:
            st.number_input("Row", -top, h - 1 - top, row - top, key="pick_row")
        with c:
            st.number_input("Column", -left, w - 1 - left, col - left, key="pick_col")
        with d:
            st.write("")
            st.button("Select", key="pick_go", on_click=_pick_cell, args=(top, left))


def _pick_cell(top: int, left: int) -> None:
    """The picked cell, its row and column numbered from the grid's first (−padding on x̃)."""
    ss = st.session_state
    ss[STATE]["sel"] = f"{ss['pick_grid']}:{ss['pick_row'] + top}:{ss['pick_col'] + left}"


def _png(panels, theme, title, formula, highlight):
    return static.to_png(static.stage_figure(panels, formula, theme, title=title,
                                             highlight=highlight))  # fmt: skip


def _svg(panels, theme, title, formula, highlight):
    return static.to_svg(static.stage_figure(panels, formula, theme, title=title,
                                             highlight=highlight))  # fmt: skip


def export_buttons(
    panels: list[Panel],
    ctx: Context,
    name: str,
    title: str,
    formula: Formula | None = None,
    gif: Callable[[float], bytes] | None = None,
    highlight: str | None = None,
) -> None:
    """PNG and SVG downloads of a stage (and a GIF of its sweep: `gif(fps)`), drawn only when
    clicked; highlight: what a lit cell means, where it is not a selection's link."""
    args = (panels, ctx.theme, title, formula, highlight)

    def download(label: str, data, ext: str, mime: str) -> None:
        file_name = f"convviz-{ctx.state['preset']}-{name}.{ext}"
        st.download_button(
            label, data, file_name=file_name, mime=mime, on_click="ignore", key=f"{ext}_{name}"
        )

    with st.container(horizontal=True, vertical_alignment="center", key=f"cv_exports_{name}"):
        download("⬇ PNG for slides", partial(_png, *args), "png", "image/png")
        download("⬇ SVG", partial(_svg, *args), "svg", "image/svg+xml")
        from convviz.ui.exports import more_exports  # only export rows need the exports

        more_exports(ctx, name, formula)
        if gif is None:
            return
        speed = st.segmented_control(
            "GIF speed",
            GIF_SPEEDS,
            default=1.0,
            format_func=lambda s: f"{s:g}×",
            key=f"gif_speed_{name}",
            label_visibility="collapsed",
            help="The GIF's speed (1×: 4 steps a second); it holds the last frame.",
        )
        fps = GIF_FPS * (speed or 1.0)  # None when the chosen speed is clicked again
        download("⬇ GIF animation", partial(gif, fps), "gif", "image/gif")


GIF_FPS, GIF_SPEEDS = 4, (0.5, 1.0, 2.0)


def page_body(draw: Callable[[Context], None] | None = None, *, own=None):
    """A page's body as a fragment: a cell click, a stage step or the cell picker reruns only the
    body (not the sidebar), so the browser redraws a part of the page, not all of it. It ends with
    the share link, which holds the selection.

    own : a function giving the page's own query (its fields beside the layer's), put back in
        the URL after the body and in the share link; `@page_body(own=…)`.
    """
    if draw is None:
        return partial(page_body, own=own)

    @st.fragment
    def body(ctx: Context) -> None:
        ctx = with_selection(ctx)
        draw(ctx)
        query = own() if own else None
        if query:
            st.query_params.from_dict(link_query(ctx.state, ctx.error, query)[0])
        share_link(ctx, query)
        st.session_state[_LINKED] = True

    return body


_LINKED = "cv_body_linked"  # this run's page body drew the share link


def page_end(
    ctx: Context, page: str, *, keys: bool = True, own: dict[str, str] | None = None
) -> None:
    """The share link (unless the page's body drew it; `own`: the page's own query), the way on
    (`clicker.page_nav`), then the sidebar: every page ends with this. The sidebar's component
    also runs the page's keyboard grids (`grids`) and its screen-size reporter (`viewport`)."""
    if not st.session_state.pop(_LINKED, False):
        share_link(ctx, own)
    page_nav(page, ctx, keys=keys)
    sidebar(ctx)

"""The layer's values by hand: typed into grids, or the input loaded from an image."""

from __future__ import annotations

import numpy as np
import streamlit as st

from convviz.engine.spec import ConvSpecError
from convviz.engine.text import slice_name
from convviz.engine.values import load_image
from convviz.model.fields import encode_array, number_text, typed_number
from convviz.ui.controls import STATE, Context, self_rerun


def _editor(label: str, name: str, full, index: tuple[int, int], ctx: Context) -> None:
    """An editable grid for one 2D slice of x, w or grad_out; edits go to the state (and URL).

    Its cells are text, read as typed_number reads them: a grid of numbers took '1e3' as 13
    and '1,5' as 15 (its number cells drop the keys they do not expect) and ignored 'abc'. It
    shows each number as the state holds it (`number_text`); a number typed in another spelling
    ('2.0' over '2') is the same number: the grid is drawn anew, once, showing it as held.
    """
    current = full[index]
    shown = np.vectorize(number_text, otypes=[object])(current)
    drawn = st.session_state.get(REDRAWS, 0)  # a new grid after a refusal or a respelling
    key = f"edit_{name}_{index}_{ctx.key.__hash__()}_{drawn}"
    edited = np.asarray(st.data_editor(shown, key=key, width="content"), dtype=object)
    if edited.shape != current.shape or np.array_equal(edited, shown):
        return
    try:
        values = np.vectorize(lambda t: typed_number(str(t or ""), label), otypes=[float])(edited)
    except ConvSpecError as exc:  # said above the grids, which show the numbers kept again
        st.session_state[REFUSED] = f"{exc}. The app keeps the last numbers."
        values = current
    st.session_state[REDRAWS] = drawn + 1
    if not np.array_equal(values, current):
        updated = np.array(full, dtype=float)
        updated[index] = values
        st.session_state[STATE].update({name: encode_array(updated), "preset": "custom"})
    self_rerun()


def value_editors(ctx: Context) -> None:
    """Edit the current slices of x, w and grad_out by hand (small sizes only)."""
    st.header("Values")
    if max(ctx.layer.forward.x.shape[-2:]) > 16:
        st.caption("Editing cell by cell is offered up to 16×16 inputs.")
        return
    box = st.expander(
        "Type in x, w and ∂L/∂y, or load x from an image", key=EDITORS, on_change="rerun"
    )
    if not box.open:  # three data editors cost more than the rest of the page's rerun
        return
    with box:
        _editors(ctx)


EDITORS = "edit_open"  # the value editors' expander (its grids are made only while it is open)
REFUSED = "cv_edit_refused"  # why the last typed value was refused, said once
REDRAWS = "cv_edit_redraws"  # grids drawn anew so far: a part of their keys


def _editors(ctx: Context) -> None:
    fw, g = ctx.layer.forward, ctx.layer.input_grad.grad_out
    if ctx.theme.show_secondary:
        st.caption(
            "Type over any number; the whole app follows. Re-roll or pick a preset to start again."
        )
    image_loader(ctx)
    refused = st.session_state.pop(REFUSED, None)
    if refused:
        st.warning(refused)
    a, b, c = st.columns(3)
    with a:
        st.markdown(f"input {slice_name('x', n=ctx.n, c=ctx.c)}")
        _editor("input x", "x", fw.x, (ctx.n, ctx.c), ctx)
    with b:
        st.markdown(f"kernel {slice_name('w', k=ctx.k, c=ctx.c)}")
        _editor("kernel w", "w", fw.w, (ctx.k, ctx.c), ctx)
    with c:
        st.markdown(slice_name("∂L/∂y", n=ctx.n, k=ctx.k))
        _editor("grad_out", "g", g, (ctx.n, ctx.k), ctx)


MAX_UPLOAD_BYTES = 5_000_000


def _load_image(key: str) -> None:
    """Decode an uploaded image into x (every sample and channel), or say why not."""
    upload = st.session_state.get(key)
    if upload is None:
        return
    state = st.session_state[STATE]
    if upload.size > MAX_UPLOAD_BYTES:
        st.session_state[UPLOAD_PROBLEM] = "That image is over 5 MB: choose a smaller one."
        return
    try:  # the size is checked from the header before a pixel is decoded
        x, note = load_image(upload, (state["H"], state["W"]))
    except ValueError as exc:
        st.session_state[UPLOAD_PROBLEM] = str(exc)
        return
    full = np.broadcast_to(x, (state["batch"], state["cin"], state["H"], state["W"]))
    state.update(x=encode_array(full), preset="custom", sel="")
    if note:
        st.session_state[UPLOAD_NOTE] = note


UPLOAD_PROBLEM = "cv_upload_problem"
UPLOAD_NOTE = "cv_upload_note"


def image_loader(ctx: Context) -> None:
    """Load x from an image: sampled to H×W and quantised to 0…9 (values checkable by hand)."""
    st.file_uploader(
        "Load the input x from an image (PNG/JPEG, ≤ 5 MB)",
        type=["png", "jpg", "jpeg", "gif", "bmp"],
        key="upload_x",
        on_change=_load_image,
        args=("upload_x",),
    )
    problem = st.session_state.pop(UPLOAD_PROBLEM, None)
    if problem:
        st.warning(problem)
    note = st.session_state.pop(UPLOAD_NOTE, None)
    if note:
        st.info(note)

"""Overview: the whole layer at a glance, the output-size arithmetic, values and an oracle check."""

import streamlit as st
from convviz.render.grids import panels_figure

from convviz.presets import PRESETS_BY_KEY
from convviz.render.stories import overview_panels, shape_rows
from convviz.ui.compute import reference_check
from convviz.ui.controls import controls
from convviz.ui.views import chart, export_buttons, page_header, share_link, value_editors

st.set_page_config(page_title="convviz", page_icon="🔲", layout="wide")
ctx = controls()
page_header(
    ctx,
    "convviz: how a convolution layer learns",
    "Real numbers for the forward pass and for backpropagation. Pick a preset or set the "
    "shapes in the sidebar; click any cell to see its formula on the other pages.",
)
preset = PRESETS_BY_KEY.get(ctx.state["preset"])
if preset and ctx.theme.show_secondary:
    st.info(f"**{preset.title}.** {preset.note}")

left, right = st.columns([3, 2])
with left:
    forward, backward = overview_panels(ctx.layer, ctx.n, ctx.k, ctx.c)
    chart(panels_figure(forward, ctx.theme, title="Forward: y = x ⋆ w"), "overview_forward")
    chart(
        panels_figure(backward, ctx.theme, title="Backward: the three gradients"),
        "overview_backward",
    )
    export_buttons(forward + backward, ctx, "convviz-overview", "convviz: the layer at a glance")
with right:
    st.subheader("Shapes")
    st.dataframe(shape_rows(ctx.layer), hide_index=True, width="stretch")
    st.code(ctx.spec.describe(), language=None)
    check = reference_check(ctx.key)
    if check is not None:
        st.success(check)
    st.subheader("Pages")
    st.page_link("pages/1_Forward.py", label="Forward: the sliding window, animated", icon="▶️")
    st.page_link(
        "pages/2_Input_gradient.py",
        label="Input gradient: dilate, pad, rotate, correlate, mask",
        icon="↩️",
    )
    st.page_link(
        "pages/3_Weight_gradient.py",
        label="Weight gradient: the input correlated with ∂L/∂y",
        icon="🎛️",
    )
    st.page_link("pages/4_Channels.py", label="Channels: filters × channels × batch", icon="🧮")

value_editors(ctx)
share_link(ctx)

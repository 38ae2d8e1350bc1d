"""Grids of small heatmaps for the multi-channel view: grad_w as C_out × C_in, sums over k."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from convviz.render import theme as th


def _text(a: np.ndarray) -> np.ndarray:
    return np.vectorize(lambda v: f"{v:.0f}" if float(v).is_integer() else f"{v:.2g}")(a)


def heatmap_grid(
    arrays: np.ndarray,
    row_labels: list[str],
    col_labels: list[str],
    theme: th.Theme = th.THEME,
    *,
    title: str = "",
    cell_px: int | None = None,
    with_text: bool | None = None,
) -> go.Figure:
    """A rows × cols grid of small heatmaps; arrays : shape (rows, cols, h, w).

    Colours share one symmetric range so the grids compare; numbers only on small grids.
    """
    R, C, h, w = arrays.shape
    cell = cell_px or max(4, min(theme.cell_px, 480 // max(w * C, 1)))
    show_text = (h <= 8 and w <= 8 and cell >= 24) if with_text is None else with_text
    fig = make_subplots(
        rows=R,
        cols=C,
        horizontal_spacing=0.02,
        vertical_spacing=0.04,
        row_titles=row_labels if R > 1 else None,
        column_titles=col_labels,
    )
    lim = float(np.abs(arrays).max()) or 1.0
    for r in range(R):
        for c in range(C):
            fig.add_trace(
                go.Heatmap(
                    z=arrays[r, c],
                    zmin=-lim,
                    zmax=lim,
                    colorscale=th.VALUE_SCALE,
                    showscale=False,
                    xgap=1,
                    ygap=1,
                    text=_text(arrays[r, c]) if show_text else None,
                    texttemplate="%{text}" if show_text else None,
                    textfont={"size": theme.cell_font_size - 3},
                    hovertemplate=f"{row_labels[r] if R > 1 else ''} {col_labels[c]}"
                    "<br>[%{y}, %{x}] = %{z:.4g}<extra></extra>",
                ),
                row=r + 1,
                col=c + 1,
            )
    fig.update_yaxes(autorange="reversed", showticklabels=False, scaleanchor=None)
    fig.update_xaxes(showticklabels=False, constrain="domain")
    fig.update_layout(
        title={"text": title, "font": {"size": theme.title_font_size}},
        width=int(C * w * cell * 1.08 + 120),
        height=int(R * h * cell * 1.1 + 110),
        margin={"l": 20, "r": 60, "t": 80, "b": 20},
        font={"family": th.FONT_FAMILY, "size": theme.font_size},
        plot_bgcolor=th.BACKGROUND,
        paper_bgcolor=th.BACKGROUND,
    )
    return fig

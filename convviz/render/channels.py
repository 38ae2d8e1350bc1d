"""Grids of small heatmaps for the multi-channel view: grad_w as C_out × C_in, sums over k."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from convviz.render import theme as th
from convviz.render.grids import format_values

MAX_GRID_PX = 940  # widest grid of heatmaps; cells shrink to fit


def heatmap_grid(
    arrays: np.ndarray,
    row_labels: list[str],
    col_labels: list[str],
    theme: th.Theme = th.THEME,
    *,
    title: str = "",
) -> go.Figure:
    """A rows × cols grid of small heatmaps; arrays : shape (rows, cols, h, w).

    All share one symmetric colour range so they compare; numbers only where cells are big.
    """
    R, C, h, w = arrays.shape
    gap = 18  # px between heatmaps
    cell = max(1.0, min(theme.cell_px * 0.75, (MAX_GRID_PX - gap * (C - 1)) / (C * w)))
    show_text = cell >= 22 and max(h, w) <= theme.max_text_cells
    width, height = C * w * cell + gap * (C - 1), R * h * cell + gap * (R - 1)
    fig = make_subplots(
        rows=R,
        cols=C,
        horizontal_spacing=gap / width if C > 1 else 0,
        vertical_spacing=gap / height if R > 1 else 0,
        row_titles=row_labels if R > 1 else None,
        column_titles=col_labels,
    )
    lim = float(np.abs(arrays).max()) or 1.0
    cell_gap = 1 if cell >= 8 else 0
    for r in range(R):
        for c in range(C):
            name = f"{row_labels[r]} {col_labels[c]}".strip()
            fig.add_trace(
                go.Heatmap(
                    z=arrays[r, c],
                    zmin=-lim,
                    zmax=lim,
                    colorscale=th.VALUE_SCALE,
                    showscale=False,
                    xgap=cell_gap,
                    ygap=cell_gap,
                    text=format_values(arrays[r, c]) if show_text else None,
                    texttemplate="%{text}" if show_text else None,
                    textfont={"size": max(9, min(theme.cell_font_size, int(cell * 0.45)))},
                    hovertemplate=f"{name}<br>[%{{y}}, %{{x}}] = %{{z:.4g}}<extra></extra>",
                ),
                row=r + 1,
                col=c + 1,
            )
    fig.update_yaxes(
        autorange="reversed", showticklabels=False, ticks="", showgrid=False, zeroline=False
    )
    fig.update_xaxes(showticklabels=False, ticks="", showgrid=False, zeroline=False)
    fig.update_annotations(font={"size": theme.font_size})
    top = 90 if title else 50
    fig.update_layout(
        title={"text": title, "font": {"size": theme.title_font_size}, "x": 0, "xanchor": "left"},
        width=int(width + 90),
        height=int(height + top + 20),
        margin={"l": 20, "r": 70, "t": top, "b": 20},
        font={"family": th.FONT_FAMILY, "size": theme.font_size},
        plot_bgcolor=th.BACKGROUND,
        paper_bgcolor=th.BACKGROUND,
    )
    return fig

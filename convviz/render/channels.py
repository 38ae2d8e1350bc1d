"""Grids of small heatmaps for the multi-channel view: grad_w as C_out × C_in, sums over k."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from convviz.render import theme as th
from convviz.render.grids import format_values

GAP_PX = 18  # between heatmaps
LABEL_PX = 26  # room for a column title above / a row title to the right


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
    Axes are laid out by hand (pixel domains): make_subplots costs ~40 ms a figure.
    """
    R, C, h, w = arrays.shape
    widest = theme.figure_w - 100  # the row labels sit right of the grid
    cell = max(1.0, min(0.75 * theme.cell_px_for_font, (widest - GAP_PX * (C - 1)) / (C * w)))
    labels = format_values(arrays)
    longest = max((len(t) for t in labels.ravel()), default=1)
    show_text = cell >= max(22, 7 * longest + 6) and max(h, w) <= theme.max_text_cells
    pw, ph = w * cell, h * (cell if cell >= 1 else 1)
    step_x, step_y = pw + GAP_PX, ph + GAP_PX + LABEL_PX
    width, height = C * pw + GAP_PX * (C - 1), R * step_y - GAP_PX
    lim = float(np.abs(arrays).max()) or 1.0
    gap = 1 if cell >= 8 else 0
    font = max(9, min(theme.cell_font_size, int(cell * 0.45)))
    # column titles no wider than their column (plus the gap): they never run into each other
    longest_label = max(map(len, col_labels), default=1)
    label_font = max(8, min(theme.font_size, int((pw + GAP_PX - 4) / (0.6 * longest_label))))
    data, layout, notes = [], {}, []
    for r in range(R):
        for c in range(C):
            i = r * C + c + 1
            ax = "" if i == 1 else str(i)
            x0, y0 = c * step_x / width, 1 - (r * step_y + LABEL_PX) / height
            layout[f"xaxis{ax}"] = {
                "domain": [max(0.0, x0), min(1.0, x0 + pw / width)],  # rounding stays in [0, 1]
                "visible": False,
                "anchor": f"y{ax}",
                "range": [-0.5, w - 0.5],
            }
            layout[f"yaxis{ax}"] = {
                "domain": [max(0.0, y0 - ph / height), min(1.0, y0)],
                "visible": False,
                "anchor": f"x{ax}",
                "range": [h - 0.5, -0.5],
            }
            name = f"{row_labels[r]} {col_labels[c]}".strip()
            data.append(
                {
                    "type": "heatmap",
                    "z": arrays[r, c],
                    "xaxis": f"x{ax}",
                    "yaxis": f"y{ax}",
                    "zmin": -lim,
                    "zmax": lim,
                    "colorscale": th.VALUE_SCALE,
                    "showscale": False,
                    "xgap": gap,
                    "ygap": gap,
                    "text": labels[r, c] if show_text else None,
                    "texttemplate": "%{text}" if show_text else None,
                    "textfont": {"size": font},
                    "hovertemplate": f"{name}<br>[%{{y}}, %{{x}}] = %{{z:.4g}}<extra></extra>",
                }
            )
            if r == 0:
                notes.append(
                    {
                        "text": col_labels[c],
                        "x": x0 + pw / width / 2,
                        "xanchor": "center",  # 'auto' slides labels near the edges sideways
                        "y": y0,
                        "xref": "paper",
                        "yref": "paper",
                        "yanchor": "bottom",
                        "showarrow": False,
                        "font": {"size": label_font},
                    }
                )
            if R > 1 and c == C - 1:
                notes.append(
                    {
                        "text": row_labels[r],
                        "x": 1,
                        "xanchor": "left",
                        "y": y0 - ph / height / 2,
                        "xref": "paper",
                        "yref": "paper",
                        "showarrow": False,
                    }
                )
    top = 60 if title else 10
    fig_width = max(width + 100, len(title) * theme.title_font_size * 0.55)  # room for the title
    layout.update(
        title={"text": title, "font": {"size": theme.title_font_size}, "x": 0, "xanchor": "left"},
        width=int(fig_width),
        height=int(height + top + 20),
        annotations=notes,
        margin={"l": 20, "r": int(fig_width - width - 20), "t": top, "b": 20},
        font={"family": th.FONT_FAMILY, "size": theme.font_size},
        plot_bgcolor=th.BACKGROUND,
        paper_bgcolor=th.BACKGROUND,
    )
    return go.Figure(data=data, layout=layout)

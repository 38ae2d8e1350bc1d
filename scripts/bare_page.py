"""The floor of the stack for scripts/latency.py: one number input and one plotly heatmap.

Run: streamlit run scripts/bare_page.py   (nothing else on the page, no caching, no state).
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

n = st.number_input("Number", min_value=0, max_value=1000, value=1, step=1)
z = np.add.outer(np.arange(5), np.arange(5)) * n
st.plotly_chart(go.Figure(go.Heatmap(z=z)), key="chart_bare")

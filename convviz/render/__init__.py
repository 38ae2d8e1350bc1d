"""Renderers: engine data in, plotly or matplotlib figures out. Never imports streamlit."""

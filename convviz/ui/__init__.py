"""The Streamlit layer: shared sidebar, state in the URL, cached engine calls, page parts."""

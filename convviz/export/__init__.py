"""Exports for authors: offline HTML, MP4/GIF, LaTeX, runnable snippets, a handout PDF, and the
command line that writes them all (`python -m convviz export`). Free of streamlit."""

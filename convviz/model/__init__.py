"""The app's model, shared by the pages, the exports and the notebook (no Streamlit).

- `lecture.py`: the lecture: every stage's key, page, title, words, formula and file name, in
  order, and the clicker's keys;
- `presets.py`: the one table of named layers; `fields.py`: every field of the URL-state, its
  bounds and key; `state.py`: a link read into a state and written back, and the layer it means;
- `quiz/`: the questions, their grading and the mistakes they catch.
"""

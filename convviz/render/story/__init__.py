"""What each page and stage shows, as Panels and figures built from the engine's data.

- `panels.py`: the forward, weight-gradient, overview and channel panels with their captions;
- `input_grad.py`: the input gradient's six steps, and a gradient cell in words;
- `chain.py`: the Two layers page (the forward chain, ∂L/∂h, the handover motion);
- `learning.py`: how the layer learns (the loss, a step, a run, the loss curve);
- `matrix.py`: the Matrix page's panels; `quiz.py`: what a quiz question shows.
"""

"""How a layer learns, on the engine: NumPy and the standard library only.

- `loss.py`: L = ½‖y − t‖² and its ∂L/∂y, and the target t (typed, drawn, a kernel's output);
- `sgd.py`: one SGD step (momentum included) and the curvature that bounds its rate;
- `training.py`: a bounded run of steps, stopped where it diverges;
- `experiment.py`: the Learning page's experiment: a target, one step and a run, from settings;
- `chain.py`: two stacked layers and a ReLU: ∂L/∂x of one is ∂L/∂y of the one before;
- `checks.py`: the witnesses of how it learns (finite differences, PyTorch's SGD).
"""

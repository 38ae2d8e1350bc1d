"""Runnable snippets that train the page's layer: plain NumPy, and PyTorch.

Each holds the exact x, w and target (every digit), the layer's stride, padding, dilation and
padding mode, the rate, momentum, steps and reduction, and trains the layer (bias from 0) as
`convviz.learning.training.train` does; it prints the loss at every step and the last w and b, and
leaves `losses`, `w` and `b` as module-level names, so a test can run it and compare with the
engine. The NumPy one needs nothing but NumPy.
"""

from __future__ import annotations

import json

from convviz.engine.spec import NUMPY_PAD_MODES, TORCH_PAD_MODES
from convviz.engine.text import count
from convviz.export.snippet import _literal
from convviz.learning.training import Run


def _values(run: Run, w0) -> str:
    spec = run.spec
    return (
        f"x = np.array({_literal(run.x)}, dtype=float)  # (N, C_in, H, W)\n"
        f"w = np.array({_literal(w0)}, dtype=float)  # (C_out, C_in, kH, kW), before step 1\n"
        f"target = np.array({_literal(run.target)}, dtype=float)  # (N, C_out, oH, oW)\n"
        f"stride = {tuple(spec.stride)}\n"
        f"padding = {tuple(tuple(p) for p in spec.padding)}  # ((top, bottom), (left, right))\n"
        f"dilation = {tuple(spec.dilation)}\n"
        f"padding_mode = {spec.padding_mode!r}\n"
        f"lr, momentum, steps, reduction = {run.lr!r}, {run.momentum!r}, {run.steps_done}, "
        f"{run.reduction!r}\n"
    )


def _header(run: Run, tool: str) -> str:
    return (
        f'"""convviz: the layer learning its target in {tool}, {count(run.steps_done, "step")} '
        "of SGD (momentum as torch.optim.SGD takes it).\n\n"
        "L = 1/2 ||y - target||^2 (reduction 'sum'), or that divided by the batch size N\n"
        "('mean');\n"
        "v <- momentum*v + g (v = g on the first step), p <- p - lr*v, for w and b (b from 0).\n"
        "Prints L at steps 0..steps and the last w and b.\n"
        '"""\n'
    )


_NUMPY_BODY = (
    f"\nNP_MODE = {json.dumps(NUMPY_PAD_MODES)}\n"
    + """N, C, H, W = x.shape
K, _, kH, kW = w.shape
(sh, sw), (dh, dw), ((pt, pb), (pl, pr)) = stride, dilation, padding
xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), mode=NP_MODE[padding_mode])
oH = (xp.shape[2] - dh * (kH - 1) - 1) // sh + 1
oW = (xp.shape[3] - dw * (kW - 1) - 1) // sw + 1
# every window of the padded input: (N, C, kH, kW, oH, oW)
win = np.stack([np.stack([xp[:, :, a * dh:a * dh + sh * (oH - 1) + 1:sh,
                             b * dw:b * dw + sw * (oW - 1) + 1:sw]
                          for b in range(kW)], axis=2) for a in range(kH)], axis=2)
scale = 1.0 if reduction == "sum" else 1.0 / N
b = np.zeros(K)
v_w = v_b = None
losses = []
for step in range(steps + 1):
    y = np.einsum("ncijhw,kcij->nkhw", win, w) + b[None, :, None, None]
    diff = y - target
    losses.append(scale * 0.5 * float((diff * diff).sum()))
    print(f"step {step}: L = {losses[-1]:.10g}")
    if step == steps:
        break
    grad_out = scale * diff  # dL/dy
    g_w = np.einsum("ncijhw,nkhw->kcij", win, grad_out)  # dL/dw
    g_b = grad_out.sum(axis=(0, 2, 3))  # dL/db
    v_w, v_b = (g_w, g_b) if v_w is None else (momentum * v_w + g_w, momentum * v_b + g_b)
    w, b = w - lr * v_w, b - lr * v_b
print("w =", w.tolist())
print("b =", b.tolist())
"""
)


def numpy_training_snippet(run: Run, w0) -> str:
    """Plain NumPy that trains the run's layer from w0 for its steps and prints its losses.

    w0 : (C_out, C_in, kH, kW), the kernel at step 0 (`run.w[0]`).
    """
    return _header(run, "NumPy") + "import numpy as np\n\n" + _values(run, w0) + _NUMPY_BODY


_TORCH_BODY = (
    f"\nTORCH_MODE = {json.dumps(TORCH_PAD_MODES)}\n"
    + """x, target = torch.tensor(x), torch.tensor(target)
w = torch.tensor(w, requires_grad=True)
b = torch.zeros(w.shape[0], dtype=torch.float64, requires_grad=True)
(pt, pb), (pl, pr) = padding
xp = F.pad(x, (pl, pr, pt, pb), mode=TORCH_MODE[padding_mode]) if any((pt, pb, pl, pr)) else x
opt = torch.optim.SGD([w, b], lr=lr, momentum=momentum)
losses = []
for step in range(steps + 1):
    y = F.conv2d(xp, w, b, stride=stride, dilation=dilation)
    loss = 0.5 * ((y - target) ** 2).sum() / (1 if reduction == "sum" else x.shape[0])
    losses.append(loss.item())
    print(f"step {step}: L = {losses[-1]:.10g}")
    if step == steps:
        break
    opt.zero_grad()
    loss.backward()
    opt.step()
print("w =", w.detach().tolist())
print("b =", b.detach().tolist())
"""
)


def torch_training_snippet(run: Run, w0) -> str:
    """The same training in PyTorch: F.conv2d, autograd and torch.optim.SGD."""
    head = "import numpy as np\nimport torch\nimport torch.nn.functional as F\n\n"
    return _header(run, "PyTorch") + head + _values(run, w0) + _TORCH_BODY

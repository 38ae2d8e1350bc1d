"""Runnable snippets that reproduce the current layer: plain NumPy, and PyTorch.

Each holds the exact x, w and ∂L/∂y (every digit: `repr` of each float), the stride, the padding
per side, the dilation and the padding mode, and prints y, ∂L/∂x and ∂L/∂w. The NumPy one needs
nothing but NumPy (no convviz): a student pastes it and gets the app's numbers. Both leave
`y`, `grad_x` and `grad_w` as module-level names, so a test can run them and compare.
"""

from __future__ import annotations

import json

import numpy as np

from convviz.engine.spec import NUMPY_PAD_MODES, TORCH_PAD_MODES
from convviz.export.story import Story


def _literal(a: np.ndarray) -> str:
    """A nested-list literal of a, every float exact; whole numbers without '.0'."""

    def num(v: float) -> str:
        return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else repr(float(v))

    def rows(x) -> str:
        if x.ndim == 1:
            return "[" + ", ".join(num(v) for v in x.tolist()) + "]"
        return "[" + ", ".join(rows(s) for s in x) + "]"

    return rows(np.asarray(a, float))


def _header(story: Story, tool: str) -> str:
    spec = story.spec
    return (
        f'"""convviz layer \'{story.preset}\' reproduced in {tool}: prints y, dL/dx and dL/dw.\n\n'
        f"x {spec.input_shape} (N, C_in, H, W), w {spec.weight_shape} (C_out, C_in, kH, kW),\n"
        f"dL/dy {spec.output_shape}; cross-correlation, PyTorch's conventions.\n"
        '"""\n'
    )


def _values(story: Story) -> str:
    spec = story.spec
    return (
        f"x = np.array({_literal(story.x)}, dtype=float)\n"
        f"w = np.array({_literal(story.w)}, dtype=float)\n"
        f"grad_out = np.array({_literal(story.grad_out)}, dtype=float)  # dL/dy\n"
        f"stride = {tuple(spec.stride)}\n"
        f"padding = {tuple(tuple(p) for p in spec.padding)}  # ((top, bottom), (left, right))\n"
        f"dilation = {tuple(spec.dilation)}\n"
        f"padding_mode = {spec.padding_mode!r}\n"
    )


_NUMPY_BODY = (
    f"\nNP_MODE = {json.dumps(NUMPY_PAD_MODES)}\n"
    + '''N, C, H, W = x.shape
K, _, kH, kW = w.shape
(sh, sw), (dh, dw), ((pt, pb), (pl, pr)) = stride, dilation, padding
x_pad = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), mode=NP_MODE[padding_mode])
oH = (H + pt + pb - dh * (kH - 1) - 1) // sh + 1
oW = (W + pl + pr - dw * (kW - 1) - 1) // sw + 1


def window(a, b):
    """The slice of x_pad that kernel tap (a, b) meets at every output cell."""
    rows = slice(a * dh, a * dh + sh * (oH - 1) + 1, sh)
    cols = slice(b * dw, b * dw + sw * (oW - 1) + 1, sw)
    return rows, cols


# forward: one tap at a time, y[n, k] += x_pad[n, c, window] * w[k, c, a, b]
y = np.zeros((N, K, oH, oW))
grad_x_pad = np.zeros_like(x_pad)
grad_w = np.zeros_like(w)
for a in range(kH):
    for b in range(kW):
        rows, cols = window(a, b)
        patch = x_pad[:, :, rows, cols]  # (N, C, oH, oW)
        y += np.einsum("nchw,kc->nkhw", patch, w[:, :, a, b])
        # backward of the same tap: the chain rule, summand by summand
        grad_w[:, :, a, b] = np.einsum("nkhw,nchw->kc", grad_out, patch)
        grad_x_pad[:, :, rows, cols] += np.einsum("nkhw,kc->nchw", grad_out, w[:, :, a, b])

# the padded cells: zeros are constants (their gradient is dropped); reflect, replicate and
# circular cells are copies, so their gradient goes back to the cell each was copied from
def source(size, sides):
    """The cell each padded position was copied from (-1: a zero, copied from nowhere)."""
    if padding_mode == "zeros":
        return np.pad(np.arange(size), sides, constant_values=-1)
    return np.pad(np.arange(size), sides, mode=NP_MODE[padding_mode])


src_r, src_c = source(H, (pt, pb)), source(W, (pl, pr))
grad_x = np.zeros_like(x)
for i, r in enumerate(src_r):
    for j, c in enumerate(src_c):
        if r >= 0 and c >= 0:
            grad_x[:, :, r, c] += grad_x_pad[:, :, i, j]

np.set_printoptions(linewidth=120, suppress=True)
print("y =", y, sep="\\n")
print("dL/dx =", grad_x, sep="\\n")
print("dL/dw =", grad_w, sep="\\n")
'''
)


def numpy_snippet(story: Story) -> str:
    """A self-contained NumPy script for the story's layer (needs only NumPy)."""
    return _header(story, "NumPy") + "import numpy as np\n\n" + _values(story) + _NUMPY_BODY


_TORCH_BODY = (
    f"\nTORCH_MODE = {json.dumps(TORCH_PAD_MODES)}\n"
    + """(pt, pb), (pl, pr) = padding
xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
wt = torch.tensor(w, dtype=torch.float64, requires_grad=True)
# F.pad takes (left, right, top, bottom); the padding's own gradient (drop or fold back) is
# autograd's, as in nn.Conv2d(padding_mode=...)
x_pad = F.pad(xt, (pl, pr, pt, pb), mode=TORCH_MODE[padding_mode])
y = F.conv2d(x_pad, wt, stride=stride, dilation=dilation)
y.backward(torch.tensor(grad_out, dtype=torch.float64))
grad_x, grad_w = xt.grad.numpy(), wt.grad.numpy()
y = y.detach().numpy()

np.set_printoptions(linewidth=120, suppress=True)
print("y =", y, sep="\\n")
print("dL/dx =", grad_x, sep="\\n")
print("dL/dw =", grad_w, sep="\\n")
"""
)


def torch_snippet(story: Story) -> str:
    """The same layer through torch.nn.functional and autograd."""
    imports = "import numpy as np\nimport torch\nimport torch.nn.functional as F\n\n"
    return _header(story, "PyTorch") + imports + _values(story) + _TORCH_BODY

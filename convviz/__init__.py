"""convviz: a NumPy engine that shows how a 2D convolution computes its output and gradients,
and how a layer learns from them; in a notebook, `show` and `Widget` draw them as the app does
(their renderers are loaded when first called: `import convviz` loads NumPy alone)."""

from convviz.engine.conv import conv2d, conv2d_bias, conv2d_input, conv2d_weight
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.learning.chain import TwoLayerPass, TwoLayerSpec, two_layer_pass, two_layer_target
from convviz.learning.loss import Loss, Target, make_target, mse_loss
from convviz.learning.sgd import Curvature, Step, curvature, learning_step, sgd_step
from convviz.learning.training import Run, train


def show(preset=None, link=None, *, stage="forward", step=None, **layer):
    """A stage of the lecture as the app draws it, with its player, in a notebook's output.

    preset : a preset's name ('recitation-s2'), or a share link or its query string (as `link`);
    stage : the lecture's stage: 'forward', 'grad-out', 'dilate', 'pad', 'rotate', 'correlate',
        'mask', 'whole', 'weight-grad', 'weight-window', 'loss', 'step', 'train',
        'chain-forward', …, 'chain-weights' (`convviz.model.lecture`);
    step : the frame the player opens on (0 the first; None: the stage's result);
    layer : the layer's keywords over the preset's (or PyTorch's defaults): input_size,
        kernel_size (an int or a pair), kernel (a named kernel such as 'sobel x', or values),
        stride, padding (an int, a pair, ((top, bottom), (left, right)), 'valid', 'same' or
        'full'), padding_mode, dilation, in_channels, out_channels, batch, seed, x, w,
        grad_out (arrays, or grad_out='ones' / 'random' / 'mse'); the Learning and Two layers
        pages' fields by their link names (lr, steps, mom, tgt, red, kH2, …, relu, b1);
        n, k, c the slice drawn; selected=(grid, row, col) a cell to follow; width in px.

    Returns an object a notebook displays (`.save("x.html")` writes it as a page that plays
    offline). A value the app would refuse raises ConvSpecError naming it.

    >>> convviz.show("recitation-s2", stage="dilate")  # doctest: +SKIP
    """
    from convviz.notebook.show import show as shown

    return shown(preset, link, stage=stage, step=step, **layer)


def __getattr__(name: str):
    if name == "Widget":  # the two-way widget: anywidget (`pip install convviz[notebook]`)
        from convviz.notebook.widget import Widget

        return Widget
    raise AttributeError(f"module 'convviz' has no attribute {name!r}")


def __dir__() -> list[str]:
    return [*globals(), "Widget"]


__all__ = [
    "ConvSpec",
    "ConvSpecError",
    "Curvature",
    "Loss",
    "Run",
    "Step",
    "Target",
    "TwoLayerPass",
    "TwoLayerSpec",
    "conv2d",
    "conv2d_bias",
    "conv2d_input",
    "conv2d_weight",
    "curvature",
    "learning_step",
    "make_target",
    "mse_loss",
    "sgd_step",
    "show",
    "train",
    "two_layer_pass",
    "two_layer_target",
]

"""convviz: a NumPy engine that shows how a 2D convolution computes its output and gradients,
and how a layer learns from them."""

from convviz.engine.conv import conv2d, conv2d_bias, conv2d_input, conv2d_weight
from convviz.engine.spec import ConvSpec, ConvSpecError
from convviz.learning.chain import TwoLayerPass, TwoLayerSpec, two_layer_pass, two_layer_target
from convviz.learning.loss import Loss, Target, make_target, mse_loss
from convviz.learning.sgd import Curvature, Step, curvature, learning_step, sgd_step
from convviz.learning.training import Run, train

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
    "train",
    "two_layer_pass",
    "two_layer_target",
]

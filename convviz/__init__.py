"""convviz: a NumPy engine that shows how a 2D convolution computes its output and gradients,
and how a layer learns from them."""

from convviz.chain import TwoLayerPass, TwoLayerSpec, two_layer_pass, two_layer_target
from convviz.conv import conv2d, conv2d_bias, conv2d_input, conv2d_weight
from convviz.learn import Curvature, Step, curvature, learning_step, sgd_step
from convviz.loss import Loss, Target, make_target, mse_loss
from convviz.spec import ConvSpec, ConvSpecError
from convviz.training import Run, train

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

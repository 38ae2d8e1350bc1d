"""convviz: a NumPy engine that shows how a 2D convolution computes its output and gradients."""

from convviz.conv import conv2d, conv2d_bias, conv2d_input, conv2d_weight
from convviz.spec import ConvSpec, ConvSpecError

__all__ = ["ConvSpec", "ConvSpecError", "conv2d", "conv2d_bias", "conv2d_input", "conv2d_weight"]

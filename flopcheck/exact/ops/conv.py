"""Op formulas of convolutions: aten's convolution, every backend's forward and transposed kernel, and the
convolution's backward (2 FLOPs per multiply-add; a bias add is recorded, not counted)."""

from __future__ import annotations

from math import prod
from typing import Any

import torch

from flopcheck.exact.cost import OpCost, Piece
from flopcheck.exact.ops.registry import numel, op_formula, shape_of
from flopcheck.types import Kind


@op_formula("convolution", "_convolution", "convolution_overrideable")
def conv_flop(
    x: torch.Tensor,
    w: torch.Tensor,
    bias: torch.Tensor | None = None,
    stride: list[int] | None = None,
    padding: list[int] | None = None,
    dilation: list[int] | None = None,
    transposed: bool = False,
    *args: Any,
    out: Any = None,
    **kwargs: Any,
) -> OpCost:
    """Each output (input, if transposed) element is a (C_in/groups * prod(kernel))-long dot product.

    w: (C_out, C_in/groups, *kernel), or (C_in, C_out/groups, *kernel) transposed.
    FLOPs = 2 * numel(out) * C_in/groups * prod(kernel); transposed: 2 * numel(x) * C_out/groups * prod(kernel).
    """
    per_point = prod(shape_of(w)[1:])
    points = numel(x) if transposed else numel(out)
    return OpCost((Piece(2 * points * per_point, kind=Kind.CONV),), bias_elements=numel(out) if bias is not None else 0)


@op_formula("cudnn_convolution")
def cudnn_conv_flop(x: torch.Tensor, w: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """cuDNN's forward convolution takes no bias."""
    return conv_flop(x, w, None, out=out)


@op_formula("cudnn_convolution_transpose")
def cudnn_conv_transpose_flop(x: torch.Tensor, w: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """cuDNN's transposed convolution takes no bias."""
    return conv_flop(x, w, None, transposed=True, out=out)


@op_formula("mkldnn_convolution")
def mkldnn_conv_flop(
    x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """oneDNN's forward convolution: (input, weight, bias, padding, stride, dilation, groups)."""
    return conv_flop(x, w, bias, out=out)


# ---------------------------------------------------------------------------------------------
# Backend kernels a model can call directly
# ---------------------------------------------------------------------------------------------


@op_formula(
    "_conv_depthwise2d",
    "conv_depthwise3d",
    "slow_conv3d_forward",
    "slow_conv_dilated2d",
    "slow_conv_dilated3d",
    "_slow_conv2d_forward",
    "_nnpack_spatial_convolution",
    "miopen_convolution",
    "miopen_depthwise_convolution",
    "miopen_convolution_relu",
    "miopen_convolution_add_relu",
    "cudnn_convolution_relu",
    "cudnn_convolution_add_relu",
    "_mps_convolution",
)
def backend_conv_flop(x: torch.Tensor, w: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """A backend's forward convolution (x, weight, ...): as `convolution`, 2*numel(out)*C_in/groups*prod(kernel)."""
    return conv_flop(x, w, None, out=out)


@op_formula(
    "slow_conv_transpose2d", "slow_conv_transpose3d", "miopen_convolution_transpose", "_mps_convolution_transpose"
)
def backend_conv_transpose_flop(x: torch.Tensor, w: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """A backend's transposed convolution: 2 * numel(x) * C_out/groups * prod(kernel)."""
    return conv_flop(x, w, None, transposed=True, out=out)


@op_formula("conv_tbc")
def conv_tbc_flop(x: torch.Tensor, w: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """Time-batch-channel convolution: w (k, C_in, C_out); each output (T', B, C_out) element a k*C_in dot product."""
    k, c_in, _ = shape_of(w)
    return OpCost((Piece(2 * numel(out) * k * c_in, kind=Kind.CONV),))


# ---------------------------------------------------------------------------------------------
# Backward: what a count around loss.backward() reaches
# ---------------------------------------------------------------------------------------------


@op_formula("convolution_backward")
def conv_backward_flop(
    grad_out: torch.Tensor,
    x: torch.Tensor,
    w: torch.Tensor,
    bias_sizes: list[int] | None = None,
    stride: list[int] | None = None,
    padding: list[int] | None = None,
    dilation: list[int] | None = None,
    transposed: bool = False,
    output_padding: list[int] | None = None,
    groups: int = 1,
    output_mask: tuple[bool, bool, bool] | list[bool] = (True, True, True),
    *args: Any,
    out: Any = None,
    **kwargs: Any,
) -> OpCost:
    """Each multiply-add of the forward, x_i * w_j into out_k, gives one multiply-add to the input's gradient
    (grad_out_k * w_j, a transposed convolution) and one to the weight's (grad_out_k * x_i): forward FLOPs times the
    gradients asked for (output_mask: input, weight, bias; the bias gradient is a sum, not counted)."""
    forward = conv_flop(x, w, None, transposed=transposed, out=grad_out).flops
    return OpCost((Piece(forward * (bool(output_mask[0]) + bool(output_mask[1])), kind=Kind.CONV),))

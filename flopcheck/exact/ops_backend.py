"""Op formulas of backend kernels a model can call directly (convolutions, fused linears, low-bit and grouped
matmuls, attention on other backends) and of backward kernels, registered in flopcheck.exact.ops' one registry
(flopcheck.exact imports this module, so any count has them)."""

from __future__ import annotations

from typing import Any

import torch

from flopcheck.exact.cost import OpCost, Piece
from flopcheck.exact.ops import (
    addmm_flop,
    conv_flop,
    mha_parts,
    numel,
    one_cost,
    op_formula,
    sdpa_flop,
    shape_of,
    varlen_or_dense,
)
from flopcheck.exact.ops_products import fused_rnn_flop
from flopcheck.types import Kind

# ---------------------------------------------------------------------------------------------
# Backend kernels a model can call directly: convolutions, fused linears, low-bit and grouped matmuls
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


@op_formula("_addmm_activation", matmul=True)
def addmm_activation_flop(
    bias: torch.Tensor | None, a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """addmm with a fused GELU or ReLU: the matmul's 2*m*k*n; the activation is elementwise."""
    return addmm_flop(bias, a, b, out=out)


@op_formula(
    "mkldnn_linear",
    "_mixed_dtypes_linear",
    "_scaled_mm_v2",
    "_weight_int4pack_mm",
    "_weight_int4pack_mm_for_cpu",
    "_weight_int4pack_mm_with_scales_and_zeros",
    "_dyn_quant_matmul_4bit",
    "_sparse_semi_structured_linear",
    matmul=True,
)
def dense_output_mm_flop(a: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """A matmul whose weight is packed, quantized or scaled: each output element is a dot product over a's last
    axis, 2 * numel(out) * k (the weight's storage does not say its shape; the output does)."""
    return one_cost(2 * numel(out) * shape_of(a)[-1])


@op_formula("_grouped_mm", "_scaled_grouped_mm", matmul=True)
def grouped_mm_flop(a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """Grouped matmuls (mixture-of-experts): (M, K) rows each through one group's (K, N), 2*M*K*N; (G, M, K) @
    (G, K, N), 2*G*M*K*N; (M, K) @ (K, N) split over K into G groups (out (G, M, N)), 2*M*K*N."""
    k = shape_of(a)[-1]
    if len(shape_of(a)) == 2 and len(shape_of(b)) == 2:
        return one_cost(2 * numel(out) // shape_of(out)[0] * k)
    return one_cost(2 * numel(out) * k)


@op_formula("_scaled_dot_product_attention_math_for_mps", "_triton_scaled_dot_attention", attention=True)
def backend_sdpa_flop(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """A backend's SDPA on (b, h, t, e) inputs: as scaled_dot_product_attention."""
    return sdpa_flop(q, k, v)


@op_formula("_triton_multi_head_attention", attention=True)
def triton_mha_flop(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    embed_dim: int,
    *args: Any,
    out: Any = None,
    **kwargs: Any,
) -> OpCost:
    """Multi-head attention in one Triton kernel: as nn.MultiheadAttention's fast path."""
    return OpCost(tuple(mha_parts(query, key, embed_dim)))


@op_formula("_lstm_mps")
def mps_lstm_flop(
    x: torch.Tensor, hx: list[torch.Tensor], params: list[torch.Tensor], *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """A whole LSTM on MPS: as cuDNN's, every 2-D weight matrix times every step of every sample."""
    return fused_rnn_flop(x, params)


# ---------------------------------------------------------------------------------------------
# Backward kernels: what a count around loss.backward() reaches
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


def _attention_backward(forward: OpCost) -> OpCost:
    """The four matmuls of attention's backward: dQ = dS @ K and dK = dS^T @ Q (each the size of QK^T), dV = P^T @ dO
    and dP = dO @ V^T (each the size of attn@V): twice the forward, part for part."""
    return OpCost(tuple(Piece(2 * p.flops, p.kind, p.suffix) for p in forward.parts))


@op_formula(
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_cudnn_attention_backward",
    "_scaled_dot_product_fused_attention_overrideable_backward",
    attention=True,
)
def sdpa_backward_flop(
    grad_out: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *args: Any,
    out: Any = None,
    **kwargs: Any,
) -> OpCost:
    """SDPA kernels' backward on (b, h, t, e) inputs: twice the forward."""
    return _attention_backward(sdpa_flop(q, k, v))


@op_formula("_flash_attention_backward", "_efficient_attention_backward", attention=True)
def flash_backward_flop(
    grad_out: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    _fifth: Any,
    _sixth: Any,
    cu_q: torch.Tensor | None = None,
    cu_k: torch.Tensor | None = None,
    *args: Any,
    out: Any = None,
    **kwargs: Any,
) -> OpCost:
    """The low-level kernels' backward on (b, t, h, e) inputs (5th and 6th: output and log-sum-exp, or bias and
    output), offsets 7th and 8th: twice the forward."""
    return _attention_backward(varlen_or_dense(q, k, v, cu_q, cu_k))

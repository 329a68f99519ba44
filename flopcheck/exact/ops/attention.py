"""Op formulas of attention: fused SDPA kernels on every device, split into QK^T and attn@V, the low-level and
variable-length kernels, PyTorch's fused transformer fast paths, flex_attention, and their backward."""

from __future__ import annotations

from math import prod
from typing import Any

import torch

from flopcheck.exact.cost import OpCost, Piece
from flopcheck.exact.ops.registry import ATTENTION_OPS, FORMULAS, numel, op_formula, shape_of
from flopcheck.types import Kind


def _attention(b: int, h: int, tq: int, tk: int, e: int, ev: int) -> OpCost:
    """q (b, h, tq, e) @ k^T -> (b, h, tq, tk): 2*b*h*tq*tk*e; @ v (b, h, tk, ev): 2*b*h*tq*tk*ev.

    Masks (causal or not) are counted dense, as the matmuls they stand for; softmax is not counted.
    """
    return OpCost(
        (Piece(2 * b * h * tq * tk * e, Kind.ATTN_SCORE, "qk"), Piece(2 * b * h * tq * tk * ev, Kind.ATTN_VALUE, "av"))
    )


@op_formula(
    "scaled_dot_product_attention",
    "_scaled_dot_product_attention_math",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_fused_attention_overrideable",
)
def sdpa_flop(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """q (..., h, tq, e), k (..., h_kv, tk, e), v (..., h_kv, tk, ev); grouped k/v heads serve all h."""
    *lead, tq, e = shape_of(q)
    tk, ev = shape_of(k)[-2], shape_of(v)[-1]
    heads = prod(lead)  # batch * heads of q
    return _attention(1, heads, tq, tk, e, ev)


@op_formula("_scaled_dot_product_attention_math_for_mps", "_triton_scaled_dot_attention")
def backend_sdpa_flop(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """A backend's SDPA on (b, h, t, e) inputs: as scaled_dot_product_attention."""
    return sdpa_flop(q, k, v)


def varlen_or_dense(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_q: torch.Tensor | None, cu_k: torch.Tensor | None
) -> OpCost:
    """Low-level kernels take (b, t, h, e); a variable-length call (per-sequence offsets cu_q, cu_k over one packed
    batch of t tokens) attends within each sequence: sum_i lq_i * lk_i query-key pairs, not t^2."""
    if isinstance(cu_q, torch.Tensor) and isinstance(cu_k, torch.Tensor):
        if cu_q.device.type == "meta":
            raise NotImplementedError("variable-length attention on meta tensors: sequence lengths unknown")
        lq = (cu_q[1:] - cu_q[:-1]).tolist()
        lk = (cu_k[1:] - cu_k[:-1]).tolist()
        _, h, e = shape_of(q)[-3:]
        ev = shape_of(v)[-1]
        pairs = sum(a * b for a, b in zip(lq, lk))
        return _attention(1, h, 1, pairs, e, ev)
    b, tq, h, e = shape_of(q)
    tk, ev = shape_of(k)[1], shape_of(v)[-1]
    return _attention(b, h, tq, tk, e, ev)


@op_formula("_flash_attention_forward")
def flash_forward_flop(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cum_seq_q: torch.Tensor | None = None,
    cum_seq_k: torch.Tensor | None = None,
    *args: Any,
    out: Any = None,
    **kwargs: Any,
) -> OpCost:
    """(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, ...): offsets right after v."""
    return varlen_or_dense(q, k, v, cum_seq_q, cum_seq_k)


@op_formula("_flash_attention_forward_no_dropout_inplace")
def flash_forward_inplace_flop(
    out_arg: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cum_seq_q: torch.Tensor | None = None,
    cum_seq_k: torch.Tensor | None = None,
    *args: Any,
    out: Any = None,
    **kwargs: Any,
) -> OpCost:
    """(out, query, key, value, cum_seq_q, cum_seq_k, ...): the flash forward writing into a given tensor."""
    return varlen_or_dense(q, k, v, cum_seq_q, cum_seq_k)


@op_formula("_efficient_attention_forward")
def efficient_forward_flop(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    bias: torch.Tensor | None = None,
    cu_seqlens_q: torch.Tensor | None = None,
    cu_seqlens_k: torch.Tensor | None = None,
    *args: Any,
    out: Any = None,
    **kwargs: Any,
) -> OpCost:
    """(query, key, value, bias, cu_seqlens_q, cu_seqlens_k, ...): the offsets come after the bias."""
    return varlen_or_dense(q, k, v, cu_seqlens_q, cu_seqlens_k)


# ---------------------------------------------------------------------------------------------
# Fused fast paths: PyTorch's own transformer layers in eval under no_grad (CPU, CUDA), Triton's
# ---------------------------------------------------------------------------------------------


def mha_parts(query: torch.Tensor, key: torch.Tensor, embed_dim: int) -> list[Piece]:
    """In-projections, attention and out-projection of multi-head attention, batch-first (b, t, E) inputs.

    q: (b*tq, E) @ (E, E); k and v: (b*tk, E) @ (E, E) each (one (E, 3E) product when q, k, v are one tensor:
    the same multiply-adds); scores: h heads of (tq, E/h) @ (E/h, tk) = b*tq*tk*E multiply-adds; attn@V the
    same; out-projection (b*tq, E) @ (E, E).
    """
    if query.is_nested or key.is_nested:
        raise NotImplementedError("padded (nested) inputs: the tokens per sequence are not in the shapes")
    b, tq, e = shape_of(query)
    tk = shape_of(key)[1]
    return [
        Piece(2 * b * e * e * (tq + 2 * tk), Kind.LINEAR, "in_proj"),
        Piece(2 * b * tq * tk * e, Kind.ATTN_SCORE, "qk"),
        Piece(2 * b * tq * tk * e, Kind.ATTN_VALUE, "av"),
        Piece(2 * b * tq * e * e, Kind.LINEAR, "out_proj"),
    ]


@op_formula("_native_multi_head_attention")
def native_mha_flop(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    embed_dim: int,
    *args: Any,
    out: Any = None,
    **kwargs: Any,
) -> OpCost:
    """nn.MultiheadAttention's fast path: projections and attention in one kernel."""
    return OpCost(tuple(mha_parts(query, key, embed_dim)))


@op_formula("_transformer_encoder_layer_fwd")
def encoder_layer_flop(
    src: torch.Tensor,
    embed_dim: int,
    num_heads: int,
    qkv_weight: torch.Tensor,
    qkv_bias: torch.Tensor,
    proj_weight: torch.Tensor,
    proj_bias: torch.Tensor,
    use_gelu: bool,
    norm_first: bool,
    eps: float,
    nw1: torch.Tensor,
    nb1: torch.Tensor,
    nw2: torch.Tensor,
    nb2: torch.Tensor,
    ffn_weight_1: torch.Tensor,
    ffn_bias_1: torch.Tensor,
    ffn_weight_2: torch.Tensor,
    *args: Any,
    out: Any = None,
    **kwargs: Any,
) -> OpCost:
    """nn.TransformerEncoderLayer's fast path: self-attention, then the FFN (b*t, E) @ (E, F) @ (F, E)."""
    b, t, e = shape_of(src) if not src.is_nested else (0, 0, 0)
    ffn = 2 * b * t * numel(ffn_weight_1) + 2 * b * t * numel(ffn_weight_2)
    return OpCost((*mha_parts(src, src, embed_dim), Piece(ffn, Kind.LINEAR, "ffn")))


@op_formula("_triton_multi_head_attention")
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


# ---------------------------------------------------------------------------------------------
# Backward: twice the forward, part for part
# ---------------------------------------------------------------------------------------------


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


@op_formula("_flash_attention_backward", "_efficient_attention_backward")
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


# ---------------------------------------------------------------------------------------------
# flex_attention: a higher-order op
# ---------------------------------------------------------------------------------------------


def _register_flex_attention() -> None:
    """flex_attention is a higher-order op (no aten packet): q (b, h, tq, e), k and v (b, h_kv, tk, e|ev), counted as
    dense SDPA; a block mask's skipped blocks are counted too (the dense matmuls it stands for)."""
    try:
        from torch._higher_order_ops.flex_attention import flex_attention  # lazy: only some torch versions have it
    except ImportError:  # a torch without it: nothing to count
        return
    FORMULAS[flex_attention] = sdpa_flop
    ATTENTION_OPS.add(flex_attention)


_register_flex_attention()

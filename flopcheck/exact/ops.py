"""Op formulas: aten op -> FLOPs (2 per multiply-add) as a pure function of shapes.

A registry in the manner of torch.utils.flop_counter: one decorator, duplicates refused, one
formula serving several ops. A formula returns `OpCost`: the counted parts (attention splits into
QK^T and attn@V) and the elements of any bias add it did not count. Ops with no formula here are
not silently 0: the counter records them by category with the elements they touched.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import Any

import torch

from flopcheck.custom_ops import CUSTOM, register_custom  # noqa: F401  (register_custom: the plugins' door)
from flopcheck.exact.cost import OpCost, Piece
from flopcheck.types import Kind

aten = torch.ops.aten


Formula = Callable[..., OpCost]
FORMULAS: dict[object, Formula] = {}  # OpOverloadPacket -> formula(*args, out=..., **kwargs)
MATMUL_OPS: set[object] = set()  # ops that multiply two operands: candidates for attention scores/values
ATTENTION_OPS: set[object] = set()  # fused attention kernels: counted as QK^T + attn@V


def op_formula(*ops: str, matmul: bool = False, attention: bool = False) -> Callable[[Formula], Formula]:
    """Decorator: `fn` is the formula of every aten op named in `ops`; an op registers once."""

    def wrap(fn: Formula) -> Formula:
        for name in ops:
            packet = getattr(aten, name, None)
            if packet is None:  # an op this torch does not have: nothing to count
                continue
            if packet in FORMULAS:
                raise ValueError(f"{packet} already has a formula")
            FORMULAS[packet] = fn
            if matmul:
                MATMUL_OPS.add(packet)
            if attention:
                ATTENTION_OPS.add(packet)
        return fn

    return wrap


# Operators outside aten: their formulas live in flopcheck/custom_ops.py (a plugin's too)
def adopt(packet: Any) -> bool:
    """An operator outside aten with a custom formula joins FORMULAS the first time it is dispatched."""
    fn = CUSTOM.get(getattr(packet, "_qualified_op_name", ""))
    if fn is None:
        return False
    FORMULAS[packet] = fn
    return True


def shape_of(t: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(s) for s in t.shape)


def numel(t: torch.Tensor) -> int:
    return prod(shape_of(t))


def one_cost(flops: int, bias: int = 0) -> OpCost:
    return OpCost((Piece(flops),), bias_elements=bias)


# ---------------------------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------------------------


@op_formula("mm", matmul=True)
def mm_flop(a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """a (m, k) @ b (k, n) -> (m, n): 2*m*k*n."""
    (m, k), (_, n) = shape_of(a), shape_of(b)
    return one_cost(2 * m * k * n)


@op_formula("addmm", "addmm_", matmul=True)  # and in place
def addmm_flop(
    bias: torch.Tensor | None, a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """bias + a (m, k) @ b (k, n): 2*m*k*n; the m*n bias adds are not multiply-adds."""
    (m, k), (_, n) = shape_of(a), shape_of(b)
    return one_cost(2 * m * k * n, bias=m * n)


@op_formula("bmm", matmul=True)
def bmm_flop(a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """a (B, m, k) @ b (B, k, n) -> (B, m, n): 2*B*m*k*n."""
    (bs, m, k), (_, _, n) = shape_of(a), shape_of(b)
    return one_cost(2 * bs * m * k * n)


@op_formula("baddbmm", "baddbmm_", matmul=True)  # and in place
def baddbmm_flop(
    bias: torch.Tensor | None, a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """bias + a (B, m, k) @ b (B, k, n): 2*B*m*k*n, plus B*m*n uncounted adds."""
    (bs, m, k), (_, _, n) = shape_of(a), shape_of(b)
    return one_cost(2 * bs * m * k * n, bias=bs * m * n)


@op_formula("addbmm", "addbmm_", matmul=True)  # and in place
def addbmm_flop(
    bias: torch.Tensor | None, a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """bias + sum_b a_b (m, k) @ b_b (k, n): 2*B*m*k*n, plus m*n uncounted adds."""
    (bs, m, k), (_, _, n) = shape_of(a), shape_of(b)
    return one_cost(2 * bs * m * k * n, bias=m * n)


@op_formula("mv", matmul=True)
def mv_flop(a: torch.Tensor, v: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """a (m, n) @ v (n,) -> (m,): 2*m*n."""
    (m, n) = shape_of(a)
    return one_cost(2 * m * n)


@op_formula("addmv", "addmv_", matmul=True)  # and in place
def addmv_flop(
    bias: torch.Tensor | None, a: torch.Tensor, v: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """bias + a (m, n) @ v (n,): 2*m*n, plus m uncounted adds."""
    (m, n) = shape_of(a)
    return one_cost(2 * m * n, bias=m)


@op_formula("dot", "vdot", matmul=True)
def dot_flop(a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """a (n,) . b (n,): 2*n."""
    return one_cost(2 * numel(a))


@op_formula("matmul", matmul=True)
def matmul_flop(a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """a (..., m, k) @ b (..., k, n) -> out (..., m, n), broadcast: 2 * numel(out) * k."""
    k = shape_of(a)[-1]
    return one_cost(2 * numel(out) * k)


@op_formula("linear", matmul=True)
def linear_flop(
    x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """x (..., k) @ w^T (k, n) [+ bias]: 2 * numel(out) * k."""
    k = shape_of(w)[-1]
    return one_cost(2 * numel(out) * k, bias=numel(out) if bias is not None else 0)


@op_formula("einsum", matmul=True)
def einsum_flop(equation: str, operands: list[torch.Tensor], *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """Two operands: one multiply-add per point of the joint index space, 2 * prod(sizes); one: 0."""
    lhs = equation.replace(" ", "").split("->")[0].split(",")
    if len(operands) == 1:
        return one_cost(0)
    if len(operands) != 2:
        raise NotImplementedError("einsum with more than two operands has no formula")
    sizes = {c: s for sub, op in zip(lhs, operands) for c, s in zip(sub, shape_of(op))}
    return one_cost(2 * prod(sizes.values()))


# ---------------------------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------------------------


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
# Attention kernels: fused SDPA on every device, split into QK^T and attn@V
# ---------------------------------------------------------------------------------------------


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
    attention=True,
)
def sdpa_flop(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """q (..., h, tq, e), k (..., h_kv, tk, e), v (..., h_kv, tk, ev); grouped k/v heads serve all h."""
    *lead, tq, e = shape_of(q)
    tk, ev = shape_of(k)[-2], shape_of(v)[-1]
    heads = prod(lead)  # batch * heads of q
    return _attention(1, heads, tq, tk, e, ev)


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


@op_formula("_flash_attention_forward", attention=True)
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


@op_formula("_flash_attention_forward_no_dropout_inplace", attention=True)
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


@op_formula("_efficient_attention_forward", attention=True)
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
# Fused fast paths: PyTorch's own transformer layers in eval under no_grad (CPU, CUDA)
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


@op_formula("_native_multi_head_attention", attention=True)
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


@op_formula("_transformer_encoder_layer_fwd", attention=True)
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

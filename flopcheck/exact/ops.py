"""Op formulas: aten op -> FLOPs (2 per multiply-add) as a pure function of shapes.

A registry in the manner of torch.utils.flop_counter: one decorator, duplicates refused, one
formula serving several ops. A formula returns `OpCost`: the counted parts (attention splits into
QK^T and attn@V) and the elements of any bias add it did not count. Ops with no formula here are
not silently 0: the counter records them by category with the elements they touched.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
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


# ---------------------------------------------------------------------------------------------
# Recurrent kernels, bilinear, distances, outer products, quantized and scaled matmuls
# ---------------------------------------------------------------------------------------------


@op_formula("mkldnn_rnn_layer")
def mkldnn_rnn_layer_flop(
    x: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """One layer, one direction of an RNN on oneDNN (LSTM on CPU): every step multiplies the input by
    w_ih (G*H, in) and the state by w_hh (G*H, H): 2 * steps*batch * (numel(w_ih) + numel(w_hh))."""
    return one_cost(2 * (numel(x) // shape_of(x)[-1]) * (numel(w_ih) + numel(w_hh)))


@op_formula("_cudnn_rnn", "miopen_rnn")
def fused_rnn_flop(x: torch.Tensor, weights: list[torch.Tensor], *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """A whole RNN in one kernel (cuDNN, MIOpen): every 2-D weight matrix (w_ih, w_hh, w_hr per layer and direction)
    multiplies every step of every sample: 2 * steps*batch * sum(numel(W))."""
    steps_batch = numel(x) // shape_of(x)[-1]  # (T, B, in), (B, T, in), or a packed (sum of lengths, in)
    return one_cost(2 * steps_batch * sum(numel(w) for w in weights if w.dim() == 2))


@op_formula("_trilinear", matmul=True)
def trilinear_flop(
    i1: torch.Tensor,
    i2: torch.Tensor,
    i3: torch.Tensor,
    expand1: list[int],
    expand2: list[int],
    expand3: list[int],
    sumdim: list[int],
    *args: Any,
    out: Any = None,
    **kwargs: Any,
) -> OpCost:
    """nn.Bilinear's kernel: i1 x i2 contracted first over the summed dims i3 does not have (i1 (B, I) x W (K, I, J):
    B*K*I*J multiply-adds), then with i3 over the rest ((B, K, J) x (B, J): B*K*J), as the kernel computes it."""
    dims = len(shape_of(i1)) + len(expand1)
    s1, s2, s3 = (_expanded(t, e, dims) for t, e in ((i1, expand1), (i2, expand2), (i3, expand3)))
    first = [max(a, b) for a, b in zip(s1, s2)]
    kept = [1 if d in sumdim and s3[d] == 1 else n for d, n in enumerate(first)]
    return one_cost(2 * prod(first) + 2 * prod(max(a, b) for a, b in zip(kept, s3)))


def _expanded(t: torch.Tensor, unsqueezed: list[int], dims: int) -> list[int]:
    """The sizes of `t` with size-1 axes inserted at `unsqueezed`, as _trilinear expands its operands."""
    sizes = iter(shape_of(t))
    return [1 if d in unsqueezed else next(sizes) for d in range(dims)]


def _pairwise(flops: int) -> OpCost:
    """A distance between activations: a product of two activations, as a free matmul is."""
    return OpCost((Piece(flops, Kind.MATMUL),))


@op_formula("_euclidean_dist")
def euclidean_dist_flop(x1: torch.Tensor, x2: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """cdist's matmul path: [-2*x1, |x1|^2, 1] (P, M+2) @ [x2, 1, |x2|^2]^T (M+2, R) per batch: 2*B*P*R*(M+2)."""
    *lead, p, m = shape_of(x1)
    return _pairwise(2 * prod(lead) * p * shape_of(x2)[-2] * (m + 2))


@op_formula("_cdist_forward")
def cdist_forward_flop(x1: torch.Tensor, x2: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """cdist's direct path: every pair's M-long difference, raised and summed: one multiply-add per element,
    2*B*P*R*M."""
    *lead, p, m = shape_of(x1)
    return _pairwise(2 * prod(lead) * p * shape_of(x2)[-2] * m)


@op_formula("_pdist_forward")
def pdist_forward_flop(x: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """pdist: the N(N-1)/2 pairs of rows of x (N, M), one multiply-add per element of each pair's difference."""
    n, m = shape_of(x)
    return _pairwise(2 * (n * (n - 1) // 2) * m)


def _geqrf(m: int, n: int) -> Fraction:
    """Householder QR of an (m, n) matrix, multiplications plus additions (LAPACK Working Note 41's xGEQRF)."""
    if m > n:
        return Fraction(n * (n * (3 - 2 * n + 6 * m) + 6 * m + 23) + n * (n * (3 - 2 * n + 6 * m) + 5), 6)
    return Fraction(m * (m * (-3 - 2 * m + 6 * n) + 12 * n + 23) + m * (m * (-3 - 2 * m + 6 * n) + 6 * n + 5), 6)


def _orgqr(m: int, n: int, k: int) -> Fraction:
    """Forming Q's first n columns (m, n) from k reflectors, multiplications plus additions (LAWN 41's xORGQR)."""
    muls = k * (6 * m * n + 6 * n - 5 + k * (2 * k - 3 * (m + n) - 3))
    adds = k * (6 * m * n + 3 * n - 3 * m + 1 + k * (2 * k - 3 * (m + n)))
    return Fraction(muls + adds, 3)


@op_formula("linalg_qr")
def linalg_qr_flop(a: torch.Tensor, mode: str = "reduced", *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """A (..., m, n) = QR, k = min(m, n): the factorization's operations (xGEQRF), plus forming Q (xORGQR: m x k
    'reduced', m x m 'complete', none for 'r'), per matrix, LAPACK Working Note 41's counts (whole numbers; each is
    a FLOP, no MAC pairing)."""
    *lead, m, n = shape_of(a)
    k = min(m, n)
    q = {"reduced": _orgqr(m, k, k), "complete": _orgqr(m, m, k), "r": Fraction(0)}[mode]
    total = _geqrf(m, n) + q
    return one_cost(prod(lead) * int(total))


@op_formula("addr", "addr_", matmul=True)  # and in place
def addr_flop(
    bias: torch.Tensor | None, v1: torch.Tensor, v2: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """bias + v1 (m,) outer v2 (n,): m*n products (a (m, 1) @ (1, n) matmul), plus m*n uncounted adds."""
    m, n = numel(v1), numel(v2)
    return one_cost(2 * m * n, bias=m * n)


@op_formula("_scaled_mm", "_int_mm", matmul=True)
def scaled_mm_flop(a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """FP8 (scales per tensor or row) and int8 matmuls: a (m, k) @ b (k, n), 2*m*k*n; the scaling is elementwise."""
    (m, k), (_, n) = shape_of(a), shape_of(b)
    return one_cost(2 * m * k * n)


@op_formula("_weight_int8pack_mm", matmul=True)
def int8pack_mm_flop(a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any) -> OpCost:
    """Weight-only int8: a (m, k) @ b^T, b (n, k) stored row-major: 2*m*k*n."""
    (m, k), (n, _) = shape_of(a), shape_of(b)
    return one_cost(2 * m * k * n)


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

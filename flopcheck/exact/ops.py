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

import torch

from flopcheck.custom_ops import CUSTOM, register_custom  # noqa: F401  (register_custom: the plugins' door)
from flopcheck.exact.cost import OpCost, Piece
from flopcheck.types import Kind

aten = torch.ops.aten


Formula = Callable[..., OpCost]
FORMULAS: dict[object, Formula] = {}  # OpOverloadPacket -> formula(*args, out=..., **kwargs)
MATMUL_OPS: set[object] = set()  # ops that multiply two operands: candidates for attention scores/values
ATTENTION_OPS: set[object] = set()  # fused attention kernels: counted as QK^T + attn@V


def op_formula(*ops: str, matmul: bool = False, attention: bool = False):
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
def adopt(packet) -> bool:
    """An operator outside aten with a custom formula joins FORMULAS the first time it is dispatched."""
    fn = CUSTOM.get(getattr(packet, "_qualified_op_name", ""))
    if fn is None:
        return False
    FORMULAS[packet] = fn
    return True


def _shape(t) -> tuple[int, ...]:
    return tuple(int(s) for s in t.shape)


def _numel(t) -> int:
    return prod(_shape(t))


def _one(flops: int, bias: int = 0) -> OpCost:
    return OpCost((Piece(flops),), bias_elements=bias)


# ---------------------------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------------------------


@op_formula("mm", matmul=True)
def mm_flop(a, b, *args, out=None, **kwargs) -> OpCost:
    """a (m, k) @ b (k, n) -> (m, n): 2*m*k*n."""
    (m, k), (_, n) = _shape(a), _shape(b)
    return _one(2 * m * k * n)


@op_formula("addmm", "addmm_", matmul=True)  # and in place
def addmm_flop(bias, a, b, *args, out=None, **kwargs) -> OpCost:
    """bias + a (m, k) @ b (k, n): 2*m*k*n; the m*n bias adds are not multiply-adds."""
    (m, k), (_, n) = _shape(a), _shape(b)
    return _one(2 * m * k * n, bias=m * n)


@op_formula("bmm", matmul=True)
def bmm_flop(a, b, *args, out=None, **kwargs) -> OpCost:
    """a (B, m, k) @ b (B, k, n) -> (B, m, n): 2*B*m*k*n."""
    (bs, m, k), (_, _, n) = _shape(a), _shape(b)
    return _one(2 * bs * m * k * n)


@op_formula("baddbmm", "baddbmm_", matmul=True)  # and in place
def baddbmm_flop(bias, a, b, *args, out=None, **kwargs) -> OpCost:
    """bias + a (B, m, k) @ b (B, k, n): 2*B*m*k*n, plus B*m*n uncounted adds."""
    (bs, m, k), (_, _, n) = _shape(a), _shape(b)
    return _one(2 * bs * m * k * n, bias=bs * m * n)


@op_formula("addbmm", "addbmm_", matmul=True)  # and in place
def addbmm_flop(bias, a, b, *args, out=None, **kwargs) -> OpCost:
    """bias + sum_b a_b (m, k) @ b_b (k, n): 2*B*m*k*n, plus m*n uncounted adds."""
    (bs, m, k), (_, _, n) = _shape(a), _shape(b)
    return _one(2 * bs * m * k * n, bias=m * n)


@op_formula("mv", matmul=True)
def mv_flop(a, v, *args, out=None, **kwargs) -> OpCost:
    """a (m, n) @ v (n,) -> (m,): 2*m*n."""
    (m, n) = _shape(a)
    return _one(2 * m * n)


@op_formula("addmv", "addmv_", matmul=True)  # and in place
def addmv_flop(bias, a, v, *args, out=None, **kwargs) -> OpCost:
    """bias + a (m, n) @ v (n,): 2*m*n, plus m uncounted adds."""
    (m, n) = _shape(a)
    return _one(2 * m * n, bias=m)


@op_formula("dot", "vdot", matmul=True)
def dot_flop(a, b, *args, out=None, **kwargs) -> OpCost:
    """a (n,) . b (n,): 2*n."""
    return _one(2 * _numel(a))


@op_formula("matmul", matmul=True)
def matmul_flop(a, b, *args, out=None, **kwargs) -> OpCost:
    """a (..., m, k) @ b (..., k, n) -> out (..., m, n), broadcast: 2 * numel(out) * k."""
    k = _shape(a)[-1]
    return _one(2 * _numel(out) * k)


@op_formula("linear", matmul=True)
def linear_flop(x, w, bias=None, *args, out=None, **kwargs) -> OpCost:
    """x (..., k) @ w^T (k, n) [+ bias]: 2 * numel(out) * k."""
    k = _shape(w)[-1]
    return _one(2 * _numel(out) * k, bias=_numel(out) if bias is not None else 0)


@op_formula("einsum", matmul=True)
def einsum_flop(equation, operands, *args, out=None, **kwargs) -> OpCost:
    """Two operands: one multiply-add per point of the joint index space, 2 * prod(sizes); one: 0."""
    lhs = equation.replace(" ", "").split("->")[0].split(",")
    if len(operands) == 1:
        return _one(0)
    if len(operands) != 2:
        raise NotImplementedError("einsum with more than two operands has no formula")
    sizes = {c: s for sub, op in zip(lhs, operands) for c, s in zip(sub, _shape(op))}
    return _one(2 * prod(sizes.values()))


# ---------------------------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------------------------


@op_formula("convolution", "_convolution", "convolution_overrideable")
def conv_flop(
    x, w, bias=None, stride=None, padding=None, dilation=None, transposed=False, *args, out=None, **kwargs
) -> OpCost:
    """Each output (input, if transposed) element is a (C_in/groups * prod(kernel))-long dot product.

    w: (C_out, C_in/groups, *kernel), or (C_in, C_out/groups, *kernel) transposed.
    FLOPs = 2 * numel(out) * C_in/groups * prod(kernel); transposed: 2 * numel(x) * C_out/groups * prod(kernel).
    """
    per_point = prod(_shape(w)[1:])
    points = _numel(x) if transposed else _numel(out)
    return OpCost(
        (Piece(2 * points * per_point, kind=Kind.CONV),), bias_elements=_numel(out) if bias is not None else 0
    )


@op_formula("cudnn_convolution")
def cudnn_conv_flop(x, w, *args, out=None, **kwargs) -> OpCost:
    """cuDNN's forward convolution takes no bias."""
    return conv_flop(x, w, None, out=out)


@op_formula("cudnn_convolution_transpose")
def cudnn_conv_transpose_flop(x, w, *args, out=None, **kwargs) -> OpCost:
    """cuDNN's transposed convolution takes no bias."""
    return conv_flop(x, w, None, transposed=True, out=out)


@op_formula("mkldnn_convolution")
def mkldnn_conv_flop(x, w, bias=None, *args, out=None, **kwargs) -> OpCost:
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
def sdpa_flop(q, k, v, *args, out=None, **kwargs) -> OpCost:
    """q (..., h, tq, e), k (..., h_kv, tk, e), v (..., h_kv, tk, ev); grouped k/v heads serve all h."""
    *lead, tq, e = _shape(q)
    tk, ev = _shape(k)[-2], _shape(v)[-1]
    heads = prod(lead)  # batch * heads of q
    return _attention(1, heads, tq, tk, e, ev)


def _varlen_or_dense(q, k, v, cu_q, cu_k) -> OpCost:
    """Low-level kernels take (b, t, h, e); a variable-length call (per-sequence offsets cu_q, cu_k over one packed
    batch of t tokens) attends within each sequence: sum_i lq_i * lk_i query-key pairs, not t^2."""
    if isinstance(cu_q, torch.Tensor) and isinstance(cu_k, torch.Tensor):
        if cu_q.device.type == "meta":
            raise NotImplementedError("variable-length attention on meta tensors: sequence lengths unknown")
        lq = (cu_q[1:] - cu_q[:-1]).tolist()
        lk = (cu_k[1:] - cu_k[:-1]).tolist()
        _, h, e = _shape(q)[-3:]
        ev = _shape(v)[-1]
        pairs = sum(a * b for a, b in zip(lq, lk))
        return _attention(1, h, 1, pairs, e, ev)
    b, tq, h, e = _shape(q)
    tk, ev = _shape(k)[1], _shape(v)[-1]
    return _attention(b, h, tq, tk, e, ev)


@op_formula("_flash_attention_forward", attention=True)
def flash_forward_flop(q, k, v, cum_seq_q=None, cum_seq_k=None, *args, out=None, **kwargs) -> OpCost:
    """(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, ...): offsets right after v."""
    return _varlen_or_dense(q, k, v, cum_seq_q, cum_seq_k)


@op_formula("_flash_attention_forward_no_dropout_inplace", attention=True)
def flash_forward_inplace_flop(out_arg, q, k, v, cum_seq_q=None, cum_seq_k=None, *args, out=None, **kwargs) -> OpCost:
    """(out, query, key, value, cum_seq_q, cum_seq_k, ...): the flash forward writing into a given tensor."""
    return _varlen_or_dense(q, k, v, cum_seq_q, cum_seq_k)


@op_formula("_efficient_attention_forward", attention=True)
def efficient_forward_flop(
    q, k, v, bias=None, cu_seqlens_q=None, cu_seqlens_k=None, *args, out=None, **kwargs
) -> OpCost:
    """(query, key, value, bias, cu_seqlens_q, cu_seqlens_k, ...): the offsets come after the bias."""
    return _varlen_or_dense(q, k, v, cu_seqlens_q, cu_seqlens_k)


# ---------------------------------------------------------------------------------------------
# Fused fast paths: PyTorch's own transformer layers in eval under no_grad (CPU, CUDA)
# ---------------------------------------------------------------------------------------------


def _mha_parts(query, key, embed_dim: int) -> list[Piece]:
    """In-projections, attention and out-projection of multi-head attention, batch-first (b, t, E) inputs.

    q: (b*tq, E) @ (E, E); k and v: (b*tk, E) @ (E, E) each (one (E, 3E) product when q, k, v are one tensor:
    the same multiply-adds); scores: h heads of (tq, E/h) @ (E/h, tk) = b*tq*tk*E multiply-adds; attn@V the
    same; out-projection (b*tq, E) @ (E, E).
    """
    if query.is_nested or key.is_nested:
        raise NotImplementedError("padded (nested) inputs: the tokens per sequence are not in the shapes")
    b, tq, e = _shape(query)
    tk = _shape(key)[1]
    return [
        Piece(2 * b * e * e * (tq + 2 * tk), Kind.LINEAR, "in_proj"),
        Piece(2 * b * tq * tk * e, Kind.ATTN_SCORE, "qk"),
        Piece(2 * b * tq * tk * e, Kind.ATTN_VALUE, "av"),
        Piece(2 * b * tq * e * e, Kind.LINEAR, "out_proj"),
    ]


@op_formula("_native_multi_head_attention", attention=True)
def native_mha_flop(query, key, value, embed_dim, *args, out=None, **kwargs) -> OpCost:
    """nn.MultiheadAttention's fast path: projections and attention in one kernel."""
    return OpCost(tuple(_mha_parts(query, key, embed_dim)))


@op_formula("_transformer_encoder_layer_fwd", attention=True)
def encoder_layer_flop(
    src,
    embed_dim,
    num_heads,
    qkv_weight,
    qkv_bias,
    proj_weight,
    proj_bias,
    use_gelu,
    norm_first,
    eps,
    nw1,
    nb1,
    nw2,
    nb2,
    ffn_weight_1,
    ffn_bias_1,
    ffn_weight_2,
    *args,
    out=None,
    **kwargs,
) -> OpCost:
    """nn.TransformerEncoderLayer's fast path: self-attention, then the FFN (b*t, E) @ (E, F) @ (F, E)."""
    b, t, e = _shape(src) if not src.is_nested else (0, 0, 0)
    ffn = 2 * b * t * _numel(ffn_weight_1) + 2 * b * t * _numel(ffn_weight_2)
    return OpCost((*_mha_parts(src, src, embed_dim), Piece(ffn, Kind.LINEAR, "ffn")))


# ---------------------------------------------------------------------------------------------
# Recurrent kernels, bilinear, distances, outer products, quantized and scaled matmuls
# ---------------------------------------------------------------------------------------------


@op_formula("mkldnn_rnn_layer")
def mkldnn_rnn_layer_flop(x, w_ih, w_hh, *args, out=None, **kwargs) -> OpCost:
    """One layer, one direction of an RNN on oneDNN (LSTM on CPU): every step multiplies the input by
    w_ih (G*H, in) and the state by w_hh (G*H, H): 2 * steps*batch * (numel(w_ih) + numel(w_hh))."""
    return _one(2 * (_numel(x) // _shape(x)[-1]) * (_numel(w_ih) + _numel(w_hh)))


@op_formula("_cudnn_rnn", "miopen_rnn")
def fused_rnn_flop(x, weights, *args, out=None, **kwargs) -> OpCost:
    """A whole RNN in one kernel (cuDNN, MIOpen): every 2-D weight matrix (w_ih, w_hh, w_hr per layer and direction)
    multiplies every step of every sample: 2 * steps*batch * sum(numel(W))."""
    steps_batch = _numel(x) // _shape(x)[-1]  # (T, B, in), (B, T, in), or a packed (sum of lengths, in)
    return _one(2 * steps_batch * sum(_numel(w) for w in weights if w.dim() == 2))


@op_formula("_trilinear", matmul=True)
def trilinear_flop(i1, i2, i3, expand1, expand2, expand3, sumdim, *args, out=None, **kwargs) -> OpCost:
    """nn.Bilinear's kernel: i1 x i2 contracted first over the summed dims i3 does not have (i1 (B, I) x W (K, I, J):
    B*K*I*J multiply-adds), then with i3 over the rest ((B, K, J) x (B, J): B*K*J), as the kernel computes it."""
    dims = len(_shape(i1)) + len(expand1)
    s1, s2, s3 = (_expanded(t, e, dims) for t, e in ((i1, expand1), (i2, expand2), (i3, expand3)))
    first = [max(a, b) for a, b in zip(s1, s2)]
    kept = [1 if d in sumdim and s3[d] == 1 else n for d, n in enumerate(first)]
    return _one(2 * prod(first) + 2 * prod(max(a, b) for a, b in zip(kept, s3)))


def _expanded(t, unsqueezed: list[int], dims: int) -> list[int]:
    """The sizes of `t` with size-1 axes inserted at `unsqueezed`, as _trilinear expands its operands."""
    sizes = iter(_shape(t))
    return [1 if d in unsqueezed else next(sizes) for d in range(dims)]


def _pairwise(flops: int) -> OpCost:
    """A distance between activations: a product of two activations, as a free matmul is."""
    return OpCost((Piece(flops, Kind.MATMUL),))


@op_formula("_euclidean_dist")
def euclidean_dist_flop(x1, x2, *args, out=None, **kwargs) -> OpCost:
    """cdist's matmul path: [-2*x1, |x1|^2, 1] (P, M+2) @ [x2, 1, |x2|^2]^T (M+2, R) per batch: 2*B*P*R*(M+2)."""
    *lead, p, m = _shape(x1)
    return _pairwise(2 * prod(lead) * p * _shape(x2)[-2] * (m + 2))


@op_formula("_cdist_forward")
def cdist_forward_flop(x1, x2, *args, out=None, **kwargs) -> OpCost:
    """cdist's direct path: every pair's M-long difference, raised and summed: one multiply-add per element,
    2*B*P*R*M."""
    *lead, p, m = _shape(x1)
    return _pairwise(2 * prod(lead) * p * _shape(x2)[-2] * m)


@op_formula("_pdist_forward")
def pdist_forward_flop(x, *args, out=None, **kwargs) -> OpCost:
    """pdist: the N(N-1)/2 pairs of rows of x (N, M), one multiply-add per element of each pair's difference."""
    n, m = _shape(x)
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
def linalg_qr_flop(a, mode="reduced", *args, out=None, **kwargs) -> OpCost:
    """A (..., m, n) = QR, k = min(m, n): the factorization's operations (xGEQRF), plus forming Q (xORGQR: m x k
    'reduced', m x m 'complete', none for 'r'), per matrix, LAPACK Working Note 41's counts (whole numbers; each is
    a FLOP, no MAC pairing)."""
    *lead, m, n = _shape(a)
    k = min(m, n)
    q = {"reduced": _orgqr(m, k, k), "complete": _orgqr(m, m, k), "r": Fraction(0)}[mode]
    total = _geqrf(m, n) + q
    return _one(prod(lead) * int(total))


@op_formula("addr", "addr_", matmul=True)  # and in place
def addr_flop(bias, v1, v2, *args, out=None, **kwargs) -> OpCost:
    """bias + v1 (m,) outer v2 (n,): m*n products (a (m, 1) @ (1, n) matmul), plus m*n uncounted adds."""
    m, n = _numel(v1), _numel(v2)
    return _one(2 * m * n, bias=m * n)


@op_formula("_scaled_mm", "_int_mm", matmul=True)
def scaled_mm_flop(a, b, *args, out=None, **kwargs) -> OpCost:
    """FP8 (scales per tensor or row) and int8 matmuls: a (m, k) @ b (k, n), 2*m*k*n; the scaling is elementwise."""
    (m, k), (_, n) = _shape(a), _shape(b)
    return _one(2 * m * k * n)


@op_formula("_weight_int8pack_mm", matmul=True)
def int8pack_mm_flop(a, b, *args, out=None, **kwargs) -> OpCost:
    """Weight-only int8: a (m, k) @ b^T, b (n, k) stored row-major: 2*m*k*n."""
    (m, k), (n, _) = _shape(a), _shape(b)
    return _one(2 * m * k * n)


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
def backend_conv_flop(x, w, *args, out=None, **kwargs) -> OpCost:
    """A backend's forward convolution (x, weight, ...): as `convolution`, 2*numel(out)*C_in/groups*prod(kernel)."""
    return conv_flop(x, w, None, out=out)


@op_formula(
    "slow_conv_transpose2d", "slow_conv_transpose3d", "miopen_convolution_transpose", "_mps_convolution_transpose"
)
def backend_conv_transpose_flop(x, w, *args, out=None, **kwargs) -> OpCost:
    """A backend's transposed convolution: 2 * numel(x) * C_out/groups * prod(kernel)."""
    return conv_flop(x, w, None, transposed=True, out=out)


@op_formula("conv_tbc")
def conv_tbc_flop(x, w, *args, out=None, **kwargs) -> OpCost:
    """Time-batch-channel convolution: w (k, C_in, C_out); each output (T', B, C_out) element a k*C_in dot product."""
    k, c_in, _ = _shape(w)
    return OpCost((Piece(2 * _numel(out) * k * c_in, kind=Kind.CONV),))


@op_formula("_addmm_activation", matmul=True)
def addmm_activation_flop(bias, a, b, *args, out=None, **kwargs) -> OpCost:
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
def dense_output_mm_flop(a, *args, out=None, **kwargs) -> OpCost:
    """A matmul whose weight is packed, quantized or scaled: each output element is a dot product over a's last
    axis, 2 * numel(out) * k (the weight's storage does not say its shape; the output does)."""
    return _one(2 * _numel(out) * _shape(a)[-1])


@op_formula("_grouped_mm", "_scaled_grouped_mm", matmul=True)
def grouped_mm_flop(a, b, *args, out=None, **kwargs) -> OpCost:
    """Grouped matmuls (mixture-of-experts): (M, K) rows each through one group's (K, N), 2*M*K*N; (G, M, K) @
    (G, K, N), 2*G*M*K*N; (M, K) @ (K, N) split over K into G groups (out (G, M, N)), 2*M*K*N."""
    k = _shape(a)[-1]
    if len(_shape(a)) == 2 and len(_shape(b)) == 2:
        return _one(2 * _numel(out) // _shape(out)[0] * k)
    return _one(2 * _numel(out) * k)


@op_formula("_scaled_dot_product_attention_math_for_mps", "_triton_scaled_dot_attention", attention=True)
def backend_sdpa_flop(q, k, v, *args, out=None, **kwargs) -> OpCost:
    """A backend's SDPA on (b, h, t, e) inputs: as scaled_dot_product_attention."""
    return sdpa_flop(q, k, v)


@op_formula("_triton_multi_head_attention", attention=True)
def triton_mha_flop(query, key, value, embed_dim, *args, out=None, **kwargs) -> OpCost:
    """Multi-head attention in one Triton kernel: as nn.MultiheadAttention's fast path."""
    return OpCost(tuple(_mha_parts(query, key, embed_dim)))


@op_formula("_lstm_mps")
def mps_lstm_flop(x, hx, params, *args, out=None, **kwargs) -> OpCost:
    """A whole LSTM on MPS: as cuDNN's, every 2-D weight matrix times every step of every sample."""
    return fused_rnn_flop(x, params)


# ---------------------------------------------------------------------------------------------
# Backward kernels: what a count around loss.backward() reaches
# ---------------------------------------------------------------------------------------------


@op_formula("convolution_backward")
def conv_backward_flop(
    grad_out,
    x,
    w,
    bias_sizes=None,
    stride=None,
    padding=None,
    dilation=None,
    transposed=False,
    output_padding=None,
    groups=1,
    output_mask=(True, True, True),
    *args,
    out=None,
    **kwargs,
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
def sdpa_backward_flop(grad_out, q, k, v, *args, out=None, **kwargs) -> OpCost:
    """SDPA kernels' backward on (b, h, t, e) inputs: twice the forward."""
    return _attention_backward(sdpa_flop(q, k, v))


@op_formula("_flash_attention_backward", "_efficient_attention_backward", attention=True)
def flash_backward_flop(grad_out, q, k, v, _fifth, _sixth, cu_q=None, cu_k=None, *args, out=None, **kwargs) -> OpCost:
    """The low-level kernels' backward on (b, t, h, e) inputs (5th and 6th: output and log-sum-exp, or bias and
    output), offsets 7th and 8th: twice the forward."""
    return _attention_backward(_varlen_or_dense(q, k, v, cu_q, cu_k))


def _register_flex_attention() -> None:
    """flex_attention is a higher-order op (no aten packet): q (b, h, tq, e), k and v (b, h_kv, tk, e|ev), counted as
    dense SDPA; a block mask's skipped blocks are counted too (the dense matmuls it stands for)."""
    try:
        from torch._higher_order_ops.flex_attention import flex_attention
    except ImportError:  # a torch without it: nothing to count
        return
    FORMULAS[flex_attention] = sdpa_flop
    ATTENTION_OPS.add(flex_attention)


_register_flex_attention()

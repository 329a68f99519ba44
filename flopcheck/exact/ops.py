"""Op formulas: aten op -> FLOPs (2 per multiply-add) as a pure function of shapes.

A registry in the manner of torch.utils.flop_counter: one decorator, duplicates refused, one
formula serving several ops. A formula returns `Parts`: the counted parts (attention splits into
QK^T and attn@V) and the elements of any bias add it did not count. Ops with no formula here are
not silently 0: the counter records them by category with the elements they touched.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Callable

import torch

from flopcheck.types import Kind

aten = torch.ops.aten


@dataclass(frozen=True)
class Part:
    """One counted piece of an op: `suffix` names it under the module path ('qk'), kind None = the layer's."""

    flops: int
    kind: Kind | None = None
    suffix: str = ""


@dataclass(frozen=True)
class Parts:
    """What one op call costs: counted parts, plus uncounted bias-add elements."""

    parts: tuple[Part, ...]
    bias_elements: int = 0

    @property
    def flops(self) -> int:
        """Counted FLOPs of the call."""
        return sum(p.flops for p in self.parts)


Formula = Callable[..., Parts]
FORMULAS: dict[object, Formula] = {}  # OpOverloadPacket -> formula(*args, out=..., **kwargs)
MATMUL_OPS: set[object] = set()  # ops that multiply two operands: candidates for attention scores/values
ATTENTION_OPS: set[object] = set()  # fused attention kernels: counted as QK^T + attn@V


def register(*ops: str, matmul: bool = False, attention: bool = False):
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


def _shape(t) -> tuple[int, ...]:
    return tuple(int(s) for s in t.shape)


def _numel(t) -> int:
    return prod(_shape(t))


def _one(flops: int, bias: int = 0) -> Parts:
    return Parts((Part(flops),), bias_elements=bias)


# ---------------------------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------------------------


@register("mm", matmul=True)
def mm_flop(a, b, *args, out=None, **kwargs) -> Parts:
    """a (m, k) @ b (k, n) -> (m, n): 2*m*k*n."""
    (m, k), (_, n) = _shape(a), _shape(b)
    return _one(2 * m * k * n)


@register("addmm", matmul=True)
def addmm_flop(bias, a, b, *args, out=None, **kwargs) -> Parts:
    """bias + a (m, k) @ b (k, n): 2*m*k*n; the m*n bias adds are not multiply-adds."""
    (m, k), (_, n) = _shape(a), _shape(b)
    return _one(2 * m * k * n, bias=m * n)


@register("bmm", matmul=True)
def bmm_flop(a, b, *args, out=None, **kwargs) -> Parts:
    """a (B, m, k) @ b (B, k, n) -> (B, m, n): 2*B*m*k*n."""
    (bs, m, k), (_, _, n) = _shape(a), _shape(b)
    return _one(2 * bs * m * k * n)


@register("baddbmm", matmul=True)
def baddbmm_flop(bias, a, b, *args, out=None, **kwargs) -> Parts:
    """bias + a (B, m, k) @ b (B, k, n): 2*B*m*k*n, plus B*m*n uncounted adds."""
    (bs, m, k), (_, _, n) = _shape(a), _shape(b)
    return _one(2 * bs * m * k * n, bias=bs * m * n)


@register("addbmm", matmul=True)
def addbmm_flop(bias, a, b, *args, out=None, **kwargs) -> Parts:
    """bias + sum_b a_b (m, k) @ b_b (k, n): 2*B*m*k*n, plus m*n uncounted adds."""
    (bs, m, k), (_, _, n) = _shape(a), _shape(b)
    return _one(2 * bs * m * k * n, bias=m * n)


@register("mv", matmul=True)
def mv_flop(a, v, *args, out=None, **kwargs) -> Parts:
    """a (m, n) @ v (n,) -> (m,): 2*m*n."""
    (m, n) = _shape(a)
    return _one(2 * m * n)


@register("addmv", matmul=True)
def addmv_flop(bias, a, v, *args, out=None, **kwargs) -> Parts:
    """bias + a (m, n) @ v (n,): 2*m*n, plus m uncounted adds."""
    (m, n) = _shape(a)
    return _one(2 * m * n, bias=m)


@register("dot", "vdot", matmul=True)
def dot_flop(a, b, *args, out=None, **kwargs) -> Parts:
    """a (n,) . b (n,): 2*n."""
    return _one(2 * _numel(a))


@register("matmul", matmul=True)
def matmul_flop(a, b, *args, out=None, **kwargs) -> Parts:
    """a (..., m, k) @ b (..., k, n) -> out (..., m, n), broadcast: 2 * numel(out) * k."""
    k = _shape(a)[-1]
    return _one(2 * _numel(out) * k)


@register("linear", matmul=True)
def linear_flop(x, w, bias=None, *args, out=None, **kwargs) -> Parts:
    """x (..., k) @ w^T (k, n) [+ bias]: 2 * numel(out) * k."""
    k = _shape(w)[-1]
    return _one(2 * _numel(out) * k, bias=_numel(out) if bias is not None else 0)


@register("einsum", matmul=True)
def einsum_flop(equation, operands, *args, out=None, **kwargs) -> Parts:
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


@register("convolution", "_convolution", "convolution_overrideable")
def conv_flop(x, w, bias=None, stride=None, padding=None, dilation=None, transposed=False, *args, out=None,
              **kwargs) -> Parts:
    """Each output (input, if transposed) element is a (C_in/groups * prod(kernel))-long dot product.

    w: (C_out, C_in/groups, *kernel), or (C_in, C_out/groups, *kernel) transposed.
    FLOPs = 2 * numel(out) * C_in/groups * prod(kernel); transposed: 2 * numel(x) * C_out/groups * prod(kernel).
    """
    per_point = prod(_shape(w)[1:])
    points = _numel(x) if transposed else _numel(out)
    return Parts((Part(2 * points * per_point, kind=Kind.CONV),), bias_elements=_numel(out) if bias is not None else 0)


@register("cudnn_convolution")
def cudnn_conv_flop(x, w, *args, out=None, **kwargs) -> Parts:
    """cuDNN's forward convolution takes no bias."""
    return conv_flop(x, w, None, out=out)


@register("cudnn_convolution_transpose")
def cudnn_conv_transpose_flop(x, w, *args, out=None, **kwargs) -> Parts:
    """cuDNN's transposed convolution takes no bias."""
    return conv_flop(x, w, None, transposed=True, out=out)


@register("mkldnn_convolution")
def mkldnn_conv_flop(x, w, bias=None, *args, out=None, **kwargs) -> Parts:
    """oneDNN's forward convolution: (input, weight, bias, padding, stride, dilation, groups)."""
    return conv_flop(x, w, bias, out=out)


# ---------------------------------------------------------------------------------------------
# Attention kernels: fused SDPA on every device, split into QK^T and attn@V
# ---------------------------------------------------------------------------------------------


def _attention(b: int, h: int, tq: int, tk: int, e: int, ev: int) -> Parts:
    """q (b, h, tq, e) @ k^T -> (b, h, tq, tk): 2*b*h*tq*tk*e; @ v (b, h, tk, ev): 2*b*h*tq*tk*ev.

    Masks (causal or not) are counted dense, as the matmuls they stand for; softmax is not counted.
    """
    return Parts((
        Part(2 * b * h * tq * tk * e, Kind.ATTN_SCORE, "qk"),
        Part(2 * b * h * tq * tk * ev, Kind.ATTN_VALUE, "av"),
    ))


@register(
    "scaled_dot_product_attention",
    "_scaled_dot_product_attention_math",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_fused_attention_overrideable",
    attention=True,
)
def sdpa_flop(q, k, v, *args, out=None, **kwargs) -> Parts:
    """q (..., h, tq, e), k (..., h_kv, tk, e), v (..., h_kv, tk, ev); grouped k/v heads serve all h."""
    *lead, tq, e = _shape(q)
    tk, ev = _shape(k)[-2], _shape(v)[-1]
    heads = prod(lead)  # batch * heads of q
    return _attention(1, heads, tq, tk, e, ev)


@register("_flash_attention_forward", "_efficient_attention_forward", attention=True)
def flash_forward_flop(q, k, v, *args, out=None, **kwargs) -> Parts:
    """Low-level kernels take (b, t, h, e); a varlen call (cu_seqlens given) sums its sequences."""
    cu_q, cu_k = (args[0], args[1]) if len(args) >= 2 else (None, None)
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

"""Op formulas of matrix products: mm, bmm, linear, einsum and their bias-adding forms, outer and bilinear products,
and the matmuls whose operands are scaled, quantized, packed or grouped (2 FLOPs per multiply-add)."""

from __future__ import annotations

from math import prod
from typing import Any

import torch

from flopcheck.exact.cost import OpCost
from flopcheck.exact.ops.registry import numel, one_cost, op_formula, shape_of


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


@op_formula("_addmm_activation", matmul=True)
def addmm_activation_flop(
    bias: torch.Tensor | None, a: torch.Tensor, b: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """addmm with a fused GELU or ReLU: the matmul's 2*m*k*n; the activation is elementwise."""
    return addmm_flop(bias, a, b, out=out)


# ---------------------------------------------------------------------------------------------
# Outer and bilinear products
# ---------------------------------------------------------------------------------------------


@op_formula("addr", "addr_", matmul=True)  # and in place
def addr_flop(
    bias: torch.Tensor | None, v1: torch.Tensor, v2: torch.Tensor, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """bias + v1 (m,) outer v2 (n,): m*n products (a (m, 1) @ (1, n) matmul), plus m*n uncounted adds."""
    m, n = numel(v1), numel(v2)
    return one_cost(2 * m * n, bias=m * n)


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


# ---------------------------------------------------------------------------------------------
# Scaled, quantized, packed and grouped matmuls (fp8, int8, int4, mixture-of-experts)
# ---------------------------------------------------------------------------------------------


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

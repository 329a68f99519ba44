"""Op formulas of recurrent kernels, bilinear forms, distances, outer products, QR, quantized and scaled matmuls,
registered in flopcheck.exact.ops' one registry (flopcheck.exact imports this module, so any count has them)."""

from __future__ import annotations

from fractions import Fraction
from math import prod
from typing import Any

import torch

from flopcheck.exact.cost import OpCost, Piece
from flopcheck.exact.ops import numel, one_cost, op_formula, shape_of
from flopcheck.types import Kind

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

"""Op formulas of distances between activations (cdist, pdist): a product of two activations, as a free matmul is."""

from __future__ import annotations

from math import prod
from typing import Any

import torch

from flopcheck.exact.cost import OpCost, Piece
from flopcheck.exact.ops.registry import op_formula, shape_of
from flopcheck.types import Kind


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

"""Op formulas of matrix factorizations (QR): LAPACK Working Note 41's operation counts, each a FLOP (no MAC
pairing)."""

from __future__ import annotations

from fractions import Fraction
from math import prod
from typing import Any

import torch

from flopcheck.exact.cost import OpCost
from flopcheck.exact.ops.registry import one_cost, op_formula, shape_of


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

"""The exact count's op formulas, one module per op family, all in one registry (registry.py: `@op_formula`).

Importing this package registers every family: matmul.py (matrix products, linear, einsum, outer, bilinear, scaled,
quantized and grouped matmuls), conv.py (convolutions and their backward), attention.py (SDPA and fused attention
kernels, their backward, flex_attention), recurrent.py (RNN kernels), distance.py (cdist, pdist), linalg.py (QR).
Operators outside aten take theirs from flopcheck.custom_ops (`register_custom`, re-exported here: the plugins' door).
"""

from __future__ import annotations

from flopcheck.custom_ops import register_custom
from flopcheck.exact.ops import attention, conv, distance, linalg, matmul, recurrent  # noqa: F401  (they register)
from flopcheck.exact.ops.registry import ATTENTION_OPS, FORMULAS, MATMUL_OPS, Formula, adopt, op_formula

__all__ = ["ATTENTION_OPS", "FORMULAS", "MATMUL_OPS", "Formula", "adopt", "op_formula", "register_custom"]

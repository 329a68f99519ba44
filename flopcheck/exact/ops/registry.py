"""The op-formula registry: aten op -> formula, a pure function of shapes giving FLOPs (2 per multiply-add).

A registry in the manner of torch.utils.flop_counter: one decorator, duplicates refused, one formula serving several
ops. A formula returns `OpCost`: the counted parts (attention splits into QK^T and attn@V) and the elements of any
bias add it did not count. Ops with no formula are not silently 0: the counter records them by category with the
elements they touched.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import Any

import torch

from flopcheck.custom_ops import CUSTOM
from flopcheck.exact.cost import OpCost, Piece
from flopcheck.op_names import family

aten = torch.ops.aten


Formula = Callable[..., OpCost]
FORMULAS: dict[object, Formula] = {}  # OpOverloadPacket -> formula(*args, out=..., **kwargs)
MATMUL_OPS: set[object] = set()  # ops that multiply two operands: candidates for attention scores/values
ATTENTION_OPS: set[object] = set()  # fused attention kernels: counted as QK^T + attn@V


def op_formula(*ops: str, matmul: bool = False) -> Callable[[Formula], Formula]:
    """Decorator: `fn` is the formula of every aten op named in `ops`; an op registers once. An op whose family in
    the op-name table is attention (flopcheck.op_names) joins ATTENTION_OPS: its formula splits QK^T and attn@V."""

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
            if (found := family(name)) is not None and found.attention:
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

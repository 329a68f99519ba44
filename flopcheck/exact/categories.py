"""Categories for the ops flopcheck does not count, so that none is skipped in silence.

The formula convention counts multiply-adds of matrix products, convolutions and attention. Every
other op is recorded under one `Work` category (norm, softmax, elementwise, ...) with the elements it wrote: the
category its name has in the op-name table (flopcheck.op_names), else the one torch's tags give it.
"""

from __future__ import annotations

import torch
from torch._ops import OpOverload

from flopcheck.op_names import FREE_CUSTOM, FREE_NAMESPACES, category, does_multiply_adds
from flopcheck.types import Work


def opaque(func: OpOverload) -> bool:
    """An operator outside aten that no formula counts and none is known to be free of multiply-adds."""
    return func.namespace not in FREE_NAMESPACES and func.overloadpacket._qualified_op_name not in FREE_CUSTOM


def categorize(func: OpOverload) -> Work:
    """The category of an op with no FLOP formula: an opaque custom operator has multiply-adds for all we know."""
    if opaque(func):
        return Work.NO_FORMULA
    name = func.overloadpacket.__name__
    named = category(name)
    if named is not None:
        return named
    if does_multiply_adds(name):  # reached here, it has no formula: the count cannot be complete
        return Work.NO_FORMULA
    if getattr(func, "is_view", False):
        return Work.VIEW
    tags = getattr(func, "tags", ())
    if torch.Tag.pointwise in tags:
        return Work.ELEMENTWISE
    if torch.Tag.reduction in tags:
        return Work.REDUCTION
    return Work.OTHER

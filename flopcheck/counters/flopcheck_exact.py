"""flopcheck's own exact count, run like any other counter on the real model. Unit: FLOP.

Detail: FLOPs per module path (ModuleList indices as '*'), attention split into '.qk' and '.av',
each item's kind in its `type`. Skipped: nothing is skipped in silence; the ops it has no formula
for (norms, elementwise, bias adds, ...) are listed with the elements they wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flopcheck.counters import counter
from flopcheck.counters.base import Detail, Measurement
from flopcheck.reconciler.classify import by_kind
from flopcheck.types import Mechanism, Skip, Unit, Work

if TYPE_CHECKING:
    from torch import nn


@counter(
    "flopcheck_exact",
    mechanism="a TorchDispatchMode over every aten op, on meta tensors (shapes only)",
    skips=(
        "nothing with multiply-adds; every other op (norm, softmax, elementwise, bias, movement) is recorded "
        "by category with the elements it wrote"
    ),
    library="flopcheck",
    unit=Unit.FLOP,
    order=0,
    install="pip install flopcheck",
    convention="flopcheck: FLOPs, 2 per multiply-add, every matmul-class op and SDPA kernel; the reference, "
    "run as a counter",
    on_meta=True,
    reader=by_kind,
)
def run(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    from flopcheck.exact import count_forward, flop_kinds  # lazy: torch-free at import (see counters/base.py)

    count = count_forward(model, inputs, kind_map=flop_kinds(model))
    detail = Detail(Unit.FLOP)
    for term in count.terms():
        detail.add(term.path, term.flops, where=Mechanism.MODULE, type=term.kind.value)
    skipped = tuple(
        Skip(
            category.value, calls, f"no multiply-adds: {elements:,} elements written, counted 0", Mechanism.OP, category
        )
        for category, (calls, elements) in sorted(count.uncounted_by_category().items())
        if category not in (Work.VIEW, Work.CREATION)
    )
    return Measurement(count.total, tuple(detail.items), skipped)

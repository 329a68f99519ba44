"""torch.profiler with with_flops=True: FLOPs (2 per multiply-add) for a fixed list of ops.

Reported: the sum of `flops` over key_averages(), as people read it. Detail: those events.
Skipped: ops whose whole subtree of events carries no FLOPs (outside the profiler's list), named
at the outermost such op: on CPU, fused SDPA (scaled_dot_product_attention) is one of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flopcheck.counters import counter
from flopcheck.counters.base import Detail, Measurement, costs_nothing, has_formula, skipped_ops
from flopcheck.op_names import Family, family
from flopcheck.reconciler.classify import by_op_name
from flopcheck.types import Unit

if TYPE_CHECKING:
    from torch import nn


def _has_flops(event: Any, multiply_adds: bool = False) -> bool:  # event: a profiler FunctionEvent
    """The event or one below it carries FLOPs (multiply_adds: FLOPs of a matmul or conv, not of its formulas for
    aten::add and aten::mul)."""
    own = bool(event.flops) and not (multiply_adds and family(event.name) is Family.ELEMENTWISE)
    return own or any(_has_flops(c, multiply_adds) for c in event.cpu_children)


def _empty(event: Any) -> bool:  # event: a profiler FunctionEvent
    """An op of an operand with no elements (a mixture of experts' aten::mm for an expert routed no token, inside
    aten::_grouped_mm on the CPU): it does no work, so counting it 0 skips nothing."""
    return any(isinstance(s, list) and 0 in s for s in event.input_shapes or ())


def _uncounted_roots(events: Iterable[Any]) -> Counter[str]:
    """Outermost compute ops with no FLOPs anywhere below them, and ops with multiply-adds of their own (a formula in
    flopcheck's registry) that got none: aten::mkldnn_rnn_layer, whose only counted child is its bias sum."""
    found: Counter[str] = Counter()

    def visit(event: Any) -> None:
        if event.flops or _empty(event):  # counted, or no work to count: its children are how it ran
            return
        if not _has_flops(event) or (has_formula(event.name) and not _has_flops(event, multiply_adds=True)):
            if not costs_nothing(event.name):
                found[event.name] += 1
            return
        for child in event.cpu_children:
            visit(child)

    for event in events:
        if event.cpu_parent is None:
            visit(event)
    return found


@counter(
    "torch_profiler",
    mechanism="torch.profiler with with_flops=True: a fixed list of ops",
    skips=(
        "every op outside its list: fused SDPA, conv3d, einsum, norms; counts adds and multiplies by their "
        "first operand"
    ),
    library="torch",
    unit=Unit.FLOP,
    order=3,
    install="pip install torch",
    convention="torch.profiler with_flops=True: FLOPs, 2 per multiply-add, for a fixed list of ops",
    required=True,
    reader=by_op_name,
)
def run(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    from torch.profiler import ProfilerActivity, profile  # lazy: torch-free at import (see base.py)

    with profile(activities=[ProfilerActivity.CPU], with_flops=True, record_shapes=True) as prof:  # shapes: _empty
        model(*inputs)
    detail = Detail(Unit.FLOP)
    total = 0
    for e in prof.key_averages():
        if e.flops:
            detail.add(e.key, e.flops, calls=e.count)
            total += e.flops
    roots = _uncounted_roots([e for e in prof.events() if e.name.startswith("aten::")])
    skipped = skipped_ops(dict(roots), "not in the profiler's FLOP formulas: counted 0")
    return Measurement(total, tuple(detail.items), skipped)

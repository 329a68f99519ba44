"""flopcheck's own exact count, run like any other counter on the real model. Unit: FLOP.

Detail: FLOPs per module path (ModuleList indices as '*'), attention split into '.qk' and '.av',
each item's kind in its `type`. Skipped: nothing is skipped in silence; the ops it has no formula
for (norms, elementwise, bias adds, ...) are listed with the elements they wrote.
"""
from __future__ import annotations

from flopcheck.counters.base import Detail, Measurement
from flopcheck.types import Skip, Unit


def run(model, inputs) -> Measurement:
    from flopcheck.exact import count_forward

    count = count_forward(model, inputs, kind_map=getattr(model, "flop_kinds", ()))
    detail = Detail(Unit.FLOP)
    for term in count.terms():
        detail.add(term.path, term.flops, where="module", type=term.kind.value)
    skipped = tuple(Skip(category, calls, f"no multiply-adds: {elements:,} elements written, counted 0")
                    for category, (calls, elements) in sorted(count.uncounted_by_category().items())
                    if category not in ("view", "creation"))
    return Measurement(count.total, tuple(detail.items), skipped)

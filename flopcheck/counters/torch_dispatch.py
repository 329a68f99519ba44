"""torch.utils.flop_counter.FlopCounterMode: a TorchDispatchMode with a formula per aten op. Unit: FLOP.

Detail: its global per-op counts. Skipped: ops that ran and have no entry in its flop_registry,
which it counts as 0 with no record; rebuilt by flopcheck's own op recorder running alongside.
On CPU, fused SDPA runs aten._scaled_dot_product_flash_attention_for_cpu, which torch 2.14's
registry lacks: the attention disappears.
"""
from __future__ import annotations

from collections import Counter

from flopcheck.counters.base import Detail, Measurement, skipped_ops
from flopcheck.types import Unit


def run(model, inputs) -> Measurement:
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import FlopCounterMode, flop_registry

    seen: Counter = Counter()

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen[func.overloadpacket] += 1
            return func(*args, **(kwargs or {}))

    with FlopCounterMode(display=False) as counter, Recorder():
        model(*inputs)
    detail = Detail(Unit.FLOP)
    for op, flops in counter.get_flop_counts()["Global"].items():
        detail.add(str(op), flops)
    missing = {str(op): n for op, n in seen.items() if op not in flop_registry}
    skipped = skipped_ops(missing, "no formula in FlopCounterMode's registry: counted 0")
    return Measurement(counter.get_total_flops(), tuple(detail.items), skipped)

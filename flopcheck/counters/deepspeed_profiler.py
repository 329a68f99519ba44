"""DeepSpeed's flops profiler (get_model_profile): patched functionals and tensor methods, summed
per module. It returns (flops, macs, params); the FLOPs figure is reported.

Detail: every patched call, by functional name, logged from DeepSpeed's own module stack.
Skipped: the aten ops that ran outside any patched functional (rebuilt by an op recorder).
"""
from __future__ import annotations

from flopcheck.counters.base import LoggedStack, Measurement, logged_ops, unpatched_ops
from flopcheck.types import Unit


def run(model, inputs) -> Measurement:
    from deepspeed.profiling.flops_profiler import get_model_profile
    from deepspeed.profiling.flops_profiler import profiler

    stack = LoggedStack()
    original = profiler.module_flop_count
    profiler.module_flop_count = stack
    try:
        with unpatched_ops(stack) as missing:
            flops, _macs, _params = get_model_profile(model, args=list(inputs), print_profile=False, detailed=False,
                                                      as_string=False)
    finally:
        profiler.module_flop_count = original
    return Measurement(flops, tuple(logged_ops(stack, Unit.FLOP)), missing.skips("no DeepSpeed patch covers it: counted 0"))

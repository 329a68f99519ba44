"""calflops' calculate_flops (a fork of DeepSpeed's profiler): patched functionals and tensor
methods, summed per module. It returns (flops, macs, params); the FLOPs figure is reported.

Detail: every patched call, by functional name, logged from calflops' own module stack.
Skipped: the aten ops that ran outside any patched functional (rebuilt by an op recorder that
notes which ops ran inside a logged call), e.g. '@' and fused attention when it patches neither.
"""
from __future__ import annotations

from flopcheck.counters.base import LoggedStack, Measurement, logged_ops, unpatched_ops
from flopcheck.types import Unit


def run(model, inputs) -> Measurement:
    from calflops import calculate_flops, calculate_pipline

    stack = LoggedStack()
    original = calculate_pipline.module_flop_count
    calculate_pipline.module_flop_count = stack
    try:
        with unpatched_ops(stack) as missing:
            flops, _macs, _params = calculate_flops(model, args=list(inputs), print_results=False,
                                                    print_detailed=False, output_as_string=False)
    finally:
        calculate_pipline.module_flop_count = original
    return Measurement(flops, tuple(logged_ops(stack, Unit.FLOP)), missing.skips("no calflops patch covers it: counted 0"))

"""DeepSpeed's flops profiler (get_model_profile): patched functionals and tensor methods, summed
per module. It returns (flops, macs, params); the FLOPs figure is reported.

Detail: every patched call, by functional name, logged from DeepSpeed's own module stack.
Skipped: the aten ops that ran outside any patched functional (rebuilt by an op recorder).
"""
from __future__ import annotations

from flopcheck.counters.base import Measurement, run_logged


def run(model, inputs) -> Measurement:
    from deepspeed.profiling.flops_profiler import get_model_profile, profiler

    def call():
        return get_model_profile(model, args=list(inputs), print_profile=False, detailed=False, as_string=False)[0]

    return run_logged(profiler, call, "no DeepSpeed patch covers it: counted 0")

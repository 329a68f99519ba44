"""DeepSpeed's flops profiler (get_model_profile): patched functionals and tensor methods, summed
per module. It returns (flops, macs, params); the FLOPs figure is reported.

Detail: every patched call, by functional name, logged from DeepSpeed's own module stack.
Skipped: the aten ops that ran outside any patched functional (rebuilt by an op recorder).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flopcheck.counters import counter
from flopcheck.counters.base import Measurement, read_deepspeed_style, run_logged
from flopcheck.types import Unit

if TYPE_CHECKING:
    from torch import nn


@counter(
    "deepspeed_profiler",
    mechanism="DeepSpeed's flops profiler: module hooks plus patched functionals",
    skips="counts norms, elementwise ops, bias and einsums that only permute",
    library="deepspeed",
    unit=Unit.FLOP,
    order=10,
    install="pip install --no-build-isolation deepspeed",
    convention="deepspeed get_model_profile returns (flops, macs, params); flops = 2 x macs",
    reader=read_deepspeed_style,
)
def run(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    from deepspeed.profiling.flops_profiler import (  # lazy: deepspeed is optional, imported in the worker only
        get_model_profile,
        profiler,
    )

    def call() -> float:
        flops: float = get_model_profile(
            model, args=list(inputs), print_profile=False, detailed=False, as_string=False
        )[0]
        return flops

    return run_logged(profiler, call, "no DeepSpeed patch covers it: counted 0")

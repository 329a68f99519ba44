"""calflops' calculate_flops (a fork of DeepSpeed's profiler): patched functionals and tensor
methods, summed per module. It returns (flops, macs, params); the FLOPs figure is reported.

Detail: every patched call, by functional name, logged from calflops' own module stack.
Skipped: the aten ops that ran outside any patched functional (rebuilt by an op recorder that
notes which ops ran inside a logged call), e.g. '@' and fused attention when it patches neither.
"""

from __future__ import annotations

from flopcheck.counters import counter
from flopcheck.counters.base import Measurement, read_deepspeed_style, run_logged
from flopcheck.types import Unit


@counter(
    "calflops_hooks",
    mechanism="module hooks plus patched functionals, in FLOPs",
    skips=(
        "fused SDPA (F.scaled_dot_product_attention is not patched) and Tensor.__matmul__ (explicit "
        "attention); counts norms, elementwise ops, bias and einsums that only permute"
    ),
    library="calflops",
    unit=Unit.FLOP,
    order=9,
    install="pip install 'flopcheck[calflops]'",
    convention="calflops.calculate_flops returns (flops, macs, params); flops = 2 x macs",
    reader=read_deepspeed_style,
)
def run(model, inputs) -> Measurement:
    from calflops import calculate_flops, calculate_pipline

    def call():
        return calculate_flops(
            model, args=list(inputs), print_results=False, print_detailed=False, output_as_string=False
        )[0]

    return run_logged(calculate_pipline, call, "no calflops patch covers it: counted 0")

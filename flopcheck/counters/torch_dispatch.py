"""torch.utils.flop_counter.FlopCounterMode: a TorchDispatchMode with a formula per aten op. Unit: FLOP.

Detail: its global per-op counts. Skipped: ops that ran and have no entry in its flop_registry,
which it counts as 0 with no record; rebuilt by flopcheck's own op recorder running alongside.
On CPU, fused SDPA runs aten._scaled_dot_product_flash_attention_for_cpu, which torch 2.14's
registry lacks: the attention disappears. Workers count under no_grad; where its module tracker refuses that (a
view of a parameter with no grad_fn: CaiT's class token, transformers' Mamba), it counts again with grad on, as its
users run it: the same forward ops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flopcheck.counters import counter
from flopcheck.counters.base import Detail, Measurement, recording_ops, skipped_ops
from flopcheck.reconciler.classify import by_op_name
from flopcheck.types import Unit

if TYPE_CHECKING:
    from torch import nn


@counter(
    "torch_dispatch",
    mechanism="torch.utils.flop_counter.FlopCounterMode: a dispatch mode with a formula per op",
    skips=(
        "ops with no formula: the CPU flash-attention kernel "
        "(aten._scaled_dot_product_flash_attention_for_cpu in torch 2.14), elementwise ops, norms"
    ),
    library="torch",
    unit=Unit.FLOP,
    order=4,
    install="pip install torch",
    convention="torch.utils.flop_counter.FlopCounterMode: FLOPs, 2 per multiply-add",
    required=True,
    reader=by_op_name,
)
def run(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    try:
        return _counted(model, inputs)
    except AssertionError as e:  # its module tracker's backward hooks, under no_grad, on a tensor with no grad_fn
        if GRAD_FN not in str(e):
            raise
    import torch  # lazy: torch-free at import (see base.py)

    with torch.enable_grad():  # as its users run it, grad on (transformers' MambaModel): the same forward ops
        return _counted(model, inputs)


# FlopCounterMode's refusal of a forward under no_grad whose output it hooks for the backward (torch 2.14)
GRAD_FN = "Expected gradient function to be set"


def _counted(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    """FlopCounterMode's count of one forward, with the ops it has no formula for."""
    from torch.utils.flop_counter import FlopCounterMode, flop_registry  # lazy: torch-free at import (see base.py)

    with FlopCounterMode(display=False) as mode, recording_ops() as seen:
        model(*inputs)
    detail = Detail(Unit.FLOP)
    for op, flops in mode.get_flop_counts().get("Global", {}).items():  # no op with a formula ran: no "Global"
        detail.add(str(op), flops)
    missing = {str(op): n for op, n in seen.items() if op not in flop_registry}
    skipped = skipped_ops(missing, "no formula in FlopCounterMode's registry: counted 0")
    return Measurement(mode.get_total_flops(), tuple(detail.items), skipped)

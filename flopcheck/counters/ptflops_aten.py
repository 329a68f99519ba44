"""ptflops, backend 'aten': a TorchDispatchMode with formulas for mm, matmul, addmm, bmm, convolution. Unit: MAC.

Detail: the global per-op counts of ptflops' own mode, captured from its run. Skipped: the ops
that ran outside its formula list (it treats them as zero-ops), recorded by an op recorder
running beside it. Its addmm and convolution formulas include the bias adds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flopcheck.counters import counter
from flopcheck.counters.base import Detail, Measurement, keyword_inputs, recording_ops, skipped_ops
from flopcheck.reconciler.classify import op_work
from flopcheck.reconciler.detectors import fused_roots
from flopcheck.reconciler.parts import Part, bare, split
from flopcheck.reconciler.rnn import input_bias_apart
from flopcheck.types import Count, Unit, Work

if TYPE_CHECKING:
    from torch import nn

    from flopcheck.reconciler.reference import Reference


def read(count: Count, ref: Reference) -> list[Part]:
    """ptflops' aten formulas add the bias: addmm = m*k*n + m*n, convolution = ... + numel(out), the bias adds the
    exact count's outside the modules whose fused op ptflops never saw (MultiheadAttention's fast path), less a
    batch-first GRU's input bias, which CPU adds apart from its mm; the rest of
    an op is the work its name did there (matched against the reference's work, so the residual checks it)."""
    parts = []
    hidden = fused_roots(count, ref)
    apart = input_bias_apart(ref)  # a batch-first GRU's b_ih, which CPU adds after an mm (reconciler.rnn)
    for i in count.detail:
        op = bare(i.name)
        bias = 2 * ref.bias_elements(op=op, outside=hidden) if op in ("addmm", "convolution") else 0
        bias -= 2 * apart if op == "addmm" else 0
        work = op_work(i.name, ref, hidden)
        rest = [(work, i.flops - bias)] if work is not None else []  # None: split leaves it over, the same Part
        parts += split(i.name, i.flops, [(Work.BIAS, bias), *rest])
    return parts


@counter(
    "ptflops_aten",
    mechanism="a dispatch mode over aten ops",
    skips="the CPU flash-attention kernel, elementwise ops and norms; counts bias adds",
    library="ptflops",
    unit=Unit.MAC,
    order=6,
    install="pip install ptflops",
    convention="ptflops get_model_complexity_info(backend='aten'): MACs",
    reader=read,
)
def run(model: nn.Module, inputs: tuple[Any, ...]) -> Measurement:
    from ptflops import aten_engine, get_model_complexity_info  # lazy: ptflops is optional, imported in the worker only
    from ptflops.aten_ops import ATEN_OPS_MAPPING

    modes: list[Any] = []

    class Capturing(aten_engine.FlopCounterMode):  # type: ignore[misc]  # ptflops is untyped
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            modes.append(self)

    original = aten_engine.FlopCounterMode
    aten_engine.FlopCounterMode = Capturing
    try:
        with recording_ops() as seen:
            macs, _params = get_model_complexity_info(
                model,
                (1,),
                input_constructor=lambda _: keyword_inputs(model, inputs),
                as_strings=False,
                backend="aten",
                print_per_layer_stat=False,
                verbose=False,
            )
    finally:
        aten_engine.FlopCounterMode = original
    if macs is None:
        raise RuntimeError("ptflops returned None: the forward raised inside ptflops, which prints it and returns None")
    detail = Detail(Unit.MAC)
    for op, n in modes[-1].flop_counts.get("Global", {}).items():  # no op it counts ran: no "Global"
        detail.add(str(op), n)
    missing = {str(op): n for op, n in seen.items() if op not in ATEN_OPS_MAPPING}
    skipped = skipped_ops(missing, "outside ptflops' aten formulas: treated as a zero-op")
    return Measurement(macs, tuple(detail.items), skipped)

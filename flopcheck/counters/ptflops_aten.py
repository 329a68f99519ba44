"""ptflops, backend 'aten': a TorchDispatchMode with formulas for mm, matmul, addmm, bmm, convolution. Unit: MAC.

Detail: the global per-op counts of ptflops' own mode, captured from its run. Skipped: the ops
that ran outside its formula list (it treats them as zero-ops), recorded by an op recorder
running beside it. Its addmm and convolution formulas include the bias adds.
"""
from __future__ import annotations

from collections import Counter

from flopcheck.counters.base import Detail, Measurement, skipped_ops
from flopcheck.types import Unit


def run(model, inputs) -> Measurement:
    from torch.utils._python_dispatch import TorchDispatchMode
    from ptflops import aten_engine, get_model_complexity_info
    from ptflops.aten_ops import ATEN_OPS_MAPPING

    modes: list = []
    seen: Counter = Counter()

    class Capturing(aten_engine.FlopCounterMode):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            modes.append(self)

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen[func.overloadpacket] += 1
            return func(*args, **(kwargs or {}))

    original = aten_engine.FlopCounterMode
    aten_engine.FlopCounterMode = Capturing
    try:
        with Recorder():
            macs, _params = get_model_complexity_info(
                model, (1,), input_constructor=lambda _: dict(zip(("x", "t", "y"), inputs)), as_strings=False,
                backend="aten", print_per_layer_stat=False, verbose=False)
    finally:
        aten_engine.FlopCounterMode = original
    if macs is None:
        raise RuntimeError("ptflops returned None: its forward raised (see its printed traceback)")
    detail = Detail(Unit.MAC)
    for op, n in modes[-1].flop_counts["Global"].items():
        detail.add(str(op), n)
    missing = {str(op): n for op, n in seen.items() if op not in ATEN_OPS_MAPPING}
    skipped = skipped_ops(missing, "outside ptflops' aten formulas: treated as a zero-op")
    return Measurement(macs, tuple(detail.items), skipped)

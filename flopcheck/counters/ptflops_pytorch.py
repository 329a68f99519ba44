"""ptflops, backend 'pytorch': forward hooks keyed by module type plus patched functionals. Unit: MAC.

Detail, captured during ptflops' own run: every hooked module's __flops__ (and whether ptflops'
accumulate_flops reached it: it stops at the first hooked module, so the children of a hooked
container are computed and then left out), and every patched functional call by name.
Skipped: module types with no hook (their own forward's ops count 0 unless a patched functional runs).
"""
from __future__ import annotations

from collections import defaultdict

from flopcheck.counters.base import Detail, Measurement, module_types, unhooked_module_types
from flopcheck.types import Unit


def _named_handlers(mapping: dict, calls: list) -> dict:
    """A copy of ptflops' handler map whose handlers also record (name, flops)."""

    def wrap(name, handler):
        def recorded(*args, **kwargs):
            flops = handler(*args, **kwargs)
            calls.append((name, int(flops)))
            return flops

        return recorded

    return {k: wrap(getattr(k, "__qualname__", str(k)), v) for k, v in mapping.items()}


def run(model, inputs) -> Measurement:
    from ptflops import get_model_complexity_info, pytorch_engine, pytorch_ops

    functional_calls: list[tuple[str, int]] = []
    modules: list[tuple[str, float, bool]] = []

    def capture(flops_model, *args, **kwargs):  # stands in for print_model_with_flops
        batch, hooked = flops_model.__batch_counter__, []
        for path, m in flops_model.named_modules():  # parents before children
            if hasattr(m, "__flops__") and pytorch_engine.is_supported_instance(m):
                reached = not any(p == "" or path.startswith(p + ".") for p in hooked)
                hooked.append(path)
                modules.append((path, m.__flops__ / batch, reached))

    saved = (pytorch_engine.print_model_with_flops, dict(pytorch_ops.FUNCTIONAL_MAPPING),
             dict(pytorch_ops.TENSOR_OPS_MAPPING))
    pytorch_engine.print_model_with_flops = capture
    pytorch_ops.FUNCTIONAL_MAPPING.update(_named_handlers(saved[1], functional_calls))
    pytorch_ops.TENSOR_OPS_MAPPING.update(_named_handlers(saved[2], functional_calls))
    try:
        macs, _params = get_model_complexity_info(
            model, (1,), input_constructor=lambda _: dict(zip(("x", "t", "y"), inputs)), as_strings=False,
            backend="pytorch", print_per_layer_stat=True, verbose=False)
    finally:
        pytorch_engine.print_model_with_flops = saved[0]
        pytorch_ops.FUNCTIONAL_MAPPING.update(saved[1])
        pytorch_ops.TENSOR_OPS_MAPPING.update(saved[2])
    if macs is None:
        raise RuntimeError("ptflops returned None: its forward raised (see its printed traceback)")
    types = module_types(model)
    detail = Detail(Unit.MAC)
    for path, flops, reached in modules:
        if flops:
            detail.add(path, flops, where="module", type=types.get(path, ""), in_total=reached)
    by_name: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, flops in functional_calls:
        by_name[name][0] += flops
        by_name[name][1] += 1
    for name, (flops, n) in by_name.items():
        detail.add(name, flops, calls=n, where="functional")
    hooked_types = set(pytorch_ops.MODULES_MAPPING)
    skipped = unhooked_module_types(model, hooked_types,
                                    "no ptflops hook for this module type: its own forward() counts 0 "
                                    "except patched functionals")
    return Measurement(macs, tuple(detail.items), skipped)

"""Why a forward failed on meta, in the measurement's fallbacks: it read a value, its shapes follow its values, or
its real copy would not fit in memory; and the zeroed float inputs of a count on real tensors."""

from __future__ import annotations

from typing import Any


def _reads_a_value(err: BaseException) -> bool:
    """The forward asked a meta tensor for a value (`.item()`, a tensor's truth, its data): real tensors have one."""
    signs = ("cannot be called on meta tensors", "_local_scalar_dense", "data pointer", "on meta tensors is not")
    return any(s in str(err) for s in (*signs, "meta tensor"))


def _fits_in_memory(spec: Any, model: Any, why: str) -> None:
    """Real tensors hold the weights: refused in one line when their fp32 copy would not fit in half this machine's
    memory."""
    import os

    from flopcheck.specs import SpecError

    params = sum(p.numel() for p in model.parameters())
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if 4 * params > memory / 2:
        raise SpecError(
            f"model {spec.text!r} reads a value ({why[:100]}), so it counts only on real tensors, and its "
            f"{params:,} parameters ({4 * params / 1e9:.0f} GB in fp32) do not fit in half this machine's "
            f"memory: count a smaller config of it"
        )


def _real_values(built: Any) -> str:
    """The inputs a count on real tensors runs, in words: the user's own (its factory's, or --inputs') as they are,
    never replaced (a data-dependent loop over them runs as it does for its user); inputs flopcheck made
    (torch.empty's leftover memory, NaN that can crash an op driven by values) with their floats set to zero, their
    integer and boolean inputs as the source made them."""
    import torch

    if built.own_inputs:
        return "its own inputs, from its factory or --inputs, as they were made: none replaced"
    with torch.no_grad():
        for t in (*built.args, *built.kwargs.values()):
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                t.zero_()
    return "float inputs zero, its other inputs as the source made them"


def _data_dependent(err: BaseException) -> bool:
    """An op whose output shape depends on values (nonzero, masked_select, unique: NMS, a mask) has no meta
    kernel: torch says so in its message, or raises one of its fake tensors' exceptions for it."""
    # lazy: torch (the error came from torch, so it is loaded); torch/_subclasses/fake_tensor.py defines both
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException

    text = str(err)
    return "data-independent implementation does not exist" in text or isinstance(
        err, (DynamicOutputShapeException, DataDependentOutputException)
    )

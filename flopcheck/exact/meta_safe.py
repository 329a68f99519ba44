"""Ops on meta, run once per signature: an op whose meta kernel refuses what its real kernels take, given its
output's shape; and a functional op seen before on the same shapes, given its output from the first time.

torch's meta kernel of `aten._grouped_mm` checks the CUDA kernel's dtypes (bfloat16 only) whatever device the
tensors stand for, so a float32 mixture of experts (transformers' grouped experts) cannot run on meta although the
CPU kernel takes float32. A count reads shapes only: when such an op's meta kernel refuses meta inputs, its output
is made here, an empty meta tensor of the shape the op gives, and the count goes on (its formula counts it).

Many of torch's meta kernels are Python (torch._refs, torch._meta_registrations): about a millisecond an op, 10,667
ops in one forward of DeepSeek-V3, whose 61 layers repeat the same ops on the same shapes. A functional op (its
schema mutates nothing and returns fresh tensors) on meta tensors of the same sizes, strides, dtypes and other
arguments gives outputs of the same sizes, strides and dtypes: those are kept by signature, and a repeat is answered
with new empty meta tensors of them. An op's FLOPs are read from shapes, so the count is the same to the FLOP.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import torch

aten = torch.ops.aten


def _grouped_mm_out(
    a: torch.Tensor, b: torch.Tensor, offs: Any = None, bias: Any = None, out_dtype: Any = None
) -> torch.Tensor:
    """mat_a (M, K) x mat_b (G, K, N) -> (M, N); (G, M, K) x (G, K, N) -> (G, M, N); (M, K) x (K, N) split over K by
    offs -> (G, M, N); (G, M, K) x (K, N) split over N -> (M, N)."""
    shape: tuple[int, ...]
    if a.dim() == 2 and b.dim() == 3:
        shape = (a.shape[0], b.shape[-1])
    elif a.dim() == 3 and b.dim() == 3:
        shape = (a.shape[0], a.shape[1], b.shape[-1])
    elif a.dim() == 2 and b.dim() == 2 and offs is not None:
        shape = (offs.shape[0], a.shape[0], b.shape[-1])
    elif a.dim() == 3 and b.dim() == 2:
        shape = (a.shape[1], b.shape[-1])
    else:
        raise NotImplementedError(f"grouped matmul of {a.dim()}-D by {b.dim()}-D operands")
    return torch.empty(shape, dtype=out_dtype or a.dtype, device="meta")


META_OUTPUTS: dict[object, Callable[..., torch.Tensor]] = {}
for _name in ("_grouped_mm",):
    _packet = getattr(aten, _name, None)
    if _packet is not None:  # a torch without the op: nothing to stand in for
        META_OUTPUTS[_packet.default] = _grouped_mm_out


# (op, its arguments' signature) -> each output's (size, stride, dtype), for the functional ops seen on meta
Signature = tuple[tuple[int, ...], tuple[int, ...], torch.dtype]
MEMO: dict[tuple[Any, ...], tuple[Signature, ...]] = {}
# how many exact.values.Values modes are open: while one is, every op runs (its values are read from each result,
# which a memo's new empty tensors would not carry)
VALUES_OPEN = [0]
PLAIN = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.layout, torch.memory_format)


def call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """func(*args, **kwargs); on meta inputs its meta kernel refused, the output of its shape rule; a functional op
    seen on the same signature, new empty meta tensors of the outputs it gave then."""
    key = _signature(func, args, kwargs) if _functional(func) and not VALUES_OPEN[0] else None
    kept = MEMO.get(key) if key is not None else None
    if kept is not None:
        outs = tuple(torch.empty_strided(size, stride, dtype=dtype, device="meta") for size, stride, dtype in kept)
        return outs[0] if len(outs) == 1 and not _returns_tuple(func) else outs
    out = _call(func, args, kwargs)
    if key is not None:
        outs = out if isinstance(out, tuple) else (out,)
        if all(type(t) is torch.Tensor and t.device.type == "meta" for t in outs):
            MEMO[key] = tuple((tuple(t.shape), tuple(t.stride()), t.dtype) for t in outs)
    return out


def _call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """func(*args, **kwargs); on meta inputs its meta kernel refused, the output of its shape rule."""
    try:
        return func(*args, **kwargs)
    except RuntimeError:
        rule = META_OUTPUTS.get(func)
        tensors = [t for t in (*args, *kwargs.values()) if isinstance(t, torch.Tensor)]
        if rule is None or not tensors or any(t.device.type != "meta" for t in tensors):
            raise
        return rule(*args, **kwargs)


@cache
def _functional(func: Any) -> bool:
    """An aten op that mutates none of its arguments and returns one or more fresh tensors (no alias, no list)."""
    schema = getattr(func, "_schema", None)
    if schema is None or schema.is_mutable or not schema.returns:
        return False
    return all(r.alias_info is None and str(r.type) == "Tensor" for r in schema.returns)


@cache
def _returns_tuple(func: Any) -> bool:
    """The op returns a tuple of tensors (its schema names several returns)."""
    return len(func._schema.returns) > 1


def _signature(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    """(op, the default dtype, each argument's signature): a tensor's size, stride, offset and dtype (meta only), a
    plain value as itself with its type, a list as its items'; None for anything else (not kept)."""
    items = _of((args, tuple(sorted(kwargs.items()))))
    return None if items is None else (func, torch.get_default_dtype(), items)


def _of(x: Any) -> Any:
    """The signature of one argument, None where it cannot be kept (a real tensor, a symbolic size, an object)."""
    if isinstance(x, torch.Tensor):
        if type(x) not in (torch.Tensor, torch.nn.Parameter) or x.device.type != "meta" or x.layout != torch.strided:
            return None
        return ("tensor", tuple(x.shape), tuple(x.stride()), x.storage_offset(), x.dtype)
    if isinstance(x, (tuple, list)):
        items = [_of(i) for i in x]
        return None if any(i is None for i in items) else (type(x).__name__, *items)
    if isinstance(x, PLAIN):
        return ("value", type(x).__name__, x)
    return None

"""Ops whose meta kernel refuses what their real kernels take, given their output's shape on meta.

torch's meta kernel of `aten._grouped_mm` checks the CUDA kernel's dtypes (bfloat16 only) whatever device the
tensors stand for, so a float32 mixture of experts (transformers' grouped experts) cannot run on meta although the
CPU kernel takes float32. A count reads shapes only: when such an op's meta kernel refuses meta inputs, its output
is made here, an empty meta tensor of the shape the op gives, and the count goes on (its formula counts it).
"""

from __future__ import annotations

from collections.abc import Callable
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


def call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """func(*args, **kwargs); on meta inputs its meta kernel refused, the output of its shape rule."""
    try:
        return func(*args, **kwargs)
    except RuntimeError:
        rule = META_OUTPUTS.get(func)
        tensors = [t for t in (*args, *kwargs.values()) if isinstance(t, torch.Tensor)]
        if rule is None or not tensors or any(t.device.type != "meta" for t in tensors):
            raise
        return rule(*args, **kwargs)

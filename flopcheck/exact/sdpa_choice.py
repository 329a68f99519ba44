"""Which F.scaled_dot_product_attention calls run as one fused kernel on the CPU, where the counters run.

torch's CPU dispatcher takes its flash kernel only for some calls (torch._fused_sdp_choice): 3-D and 4-D inputs with
no dropout, for instance, not 5-D ones (a video or hierarchical model's windows x heads). The rest run on the math
path, as plain matmuls that a dispatch counter does count. The exact count runs on meta, where every call takes the
math path, so it asks the CPU dispatcher about each call on stand-ins of the call's shapes that take no memory.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import _disable_current_modes

_NAMES = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal")
_MATH = 0  # torch.nn.attention.SDPBackend.MATH


def _stand_in(t: Any) -> Any:
    """A CPU tensor of t's shape and dtype backed by one row (its last dim contiguous); anything else as it is."""
    if not isinstance(t, torch.Tensor) or t.is_nested:
        return t
    if t.dim() == 0:
        return torch.zeros((), dtype=t.dtype)
    return torch.zeros(t.shape[-1], dtype=t.dtype).expand(t.shape)


def runs_fused(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether the CPU would run this SDPA call as one fused kernel (its choice is not the math path); True where
    torch cannot say (the count's old assumption: every call fused)."""
    given = dict(zip(_NAMES, args))
    given.update({k: v for k, v in kwargs.items() if k in _NAMES})
    extra: dict[str, Any] = {k: kwargs[k] for k in ("scale", "enable_gqa") if k in kwargs}
    try:
        with _disable_current_modes():  # the question is not the model's work: no op of it is counted or recorded
            choice = _choice(given, extra)
    except Exception:  # noqa: BLE001  (a shape the dispatcher refuses: as before, taken as fused)
        return True
    return int(choice) != _MATH


def _choice(given: dict[str, Any], extra: dict[str, Any]) -> Any:
    """torch._fused_sdp_choice on the call's stand-ins."""
    q, k, v = (_stand_in(given[n]) for n in _NAMES[:3])
    return torch._fused_sdp_choice(
        q,
        k,
        v,
        _stand_in(given.get("attn_mask")),
        float(given.get("dropout_p", 0.0)),
        bool(given.get("is_causal", False)),
        **extra,
    )


__all__ = ["runs_fused"]

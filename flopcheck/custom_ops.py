"""Formulas of operators outside aten (torchvision's, a library's, a user's torch.library op), by 'namespace::op'.

Such an operator reaches the count whole: flopcheck cannot see inside it. One with a formula here is counted (exact/ops
takes it in the first time it is dispatched); any other is opaque (categories.py). A plugin may register more. This
module imports nothing, so a counter's forked child looks names up here without importing flopcheck.exact.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import TYPE_CHECKING, Any

from flopcheck.types import Kind

if TYPE_CHECKING:
    from flopcheck.exact.cost import OpCost

CUSTOM: dict[str, Callable[..., Any]] = {}  # 'namespace::op' -> formula(*args, out=..., **kwargs) -> OpCost


def register_custom(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: `fn` is the formula of every operator outside aten named 'namespace::op' (a plugin may call it);
    an operator registers once."""
    for name in names:
        namespace, _, op = name.partition("::")
        if name in CUSTOM or not (namespace and op) or "::" in op:
            raise ValueError(f"{name!r}: give 'namespace::op' once (it already has a formula, or no namespace)")

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        CUSTOM.update(dict.fromkeys(names, fn))
        return fn

    return wrap


@register_custom("torchvision::deform_conv2d")
def deform_conv_flop(
    x: Any, w: Any, offset: Any, mask: Any, bias: Any, *args: Any, out: Any = None, **kwargs: Any
) -> OpCost:
    """torchvision's deformable convolution: each output element a (C_in/groups * kh * kw)-long dot product over
    bilinearly sampled inputs, as a convolution; the sampling (4 taps a point) is elementwise and not counted.
    bias: (C_out,), always given (zeros when the layer has none)."""
    # lazy: exact/__init__ imports torch and exact.ops, which imports this module (a cycle at import time)
    from flopcheck.exact.cost import OpCost, Piece

    return OpCost((Piece(2 * out.numel() * prod(w.shape[1:]), kind=Kind.CONV),), bias_elements=out.numel())

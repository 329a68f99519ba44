"""A built spec: its model and the inputs of one forward, with what they are in words."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn


@dataclass
class Built:
    """A spec's model (eval mode) and the inputs of one forward, with what they are in words."""

    model: nn.Module
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # one line each: how it was built, what was assumed
    # why its multiply-adds do not depend on values its forward also reads (a one-stage detector: NMS runs after the
    # last conv), so real CPU tensors give its count when meta cannot; "" when nothing says so
    work_fixed: str = ""
    # the inputs are the user's (its factory returned them, or --inputs module:fn made them): every count runs them
    # as they are, a fallback on real tensors too, never zeros in their place
    own_inputs: bool = False
    resolution: tuple[int, int] | None = None  # the (W, H) pixels its input was built at, where a source builds so

    def describe_inputs(self) -> str:
        """'x (1, 3, 224, 224) float32', one per input, positional then keyword."""
        names = _positional_names(self.model, len(self.args))
        named = list(zip(names, self.args)) + list(self.kwargs.items())
        return ", ".join(f"{k} {_describe(v)}" for k, v in named)


def _positional_names(model: nn.Module, n: int) -> list[str]:
    """The names model.forward gives its first n positional parameters ('x'), else arg0, arg1, ..."""
    try:
        params = [
            p.name
            for p in inspect.signature(model.forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]


def _describe(v: Any) -> str:
    if isinstance(v, torch.Tensor):
        return f"{tuple(v.shape)} {str(v.dtype).removeprefix('torch.')}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_describe(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} {_describe(x)}" for k, x in v.items()) + "}"
    return repr(v)[:40]

"""package.module:factory, the user's own code: the model it returns, with the inputs it returns or is given."""

from __future__ import annotations

import importlib
from typing import Any

import torch
from torch import nn

from flopcheck.children import one_line
from flopcheck.specs import ModelSpec, SpecError
from flopcheck.specs.binding import given
from flopcheck.specs.builders import DEFAULT_SHAPE
from flopcheck.specs.built import Built
from flopcheck.specs.meta import construct


def from_factory(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """package.module:factory: factory() returns the model, or (model, args) or (model, args, kwargs); inputs
    from --inputs module:fn (fn(model) -> args or (args, kwargs)), else --input-shape, else one 1x3x224x224."""
    o = spec.options
    out = construct(lambda: _call(spec.text), device, notes, spec.text)
    model, args, kwargs = _unpack(out, spec.text, "factory")
    if o.inputs:
        return given(model, o, device, notes)
    if args is not None and o.input_shape:
        raise SpecError(
            f"{spec.text} returns its own inputs, so --input-shape would be ignored: drop it, or let the "
            f"factory return the model alone"
        )
    if args is None:
        shape = tuple(o.input_shape or (o.batch, *DEFAULT_SHAPE[1:]))
        args, kwargs = (torch.empty(shape, device=device),), {}
        notes.append(
            "inputs given by the input shape"
            if o.input_shape
            else f"no inputs given: one tensor {shape} assumed (give --input-shape, or --inputs module:fn)"
        )
        return Built(model, tuple(args), dict(kwargs or {}), notes)
    notes.append("inputs from the factory")
    return Built(model, tuple(args), dict(kwargs or {}), notes, own_inputs=True)


def _call(text: str) -> Any:
    """Import 'package.module' and call its attribute 'factory' with no arguments."""
    module, _, name = text.partition(":")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as err:
        raise SpecError(f"cannot import {text!r}: {one_line(err)}; is the module on the path?") from None
    return fn()


def _unpack(out: Any, text: str, what: str) -> tuple[nn.Module, tuple[Any, ...] | None, dict[str, Any] | None]:
    """(model, args, kwargs) from what a factory returned: a module, or (module, args[, kwargs])."""
    if isinstance(out, tuple) and out and isinstance(out[0], nn.Module) and len(out) in (2, 3):
        args = out[1] if isinstance(out[1], (tuple, list)) else (out[1],)
        kwargs = out[2] if len(out) == 3 else {}
        if not isinstance(kwargs, dict):
            raise SpecError(f"{text}: the {what}'s third value must be a dict of keyword inputs")
        return out[0], tuple(args), kwargs
    if not isinstance(out, nn.Module):
        raise SpecError(
            f"model {text!r} gave a {type(out).__name__}, not a torch.nn.Module: point it at a function "
            f"that returns the model, or (model, args, kwargs)"
        )
    return out, None, None

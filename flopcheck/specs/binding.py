"""A built model's inputs bound to it: the ones --inputs module:fn makes, and keyword inputs bound into its forward
so that model(*args) runs it."""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any

import torch
from torch import nn

from flopcheck.children import one_line
from flopcheck.specs import Options, SpecError
from flopcheck.specs.built import Built


def given(model: nn.Module, o: Options, device: str, notes: list[str]) -> Built:
    """The model with the inputs --inputs module:fn makes for it, whatever the source's own would be."""
    args, kwargs = _inputs_of(o.inputs or "", model, device)
    return Built(model, args, kwargs, notes + [f"inputs from {o.inputs}"], own_inputs=True)


def _inputs_of(text: str, model: nn.Module, device: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """fn(model) of an --inputs spec, on `device`: args, or (args, kwargs)."""
    module, _, name = text.partition(":")
    if not name:
        raise SpecError(f"--inputs {text!r}: write package.module:function")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as err:
        raise SpecError(f"cannot import --inputs {text!r}: {one_line(err)}") from None
    try:
        with torch.device(device):
            out = fn(model)
    except Exception as err:  # noqa: BLE001 - the user's input builder: one line
        raise SpecError(
            f"--inputs {text!r} failed: {one_line(err)}; flopcheck calls it as {name}(model) and "
            f"it returns the forward's args, or (args, kwargs)"
        ) from None
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict):
        args = out[0] if isinstance(out[0], (tuple, list)) else (out[0],)
        return tuple(args), out[1]
    return (tuple(out) if isinstance(out, (tuple, list)) else (out,)), {}


def bound(built: Built) -> tuple[nn.Module, tuple[Any, ...]]:
    """(model, args) such that model(*args) runs the built forward: keyword inputs are bound into the model's own
    forward (an instance attribute, so module paths and hooks stay as they are), and its signature keeps the
    positional names, for libraries that call model(**named inputs)."""
    model, args, kwargs = built.model, built.args, built.kwargs
    if not kwargs:
        return model, args
    own = type(model).forward.__get__(model)
    params = [p for p in inspect.signature(own).parameters.values() if p.name not in kwargs][: len(args)]

    @functools.wraps(own)
    def forward(*a: Any, **k: Any) -> Any:
        return own(*a, **{**kwargs, **k})

    # function attributes: its signature (what inspect.signature reads), and its keyword inputs (for a library that
    # needs some input to call with)
    forward.__dict__.update(__signature__=inspect.Signature(params), bound_kwargs=kwargs)
    model.forward = forward
    return model, args

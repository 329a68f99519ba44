"""Building a model for its shapes: on the meta device (no memory, no compute) where it allows; one that cannot be
(torchvision's RegNets compute widths with tensors) is built on CPU without initialising its weights, then moved to
meta, and the note says so. `device='cpu'` builds real (uninitialised, then zeroed) tensors for the counters that
execute the model."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from flopcheck.children import one_line

_INITS = (
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
)


def _left_as_it_is(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    """An initialiser that does nothing: the tensor as it is."""
    return tensor


@contextlib.contextmanager
def no_init() -> Iterator[None]:
    """torch.nn.init's initialisers leave their tensor as it is (a model built for its shapes alone)."""
    saved = {n: getattr(nn.init, n) for n in _INITS if hasattr(nn.init, n)}
    try:
        for n in saved:  # `tensor` by position or by name: torch's own wrappers re-call with tensor=
            setattr(nn.init, n, _left_as_it_is)
        yield
    finally:
        for n, f in saved.items():
            setattr(nn.init, n, f)


def construct(make: Callable[[], Any], device: str, notes: list[str], what: str) -> Any:
    """make() on `device`: meta first; a model that cannot be built there is built on CPU without initialising
    its weights (and moved to meta when meta was asked for), with a note saying so."""
    if device == "meta":
        try:
            with torch.device("meta"):
                out = make()
            return _to_meta(out)  # the legacy torch.Tensor([...]) constructor ignores the device context: CPU
        except Exception as err:  # noqa: BLE001 - any construction failure on meta: try CPU next
            why = one_line(err)
        with no_init():
            out = make()
        notes.append(
            f"{what} cannot be built on meta ({why[:120]}): built on CPU without initialising, then counted on meta"
        )
        return _to_meta(out)
    with no_init(), torch.device(device):
        out = make()
    return out


def _to_meta(out: Any) -> Any:
    """The model (alone, or first of a factory's tuple) with every parameter and buffer on meta."""
    if isinstance(out, nn.Module):
        return out.to("meta")
    if isinstance(out, tuple) and out and isinstance(out[0], nn.Module):
        return (out[0].to("meta"), *out[1:])
    return out


def zeroed(model: nn.Module) -> nn.Module:
    """Weights set to 0 (a model built without initialising holds whatever memory it got; values change no count)."""
    if next(iter(model.parameters()), torch.empty(0)).device.type != "meta":
        with torch.no_grad():
            for p in model.parameters():
                p.zero_()
    return model

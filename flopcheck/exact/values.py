"""Real values beside meta tensors, for the small ones a forward reads: masks, ids, lengths, positions.

A meta tensor has a shape and no values, so a forward that asks one for a value (`mask.sum().item()`,
`lengths.tolist()`, `if mask.all():`) or whose shape follows values (`nonzero`, a boolean index, `repeat_interleave`
by counts) cannot run on meta. Under `Values`, every small tensor made from known values (arange, ones, zeros, full,
a tensor literal) and every op whose tensor inputs all have values gets a CPU copy, its shadow, computed beside it.
A value read is answered from the shadow, and an op whose output shape follows values runs on the shadows and returns
a meta tensor of that shape. Tensors of unknown values (torch.empty's: hidden states, weights) never get a shadow: a
read of one still fails, as it should.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

import torch
from torch._ops import OpOverload
from torch.utils._pytree import tree_flatten, tree_map
from torch.utils.weak import WeakTensorKeyDictionary

from flopcheck.exact import meta_safe
from flopcheck.untyped import DispatchMode, FunctionMode

aten = torch.ops.aten
LIMIT = 1 << 22  # elements: a shadow is kept for tensors up to this size (a mask or ids, never an activation)
# ops whose output's shape or value follows the input's values: run on the shadows
FOLLOW_VALUES = {
    aten.nonzero.default,
    aten.masked_select.default,
    aten.repeat_interleave.Tensor,
    aten.repeat_interleave.self_Tensor,
    aten._unique2.default,
    aten.unique_consecutive.default,
    aten.unique_dim.default,
}
# reads answered from the shadow with a Python number
READS = {aten._local_scalar_dense.default, aten.is_nonzero.default, aten.equal.default}
# in-place fills: whatever the tensor held, its values are now known (zeros_like and full_like are empty_like then one
# of these)
FILLS: dict[OpOverload, Callable[..., Any]] = {aten.zero_.default: lambda x: 0, aten.fill_.Scalar: lambda x, v: v}
UNKNOWN = {aten.empty.memory_format, aten.empty_strided.default, aten.empty_like.default, aten.new_empty.default}


def _small(x: Any) -> bool:
    return not isinstance(x, torch.Tensor) or x.numel() <= LIMIT


class _Literals(FunctionMode):
    """torch.tensor(data, device='meta') makes its tensor below every dispatch mode: made on the CPU and moved to
    meta instead, the move is an op Values sees, and the literal keeps its values as its shadow."""

    def __torch_function__(
        self, func: Callable[..., Any], types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        if func in (torch.tensor, torch.as_tensor) and str(kwargs.get("device", "")) == "meta":
            return func(*args, **{**kwargs, "device": "cpu"}).to("meta")
        return func(*args, **kwargs)


class Values(DispatchMode):
    """The shadow of every small tensor of known values, and the reads and value-shaped ops answered from them."""

    def __init__(self) -> None:
        super().__init__()
        self.shadow: MutableMapping[torch.Tensor, torch.Tensor] = WeakTensorKeyDictionary()
        self.literals = _Literals()

    def __enter__(self) -> Values:
        self.literals.__enter__()
        meta_safe.VALUES_OPEN[0] += 1  # the meta memo answers no op while values are read from results
        return super().__enter__()

    def __exit__(self, *exc: object) -> None:
        try:
            super().__exit__(*exc)
        finally:
            meta_safe.VALUES_OPEN[0] -= 1
            self.literals.__exit__(*exc)

    def _known(self, x: Any) -> bool:
        return not isinstance(x, torch.Tensor) or x.device.type != "meta" or x in self.shadow

    def _real(self, x: Any) -> Any:
        """A meta tensor's shadow, a device='meta' argument as the CPU; anything else as it is."""
        if isinstance(x, torch.Tensor) and x.device.type == "meta":
            return self.shadow[x]
        if isinstance(x, torch.device) and x.type == "meta":
            return torch.device("cpu")
        return x

    def _on_shadows(self, func: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        real_kwargs = {k: ("cpu" if k == "device" and str(v) == "meta" else self._real(v)) for k, v in kwargs.items()}
        return func(*tree_map(self._real, args), **tree_map(self._real, real_kwargs))

    def _as_meta(self, real: Any) -> Any:
        """A CPU result as meta tensors of its shapes, each with the CPU one as its shadow."""

        def one(r: Any) -> Any:
            if not isinstance(r, torch.Tensor):
                return r
            m = torch.empty_strided(r.shape, r.stride(), dtype=r.dtype, device="meta")
            self.shadow[m] = r
            return m

        return tree_map(one, real)

    def __torch_dispatch__(
        self, func: OpOverload, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        flat, _ = tree_flatten((args, kwargs))
        tensors = [x for x in flat if isinstance(x, torch.Tensor)]
        metas = [x for x in tensors if x.device.type == "meta"]
        known = all(self._known(x) for x in tensors)
        if not metas:
            known = known and str(kwargs.get("device", "")) == "meta" or func is aten._to_copy.default
        if func in READS and known:
            return self._on_shadows(func, args, kwargs)
        if func is aten._to_copy.default and known and str(kwargs.get("device", "meta")) != "meta":
            return self._on_shadows(func, args, kwargs)  # .cpu(), .tolist(), .numpy() of a tensor with values
        if func in FOLLOW_VALUES and known:
            return self._as_meta(self._on_shadows(func, args, kwargs))
        if func in (aten.index.Tensor, aten.index_put.default, aten.index_put_.default) and any(
            self._is_mask(i) for i in args[1] or ()
        ):
            index = [j for i in args[1] for j in (self._bool_index(i) if self._is_mask(i) else (i,))]
            return self.__torch_dispatch__(func, types, (args[0], index, *args[2:]), kwargs)
        if func in FILLS and metas and not known and _small(args[0]):
            out = func(*args, **kwargs)
            self.shadow[args[0]] = torch.full(args[0].shape, FILLS[func](*args), dtype=args[0].dtype)
            return out
        out = func(*args, **kwargs)
        outs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor) and o.device.type == "meta"]
        if not (known and outs and func not in UNKNOWN and all(_small(o) for o in outs)):
            if func._schema.is_mutable:  # a tensor with values written by an op of unknown values: values unknown
                for x in metas:
                    self.shadow.pop(x, None)
            return out
        try:
            real = self._on_shadows(func, args, kwargs)
        except Exception:  # noqa: BLE001 - a shadow is a help, never a new failure: the meta result stands
            return out
        self._mirror(out, real)
        return out

    def _is_mask(self, i: Any) -> bool:
        return isinstance(i, torch.Tensor) and i.dtype == torch.bool and i in self.shadow

    def _bool_index(self, i: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """A boolean index with values as the long indices of its true elements (one meta tensor per dimension)."""
        index: tuple[torch.Tensor, ...] = self._as_meta(self.shadow[i].nonzero(as_tuple=True))
        return index

    def _mirror(self, out: Any, real: Any) -> None:
        """Each meta output's shadow: the CPU result of the same op (in-place ops: the first argument's)."""
        outs, reals = tree_flatten(out)[0], tree_flatten(real)[0]
        for o, r in zip(outs, reals):
            if isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor) and o.device.type == "meta":
                self.shadow[o] = r


__all__ = ["Values"]

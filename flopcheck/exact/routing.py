"""What a count of a mixture of experts assumed about its router: the routers, and what each did (its notes in words:
render/routing.py).

A router that sends each token to its top k of E experts (Mixtral, Qwen-MoE, DeepSeek-MoE without a capacity) gives
every token k expert passes whatever experts it chose, so the experts' FLOPs are the same for any choice and a count
on meta (where the router's choices are values nobody has) is exact. A router with a capacity limit drops or
reroutes tokens by its choices: its work depends on the data, which a count on meta does not see. A count on real
tensors (`--device cpu`, or a module counted in this process) runs the router, and `observing` reads what it did: the
tokens each expert took, from the rows of each expert module's input (`Routed`, the count's `routing`).
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

TOP_K = ("top_k", "num_experts_per_tok")  # a router's (or its block's) experts per token
EXPERTS = ("num_experts", "num_local_experts", "n_routed_experts")  # experts to choose from
CAPACITY = ("capacity_factor", "expert_capacity", "capacity")  # a limit on the tokens an expert takes


def _k_of(module: Any) -> int | None:
    """Experts per token as a router states it, or as its class names it (transformers' SwitchTransformersTop1Router,
    NllbMoeTop2Router)."""
    named = re.search(r"Top(\d+)Router", type(module).__name__)
    return _first_int(module, TOP_K) or (int(named.group(1)) if named else None)


def _first_int(module: Any, names: tuple[str, ...]) -> int | None:
    for name in names:
        value = getattr(module, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _limited(module: Any) -> bool:
    return any(getattr(module, n, None) not in (None, 0) for n in CAPACITY)


def routers(model: Any) -> Iterator[tuple[str, int | None, int, bool]]:
    """(path, k, E, has a capacity limit) of every module that states its experts and either its experts per token or
    a capacity (k None: an expert-choice router, or a top-1 one that does not say so, as transformers' Switch)."""
    for path, module in model.named_modules():
        k, e = _k_of(module), _first_int(module, EXPERTS)
        if e is not None and (k is not None and 0 < k <= e or k is None and _limited(module)):
            yield path, k, e, _limited(module)


def innermost(model: Any) -> list[tuple[str, int | None, int, bool]]:
    """The routers that hold no other router (a block or the whole model may state k and E too: the innermost
    route)."""
    every = list(routers(model))
    return [
        r
        for r in every
        if not any(o[0] != r[0] and o[0].startswith(r[0] + ".") or (r[0] == "" and o[0]) for o in every)
    ]


@dataclass(frozen=True)
class Routed:
    """What one router was seen to do on real tensors: its tokens, its experts' and the tokens each took."""

    path: str  # the router's module path ('' the whole model)
    experts_path: str  # the module holding its E experts, one module each
    k: int | None  # experts per token, as it states it (None: it states none, as an expert-choice router)
    experts: int  # E
    capacity_factor: float | None  # as it states it
    capacity: int | None  # as it states it, else ceil(capacity_factor x k x T / E) of a call's T tokens
    tokens: int  # tokens into the router over its calls: its first input's rows
    taken: tuple[int, ...]  # tokens each expert processed over those calls: its input's rows
    calls: int = 1  # the router's calls in the forward
    weights_zero: bool = False  # every weight of the router is zero (a spec counted on real tensors has them zeroed)

    @property
    def dropped(self) -> int | None:
        """Token-expert assignments no expert ran: k x T - sum of the tokens taken (None: k not stated)."""
        return None if self.k is None else self.k * self.tokens - sum(self.taken)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with `dropped`."""
        return {
            **{f: getattr(self, f) for f in self.__dataclass_fields__},
            "taken": list(self.taken),
            "dropped": self.dropped,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Routed:
        """Inverse of to_dict."""
        return cls(**{**{k: v for k, v in d.items() if k != "dropped"}, "taken": tuple(d["taken"])})


def _rows(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """Rows of a call's first tensor input: the product of all dimensions but the last (its tokens)."""
    first = next((a for a in (*args, *kwargs.values()) if hasattr(a, "shape") and len(a.shape) >= 1), None)
    return 0 if first is None else math.prod(int(n) for n in first.shape[:-1])


def _experts_of(modules: dict[str, Any], path: str, e: int) -> tuple[str, Any] | None:
    """(path, container) of the E expert modules beside a router: a ModuleList or ModuleDict of E modules among the
    children of the router's module, else of its parent's (transformers' Switch: mlp.router beside mlp.experts)."""
    holders = [path] + ([path.rpartition(".")[0]] if path else [])
    for holder in holders:
        for name, child in modules[holder].named_children():
            containers = {c.__name__ for c in type(child).__mro__} & {"ModuleList", "ModuleDict"}
            if containers and len(child) == e:
                return (f"{holder}.{name}" if holder else name), child
    return None


def expert_weights(model: Any, batch: int) -> tuple[int, int]:
    """(elements of every routed expert's weights, the most of them one decode step of `batch` tokens reads): each
    innermost top-k router's E experts, of which B x k tokens reach at most min(E, B x k)."""
    modules = dict(model.named_modules())
    every = read = 0
    for path, k, e, _ in innermost(model):
        found = _experts_of(modules, path, e) or _fused_experts(modules, path, e)
        if found is None:
            continue
        size = sum(int(p.numel()) for p in found[1].parameters())
        every += size
        read += size * min(e, batch * (k or 1)) // e
    return every, read


def _fused_experts(modules: dict[str, Any], path: str, e: int) -> tuple[str, Any] | None:
    """(path, module) of E experts held as stacked weights beside a router (transformers 5's DeepseekV3Experts,
    GPT-OSS's: gate_up_proj (E, 2F, d), down_proj (E, d, F)): a sibling whose every parameter leads with E."""
    holder = path.rpartition(".")[0] if path else ""
    for name, child in modules[holder].named_children():
        stacked = list(child.parameters())
        if child is not modules[path] and stacked and all(p.dim() >= 3 and p.shape[0] == e for p in stacked):
            return (f"{holder}.{name}" if holder else name), child
    return None


class _Seen:
    """The hooks that read each innermost router's tokens and each of its experts' rows while a forward runs."""

    def __init__(self, model: Any) -> None:
        self.hooks: list[Any] = []
        self.routers: list[tuple[str, str, Any, int | None, int, list[int], list[int]]] = []
        modules = dict(model.named_modules())
        for path, k, e, _ in innermost(model):
            found = _experts_of(modules, path, e)
            if found is None:
                continue
            where, holder = found
            tokens: list[int] = []
            taken = [0] * e
            self.routers.append((path, where, modules[path], k, e, tokens, taken))
            self.hooks.append(modules[path].register_forward_pre_hook(_read_into(tokens), with_kwargs=True))
            experts = holder.values() if hasattr(holder, "values") else holder
            for i, expert in enumerate(experts):
                self.hooks.append(expert.register_forward_pre_hook(_add_into(taken, i), with_kwargs=True))

    def close(self) -> None:
        for hook in self.hooks:
            hook.remove()

    def result(self) -> tuple[Routed, ...]:
        """What each router with expert modules was seen to do (none called: left out)."""
        return tuple(_routed(*r) for r in self.routers if r[5])


def _read_into(tokens: list[int]) -> Any:
    return lambda m, args, kwargs: tokens.append(_rows(args, kwargs))


def _add_into(taken: list[int], i: int) -> Any:
    def add(m: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        taken[i] += _rows(args, kwargs)

    return add


def _routed(path: str, where: str, module: Any, k: int | None, e: int, tokens: list[int], taken: list[int]) -> Routed:
    """A Routed from a router's hooks: its capacity as stated, else ceil(capacity_factor x k x T / E) when its calls
    all had T tokens."""
    factor = getattr(module, "capacity_factor", None)
    factor = float(factor) if isinstance(factor, (int, float)) and not isinstance(factor, bool) else None
    stated = _first_int(module, CAPACITY[1:])
    capacity = stated
    if stated is None and factor is not None and len(set(tokens)) == 1:
        capacity = math.ceil(factor * (k or 1) * tokens[0] / e)
    weights = list(module.parameters())
    zero = bool(weights) and all(p.device.type != "meta" and not bool(p.detach().any()) for p in weights)
    return Routed(path, where, k, e, factor, capacity, sum(tokens), tuple(taken), len(tokens), zero)


@contextlib.contextmanager
def observing(model: Any) -> Iterator[_Seen]:
    """While entered, every innermost router with one module per expert notes its tokens and its experts' rows."""
    seen = _Seen(model)
    try:
        yield seen
    finally:
        seen.close()

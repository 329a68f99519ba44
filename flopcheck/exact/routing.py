"""What a count of a mixture of experts assumed about its router, said in a note.

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


def _per_token(shapes: list[tuple[int | None, int]]) -> str:
    """'2 of 8 per token' ('8 experts, none said per token' for a router that states no k)."""
    return ", ".join(
        f"{k} of {e} per token" if k is not None else f"{e} experts, none said per token" for k, e in shapes
    )


def routing_notes(model: Any, seen: tuple[Routed, ...] = (), device: str = "meta") -> list[str]:
    """The notes on the routing the count assumed (none for a model without routed experts), with the routing each
    router with one module per expert was seen to do (`seen`): on real tensors its data-dependent truth."""
    found = innermost(model)
    if not found:
        return []
    read = seen
    notes = [seen_note(read, device)] if read else []
    limited = [p or "(top)" for p, *_, capped in found if capped]
    unread = [p or "(top)" for p, *_, capped in found if capped and p not in {r.path for r in read}]
    said = _per_token(sorted({(k, e) for _, k, e, _ in found}, key=lambda s: (s[0] or 0, s[1])))
    if unread and device != "meta":
        notes.append(
            f"routed experts with a capacity limit ({', '.join(unread)[:120]}): counted on real {device} tensors, so "
            f"the work its experts ran is counted; the tokens each took are not read (its experts are not one module "
            f"each)"
        )
    elif unread:
        notes.append(
            f"routed experts ({said}) with a capacity limit ({', '.join(limited)[:120]}): the tokens each expert takes "
            f"depend on the router's choices; on meta they are not known, so count on real tensors (--device cpu) "
            f"with real inputs to see them"
        )
    elif not limited:
        notes.append(
            f"routed experts: plain top-k routing, {said.replace(' per token', '')} experts per token ({len(found)} "
            f"routers): every token runs k expert passes whatever the router chose, so the experts' FLOPs are the same "
            f"for any choice of experts"
        )
    return notes


def capacity_hint(model: Any) -> str:
    """For a forward whose shapes depend on its data: '' unless it routes experts, else what to run: --device cpu,
    which reads a capacity-limited router's choices, and gives a plain top-k one its FLOPs (the same for any
    choice: every token runs k experts)."""
    found = innermost(model)
    limited = [p or "(top)" for p, *_, capped in found if capped]
    if limited:
        return (
            f"; its routed experts have a capacity limit ({', '.join(limited)[:120]}): the tokens each expert takes "
            f"are the router's choices, so count it on real tensors (--device cpu), which reads them"
        )
    if not found:
        return ""
    said = _per_token(sorted({(k, e) for _, k, e, _ in found}, key=lambda s: (s[0] or 0, s[1])))
    return (
        f"; but here they do not: its routed experts ({said}, no capacity limit) give every token k expert passes "
        f"whatever the router chose; only its gather of each expert's tokens reads values, which meta tensors have "
        f"none of: count it on real tensors (--device cpu), which gives the same FLOPs for any routing"
    )


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


def _one(r: Routed) -> str:
    """'(top) top-1 of 4, capacity 4: 16 tokens; each expert took 4, 0, 0, 0 (12 of 16 assignments dropped)'."""
    k = f"top-{r.k} of {r.experts}" if r.k is not None else f"{r.experts} experts (k not stated)"
    cap = f", capacity {r.capacity}" if r.capacity is not None else ""
    calls = f" over {r.calls} calls" if r.calls > 1 else ""
    dropped = (
        f" ({r.dropped:,} of {r.k * r.tokens:,} token-expert assignments dropped: no expert ran them)"
        if r.k is not None
        else f" ({sum(r.taken):,} rows for {r.tokens:,} tokens; which tokens no expert took is not read)"
    )
    each = ", ".join(f"{n:,}" for n in r.taken)
    return f"{r.path or '(top)'} {k}{cap}: {r.tokens:,} tokens{calls}; each expert took {each}{dropped}"


def seen_note(seen: tuple[Routed, ...], device: str) -> str:
    """The routing read in the count, three routers said and the rest counted; a router with zero weights said."""
    said = "; ".join(_one(r) for r in seen[:3]) + (
        f"; and {len(seen) - 3} more (--json 'routing')" if len(seen) > 3 else ""
    )
    if device == "meta":
        return (
            f"routing seen on meta: {said}; a forward that runs on meta has shapes no value decides, so each expert "
            f"takes these many tokens whatever the router chose (its choices change which tokens, not how many)"
        )
    zero = (
        "; its router's weights are all zero (as a spec's are, counted on real tensors: zeroed), so every score "
        "ties and these are the choices of ties: count the module with its own weights in this process "
        "(flopcheck.count(model, x)) for theirs"
        if any(r.weights_zero for r in seen)
        else ""
    )
    return (
        f"routing seen on real {device} tensors: {said}; the experts' FLOPs counted are those of the tokens they took, "
        f"for these inputs and weights{zero}"
    )

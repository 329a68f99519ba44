"""What a count of a mixture of experts assumed about its router, said in a note.

A router that sends each token to its top k of E experts (Mixtral, Qwen-MoE, DeepSeek-MoE without a capacity) gives
every token k expert passes whatever experts it chose, so the experts' FLOPs are the same for any choice and a count
on meta (where the router's choices are values nobody has) is exact. A router with a capacity limit drops or
reroutes tokens by its choices: its work depends on the data, which a count on meta does not see.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

TOP_K = ("top_k", "num_experts_per_tok")  # a router's (or its block's) experts per token
EXPERTS = ("num_experts", "num_local_experts", "n_routed_experts")  # experts to choose from
CAPACITY = ("capacity_factor", "expert_capacity", "capacity")  # a limit on the tokens an expert takes


def _first_int(module: Any, names: tuple[str, ...]) -> int | None:
    for name in names:
        value = getattr(module, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def routers(model: Any) -> Iterator[tuple[str, int, int, bool]]:
    """(path, k, E, has a capacity limit) of every module that states both its experts per token and its experts."""
    for path, module in model.named_modules():
        k, e = _first_int(module, TOP_K), _first_int(module, EXPERTS)
        if k is not None and e is not None and 0 < k <= e:
            limited = any(getattr(module, n, None) not in (None, 0) for n in CAPACITY)
            yield path, k, e, limited


def routing_notes(model: Any) -> list[str]:
    """One note on the routing the count assumed (none for a model without routed experts)."""
    every = list(routers(model))  # a block or the whole model may state k and E too: the innermost ones route
    found = [
        r
        for r in every
        if not any(o[0] != r[0] and o[0].startswith(r[0] + ".") or (r[0] == "" and o[0]) for o in every)
    ]
    if not found:
        return []
    shapes = sorted({(k, e) for _, k, e, _ in found})
    said = ", ".join(f"{k} of {e}" for k, e in shapes)
    if any(limited for *_, limited in found):
        paths = ", ".join(p for p, *_, limited in found if limited)[:120]
        return [
            f"routed experts ({said} per token) with a capacity limit ({paths}): the tokens each expert takes depend "
            f"on the router's choices; on meta they are not known, so count on real tensors (--device cpu) with "
            f"real inputs to see them"
        ]
    return [
        f"routed experts: plain top-k routing, {said} experts per token ({len(found)} routers): every token runs k "
        f"expert passes whatever the router chose, so the experts' FLOPs are the same for any choice of experts"
    ]

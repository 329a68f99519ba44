"""What a count of a mixture of experts assumed about its router, and what each router was seen to do, in words
(the routers and their numbers: exact/routing.py)."""

from __future__ import annotations

from typing import Any

from flopcheck.exact.routing import Routed, innermost


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

"""Masked attention's conventions as causes, each proved by the exact count's own attention records.

The exact count records every F.scaled_dot_product_attention call (exact.attention_work.AttentionCall: its path,
heads, tq x tk, its dense and needed pairs, and the pattern its mask's values were read as). Its headline counts every
call dense. A number made with another convention differs by exact deltas over the calls of one pattern:
- needed (what the mask lets through): causal T(T+1)/2 a head (FC223), a window's sum_i min(i+1, W) (FC224), the
  real tokens' keys under key padding (FC225), packed documents' sum s_i^2 (FC226), another mask's True pairs (FC228):
  each needed - dense over its calls;
- padded (FC227): packed documents as a padded batch, n x max_len^2 a head: padded - dense.
A call whose mask was not read (on meta, or too large) has no pattern and enters neither: its needed is unknown.
Torch-free: the calls are read by their fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flopcheck.reconciler import causes as K
from flopcheck.types import Finding

# a call's pattern (its word before any ':') -> the cause that counts it as needed
NEEDED_BY_PATTERN = {
    "causal": K.CAUSAL_AS_NEEDED,
    "window": K.WINDOW_AS_NEEDED,
    "padding": K.PADDING_LEFT_OUT,
    "causal-padding": K.PADDING_LEFT_OUT,
    "packed": K.PACKED_AS_NEEDED,
    "packed-causal": K.PACKED_AS_NEEDED,
    "other": K.MASK_AS_NEEDED,
    "block mask": K.MASK_AS_NEEDED,  # a flex_attention BlockMask's listed blocks (exact.block_mask)
}
MASKED_CAUSES = (*dict.fromkeys(NEEDED_BY_PATTERN.values()), K.PACKED_AS_PADDED)

# how each pattern's needed pairs are counted, a head, in words
RULE = {
    "causal": "causal: T(T+1)/2 of T^2",
    "window": "a causal window of {w}: sum_i min(i+1, {w}) of T^2",
    "padding": "key padding: the real tokens' keys",
    "causal-padding": "causal over the real tokens' keys",
    "packed": "packed documents: sum s_i^2 of (sum s_i)^2",
    "packed-causal": "packed documents, causal within each: sum s_i(s_i+1)/2",
    "other": "a mask tensor's True pairs",
    "block mask": "a block mask's listed blocks' pairs",
}


def _kind(call: Any) -> str:
    """A call's pattern without its parameter ('window:64' -> 'window')."""
    return str(call.pattern).split(":")[0]


def _paths(calls: list[Any], limit: int = 2) -> str:
    names = list(dict.fromkeys(c.path or "(top)" for c in calls))
    return ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


def _rules(calls: list[Any]) -> str:
    """The rule of each pattern among the calls, with a head's pairs of the first call of it: 'causal: T(T+1)/2 of T^2
    = 136 of 256 a head (T = 16)'."""
    out = []
    for pattern in dict.fromkeys(c.pattern for c in calls):
        c = next(c for c in calls if c.pattern == pattern)
        w = pattern.split(":")[1] if ":" in pattern else ""
        t = f"T = {c.tq}" if c.tq == c.tk else f"{c.tq} queries x {c.tk} keys"
        out.append(f"{RULE[_kind(c)].format(w=w)} = {c.needed // c.heads:,} of {c.dense // c.heads:,} a head ({t})")
    return "; ".join(out)


def _finding(cause: K.Cause, calls: list[Any], pairs: str) -> Finding | None:
    """The cause over these calls: its delta, every call's `pairs` (needed or padded) less its dense, in FLOPs."""
    delta = sum(c.flops(getattr(c, pairs)) - c.flops(c.dense) for c in calls)
    if not delta:
        return None
    n = sum(c.calls for c in calls)
    said = f"{n} SDPA call{'s' if n > 1 else ''} at {_paths(calls)}"
    if pairs == "padded":
        per = ", ".join(dict.fromkeys(f"{c.padded // c.heads:,} of {c.dense // c.heads:,}" for c in calls))
        return cause.finding(delta, f"{said}: padded n x max_len^2 = {per} pairs a head")
    return cause.finding(delta, f"{said}: {_rules(calls)}")


def needed(calls: Iterable[Any]) -> list[Finding]:
    """From the dense headline to attention at its needed pairs: one finding per cause, over the calls of its
    patterns."""
    by: dict[K.Cause, list[Any]] = {}
    for c in calls:
        if c.pattern:
            by.setdefault(NEEDED_BY_PATTERN[_kind(c)], []).append(c)
    return [f for cause, mine in by.items() if (f := _finding(cause, mine, "needed")) is not None]


def padded(calls: Iterable[Any]) -> list[Finding]:
    """From the dense headline to packed documents counted as a padded batch (n x max_len^2): FC227 over the packed
    calls."""
    packed = [c for c in calls if _kind(c).startswith("packed")]
    found = _finding(K.PACKED_AS_PADDED, packed, "padded") if packed else None
    return [found] if found is not None else []


def words(findings: Iterable[Finding]) -> str:
    """A reading's coverage in words from its masked findings: 'causal attention counted as needed, T(T+1)/2 pairs'."""
    said = {
        K.CAUSAL_AS_NEEDED: "causal attention counted as needed, T(T+1)/2 pairs",
        K.WINDOW_AS_NEEDED: "sliding-window attention counted as needed, sum min(i+1, W) pairs",
        K.PADDING_LEFT_OUT: "padding left out of attention (the real tokens' keys)",
        K.PACKED_AS_NEEDED: "packed sequences counted as needed, sum s_i^2 pairs",
        K.MASK_AS_NEEDED: "masked attention counted as needed, the mask's True pairs",
        K.PACKED_AS_PADDED: "packed sequences counted as padded, n x max_len^2 pairs",
    }
    return "; ".join(dict.fromkeys(said[K.of(f)] for f in findings if K.of(f) in said))

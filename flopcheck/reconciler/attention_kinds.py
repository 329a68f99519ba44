"""Which half of the attention a counter missed, QK^T or attn@V, proved by its own detail: the op it skipped, or the
op it counted, and what that op did in the exact count. In self-attention the two halves are the same size
(2*T^2*d each), so a counter's total alone cannot tell them apart; only the ops can.
"""

from __future__ import annotations

from typing import Any

from flopcheck.op_names import bare, ran_as
from flopcheck.types import ATTENTION_KINDS, Count, Kind, Work


def op_kinds(name: str, ref: Any) -> dict[Kind, int]:
    """The attention halves an op of this name did in the exact count, kind -> FLOPs ('baddbmm' -> {QK^T: ...}); or
    what the ops it ran as did ('matmul' ran as bmm)."""
    for op in (bare(name), *ran_as(name)):
        kinds: dict[Kind, int] = {}
        for r in ref.exact.counted:
            if r.kind in ATTENTION_KINDS and bare(r.op) == op:
                kinds[r.kind] = kinds.get(r.kind, 0) + r.flops
        if kinds:
            return kinds
    return {}


def _matmul_skips(count: Count) -> list[str]:
    """The ops (not modules) the counter skipped that do matmul or attention work."""
    return [s.name for s in count.skipped if not s.own_forward and s.work in (Work.MATMUL, Work.ATTENTION)]


def missing_half(count: Count, ref: Any, counted_ops: list[str], stated: set[Any]) -> tuple[Kind, str] | None:
    """(the half the counter missed, the detail that proves it): the kinds its items state (one half alone), an op it
    skipped that did only that half in the exact count, or the attention ops it counted doing only the other half;
    None where its detail does not say."""
    if len(stated) == 1:
        (kind,) = stated
        return _other(kind), f"the counter's items state {_words(kind)} alone"
    for name in _matmul_skips(count):
        kinds = op_kinds(name, ref)
        if len(kinds) == 1:
            (kind,) = kinds
            return kind, f"skipped {name}: the exact count's {_words(kind)}"
    done = {k for name in counted_ops for k in op_kinds(name, ref)}
    if len(done) == 1 and counted_ops:
        (kind,) = done
        return _other(kind), f"counted {', '.join(dict.fromkeys(counted_ops))}: the exact count's {_words(kind)} alone"
    return None


def _other(kind: Kind) -> Kind:
    return Kind.ATTN_VALUE if kind is Kind.ATTN_SCORE else Kind.ATTN_SCORE


def _words(kind: Kind) -> str:
    return "QK^T" if kind is Kind.ATTN_SCORE else "attn@V"


__all__ = ["missing_half", "op_kinds"]

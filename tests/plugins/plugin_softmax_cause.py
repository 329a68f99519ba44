"""A cause from outside flopcheck, in one file: softmax counted at 5 FLOPs per element, detected in the parts a
counter's reading could not name. Loaded as a plugin (FLOPCHECK_PLUGINS=plugin_softmax_cause)."""

from __future__ import annotations

from flopcheck.reconciler.causes import cause
from flopcheck.reconciler.detectors import Evidence, detects, sources

SOFTMAX_FIVE = cause(
    "FC391",
    "softmax-five-per-element",
    "softmax was counted at 5 FLOPs per element (exp, max, subtract, sum, divide)",
    "leave softmax out of a multiply-add count, or state it",
)


@detects(SOFTMAX_FIVE)
def softmax_five(ev: Evidence):
    """The unread parts that came from a softmax item."""
    parts = [p for p in ev.unexplained() if p.source.startswith("softmax")]
    delta = sum(p.flops for p in parts)
    return SOFTMAX_FIVE.finding(delta, sources(parts)) if delta else None

"""What one op call costs, as the exact count's formulas return it: counted parts and uncounted bias adds.

Imports only the vocabulary, so a formula outside exact/ (custom_ops.py, a plugin's) returns these without importing
the counter.
"""

from __future__ import annotations

from dataclasses import dataclass

from flopcheck.types import Kind


@dataclass(frozen=True)
class Piece:
    """One counted piece of an op: `suffix` names it under the module path ('qk'), kind None = the layer's."""

    flops: int
    kind: Kind | None = None
    suffix: str = ""


@dataclass(frozen=True)
class OpCost:
    """What one op call costs: counted parts, plus uncounted bias-add elements."""

    parts: tuple[Piece, ...]
    bias_elements: int = 0

    @property
    def flops(self) -> int:
        """Counted FLOPs of the call."""
        return sum(p.flops for p in self.parts)

"""Hand-derived formulas, one module per model family; the family object (reference_models.families) names its own."""

from __future__ import annotations

from typing import Any

from flopcheck.types import Breakdown, Scope
from reference_models.families import BLOCK_LISTS, FAMILIES, family_of


def in_blocks(path: str) -> bool:
    """A term of the main transformer blocks (what the per-layer shortcut L*(24*T*d^2 + 4*T^2*d) covers)."""
    return path.startswith(BLOCK_LISTS)


def per_layer(n: int, layers: int, t: int, d: int) -> tuple[int, int]:
    """The hand shortcut for a whole model: (N*L*24*T*d^2, N*L*4*T^2*d), block linears and attention, FLOPs.
    Exact for DiT's blocks; the inference arithmetic applies it to every model over its joint T = I + S at one width."""
    return n * layers * 24 * t * d * d, n * layers * 4 * t * t * d


def formula_breakdown(name: str, config: Any, batch: int = 1, scope: Scope = Scope()) -> Breakdown:
    """The formula's Breakdown for `config` at `batch`, scaled to `scope`."""
    if config.family not in FAMILIES:
        raise KeyError(f"no formula for model family {config.family!r}; known: {sorted(FAMILIES)}")
    breakdown: Breakdown = family_of(config).load("formula")(name, config, batch)
    return breakdown.scoped(scope)


def exact_matches(exact_by_path: dict[str, int], formula: Breakdown) -> bool:
    """The exact count equals the formula term by term (and so in total): the one check of a formula."""
    return exact_by_path == formula.by_path()


__all__ = ["BLOCK_LISTS", "exact_matches", "formula_breakdown", "in_blocks", "per_layer"]

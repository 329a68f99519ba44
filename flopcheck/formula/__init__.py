"""Hand-derived formulas, one module per model family, chosen through a registry."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flopcheck.formula.dit import dit_breakdown
from flopcheck.formula.text_conditioned import text_conditioned_breakdown
from flopcheck.types import Breakdown, Scope
from reference_models.configs import FAMILIES

# family -> (name, config, batch) -> one-forward Breakdown
FORMULAS: dict[str, Callable[[str, Any, int], Breakdown]] = {
    "dit": dit_breakdown,
    **{family: text_conditioned_breakdown for family in FAMILIES},
}


# ModuleLists of transformer blocks across the families ("txt_in.blocks.*." is HunyuanVideo's refiner, not one)
BLOCK_LISTS = ("blocks.*.", "transformer_blocks.*.", "double_blocks.*.", "single_blocks.*.")


def in_blocks(path: str) -> bool:
    """A term of the main transformer blocks (what seed 001's L*(24*T*d^2 + 4*T^2*d) covers)."""
    return path.startswith(BLOCK_LISTS)


def per_layer(n: int, layers: int, t: int, d: int) -> tuple[int, int]:
    """The hand shortcut for a whole model: (N*L*24*T*d^2, N*L*4*T^2*d), block linears and attention, FLOPs.
    Exact for DiT's blocks; seed 001 applies it to every model over its joint T = I + S at one width."""
    return n * layers * 24 * t * d * d, n * layers * 4 * t * t * d


def formula_breakdown(name: str, config: Any, batch: int = 1, scope: Scope = Scope()) -> Breakdown:
    """The formula's Breakdown for `config` at `batch`, scaled to `scope`."""
    if config.family not in FORMULAS:
        raise KeyError(f"no formula for model family {config.family!r}; known: {sorted(FORMULAS)}")
    return FORMULAS[config.family](name, config, batch).scoped(scope)


__all__ = ["BLOCK_LISTS", "FORMULAS", "formula_breakdown", "in_blocks", "per_layer"]

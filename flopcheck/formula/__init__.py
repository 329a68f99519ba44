"""Hand-derived formulas, one module per model family, chosen through a registry."""
from __future__ import annotations

from typing import Any, Callable

from flopcheck.formula.dit import dit_breakdown
from flopcheck.formula.text_conditioned import text_conditioned_breakdown
from flopcheck.types import Breakdown, Scope

# family -> (name, config, batch) -> one-forward Breakdown
FORMULAS: dict[str, Callable[[str, Any, int], Breakdown]] = {
    "dit": dit_breakdown,
    **{family: text_conditioned_breakdown for family in ("mmdit", "flux", "wan", "cogvideox")},
}


def formula_breakdown(name: str, config: Any, batch: int = 1, scope: Scope = Scope()) -> Breakdown:
    """The formula's Breakdown for `config` at `batch`, scaled to `scope`."""
    if config.family not in FORMULAS:
        raise KeyError(f"no formula for model family {config.family!r}; known: {sorted(FORMULAS)}")
    return FORMULAS[config.family](name, config, batch).scoped(scope)


__all__ = ["FORMULAS", "formula_breakdown"]

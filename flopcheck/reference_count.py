"""The count of a reference model: the formula and the exact count, side by side, for one scope."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from flopcheck.exact import ExactCount, exact_count
from flopcheck.formula import formula_breakdown
from flopcheck.types import Breakdown, Scope


@dataclass(frozen=True)
class CountResult:
    """Formula and exact count of one model, one input, one scope; all integers in FLOPs."""

    name: str
    config: Any
    batch: int
    scope: Scope
    formula: Breakdown  # scaled to the scope
    exact: ExactCount  # one counted forward (batch 2N under CFG)
    training: Any = None  # a training scope: the exact step (exact.training.TrainingCount), forward and backward

    @property
    def exact_factor(self) -> int:
        """What multiplies the counted forward: steps and training (CFG is already in its batch)."""
        return self.scope.steps * (3 if self.scope.training else 1)

    @property
    def exact_total(self) -> int:
        """The exact count scaled to the scope, FLOPs."""
        return self.exact.total * self.exact_factor

    def exact_by_path(self) -> dict[str, int]:
        """Exact FLOPs per path, scaled to the scope."""
        return {p: f * self.exact_factor for p, f in self.exact.by_path().items()}

    @property
    def agrees(self) -> bool:
        """Formula and exact count equal in total and term by term."""
        return exact_matches(self.exact_by_path(), self.formula)


def exact_matches(exact_by_path: dict[str, int], formula: Breakdown) -> bool:
    """The exact count equals the formula term by term (and so in total): the one check of a formula."""
    return exact_by_path == formula.by_path()


def count_reference(name: str, batch: int = 1, scope: Scope = Scope(), device: str = "meta",
                    frozen: tuple[str, ...] = (), checkpointed: tuple[str, ...] = (), optimizer: str = "",
                    **overrides: Any) -> CountResult:
    """Formula and exact count for a registered model with overrides (input_size, attn, space)."""
    from reference_models import get_config

    config = get_config(name, **overrides)
    formula = formula_breakdown(name, config, batch=batch, scope=scope)
    exact = exact_count(name, config, batch=batch, cfg=scope.cfg, device=device)
    step = training_step(name, config, batch, tuple(frozen), tuple(checkpointed), optimizer) if scope.training else None
    return CountResult(name, config, batch, scope, formula, exact, step)


@lru_cache(maxsize=32)
def training_step(name: str, config: Any, batch: int = 1, frozen: tuple[str, ...] = (),
                  checkpointed: tuple[str, ...] = (), optimizer: str = ""):
    """The exact training step of a reference model on meta: its forward, a mean loss, its backward, the modules
    matching `frozen` training no weights, those matching `checkpointed` recomputed in the backward (once per
    config: a claims file asks again)."""
    from flopcheck.exact.training import count_training_step
    from reference_models import prepare

    model, inputs, forward = prepare(config, batch=batch, device="meta")
    return count_training_step(model, inputs, forward, getattr(model, "flop_kinds", ()), frozen_paths=frozen,
                               checkpointed=checkpointed, optimizer=optimizer, model=name, attn=config.attn,
                               device="meta")

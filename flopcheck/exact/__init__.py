"""flopcheck's exact count: every op of a forward, attributed to a module path and a kind of term."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from flopcheck.counted import ExactCount, OpRecord
from flopcheck.custom_ops import CUSTOM
from flopcheck.exact.counter import ExactCounter, count_forward
from flopcheck.exact.ops import FORMULAS  # the package registers every op family's formulas
from reference_models import prepare


def flop_kinds(model: Any) -> Iterable[tuple[str, str]]:
    """The model's kind map (its `flop_kinds`: (path pattern, kind) pairs), () when it declares none."""
    kinds: Iterable[tuple[str, str]] = getattr(model, "flop_kinds", ())
    return kinds


def exact_count(name: str, config: Any, batch: int = 1, cfg: bool = False, device: str = "meta") -> ExactCount:
    """Count one forward of a reference model config (with cfg: forward_with_cfg on batch 2N); on meta once a
    process per (model, config, batch, cfg) and op formulas registered: on meta no value enters the count."""
    if device == "meta" and _hashable(config):
        return _on_meta(name, config, batch, cfg, (len(FORMULAS), len(CUSTOM)))
    return count_prepared(name, config, prepare(config, batch=batch, device=device, cfg=cfg), device)


def _hashable(config: Any) -> bool:
    """A config that can key the memo (every registered one; a stand-in's field made a list would not)."""
    try:
        hash(config)
    except TypeError:
        return False
    return True


@lru_cache(maxsize=128)
def _on_meta(name: str, config: Any, batch: int, cfg: bool, formulas: tuple[int, int]) -> ExactCount:  # noqa: ARG001
    """exact_count on meta (the counts are frozen; `formulas`, a key: how many aten and custom op formulas were
    registered, a plugin's too)."""
    return count_prepared(name, config, prepare(config, batch=batch, device="meta", cfg=cfg), "meta")


def count_prepared(name: str, config: Any, prepared: tuple[Any, Any, Any], device: str = "meta") -> ExactCount:
    """Count one forward of (model, inputs, forward) as `prepare` gives it, using the model's kind map."""
    model, inputs, forward = prepared
    return count_forward(model, inputs, forward, flop_kinds(model), model=name, attn=config.attn, device=device)


__all__ = ["ExactCount", "ExactCounter", "OpRecord", "count_forward", "count_prepared", "exact_count", "flop_kinds"]

"""Helpers for one's own tests: assert a FLOP figure, and say why it is off when it is.

    from flopcheck.testing import assert_flops_close
    assert_flops_close(model, (x,), 4.6e9, unit="MAC")   # passes within 10%

A failure's message is the reconciliation: which convention (FLOP or MAC) and which causes
(attention missing, blocks only, ...) turn the true count into the asserted number.
"""
from __future__ import annotations

from typing import Any

from flopcheck.types import Breakdown, Unit


class FlopAssertionError(AssertionError):
    """A FLOP figure that does not hold, with the reading that explains it in the message."""


def _as_tuple(inputs: Any) -> tuple:
    return inputs if isinstance(inputs, tuple) else (inputs,)


def exact_flops(model, inputs, kwargs: dict | None = None) -> int:
    """flopcheck's exact count of model(*inputs, **kwargs), FLOPs (2 per multiply-add)."""
    return _count(model, inputs, kwargs).total


def _count(model, inputs, kwargs: dict | None = None):
    from flopcheck.exact import count_forward

    return count_forward(model, _as_tuple(inputs), kind_map=getattr(model, "flop_kinds", ()), kwargs=kwargs)


def explain_number(value: float, breakdown: Breakdown) -> list[tuple[float, Any]]:
    """Readings of a printed number against a breakdown, nearest first: (relative distance, explanation)."""
    from flopcheck.reconciler import blackbox as B

    readings = B.readings(units=(Unit.FLOP, Unit.MAC), per_token=(False,))
    explanations = [B.explain(r, breakdown, None, {False: 0}) for r in readings]
    # the number each reading would print: a MAC reading prints FLOPs / 2
    scored = [(abs(float(e.value) - value) / max(value, 1e-30), e) for e in explanations]
    return sorted(scored, key=lambda se: (round(se[0], 12), se[1].reading.causes()))


def _message(value: float, unit: Unit, truth: int, breakdown: Breakdown, exact: bool = False) -> str:
    from flopcheck.fmt import commas
    from flopcheck.reconciler.causes import UNEXPLAINED_RESIDUAL

    stated_flops = value * unit.flops_per_unit
    in_flops = f" ({stated_flops:,.0f} FLOPs)" if unit is Unit.MAC else ""
    lines = [f"expected {value:,.0f} {unit.value}s{in_flops} but the exact count is {commas(truth)} FLOPs "
             f"({stated_flops / truth:.3f}x)"]
    distance, best = explain_number(value, breakdown)[0]
    if exact and distance:
        residual = value - float(best.value)
        lines.append(f"no reading explains it exactly; the nearest, {best.reading.describe()}, leaves "
                     f"{residual:+,.0f} {best.reading.unit.value}s unexplained ({UNEXPLAINED_RESIDUAL.code})")
    elif distance < 0.01:
        causes = [f"{f.code} {f.title}" for f in best.findings] or ["nothing: a rounding"]
        lines.append(f"the number reads as {best.reading.describe()}: " + ", ".join(causes))
        if best.reading.unit is Unit.MAC and unit is Unit.FLOP:
            lines.append("it is a MAC figure (one multiply-add = 1) asserted as FLOPs (= 2): pass unit='MAC' "
                         "or double it")
    else:
        lines.append(f"no reading explains it; the nearest is {best.reading.describe()} "
                     f"({distance:.1%} away)")
    return "\n".join(lines)


def _checked(name: str, value, low: float = 0.0, low_open: bool = True) -> float:
    """A finite number above `low` (or at it, when not low_open); anything else is bad input, named."""
    import math

    from flopcheck.errors import InputError

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or (
            value <= low if low_open else value < low):
        bound = f"> {low:g}" if low_open else f">= {low:g}"
        raise InputError(f"{name} must be a finite number {bound}, got {value!r}")
    return value


def _unit(unit: str | Unit) -> Unit:
    from flopcheck.errors import InputError

    try:
        return unit if isinstance(unit, Unit) else Unit(str(unit).upper().rstrip("S"))
    except ValueError:
        raise InputError(f"unit must be 'FLOP' or 'MAC', got {unit!r}") from None


def assert_flops_close(model, inputs, expected: float, rtol: float = 0.10, unit: str | Unit = "FLOP",
                       kwargs: dict | None = None) -> int:
    """Assert `expected` (in `unit`: 'FLOP' or 'MAC') is within rtol of the exact count of
    model(*inputs, **kwargs); return the exact FLOPs. The failure message names the convention and causes."""
    _checked("expected", expected, low_open=False)
    _checked("rtol", rtol, low_open=False)
    stated = _unit(unit)
    count = _count(model, inputs, kwargs)
    if not count.complete:
        raise FlopAssertionError(f"no exact count to compare {expected:,} {stated.value}s with: "
                                 + count.incompleteness())
    truth = count.total
    if abs(expected * stated.flops_per_unit - truth) <= rtol * truth:
        return truth
    if truth == 0:
        raise FlopAssertionError(f"expected {expected:,} {stated.value}s but the model does no multiply-adds "
                                 f"(the exact count is 0 FLOPs)")
    raise FlopAssertionError(_message(expected, stated, truth, Breakdown(type(model).__name__, count.terms())))


def assert_reconciles(model, inputs, reference: float, unit: str | Unit = "FLOP", kwargs: dict | None = None) -> None:
    """Assert another tool's number (`reference`, in `unit`) is explained exactly by a reading of
    the exact count of model(*inputs, **kwargs): a known convention and known causes, nothing unexplained."""
    _checked("reference", reference)
    stated = _unit(unit)
    count = _count(model, inputs, kwargs)
    if not count.complete:
        raise FlopAssertionError(f"no exact count to reconcile {reference:,} {stated.value}s with: "
                                 + count.incompleteness())
    if count.total == 0:
        raise FlopAssertionError(f"{reference:,} {stated.value}s cannot be explained: the model does no "
                                 f"multiply-adds (the exact count is 0 FLOPs)")
    breakdown = Breakdown(type(model).__name__, count.terms())
    distance, best = explain_number(reference, breakdown)[0]
    if best.reading.unit is not stated or distance > 1e-9:
        raise FlopAssertionError(_message(reference, stated, count.total, breakdown, exact=True))

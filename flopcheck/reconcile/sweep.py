"""The T-sweep as a command's worth of work: counts at several input sizes, fitted, judged."""
from __future__ import annotations

from dataclasses import dataclass

from flopcheck.formula import formula_breakdown
from flopcheck.reconcile.blackbox import Fit, SweepVerdict, fit_quadratic, judge
from flopcheck.types import Count, Reconciliation


def sweep_sizes(patch: int) -> list[int]:
    """Four input sizes giving T = 64, 256, 576, 1024 tokens: three to fit, one to check."""
    return [patch * k for k in (8, 16, 24, 32)]


@dataclass(frozen=True)
class Sweep:
    """One counter's totals over T, the fits, the verdict, and whether it agrees with the white box."""

    counter: str
    attn: str
    points: tuple[tuple[int, float], ...]
    fit: Fit
    formula: Fit
    verdict: SweepVerdict
    agrees: bool | None  # None when there is no white-box reconciliation to compare


def white_box_says(r: Reconciliation) -> tuple[str, str]:
    """(unit, attention) as the white-box findings have it."""
    codes = {f.code for f in r.findings}
    attention = "missing" if codes & {"FC200", "FC201", "FC204", "FC207"} else "qk-only" if "FC202" in codes \
        else "counted"
    return r.unit.value, attention


def sweep(counts: list[Count], model: str, attn: str, white: Reconciliation | None = None) -> Sweep:
    """Fit the counter's reported totals and the formula's FLOPs over T; judge unit and coverage."""
    from reference_models import get_config

    points, formula_points = [], []
    for c in sorted((c for c in counts if c.ok), key=lambda c: c.input_size):
        cfg = get_config(model, input_size=c.input_size, attn=attn)
        points.append((cfg.tokens, c.reported))
        formula_points.append((cfg.tokens, formula_breakdown(model, cfg).total))
    fit, formula = fit_quadratic(points), fit_quadratic(formula_points)
    verdict = judge(fit, formula)
    agrees = None
    if white is not None and white.counter_flops is not None and verdict.unit != "neither":
        agrees = (verdict.unit.split()[0], verdict.attention) == white_box_says(white)
    return Sweep(counts[0].counter, attn, tuple(points), fit, formula, verdict, agrees)


def describe(s: Sweep) -> str:
    """One line: the ratios and what they say."""
    v = s.verdict
    check = {True: "agrees with the white box", False: "DISAGREES with the white box", None: ""}[s.agrees]
    return (f"  {s.counter:18s} T-coef x{v.b_ratio:.3f}  T^2-coef x{v.c_ratio:.3f}  -> {v.unit}, attention "
            f"{v.attention}  (fit misfit {v.misfit:,.0f})  {check}").rstrip()

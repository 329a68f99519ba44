"""The T-sweep as a command's worth of work: counts at several input sizes, fitted, judged, and set
against the white-box reconciliation of the same counter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flopcheck.formula import formula_breakdown
from flopcheck.reconciler import causes as K
from flopcheck.reconciler.blackbox import Fit, SweepVerdict, fit_quadratic, judge
from flopcheck.types import Attention, Count, Outcome, Reconciliation, Unit
from reference_models import get_config


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


def white_box_says(r: Reconciliation) -> tuple[Unit, Attention]:
    """(unit, attention) as the white-box findings have it."""
    said = {K.of(f).attention for f in r.findings}
    return r.unit, next((a for a in (Attention.MISSING, Attention.QK_ONLY) if a in said), Attention.COUNTED)


def sweep(counts: Sequence[Outcome], model: str, attn: str, white: Reconciliation | None = None) -> Sweep:
    """Fit the counter's reported totals and the formula's FLOPs over T; judge unit and coverage."""
    points: list[tuple[int, float]] = []
    formula_points: list[tuple[int, float]] = []
    for c in sorted((c for c in counts if isinstance(c, Count)), key=lambda c: c.input_size or 0):  # a sweep: sized
        cfg = get_config(model, input_size=c.input_size, attn=attn)
        points.append((cfg.tokens, c.reported))
        formula_points.append((cfg.tokens, formula_breakdown(model, cfg).total))
    fit, formula = fit_quadratic(points), fit_quadratic(formula_points)
    verdict = judge(fit, formula)
    agrees = None
    if white is not None and white.counter_flops is not None and verdict.unit is not None:
        agrees = (verdict.unit, verdict.attention) == white_box_says(white)
    return Sweep(counts[0].counter, attn, tuple(points), fit, formula, verdict, agrees)


def sweeps_for(results: list[Reconciliation], counts: list[Outcome], sizes: list[int]) -> list[Sweep]:
    """A sweep for every reconciliation whose counter counted three or more of `sizes` on its attention path."""
    out = []
    for r in results:
        mine = [c for c in counts if (c.counter, c.attn) == (r.counter, r.attn) and c.input_size in sizes]
        if sum(isinstance(c, Count) for c in mine) >= 3:
            out.append(sweep(mine, r.model, r.attn, r))
    return out


def sweep_of(sweeps: list[Sweep], r: Reconciliation) -> Sweep | None:
    """The sweep of the same counter and attention path as a reconciliation, if there is one."""
    return next((s for s in sweeps if (s.counter, s.attn) == (r.counter, r.attn)), None)

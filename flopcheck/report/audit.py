"""Audit verdicts as text and as JSON-ready dicts."""
from __future__ import annotations

from decimal import Decimal

from flopcheck.auditor import Verdict
from flopcheck.fmt import commas, si
from flopcheck.types import Unit, scope_words


def _value(v: Decimal, unit: Unit) -> str:
    """An absolute value in a unit, with a prefix: 118.62 GMACs."""
    return si(int(v * unit.flops_per_unit), unit)


def _where(v: Verdict) -> str:
    c = v.claim
    res = f"{c.resolution[0]} px" if c.resolution and c.resolution[0] == c.resolution[1] else (
        f"{c.resolution[0]}x{c.resolution[1]}" if c.resolution else "the model's default input")
    scope = scope_words(c.batch, c.cfg, c.steps, c.training)
    part = {"model": "", "embeddings": ", embedding layers only", "block": ", one block",
            "linear": ", block linears only", "attention": ", attention only"}[c.part]
    frames = f" x {c.frames} frames" if c.frames else ""
    return f"{res}{frames}{', on pixels' if c.space == 'pixel' else ''}{part}, " + (" x ".join(scope) or "one forward")


def to_text(v: Verdict) -> str:
    """Claim, verdict with its reading, the truth, the runners-up."""
    c, best = v.claim, v.best
    unit = best.reading.unit
    head = c.text if c.text.startswith(c.model) else f"{c.model} {c.text}"
    lines = [f'"{head}" · {_where(v)}' + (f" · {c.source}" if c.source else "")]
    off = f"claim off by {float(best.relative):.3%}" if best.distance else "exact"
    allowed = f"±{_value(c.allowed, unit)}"
    said = {"consistent": f"consistent: {best.reading.describe()} gives {_value(best.value, unit)} ({off}, within {allowed})",
            "wrong": f"WRONG: nearest reading {best.reading.describe()} gives {_value(best.value, unit)} ({off}, "
                     f"beyond {allowed}); the true value is "
                     f"{_value(Decimal(v.true_flops) / c.label_unit.flops_per_unit, c.label_unit)}",
            "unexplained": f"UNEXPLAINED: no reading within 10%; nearest {best.reading.describe()} gives "
                           f"{_value(best.value, unit)} ({off})",
            "incomplete": f"INCOMPLETE: no verdict, the reference is {v.reference}"}[v.verdict]
    lines.append(f"  verdict     {said}")
    lines.append(f"  true        {commas(v.true_flops)} FLOPs = {si(v.true_flops)} = {si(v.true_flops, Unit.MAC)} "
                 f"({_where(v)}, {v.reference})")
    for f in best.explanation.findings:
        lines.append(f"  {f.code:11s} {f.title} {f.delta:+,} FLOPs")
    for r in v.runners_up[:3]:
        lines.append(f"  runner-up   {r.reading.describe()}: {_value(r.value, r.reading.unit)} "
                     f"(off by {float(r.relative):.3%})")
    return "\n".join(lines)


def to_dict(v: Verdict) -> dict:
    """JSON-ready: integers in FLOPs, the verdict, the reading and the candidates."""
    best = v.best
    return {
        "id": v.claim.id, "claim": v.claim.text, "model": v.claim.model, "source": v.claim.source,
        "verdict": v.verdict, "unit": best.reading.unit.value, "attention": v.attention,
        "coverage": best.reading.coverage, "scope": v.scope, "space": "pixel" if best.reading.pixel else "latent",
        "claimed_flops": int(v.claim.claimed_flops), "reading_flops": best.explanation.flops,
        "true_flops": v.true_flops, "relative_error": float(best.relative),
        "findings": [{"code": f.code, "title": f.title, "delta_flops": f.delta} for f in best.explanation.findings],
        "candidates": [{"reading": c.reading.describe(), "unit": c.reading.unit.value, "flops": c.explanation.flops,
                        "relative_error": float(c.relative)} for c in (best, *v.runners_up)],
    }

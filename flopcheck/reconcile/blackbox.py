"""Black box: a total with no detail, explained by the reading that reproduces it.

A reading is a convention (FLOP or MAC), a coverage (everything; attention missing; QK^T only;
the ViT 12Td^2 shortcut: block linears only), per-sample layers counted per token or not, and a
scope (batch, CFG, steps, training), on the latent or on pixels. Each reading gives an exact
value; readings are ranked by their distance from the total. The best reading's findings carry
exact deltas, applied in order, so reported = reference + sum(deltas) + residual.

The T-sweep: totals at three or more token counts fit a + b*T + c*T^2 exactly; the counter's b and
c against the formula's name its unit and its attention coverage from totals alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from itertools import product

from flopcheck.reconcile.causes import CAUSES
from flopcheck.types import Breakdown, Finding, Kind, Unit

COVERAGES = ("full", "attention-missing", "qk-only", "blocks-only", "linear-only")


@dataclass(frozen=True)
class Reading:
    """One way a number could have been produced."""

    unit: Unit = Unit.FLOP
    coverage: str = "full"
    per_sample_per_token: bool = False
    batch: int = 1
    cfg: bool = False
    steps: int = 1
    training: bool = False
    pixel: bool = False
    norms: int = 0  # LayerNorm work counted, in the reading's unit per normalised element (fvcore 4, thop 2)

    def describe(self) -> str:
        parts = [self.unit.value + "s", {"full": "attention counted", "attention-missing": "attention missing",
                                         "qk-only": "QK^T only", "blocks-only": "blocks only (24Td^2 + 4T^2d)",
                                         "linear-only": "block linears only (12Td^2)"}
                 [self.coverage]]
        parts += [f"LayerNorm {self.norms} per element"] if self.norms else []
        parts += ["adaLN per token"] if self.per_sample_per_token else []
        parts += [f"batch {self.batch}"] if self.batch > 1 else []
        parts += ["CFG x2"] if self.cfg else []
        parts += [f"{self.steps} steps"] if self.steps > 1 else []
        parts += ["training x3"] if self.training else []
        parts += ["pixel space"] if self.pixel else []
        return ", ".join(parts)


@dataclass(frozen=True)
class Explanation:
    """A reading, the FLOPs it implies, and the findings that lead from the reference to it."""

    reading: Reading
    flops: int  # the reading's value in FLOPs
    value: Fraction  # the reading's value in its unit
    findings: tuple[Finding, ...] = field(default_factory=tuple)


def _f(code: str, delta: int, evidence: str = "") -> Finding:
    return Finding(code, CAUSES[code].slug, delta, evidence)


def _block_linears(b: Breakdown) -> int:
    """The per-token projections inside the transformer blocks (not the text embedders or a token refiner)."""
    from flopcheck.formula import in_blocks

    return sum(t.flops for t in b.terms if t.kind is Kind.LINEAR and in_blocks(t.path))


def _per_layer_formula(b: Breakdown) -> int | None:
    """N * L * (24*T*d^2 + 4*T^2*d) from the breakdown's symbols (L counts single-stream blocks too; T = I + S):
    the hand formula for a whole model. For DiT it equals the blocks' own terms; for Wan it does not."""
    from flopcheck.formula import per_layer

    s = dict(b.symbols)
    if not {"T", "d", "L"} <= set(s):
        return None
    return sum(per_layer(s.get("N", 1), s["L"] + s.get("Ls", 0), s["T"], s["d"]))


def _covered(b: Breakdown, coverage: str, per_token: bool, tokens: int) -> tuple[int, list[Finding]]:
    """One forward's FLOPs under a coverage, and the findings from the full reference to it."""
    kinds = b.by_kind()
    score, value = kinds.get(Kind.ATTN_SCORE, 0), kinds.get(Kind.ATTN_VALUE, 0)
    findings = []
    if coverage == "attention-missing":
        findings.append(_f("FC200", -(score + value)))
    elif coverage == "qk-only":
        findings.append(_f("FC202", -value))
    elif coverage == "linear-only":
        findings.append(_f("FC203", _block_linears(b) - b.total, "only the blocks' qkv, proj and MLP counted"))
    elif coverage == "blocks-only":
        per_layer = _per_layer_formula(b)
        kept = per_layer if per_layer is not None else _block_linears(b) + score + value
        findings.append(_f("FC208", kept - b.total, "L*(24*T*d^2 + 4*T^2*d) for the whole model: embeddings, "
                                                     "adaLN, timestep MLP and head left out, every block one width"))
    if per_token:
        findings.append(_f("FC401", (tokens - 1) * kinds.get(Kind.PER_SAMPLE, 0), f"per-sample terms x T={tokens}"))
    return b.total + sum(f.delta for f in findings), findings


def explain(reading: Reading, latent: Breakdown, pixel: Breakdown | None, tokens: dict[bool, int],
            norm_elements: dict[bool, int] | None = None) -> Explanation:
    """The value of one reading, with the findings that build it from the latent reference;
    norm_elements: LayerNorm outputs per forward (latent, pixels), for readings that count norms."""
    base = pixel if reading.pixel else latent
    findings = [_f("FC504", pixel.total - latent.total, "counted on pixels")] if reading.pixel else []
    flops, cov = _covered(base, reading.coverage, reading.per_sample_per_token, tokens[reading.pixel])
    findings += cov
    if reading.norms:
        norms = reading.norms * reading.unit.flops_per_unit * (norm_elements or {}).get(reading.pixel, 0)
        findings.append(_f("FC301", norms, f"{reading.norms} {reading.unit.value} per LayerNorm element"))
        flops += norms
    for code, factor, why in (("FC404", reading.batch, f"batch {reading.batch}"), ("FC501", 2 if reading.cfg else 1,
                              "CFG doubles the batch"), ("FC502", reading.steps, f"{reading.steps} steps"),
                              ("FC503", 3 if reading.training else 1, "fwd + bwd = 3 x fwd")):
        if factor > 1:
            findings.append(_f(code, flops * (factor - 1), why))
            flops *= factor
    value = Fraction(flops, reading.unit.flops_per_unit)
    if reading.unit is Unit.MAC:
        findings.append(_f("FC101", int(value) - flops, "MACs: FLOPs / 2"))
    return Explanation(reading, flops, value, tuple(findings))


def readings(units=(Unit.FLOP, Unit.MAC), batches=(1,), cfgs=(False,), steps=(1,), trainings=(False,),
             pixels=(False,), per_token=(False, True), norms=(0,)) -> list[Reading]:
    """Every combination of the given options (training never combines with steps or CFG)."""
    out = []
    for u, cov, pt, b, c, s, t, px, n in product(units, COVERAGES, per_token, batches, cfgs, steps, trainings, pixels,
                                                 norms):
        if t and (c or s > 1):
            continue
        out.append(Reading(u, cov, pt, b, c, s, t, px, n))
    return out


def rank(value: float, explanations: list[Explanation]) -> list[tuple[float, Explanation]]:
    """(relative distance, explanation), nearest first; ties broken by the simpler reading."""
    def simplicity(e: Explanation) -> int:
        r = e.reading
        return (r.coverage != "full") + (r.unit is Unit.MAC) + (r.norms > 0) + r.per_sample_per_token + (r.batch > 1) + r.cfg + (r.steps > 1) \
            + r.training + r.pixel

    scored = [(abs(float(e.value) - value) / max(abs(value), 1e-30), e) for e in explanations]
    return sorted(scored, key=lambda se: (se[0], simplicity(se[1])))


# ---------------------------------------------------------------------------------------------
# The T-sweep
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fit:
    """total(T) = a + b*T + c*T^2, exact, with the largest misfit over any further points."""

    a: Fraction
    b: Fraction
    c: Fraction
    misfit: Fraction = Fraction(0)


def fit_quadratic(points: list[tuple[int, int]]) -> Fit:
    """Solve a + bT + cT^2 through the first three (T, total) points exactly; check the rest."""
    if len({t for t, _ in points}) < 3:
        raise ValueError("the T-sweep needs totals at three or more token counts")
    (t1, y1), (t2, y2), (t3, y3) = [(Fraction(t), Fraction(y)) for t, y in points[:3]]
    c = ((y3 - y1) / (t3 - t1) - (y2 - y1) / (t2 - t1)) / (t3 - t2)
    b = (y2 - y1) / (t2 - t1) - c * (t1 + t2)
    a = y1 - b * t1 - c * t1 * t1
    misfit = max((abs(a + b * t + c * t * t - y) for t, y in points[3:]), default=Fraction(0))
    return Fit(a, b, c, misfit)


@dataclass(frozen=True)
class SweepVerdict:
    """What the coefficients say: the unit, the attention coverage, and the ratios they came from."""

    b_ratio: float  # counter's T coefficient / formula's, both in FLOPs-as-reported
    c_ratio: float  # counter's T^2 coefficient / formula's
    unit: str  # 'FLOP', 'MAC' or 'neither'
    attention: str  # 'counted', 'qk-only', 'missing' or 'unclear'
    misfit: float


def _near(x: float, targets: tuple[tuple[str, float], ...], tolerance: float) -> str | None:
    return next((name for name, r in targets if abs(x - r) <= tolerance * max(r, 1.0)), None)


def judge(counter: Fit, formula: Fit, tolerance: float = 0.05) -> SweepVerdict:
    """Name the unit from b (per-token work: FLOP 1, MAC 1/2) and the coverage from c / b; when the
    per-token work is off (layers dropped or counted per sample), c alone names unit and coverage."""
    b_ratio = float(counter.b / formula.b)
    c_ratio = float(counter.c / formula.c)
    units = (("FLOP", 1.0), ("MAC", 0.5))
    unit = _near(b_ratio, units, tolerance)
    if unit:
        coverage = c_ratio / dict(units)[unit]
        attention = _near(coverage, (("counted", 1.0), ("qk-only", 0.5), ("missing", 0.0)), tolerance) or "unclear"
    elif _near(c_ratio, units, tolerance):
        unit, attention = _near(c_ratio, units, tolerance) + " (from T^2)", "counted"
    else:
        unit = "neither"
        attention = "missing" if abs(c_ratio) <= tolerance else "unclear"
    return SweepVerdict(b_ratio, c_ratio, unit, attention, float(counter.misfit))

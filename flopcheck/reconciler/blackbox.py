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

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import product
from typing import TypeVar

from flopcheck.errors import InputError
from flopcheck.formula import per_layer
from flopcheck.reconciler import causes as K
from flopcheck.reconciler import masked
from flopcheck.types import Attention, Breakdown, BySpace, Finding, Kind, Unit, Word, scope_words


class Coverage(Word):
    """What a number covers of one forward's work."""

    FULL = "full"
    ATTENTION_MISSING = "attention-missing"
    QK_ONLY = "qk-only"
    BLOCKS_ONLY = "blocks-only"
    LINEAR_ONLY = "linear-only"
    NEEDED = "attention-needed"  # masked attention at the pairs its masks let through (reconciler/masked.py)
    PADDED = "packed-padded"  # packed sequences as a padded batch, n x max_len^2

    @property
    def words(self) -> str:
        return {
            "full": "attention counted",
            "attention-missing": "attention missing",
            "qk-only": "QK^T only",
            "blocks-only": "blocks only (24Td^2 + 4T^2d)",
            "linear-only": "block linears only (12Td^2)",
            "attention-needed": "attention counted as needed under its masks",
            "packed-padded": "packed sequences counted as padded",
        }[self.value]

    @property
    def attention(self) -> Attention:
        """What this coverage did with attention."""
        return {
            "attention-missing": Attention.MISSING,
            "qk-only": Attention.QK_ONLY,
            "linear-only": Attention.MISSING,
        }.get(self.value, Attention.COUNTED)


COVERAGES = tuple(Coverage)


@dataclass(frozen=True)
class TotalReading:
    """One way a number could have been produced."""

    unit: Unit = Unit.FLOP
    coverage: Coverage = Coverage.FULL
    per_sample_per_token: bool = False
    batch: int = 1
    cfg: bool = False
    steps: int = 1
    training: bool = False
    pixel: bool = False
    norms: int = 0  # LayerNorm work counted, in the reading's unit per normalised element (fvcore 4, thop 2)
    exact_step: bool = False  # training: the exact backward, not the 3x rule

    def describe(self, attention: bool = True, norm: str = "LayerNorm", coverage: str = "") -> str:
        """'MACs, attention counted, CFG x2'; of a model without attention, 'every layer counted'; `norm`: the
        model's norms by name ('BatchNorm' on a ResNet); `coverage`: its coverage in the model's own words (masked
        attention's: 'causal attention counted as needed, T(T+1)/2 pairs')."""
        full = self.coverage is Coverage.FULL and not attention
        parts = [self.unit.value + "s", "every layer counted" if full else coverage or self.coverage.words]
        parts += [f"{norm} {self.norms} per element"] if self.norms else []
        parts += ["adaLN per token"] if self.per_sample_per_token else []
        parts += scope_words(
            self.batch,
            "CFG x2" if self.cfg else "",
            self.steps,
            ("training step, exact backward" if self.exact_step else "training x3") if self.training else "",
        )
        parts += ["pixel space"] if self.pixel else []
        return ", ".join(parts)

    def causes(self, stated: TotalReading | None = None) -> int:
        """How many causes this reading adds beyond what a claim states (`stated`): fewer is simpler, more likely."""
        s = stated or TotalReading()
        return (
            (self.coverage is not Coverage.FULL)
            + (self.unit is not s.unit)
            + (self.norms > 0)
            + self.per_sample_per_token
            + (self.batch > s.batch)
            + (self.cfg and not s.cfg)
            + (self.steps > s.steps)
            + (self.training and not s.training)
            + (self.pixel and not s.pixel)
        )


@dataclass(frozen=True)
class Explanation:
    """A reading, the FLOPs it implies, and the findings that lead from the reference to it."""

    reading: TotalReading
    flops: int  # the reading's value in FLOPs
    value: Fraction  # the reading's value in its unit
    findings: tuple[Finding, ...] = field(default_factory=tuple)


def _block_linears(b: Breakdown) -> int:
    """The per-token projections inside the transformer blocks (not the text embedders or a token refiner)."""
    return sum(t.flops for t in b.terms if t.kind is Kind.LINEAR and b.in_blocks(t.path))


def _per_layer_formula(b: Breakdown) -> int | None:
    """N * L * (24*T*d^2 + 4*T^2*d) from the breakdown's symbols (L counts single-stream blocks too; T = I + S):
    the hand formula for a whole model. For DiT it equals the blocks' own terms; for Wan it does not."""
    s = dict(b.symbols)
    if not {"T", "d", "L"} <= set(s):
        return None
    return sum(per_layer(s.get("N", 1), s["L"] + s.get("Ls", 0), s["T"], s["d"]))


def applies(reading: TotalReading, b: Breakdown) -> bool:
    """A reading this model can have produced: a shortcut over blocks needs blocks with linears, a reading without
    some attention needs attention, per-sample layers counted per token need per-sample layers; and nothing reads a
    model with multiply-adds as 0 (a counter that counted nothing is unexplained, not a convention)."""
    kinds = b.by_kind()
    attention = kinds.get(Kind.ATTN_SCORE, 0) + kinds.get(Kind.ATTN_VALUE, 0)
    needs = {
        Coverage.LINEAR_ONLY: _block_linears(b),
        Coverage.BLOCKS_ONLY: _block_linears(b),
        Coverage.ATTENTION_MISSING: attention,
        Coverage.QK_ONLY: kinds.get(Kind.ATTN_VALUE, 0),
        Coverage.NEEDED: len(masked.needed(b.attention)),
        Coverage.PADDED: len(masked.padded(b.attention)),
    }
    if not needs.get(reading.coverage, 1) or (reading.per_sample_per_token and not kinds.get(Kind.PER_SAMPLE, 0)):
        return False
    return b.total == 0 or _covered(b, reading.coverage, reading.per_sample_per_token, 1)[0] != 0


def _covered(b: Breakdown, coverage: Coverage, per_token: bool, tokens: int) -> tuple[int, list[Finding]]:
    """One forward's FLOPs under a coverage, and the findings from the full reference to it."""
    kinds = b.by_kind()
    score, value = kinds.get(Kind.ATTN_SCORE, 0), kinds.get(Kind.ATTN_VALUE, 0)
    findings = []
    if coverage is Coverage.ATTENTION_MISSING:
        findings.append(K.ATTENTION_UNCOUNTED.finding(-(score + value)))
    elif coverage is Coverage.QK_ONLY:
        findings.append(K.ATTN_V_MISSING.finding(-value))
    elif coverage is Coverage.LINEAR_ONLY:
        findings.append(
            K.VIT_SHORTCUT.finding(_block_linears(b) - b.total, "only the blocks' qkv, proj and MLP counted")
        )
    elif coverage is Coverage.NEEDED:
        findings += masked.needed(b.attention)
    elif coverage is Coverage.PADDED:
        findings += masked.padded(b.attention)
    elif coverage is Coverage.BLOCKS_ONLY:
        per_layer = _per_layer_formula(b)
        kept = per_layer if per_layer is not None else _block_linears(b) + score + value
        findings.append(
            K.BLOCKS_ONLY.finding(
                kept - b.total,
                "L*(24*T*d^2 + 4*T^2*d) for the whole model: embeddings, "
                "adaLN, timestep MLP and head left out, every block one width",
            )
        )
    if per_token:
        findings.append(
            K.PER_SAMPLE_COUNTED_PER_TOKEN.finding(
                (tokens - 1) * kinds.get(Kind.PER_SAMPLE, 0), f"per-sample terms x T={tokens}"
            )
        )
    return b.total + sum(f.delta for f in findings), findings


def explain(
    reading: TotalReading,
    latent: Breakdown,
    pixel: Breakdown | None,
    tokens: BySpace,
    norm_elements: BySpace | None = None,
    backward: BySpace | None = None,
) -> Explanation:
    """The value of one reading, with the findings that build it from the latent reference;
    norm_elements: LayerNorm outputs per forward (latent, pixels), for readings that count norms;
    backward: the exact backward of one sample (latent, pixels), for a training reading with the exact step."""
    if reading.pixel and pixel is None:
        raise ValueError("a pixel-space reading of a model that has no pixel-space forward")
    base = pixel if reading.pixel and pixel is not None else latent
    findings = [K.PIXEL_SPACE.finding(base.total - latent.total, "counted on pixels")] if reading.pixel else []
    flops, cov = _covered(base, reading.coverage, reading.per_sample_per_token, tokens.at(reading.pixel))
    findings += cov
    if reading.norms:
        norms = reading.norms * reading.unit.flops_per_unit * (norm_elements.at(reading.pixel) if norm_elements else 0)
        findings.append(K.NORM_COUNTED.finding(norms, f"{reading.norms} {reading.unit.value} per LayerNorm element"))
        flops += norms
    rule = reading.training and not reading.exact_step
    for c, factor, why in (
        (K.BATCH_NOT_NORMALISED, reading.batch, f"batch {reading.batch}"),
        (K.CFG_INCLUDED, 2 if reading.cfg else 1, "CFG doubles the batch"),
        (K.STEPS_INCLUDED, reading.steps, f"{reading.steps} steps"),
        (K.TRAINING_X3, 3 if rule else 1, "fwd + bwd = 3 x fwd"),
    ):
        if factor > 1:
            findings.append(c.finding(flops * (factor - 1), why))
            flops *= factor
    if reading.training and reading.exact_step:  # the whole model's exact backward, once per sample
        if backward is None:
            raise ValueError("an exact-step reading needs the exact backward (backward=)")
        step = backward.at(reading.pixel) * reading.batch
        findings.append(K.TRAINING_STEP.finding(step, "the exact backward, counted on meta"))
        flops += step
    value = Fraction(flops, reading.unit.flops_per_unit)
    if reading.unit is Unit.MAC:
        findings.append(K.in_macs(flops, int(value)))
    return Explanation(reading, flops, value, tuple(findings))


def readings(
    units: Iterable[Unit] = (Unit.FLOP, Unit.MAC),
    batches: Iterable[int] = (1,),
    cfgs: Iterable[bool] = (False,),
    steps: Iterable[int] = (1,),
    trainings: Iterable[bool] = (False,),
    pixels: Iterable[bool] = (False,),
    per_token: Iterable[bool] = (False, True),
    norms: Iterable[int] = (0,),
    exact_steps: Iterable[bool] = (False,),
) -> list[TotalReading]:
    """Every combination of the given options (training never combines with steps or CFG; the exact step only
    with training, of the whole model as it is: every term, no norms, adaLN per sample)."""
    out = []
    for u, cov, pt, b, c, s, t, px, n, x in product(
        units, COVERAGES, per_token, batches, cfgs, steps, trainings, pixels, norms, exact_steps
    ):
        if t and (c or s > 1):
            continue
        if x and not (t and cov is Coverage.FULL and not pt and not n):
            continue
        out.append(
            TotalReading(
                unit=u,
                coverage=cov,
                per_sample_per_token=pt,
                batch=b,
                cfg=c,
                steps=s,
                training=t,
                pixel=px,
                norms=n,
                exact_step=x,
            )
        )
    return out


def rank(value: float, explanations: list[Explanation]) -> list[tuple[float, Explanation]]:
    """(relative distance, explanation), nearest first; ties broken by the simpler reading."""
    scored = [(abs(float(e.value) - value) / max(abs(value), 1e-30), e) for e in explanations]
    return sorted(scored, key=lambda se: (se[0], se[1].reading.causes()))


# ---------------------------------------------------------------------------------------------
# The T-sweep
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fit:
    """total(T) = a + b*T + c*T^2, exact, with the largest misfit over any further points."""

    a: Fraction
    b: Fraction
    c: Fraction
    misfit: Fraction | float = Fraction(0)


def fit_quadratic(points: list[tuple[int, float]]) -> Fit:
    """Solve a + bT + cT^2 through the first three (T, total) points exactly; check the rest."""
    if len({t for t, _ in points}) < 3:
        raise InputError("the T-sweep needs totals at three or more token counts")
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
    unit: Unit | None  # None: the coefficients fit neither unit
    attention: Attention
    misfit: float
    from_t2: bool = False  # the unit was read from the T^2 coefficient alone (the per-token work is off)

    @property
    def label(self) -> str:
        """'FLOP', 'MAC', 'MAC (from T^2)' or 'neither'."""
        if self.unit is None:
            return "neither"
        return self.unit.value + (" (from T^2)" if self.from_t2 else "")


_N = TypeVar("_N")


def _near(x: float, targets: tuple[tuple[_N, float], ...], tolerance: float) -> _N | None:
    return next((name for name, r in targets if abs(x - r) <= tolerance * max(r, 1.0)), None)


def judge(counter: Fit, formula: Fit, tolerance: float = 0.05) -> SweepVerdict:
    """Name the unit from b (per-token work: FLOP 1, MAC 1/2) and the coverage from c / b; when the
    per-token work is off (layers dropped or counted per sample), c alone names unit and coverage."""
    b_ratio = float(counter.b / formula.b)
    c_ratio = float(counter.c / formula.c)
    units = ((Unit.FLOP, 1.0), (Unit.MAC, 0.5))
    unit = _near(b_ratio, units, tolerance)
    if unit:
        coverage = c_ratio / dict(units)[unit]
        attention = (
            _near(coverage, ((Attention.COUNTED, 1.0), (Attention.QK_ONLY, 0.5), (Attention.MISSING, 0.0)), tolerance)
            or Attention.UNCLEAR
        )
        return SweepVerdict(b_ratio, c_ratio, unit, attention, float(counter.misfit))
    unit = _near(c_ratio, units, tolerance)
    if unit:
        return SweepVerdict(b_ratio, c_ratio, unit, Attention.COUNTED, float(counter.misfit), from_t2=True)
    attention = Attention.MISSING if abs(c_ratio) <= tolerance else Attention.UNCLEAR
    return SweepVerdict(b_ratio, c_ratio, None, attention, float(counter.misfit))

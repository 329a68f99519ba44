"""A claim read against a whole pipeline: every stage combination of one generation (the denoiser's one forward, one
step with CFG's two, all steps; with the text encoders, with the decode, the whole generation), each in FLOPs and as
MACs, and the one the claim's digits match named.

A claim about a pipeline spec ('diffusers-pipeline:FLUX.1-dev 2.1 PFLOPs') is judged here. A claim about a reference
model ('FLUX.1-dev 2.1 PFLOPs') is judged against its denoiser as ever; when it does not pass there and a
combination of its shipped pipeline comes within 10%, its verdict says which (`hint`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from flopcheck.auditor import tier_of
from flopcheck.auditor.claims import Claim
from flopcheck.fmt import commas, si
from flopcheck.pipelines import PREFIX, PipelineCount, count_pipeline
from flopcheck.specs import SpecError
from flopcheck.types import WRONG_LIMIT, Category, ModelPart, Space, Tier, Unit
from reference_models import pipeline_of


@dataclass(frozen=True)
class Combination:
    """A part of one generation: its words and its FLOPs."""

    words: str
    flops: int


@dataclass(frozen=True)
class CombinationReading:
    """A combination read in a unit, against the claim: its value in that unit and how far the claim is."""

    combination: Combination
    unit: Unit
    value: Decimal
    distance: Decimal

    @property
    def relative(self) -> Decimal:
        return self.distance / self.value if self.value else Decimal("Infinity")

    def fit(self, claim: Claim) -> str:
        """'exact', 'rounded', 'within tolerance', or '' (the claim's digits do not match it)."""
        if not self.distance:
            return "exact"
        if self.distance <= claim.precision:
            return "rounded"
        return "within tolerance" if self.distance <= claim.allowed else ""

    def describe(self) -> str:
        return f"{self.combination.words}, in {self.unit.value}s"


def combinations(p: PipelineCount) -> tuple[Combination, ...]:
    """One generation's stage combinations, each once (CFG's step only under CFG; a sum equal to another left out)."""
    by = p.by_stage()
    one = next(s.per_call for s in p.stages if s.stage == "denoise")
    enc, steps, dec = by.get("encode prompt", 0), by["denoise"], by.get("decode", 0)
    step = [w for w, on in (("CFG's two forwards", p.cfg), (f"{p.images} images per prompt", p.images > 1)) if on]
    every = [
        Combination("the denoiser, one forward", one),
        Combination(f"one step ({', '.join(step)})", steps // p.steps) if step else None,
        Combination(f"the denoiser, all {p.steps} steps{' with CFG' if p.cfg else ''}", steps),
        Combination("the text encoders", enc) if enc else None,
        Combination("the VAE's decode", dec) if dec else None,
        Combination(f"the text encoders and all {p.steps} steps", enc + steps) if enc else None,
        Combination(f"all {p.steps} steps and the decode", steps + dec) if dec else None,
        Combination("the whole generation", p.total),
    ]
    seen: set[int] = set()
    once = []
    for c in every:
        if c is not None and c.flops not in seen:
            seen.add(c.flops)
            once.append(c)
    return tuple(once)


def readings(claim: Claim, p: PipelineCount) -> list[CombinationReading]:
    """Each combination as FLOPs and as MACs, nearest to the claim first."""
    out = []
    for c in combinations(p):
        for unit in (Unit.FLOP, Unit.MAC):
            value = Decimal(c.flops) / unit.flops_per_unit
            out.append(CombinationReading(c, unit, value, abs(claim.value - value)))
    return sorted(out, key=lambda r: (not r.fit(claim), r.relative))


@dataclass(frozen=True)
class PipelineVerdict:
    """The verdict on a claim about a pipeline: the stage combination (and unit) its digits match, or the nearest."""

    claim: Claim
    count: PipelineCount
    verdict: Tier
    best: CombinationReading
    runners_up: tuple[CombinationReading, ...]
    also: tuple[CombinationReading, ...] = ()  # other combinations the digits match too

    @property
    def passed(self) -> bool:
        return self.verdict.passes

    @property
    def true_flops(self) -> int:
        """The whole generation's FLOPs."""
        return self.count.total

    def sentence(self) -> str:
        c, b = self.claim, self.best
        claim = c.text.removeprefix(c.model).strip() or c.text
        value = si(b.combination.flops, b.unit)
        if self.verdict is Tier.UNEXPLAINED:
            return (
                f"UNEXPLAINED: {claim} is beyond 10% of every stage combination of {self.count.name}; nearest "
                f"{b.describe()} = {value} ({float(b.relative):.3%} off)"
            )
        word = self.verdict.value if self.passed else self.verdict.value.upper()  # as a model's verdict says it
        head = f"{word}: {claim} is {b.describe()} = {value}"
        head += f" ({b.fit(c)})" if b.fit(c) else f" ({float(b.relative):.3%} off)"
        if self.also:
            a = self.also[0]
            head += f"; ambiguous: it is also {a.describe()} ({a.fit(c)}): say which stages it counts"
        return head

    def to_text(self) -> str:
        p = self.count
        lines = [f'"{self.claim.text}" · {p.headline}']
        lines.append(f"  verdict     {self.sentence()}")
        lines.append(f"  stages      {', '.join(f'{k} {si(v)}' for k, v in p.by_stage().items())}")
        lines.append(f"  true        {commas(p.total)} FLOPs = {si(p.total)} (the whole generation, exact count)")
        for r in self.runners_up[:3]:
            lines.append(
                f"  runner-up   {r.describe()}: {si(r.combination.flops, r.unit)} ({float(r.relative):.3%} off)"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        def one(r: CombinationReading) -> dict[str, Any]:
            return {"reading": r.describe(), "unit": r.unit.value, "flops": r.combination.flops}

        return {
            "id": self.claim.id,
            "claim": self.claim.text,
            "model": self.claim.model,
            "verdict": self.verdict,
            "passed": self.passed,
            "sentence": self.sentence(),
            "unit": self.best.unit.value,
            "stages": self.best.combination.words,
            "claimed_flops": int(self.claim.claimed_flops),
            "reading_flops": self.best.combination.flops,
            "true_flops": self.true_flops,
            "relative_error": float(self.best.relative),
            "also": [a.describe() for a in self.also],
            "candidates": [{**one(r), "relative_error": float(r.relative)} for r in (self.best, *self.runners_up)],
            "pipeline": p.to_data() if (p := self.count) else None,
        }

    def markdown_row(self) -> str:
        c = self.claim
        return (
            f"| {c.id} | {c.text.removeprefix(c.model).strip()} | {self.verdict} | {self.best.describe()} |  | "
            f"{float(self.best.relative):.3%} | {self.true_flops:,} FLOPs |"
        )


def _count(claim: Claim, name: str) -> PipelineCount:
    """The pipeline at the claim's resolution, frames, steps, CFG and batch (images per prompt) where it states them,
    else its own defaults."""
    return count_pipeline(
        PREFIX + name,
        resolution=claim.resolution,
        frames=claim.frames,
        steps=claim.steps if "steps" in claim.stated else None,
        cfg=claim.cfg or None,
        images=claim.batch,
    )


# what a pipeline claim cannot state: its scope is one generation, its inputs the pipeline's (the field, its default)
NOT_STATED = {
    "training": False,
    "part": ModelPart.MODEL,
    "space": Space.LATENT,
    "config": None,
    "inputs": None,
    "input_shape": None,
}


def judge(claim: Claim) -> PipelineVerdict:
    """A claim about 'diffusers-pipeline:NAME' read against each stage combination of one generation."""
    for name, default in NOT_STATED.items():
        if getattr(claim, name) != default:
            raise SpecError(
                f"a claim about a pipeline cannot state {name} ({getattr(claim, name)!r}): it is read against one "
                f"generation at the pipeline's own inputs (give resolution, frames, steps, cfg or batch), or claim a "
                f"component"
            )
    p = _count(claim, claim.model.removeprefix(PREFIX))
    ranked = readings(claim, p)
    best = ranked[0]
    fit = bool(best.fit(claim))
    tier = tier_of(Category.COUNT, fit, best.relative, 0, claim.omission_limit)  # every combination is a count
    also = tuple(r for r in ranked[1:] if r.fit(claim) and r.combination != best.combination)
    runners = tuple(r for r in ranked[1:] if r not in also)
    return PipelineVerdict(claim, p, tier, best, runners, also)


def hint(claim: Claim, true_flops: int) -> str:
    """For a reference model's claim that did not pass: the stage combination of its pipeline within 10%, in words,
    or ''. Only a claim over 110% of the model's true value at its stated scope (read as MACs, its larger reading,
    2 x its number in FLOPs) can be more of the pipeline; any other is not counted again."""
    name = pipeline_of(claim.model)
    if (
        name is None
        or claim.training
        or claim.part is not ModelPart.MODEL
        or 2 * claim.value <= Decimal("1.1") * true_flops
    ):
        return ""

    r = readings(claim, _count(claim, name))[0]
    if r.relative > WRONG_LIMIT:
        return ""
    said = claim.text.removeprefix(claim.model).strip()
    res = claim.resolution
    w, h = (res, res) if isinstance(res, int) else res or (0, 0)
    given = (f" --resolution {w}x{h}" if w else "") + (f" --frames {claim.frames}" if claim.frames else "")
    return (
        f"its pipeline: {r.describe()} = {si(r.combination.flops, r.unit)} ({float(r.relative):.3%} off): the "
        f"claim may count more than the denoiser; audit it as '{PREFIX}{name} {said}'{given}"
    )


__all__ = ["PipelineVerdict", "combinations", "hint", "judge"]

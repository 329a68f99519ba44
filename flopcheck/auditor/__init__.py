"""Audit a published FLOP figure: what it most likely counted, and the true value.

Every reading (unit x coverage x adaLN per token x scope x latent or pixels) of the model gives an
exact value; the claim is set against each. A reading within the claim's printed precision makes
it `consistent`; a claim off its nearest reading by more than its precision but less than 10% is
`wrong` (the right value is given); beyond 10% of every reading it is `unexplained`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from flopcheck.auditor.claims import Claim, ClaimError, load_claims, parse_claim, parse_resolution
from flopcheck.auditor.models import reference_breakdowns
from flopcheck.reconciler import blackbox as B
from flopcheck.types import Attention, Kind, Unit, scope_words

WRONG_LIMIT = Decimal("0.10")  # beyond 10% of every reading, a claim is unexplained


@dataclass(frozen=True)
class Candidate:
    """One reading of the claim: its exact value in the reading's unit and how far the claim is."""

    explanation: B.Explanation
    value: Decimal  # absolute, in the reading's unit
    distance: Decimal  # |claim - value|, absolute

    @property
    def reading(self) -> B.Reading:
        return self.explanation.reading

    @property
    def relative(self) -> Decimal:
        return self.distance / self.value if self.value else Decimal("Infinity")


@dataclass(frozen=True)
class Verdict:
    """The verdict on one claim, its best reading, the runners-up, and the truth for what it describes."""

    claim: Claim
    verdict: str  # 'consistent', 'wrong', 'unexplained', or 'incomplete' (the exact count lacks a formula)
    best: Candidate
    runners_up: tuple[Candidate, ...]
    true_flops: int  # one latent forward x the claim's stated scope, FLOPs
    reference: str  # 'formula' or 'exact count'

    @property
    def attention(self) -> Attention:
        """What the best reading did with attention."""
        return self.best.reading.coverage.attention

    @property
    def scope(self) -> str:
        r = self.best.reading
        return " x ".join(scope_words(r.batch, r.cfg, r.steps, r.training)) or "forward"


NORM_RULES = (0, 1)  # LayerNorm at 1 MAC per element: a MAC counter's habit, as in most of Table 4's rows
MAX_CAUSES = 2  # a reading with more causes than this explains anything, and so nothing


def _backward(claim: Claim, has_pixel: bool) -> dict[bool, int] | None:
    """The exact backward of one sample of a reference model (latent, and pixels where it runs there), for a claim
    that says it is a training step of the whole model; None otherwise (the 3x rule is then the only reading)."""
    from reference_models import get_config, list_models

    if not claim.training or claim.part != "model":
        return None
    if claim.model not in list_models():  # a spec: its step measured in its child process, as its forward is
        from flopcheck.auditor.models import spec_of
        from flopcheck.specs.child import measured

        return {False: measured(spec_of(claim), training=True).training.backward.total}
    from flopcheck.reference_count import training_step

    fields = {"resolution": claim.resolution, **({"frames": claim.frames} if claim.frames else {})}
    out = {False: training_step(claim.model, get_config(claim.model, **fields)).backward.total}
    if has_pixel:
        out[True] = training_step(claim.model, get_config(claim.model, space="pixel", **fields)).backward.total
    return out


def _options(claim: Claim, has_per_sample: bool, has_pixel: bool, has_attention: bool = True,
             exact_step: bool = False) -> list[B.Reading]:
    """Readings of this claim: its stated scope fixed, what it leaves unsaid explored (attention left out only
    where the model has attention)."""
    every = B.readings(
        batches=(claim.batch,), steps=(claim.steps,),
        cfgs=(True,) if claim.cfg else (False, True),
        trainings=(True,) if claim.training else (False, True),
        pixels=(True,) if claim.space == "pixel" else (False, True) if has_pixel else (False,),
        per_token=(False, True) if has_per_sample else (False,),
        norms=NORM_RULES,
        exact_steps=(False, True) if exact_step else (False,),
    )
    # counted norms are a tool's habit (fvcore-era MAC counts of a whole model), not a hand formula's
    every = [r for r in every if has_attention or r.coverage not in (B.Coverage.ATTENTION_MISSING, B.Coverage.QK_ONLY)]
    return [r for r in every if not r.norms or (r.unit is Unit.MAC and r.coverage is B.Coverage.FULL)]


def audit(claim: Claim, measured=None) -> Verdict:
    """The verdict on one claim; `measured`: the caller's own model, measured in its process (specs.measure)."""
    from reference_models import get_config, list_models

    if claim.model in list_models():  # say which input the verdict is for
        cfg = get_config(claim.model)
        claim = replace(claim, resolution=claim.resolution or cfg.resolution)
        if claim.frames is None and getattr(cfg, "video", False):
            claim = replace(claim, frames=cfg.frames)
    latent, pixel, tokens, norms, reference, incomplete = reference_breakdowns(claim, measured)
    kinds = latent.by_kind()
    has_per_sample = kinds.get(Kind.PER_SAMPLE, 0) > 0 and max(tokens.values()) > 1  # T = 1: per token is per sample
    has_attention = kinds.get(Kind.ATTN_SCORE, 0) + kinds.get(Kind.ATTN_VALUE, 0) > 0
    backward = _backward(claim, pixel is not None)
    explanations = [B.explain(r, latent, pixel, tokens, norms, backward)
                    for r in _options(claim, has_per_sample, pixel is not None, has_attention, backward is not None)]
    explanations = [e for e in explanations if e.flops > 0]  # a reading of nothing (no block linears in a ResNet)
    stated = B.Reading(Unit.FLOP, B.Coverage.FULL, False, claim.batch, claim.cfg, claim.steps, claim.training,
                       claim.space == "pixel", exact_step=backward is not None)
    candidates = sorted(
        (Candidate(e, Decimal(e.value.numerator) / Decimal(e.value.denominator),
                   abs(claim.value - Decimal(e.value.numerator) / Decimal(e.value.denominator))) for e in explanations),
        key=lambda c: (c.distance, c.reading.causes(stated)))
    plausible = [c for c in candidates if c.reading.causes(stated) <= MAX_CAUSES] or candidates
    within = [c for c in plausible if c.distance <= claim.allowed]
    # several readings fit the printed digits: the simplest is the most likely; else the nearest
    best = min(within, key=lambda c: (c.reading.causes(stated), c.distance)) if within else plausible[0]
    candidates = [best] + [c for c in plausible if c is not best]
    if incomplete:  # the truth is only a lower bound: no reading of it can vouch for a number
        verdict = "incomplete"
    elif best.distance <= claim.allowed:
        verdict = "consistent"
    elif best.relative <= WRONG_LIMIT:
        verdict = "wrong"
    else:
        verdict = "unexplained"
    true = B.explain(stated, latent, pixel, tokens, norms, backward).flops
    if backward is not None:
        reference += " forward + the exact backward on meta"
    return Verdict(claim, verdict, best, tuple(candidates[1:5]), true, reference)


__all__ = ["Candidate", "Claim", "ClaimError", "Verdict", "audit", "load_claims", "parse_claim", "parse_resolution"]

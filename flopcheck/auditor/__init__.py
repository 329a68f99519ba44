"""Audit a published FLOP figure: what it most likely counted, and the true value.

Every reading of the model gives an exact value: a count (unit x attention coverage x adaLN per token x
scope x latent or pixels), a bookkeeping variant of one (LayerNorm counted per element, the blocks-only
or 12Td^2 shortcut), or what an installed counter reports on the same model and input (tools.py).
The verdict is in tiers:
- `consistent`: a count, or a counter's output, equals the claim to its printed digits (rounded or
  truncated), or within a stated tolerance;
- `close`: within 1% of a count; a bookkeeping variant within the digits, or rounding of the inputs, is
  named as the cause;
- `wrong`: the convention is identified (the nearest count within 10%, or a shortcut within the digits)
  but the number is off by more than 1%; the right value is given;
- `unexplained`: no reading within 10%; `incomplete`: the exact count has ops without a formula.
Exit 0 for consistent and close: a rounding or a bookkeeping difference is not an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal

from flopcheck.auditor.claims import Claim, ClaimError, load_claims, parse_claim, parse_resolution
from flopcheck.auditor.models import reference_breakdowns
from flopcheck.auditor.tools import ToolReading
from flopcheck.reconciler import blackbox as B
from flopcheck.types import Attention, BySpace, Finding, Kind, Space, Tier, Unit, scope_words

CLOSE_LIMIT = Decimal("0.01")  # within 1% of a count: rounding of the inputs or a bookkeeping convention
WRONG_LIMIT = Decimal("0.10")  # beyond 10% of every reading, a claim is unexplained
PASSING = tuple(t for t in Tier if t.passes)  # the verdicts that exit 0
SHORTCUTS = (B.Coverage.BLOCKS_ONLY, B.Coverage.LINEAR_ONLY)  # hand formulas, not counts of the model


@dataclass(frozen=True)
class Candidate:
    """One reading of the claim (a formula reading, or a counter's output): its exact value in its unit and how
    far the claim is."""

    value: Decimal  # absolute, in the reading's unit
    distance: Decimal  # |claim - value|, absolute
    explanation: B.Explanation | None = None
    tool: ToolReading | None = None
    attention: bool = True  # the model computes attention (else 'attention counted' means nothing)

    @property
    def reading(self) -> B.Reading:
        """The formula reading (a counter's: its unit, everything else as stated)."""
        return self.explanation.reading if self.explanation else B.Reading(unit=self.tool.unit)

    @property
    def unit(self) -> Unit:
        return self.tool.unit if self.tool else self.reading.unit

    @property
    def flops(self) -> int:
        return self.tool.flops if self.tool else self.explanation.flops

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.explanation.findings if self.explanation else ()

    @property
    def bookkeeping(self) -> bool:
        """A variant of a count (norms counted, a hand shortcut), not a count: it can make a claim close, never
        consistent."""
        return self.tool is None and (self.reading.norms > 0 or self.reading.coverage in SHORTCUTS)

    @property
    def relative(self) -> Decimal:
        return self.distance / self.value if self.value else Decimal("Infinity")

    def describe(self) -> str:
        return self.tool.describe() if self.tool else self.reading.describe(self.attention)

    def fit(self, claim: Claim) -> str:
        """How the claim's digits match this reading: 'exact', 'rounded', 'truncated', 'within tolerance', or ''."""
        if self.distance == 0:
            return "exact"
        if self.distance <= claim.precision:
            return "rounded"
        if claim.value <= self.value < claim.value + 2 * claim.precision:
            return "truncated"
        return "within tolerance" if self.distance <= claim.allowed else ""


@dataclass(frozen=True)
class Verdict:
    """The verdict on one claim, its best reading, what explains the distance, the runners-up, the truth."""

    claim: Claim
    verdict: Tier  # consistent, close, wrong, unexplained, or incomplete (the exact count lacks a formula)
    best: Candidate  # the count (or counter) the claim is judged against
    runners_up: tuple[Candidate, ...]
    true_flops: int  # one latent forward x the claim's stated scope, FLOPs
    reference: str  # 'formula' or 'exact count'
    cause: Candidate | None = None  # close or wrong: the bookkeeping reading the digits match, or the nearest
    tools: tuple[Candidate, ...] = ()  # counters whose output matches the claim's digits
    also: tuple[Candidate, ...] = ()  # other counts of a different meaning that match the digits too
    inputs: str = ""  # the input the readings are for
    notes: tuple[str, ...] = field(default_factory=tuple)  # counters that gave no reading, and why
    space: Space | None = None  # the space of the best reading, for a model that runs on either; else None
    stated: B.Reading | None = None  # the reading the claim states (its label's unit, its scope): causes count from it
    readings: tuple[Candidate, ...] = ()  # every counter's reading of the claim, matching its digits or not

    @property
    def attention(self) -> Attention:
        """What the best reading did with attention."""
        return self.best.reading.coverage.attention

    @property
    def scope(self) -> str:
        r = self.best.reading
        return " x ".join(scope_words(r.batch, r.cfg, r.steps, r.training)) or "forward"

    @property
    def scope_words(self) -> str:
        """The scope of the best reading (a counter's: the claim's stated one), 'one forward' when plain."""
        r = self.best.reading if not self.best.tool else None
        c = self.claim
        words = (
            scope_words(r.batch, r.cfg, r.steps, r.training) if r else scope_words(c.batch, c.cfg, c.steps, c.training)
        )
        return " x ".join(words) or "one forward"

    @property
    def passed(self) -> bool:
        """Consistent or close: exit 0."""
        return self.verdict.passes


NORM_RULES = (0, 1)  # LayerNorm at 1 MAC per element: a MAC counter's habit, as in most of Table 4's rows
MAX_CAUSES = 2  # a reading with more causes than this explains anything, and so nothing


def _backward(claim: Claim, has_pixel: bool) -> BySpace | None:
    """The exact backward of one sample of a reference model (latent, and pixels where it runs there), for a claim
    that says it is a training step of the whole model; None otherwise (the 3x rule is then the only reading)."""
    from flopcheck.specs import is_reference
    from reference_models import get_config

    if not claim.training or claim.part != "model":
        return None
    if not is_reference(claim.model):  # a spec: its step measured in its child process, as its forward is
        from flopcheck.auditor.models import spec_of
        from flopcheck.specs.child import measured

        return BySpace(measured(spec_of(claim), training=True).training.backward.total)
    from flopcheck.counting import training_step

    fields = {"resolution": claim.resolution, **({"frames": claim.frames} if claim.frames else {})}
    latent = training_step(claim.model, get_config(claim.model, **fields)).backward.total
    if not has_pixel:
        return BySpace(latent)
    return BySpace(
        latent, training_step(claim.model, get_config(claim.model, space=Space.PIXEL.value, **fields)).backward.total
    )


def _options(
    claim: Claim, has_per_sample: bool, has_pixel: bool, has_attention: bool = True, exact_step: bool = False
) -> list[B.Reading]:
    """Readings of this claim: its stated scope fixed, what it leaves unsaid explored (attention left out only
    where the model has attention)."""
    every = B.readings(
        batches=(claim.batch,),
        steps=(claim.steps,),
        cfgs=(True,) if claim.cfg else (False, True),
        trainings=(True,) if claim.training else (False, True),
        pixels=(True,) if claim.space == Space.PIXEL else (False, True) if has_pixel else (False,),
        per_token=(False, True) if has_per_sample else (False,),
        norms=NORM_RULES,
        exact_steps=(False, True) if exact_step else (False,),
    )
    # counted norms are a tool's habit (fvcore-era MAC counts of a whole model), not a hand formula's
    every = [r for r in every if has_attention or r.coverage not in (B.Coverage.ATTENTION_MISSING, B.Coverage.QK_ONLY)]
    return [r for r in every if not r.norms or (r.unit is Unit.MAC and r.coverage is B.Coverage.FULL)]


def _tool_candidates(claim: Claim, counters, measured) -> tuple[list[Candidate], tuple[str, ...]]:
    """The counters' readings of the claim (none when `counters` is False; `measured`, a caller's own model, has
    its counts in `counters` already)."""
    from flopcheck.auditor import tools

    if counters is False:
        return [], ()
    if isinstance(counters, tuple):  # (readings, notes) of counts already made: the caller's own model
        found, notes = counters
    else:
        found, notes = tools.readings(claim, counters)
    return [Candidate(t.value, abs(claim.value - t.value), tool=t) for t in found], tuple(notes)


def _same_meaning(a: B.Reading, b: B.Reading) -> bool:
    """Two counts that mean the same work (they differ in bookkeeping only)."""
    return replace(a, norms=0) == replace(b, norms=0)


def _count_of(c: Candidate, candidates: list[Candidate]) -> Candidate | None:
    """The count a bookkeeping reading is a variant of: the same unit and scope, attention counted, no norms."""
    plain = replace(
        c.reading, norms=0, coverage=B.Coverage.FULL if c.reading.coverage in SHORTCUTS else c.reading.coverage
    )
    return next((x for x in candidates if x.explanation and x.reading == plain), None)


@dataclass(frozen=True)
class Judgement:
    """The tier of a claim, the count it is judged against, what explains the distance, the counters whose output
    matches its digits, and other counts of a different meaning that match them too."""

    tier: Tier
    best: Candidate
    cause: Candidate | None = None
    tools: tuple[Candidate, ...] = ()
    also: tuple[Candidate, ...] = ()


def _judge(claim: Claim, candidates: list[Candidate], stated: B.Reading) -> Judgement:
    """The claim's tier against its readings, by the reading's category and its relative distance."""
    counts = [c for c in candidates if not c.bookkeeping and (c.tool or c.reading.causes(stated) <= MAX_CAUSES)]
    counts = counts or [c for c in candidates if not c.bookkeeping]

    def simplest(c: Candidate) -> tuple:
        return (
            c.tool is not None,
            c.reading.causes(stated),
            c.tool is not None and c.tool.path == "fused attention",
            c.distance,
        )

    fitting = sorted((c for c in counts if c.fit(claim)), key=simplest)
    if fitting:
        formula = [c for c in fitting if not c.tool]
        best = formula[0] if formula else fitting[0]
        tools = [c for c in fitting if c.tool]
        # another meaning of the same digits, as simple or nearly: said (an alias that is always equal, MACs x CFG
        # for FLOPs, or QK^T-only x CFG for attention, is not a second meaning)
        also = [
            c
            for c in formula[1:]
            if not _same_meaning(c.reading, best.reading)
            and c.value != best.value
            and c.reading.causes(stated) <= best.reading.causes(stated) + 1
        ]
        return Judgement(Tier.CONSISTENT, best, tools=tuple(tools), also=tuple(also))
    shortcuts = sorted(
        (c for c in candidates if c.bookkeeping and c.fit(claim) and c.reading.causes(stated) <= MAX_CAUSES),
        key=simplest,
    )
    for cause in shortcuts:  # the digits match a bookkeeping variant of a count: judged against that count
        base = _count_of(cause, candidates)
        if base is not None:
            return Judgement(Tier.CLOSE if base.relative <= CLOSE_LIMIT else Tier.WRONG, base, cause)
    # a count of the formula first: a counter's output is a reading when the digits match it, else only when no
    # formula count is within 1% (its own bookkeeping, such as a re-parameterised layer, then explains the rest)
    formula = [c for c in counts if not c.tool]
    nearest = min(formula or counts, key=lambda c: (c.relative, c.reading.causes(stated)))
    tool = min((c for c in counts if c.tool), key=lambda c: c.relative, default=None)
    if nearest.relative > CLOSE_LIMIT and tool is not None and tool.relative <= CLOSE_LIMIT:
        nearest = tool
    near_variant = min(
        (c for c in candidates if c.bookkeeping and c.reading.causes(stated) <= MAX_CAUSES),
        key=lambda c: c.relative,
        default=None,
    )
    cause = None
    if near_variant is not None and near_variant.relative < nearest.relative:  # likely that variant, inputs rounded
        base = _count_of(near_variant, candidates)
        if base is not None:
            nearest, cause = base, near_variant
    if nearest.relative <= CLOSE_LIMIT:
        return Judgement(Tier.CLOSE, nearest, cause)
    if nearest.relative <= WRONG_LIMIT:
        return Judgement(Tier.WRONG, nearest, cause)
    return Judgement(Tier.UNEXPLAINED, nearest)


def _worded(c: Candidate | None, claim: Claim) -> Candidate | None:
    """A counter's candidate with its fingerprint in words (what it did on this model, by the reconciler's causes),
    made here so that rendering the verdict reconciles nothing and builds no model."""
    if c is None or c.tool is None or c.tool.words:
        return c
    from flopcheck.auditor.tools import fingerprint

    return replace(c, tool=replace(c.tool, words=fingerprint(c.tool, claim)))


def _inputs(claim: Claim, measured) -> str:
    """The input the readings are for: a spec's as built, a reference model's resolution and latent."""
    from flopcheck.specs import is_reference
    from reference_models import get_config

    if not is_reference(claim.model):
        from flopcheck.auditor.models import spec_of
        from flopcheck.specs.child import measured as measure

        return (measured or measure(spec_of(claim))).inputs
    fields = {"resolution": claim.resolution, **({"frames": claim.frames} if claim.frames else {})}
    cfg = get_config(claim.model, **fields)
    w, h = cfg.resolution if isinstance(cfg.resolution, tuple) else (cfg.resolution, cfg.resolution)
    frames = f" x {cfg.frames} frames" if getattr(cfg, "video", False) else ""
    return f"{w}x{h} px{frames}" + (
        f", latent {cfg.input_size}x{cfg.input_size}" if isinstance(getattr(cfg, "input_size", None), int) else ""
    )


def audit(claim: Claim, measured=None, counters: list[str] | tuple | bool | None = None) -> Verdict:
    """The verdict on one claim; `measured`: the caller's own model, measured in its process (specs.measure);
    `counters`: the counters whose output is a reading (default: every installed one; False: none)."""
    from flopcheck.specs import is_reference
    from reference_models import get_config

    if is_reference(claim.model):  # say which input the verdict is for
        cfg = get_config(claim.model)
        claim = replace(claim, resolution=claim.resolution or cfg.resolution)
        if claim.frames is None and getattr(cfg, "video", False):
            claim = replace(claim, frames=cfg.frames)
    ref = reference_breakdowns(claim, measured)
    latent, pixel, tokens, norms, reference = ref.latent, ref.pixel, ref.tokens, ref.norms, ref.label
    kinds = latent.by_kind()
    has_per_sample = kinds.get(Kind.PER_SAMPLE, 0) > 0 and tokens.max() > 1  # T = 1: per token is per sample
    has_attention = kinds.get(Kind.ATTN_SCORE, 0) + kinds.get(Kind.ATTN_VALUE, 0) > 0
    backward = _backward(claim, pixel is not None)
    explanations = [
        B.explain(r, latent, pixel, tokens, norms, backward)
        for r in _options(claim, has_per_sample, pixel is not None, has_attention, backward is not None)
    ]
    explanations = [e for e in explanations if e.flops > 0]  # a reading of nothing (no block linears in a ResNet)
    stated = B.Reading(
        unit=claim.label_unit,
        coverage=B.Coverage.FULL,
        batch=claim.batch,
        cfg=claim.cfg,
        steps=claim.steps,
        training=claim.training,
        pixel=claim.space == Space.PIXEL,
        exact_step=backward is not None,
    )
    values = [Decimal(e.value.numerator) / Decimal(e.value.denominator) for e in explanations]
    candidates = [Candidate(v, abs(claim.value - v), e, attention=has_attention) for e, v in zip(explanations, values)]
    tool_candidates, notes = ([], ()) if ref.incomplete else _tool_candidates(claim, counters, measured)
    candidates += tool_candidates
    j = _judge(claim, candidates, stated)
    best, cause = j.best, j.cause
    shown = {id(best), *(id(c) for c in (cause, *j.tools, *j.also) if c is not None)}
    runners = sorted(
        (c for c in candidates if id(c) not in shown and not c.tool),
        key=lambda c: (c.distance / c.value if c.value else Decimal("Infinity"), c.reading.causes(stated)),
    )
    seen = {c.value for c in (best, cause) if c is not None}
    runners = [c for c in runners if c.value not in seen and not seen.add(c.value)]  # an alias (MACs x CFG) once
    true = B.explain(stated, latent, pixel, tokens, norms, backward).flops
    if backward is not None:
        reference += " forward + the exact backward on meta"
    return Verdict(  # an incomplete count is only a lower bound: no reading of it can vouch for a number
        claim=claim,
        verdict=Tier.INCOMPLETE if ref.incomplete else j.tier,
        best=_worded(best, claim),
        runners_up=tuple(runners[:4]),
        true_flops=true,
        reference=reference,
        cause=_worded(cause, claim),
        tools=tuple(_worded(t, claim) for t in j.tools),
        also=j.also,
        inputs=_inputs(claim, measured),
        notes=tuple(notes),
        space=(Space.PIXEL if best.reading.pixel else Space.LATENT) if pixel is not None else None,
        stated=stated,
        readings=tuple(sorted(tool_candidates, key=lambda c: c.relative)),
    )


__all__ = [
    "PASSING",
    "Candidate",
    "Claim",
    "ClaimError",
    "Judgement",
    "Verdict",
    "audit",
    "load_claims",
    "parse_claim",
    "parse_resolution",
]

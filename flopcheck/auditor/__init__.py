"""Audit a published FLOP figure: what it most likely counted, and the true value.

Every reading of the model gives an exact value: a count (unit x attention coverage x adaLN per token x
scope x latent or pixels), a bookkeeping variant of one (LayerNorm counted per element, the blocks-only
or 12Td^2 shortcut), or what an installed counter reports on the same model and input (tools.py).
Each reading is a count of the model's multiply-adds (in some unit and scope), the count with bookkeeping (norms,
elementwise ops, bias counted), or a reading that departs from the model's work (attention missing, a shortcut);
the claim is judged by the simplest reading its digits match, else the nearest, and its tier is a function of that
reading's category and relative distance alone (tier_of):
- `consistent`: a count equals the claim to its printed digits (rounded or truncated), or within a tolerance;
- `close`: bookkeeping, or a departure within the omission limit (default 10%), that the digits match; or within
  1% of a reading;
- `wrong`: a reading that departs by more than the omission limit, or within 10% of a reading but over 1%;
- `unexplained`: no reading within 10%; `incomplete`: the exact count has ops without a formula, or a claim that
  would be wrong or unexplained lacks a counter's reading that was due and could not be made (it may be that count).
Exit 0 for consistent and close: a rounding, a bookkeeping difference or a convention of coverage within the
limit is not an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from flopcheck.auditor.claims import Claim, ClaimError, load_claims, parse_claim, parse_resolution
from flopcheck.auditor.models import reference_breakdowns
from flopcheck.auditor.readings import UNMADE, ToolReading
from flopcheck.errors import InputError
from flopcheck.reconciler import blackbox as B
from flopcheck.reconciler import causes as K
from flopcheck.reconciler import masked
from flopcheck.types import (
    CLOSE_LIMIT,
    WRONG_LIMIT,
    Attention,
    BySpace,
    Category,
    Effect,
    Finding,
    Kind,
    ModelPart,
    Space,
    Tier,
    Unit,
    scope_words,
)

if TYPE_CHECKING:  # a caller's own model, measured in its process: read here, never taken
    from flopcheck.specs.measure import Measured
    from flopcheck.subject import Subject

PASSING = tuple(t for t in Tier if t.passes)  # the verdicts that exit 0


@dataclass(frozen=True)
class Candidate:
    """One reading of the claim (a formula reading, or a counter's output): its exact value in its unit and how
    far the claim is."""

    value: Decimal  # absolute, in the reading's unit
    distance: Decimal  # |claim - value|, absolute
    explanation: B.Explanation | None = None
    tool: ToolReading | None = None
    attention: bool = True  # the model computes attention (else 'attention counted' means nothing)
    base: int = 0  # a formula reading's: the model's FLOPs of one forward where it ran (latent or pixels)
    norm: str = "LayerNorm"  # the model's norms by name, as its norm rule's words say them

    @property
    def reading(self) -> B.TotalReading:
        """The formula reading (a counter's: its unit, everything else as stated)."""
        if self.explanation:
            return self.explanation.reading
        assert self.tool is not None, self  # a candidate is a formula's reading or a counter's
        return B.TotalReading(unit=self.tool.unit)

    @property
    def unit(self) -> Unit:
        return self.tool.unit if self.tool else self.reading.unit

    @property
    def flops(self) -> int:
        if self.tool:
            return self.tool.flops
        assert self.explanation is not None, self  # a candidate is a formula's reading or a counter's
        return self.explanation.flops

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The causes that take the model's exact count to this reading (a counter's: from its reconciliation)."""
        if self.explanation:
            return self.explanation.findings
        return self.tool.convention.findings if self.tool and self.tool.convention else ()

    @property
    def departure(self) -> Fraction:
        """The share of the model's multiply-adds this reading leaves out or counts that the model does not do
        (a counter's unexplained residual too): 0 for a count, whatever its unit, scope or bookkeeping."""
        conv = self.tool.convention if self.tool else None
        base = conv.base if conv else self.base
        departs = sum(abs(f.delta) for f in self.findings if K.of(f).effect.departs) + abs(conv.residual if conv else 0)
        return Fraction(departs, base) if base else Fraction(0)

    @property
    def departs_by(self) -> int:
        """The signed FLOPs of its departure from the model's multiply-adds (< 0: it leaves work out)."""
        conv = self.tool.convention if self.tool else None
        return sum(f.delta for f in self.findings if K.of(f).effect.departs) + (conv.residual if conv else 0)

    @property
    def category(self) -> Category:
        """A count of the model's work, the count with bookkeeping, or a reading that departs from its work (a
        counter whose count could not be reconciled is taken for bookkeeping: it can pass, never as consistent)."""
        if self.departure:
            return Category.DEPARTS
        unknown = self.tool is not None and (self.tool.convention is None or not self.tool.convention.known)
        if unknown or any(K.of(f).effect is Effect.BOOKKEEPING for f in self.findings):
            return Category.BOOKKEEPING
        return Category.COUNT

    @property
    def relative(self) -> Decimal:
        return self.distance / self.value if self.value else Decimal("Infinity")

    def describe(self) -> str:
        """The reading in words; a masked convention's coverage in the model's words (masked.words)."""
        if self.tool:
            return self.tool.describe()
        return self.reading.describe(self.attention, self.norm, masked.words(self.findings))

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
    stated: B.TotalReading | None = None  # the reading the claim states (its unit, its scope): causes count from it
    readings: tuple[Candidate, ...] = ()  # every counter's reading of the claim, matching its digits or not
    pipeline_hint: str = ""  # a claim that did not pass: the stage combination of the model's pipeline within 10%
    unmade: tuple[str, ...] = ()  # incomplete: the notes of the counters whose reading was due and not made

    @property
    def judged(self) -> Candidate:
        """The reading the claim is judged by, the one its sentence's cause and its fingerprint name: the reading its
        digits match (or the nearest) where the distance has a cause, else the best reading."""
        return self.cause or self.best

    @property
    def attention(self) -> Attention:
        """What the judged reading did with attention: a formula reading's coverage; a counter's (or a published
        formula's), what the causes of its convention say of it (unclear where none was found)."""
        from flopcheck.reconciler import causes as K

        if self.judged.tool is None:
            return self.judged.reading.coverage.attention
        conv = self.judged.tool.convention
        if conv is None or not conv.known:
            return Attention.UNCLEAR
        said = [a for f in conv.findings if f.delta and (a := K.of(f).attention) is not None]
        return said[0] if said else Attention.COUNTED

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

    def __repr__(self) -> str:
        """One line, the verdict's sentence: "Verdict('96 MACs': consistent: 96 MACs is MACs, ...)"."""
        from flopcheck.render.audit import sentence  # lazy: door start-up (rendering imports no auditor at run time)

        return f"Verdict({self.claim.text!r}: {sentence(self)})"

    def __str__(self) -> str:
        """The verdict as `flopcheck audit` prints it."""
        from flopcheck.render import COLUMNS  # lazy: door start-up
        from flopcheck.render.audit import to_text

        return to_text(self, COLUMNS)


NORM_RULES = (0, 1)  # LayerNorm at 1 MAC per element: a MAC counter's habit, as in most of Table 4's rows
MAX_CAUSES = 2  # a reading with more causes than this explains anything, and so nothing


def _backward(claim: Claim, has_pixel: bool) -> BySpace | None:
    """The exact backward of one sample (latent, and pixels where the model runs there), for a claim that says it
    is a training step of the whole model; None otherwise (the 3x rule is then the only reading)."""
    if not claim.training or claim.part is not ModelPart.MODEL:
        return None
    latent = claim.subject.backward()
    return BySpace(latent, claim.subject.backward(Space.PIXEL.value)) if has_pixel else BySpace(latent)


MASKED_COVERAGES = (B.Coverage.NEEDED, B.Coverage.PADDED)  # masked attention's conventions (reconciler/masked.py)


def _options(
    claim: Claim,
    has_per_sample: bool,
    has_pixel: bool,
    has_attention: bool = True,
    exact_step: bool = False,
    masks: frozenset[B.Coverage] = frozenset(),
) -> list[B.TotalReading]:
    """Readings of this claim: its stated scope fixed, what it leaves unsaid explored (attention left out only
    where the model has attention; a masked convention only where the exact count read a mask it applies to, on the
    latent)."""
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
    every = [r for r in every if r.coverage not in MASKED_COVERAGES or (r.coverage in masks and not r.pixel)]
    return [r for r in every if not r.norms or (r.unit is Unit.MAC and r.coverage is B.Coverage.FULL)]


def _tool_candidates(
    claim: Claim,
    counters: list[str] | tuple[tuple[ToolReading, ...], tuple[str, ...]] | Literal[False] | None,
    measured: Measured | None,
) -> tuple[list[Candidate], tuple[str, ...]]:
    """The counters' readings of the claim (none when `counters` is False; `measured`, a caller's own model, has
    its counts in `counters` already)."""
    if counters is False:
        return [], ()
    found: Sequence[ToolReading]
    notes: Sequence[str]
    if isinstance(counters, tuple):  # (readings, notes) of counts already made: the caller's own model
        found, notes = counters
    else:
        from flopcheck.auditor import tools  # lazy: door start-up (the counters' registry; see subject.counts_of)

        found, notes = tools.readings(claim, counters)
    # each with its convention on the model (the reconciler's causes), made here so that rendering the verdict
    # reconciles nothing and builds no model
    from flopcheck.auditor import fingerprints  # lazy: door start-up (the counters' registry)

    found = [replace(t, convention=fingerprints.convention(t, claim)) for t in found]
    return [Candidate(t.value, abs(claim.value - t.value), tool=t) for t in found], tuple(notes)


def _formula_candidates(claim: Claim, subject: Subject | None) -> tuple[list[Candidate], list[str]]:
    """The published formulas' readings of the claim (flopcheck.published) on its subject, each with its causes."""
    from flopcheck.auditor import formulas  # lazy: door start-up (the published formulas, the count verb's module)

    found, notes = formulas.readings(claim, subject)
    return [Candidate(t.value, abs(claim.value - t.value), tool=t) for t in found], notes


def _fused_candidates(claim: Claim) -> tuple[list[Candidate], list[str]]:
    """The exact count after reparameterization (timm's benchmark convention), where the model has branches to fuse."""
    from flopcheck.auditor import reparam  # lazy: door start-up (a second spec build, in its child)

    found, notes = reparam.readings(claim)
    return [Candidate(t.value, abs(claim.value - t.value), tool=t) for t in found], notes


def _same_meaning(a: B.TotalReading, b: B.TotalReading) -> bool:
    """Two counts that mean the same work (they differ in bookkeeping only)."""
    return replace(a, norms=0) == replace(b, norms=0)


def _count_of(c: Candidate, candidates: list[Candidate], stated: B.TotalReading) -> Candidate | None:
    """The count a reading is a variant of: the same unit and scope with every layer counted, no norms and per-sample
    layers per sample (a counter's: the exact count in its unit at the claim's stated scope)."""
    r = replace(stated, unit=c.unit) if c.tool else c.reading
    plain = replace(r, norms=0, coverage=B.Coverage.FULL, per_sample_per_token=False)
    return next((x for x in candidates if x.explanation and x.reading == plain), None)


ORDER = {Category.COUNT: 0, Category.BOOKKEEPING: 1, Category.DEPARTS: 2}


def tier_of(category: Category, fit: bool, relative: Decimal, departure: Fraction | int, limit: Decimal) -> Tier:
    """The tier of a claim from the reading it is judged by, alone: that reading's category, whether the claim's
    digits match it, how far the claim is from it, and how far the reading departs from the model's multiply-adds.

    - no match and beyond 10% (WRONG_LIMIT) of the nearest reading: unexplained;
    - a reading that leaves out (or adds) more than `limit` of the model's multiply-adds: wrong, whatever the digits;
    - the digits match: consistent for a count of the model's work (any unit or scope), close for bookkeeping or a
      departure within the limit;
    - else within 1% (CLOSE_LIMIT): close; within 10%: wrong.
    """
    if not fit and relative > WRONG_LIMIT:
        return Tier.UNEXPLAINED
    if category is Category.DEPARTS and departure > limit:
        return Tier.WRONG
    if fit:
        return Tier.CONSISTENT if category is Category.COUNT else Tier.CLOSE
    return Tier.CLOSE if relative <= CLOSE_LIMIT else Tier.WRONG


@dataclass(frozen=True)
class Judgement:
    """The tier of a claim, the count it is judged against, the reading that explains the distance, the counters
    whose output matches its digits, and other counts of a different meaning that match them too."""

    tier: Tier
    best: Candidate
    cause: Candidate | None = None
    tools: tuple[Candidate, ...] = ()
    also: tuple[Candidate, ...] = ()


def _causes(c: Candidate, stated: B.TotalReading) -> int:
    """How many causes a reading adds to what the claim states: a formula reading's own; a counter's (or a published
    formula's), its unit's and those its convention found (so a hand formula with as many comes first)."""
    from flopcheck.reconciler import causes as K

    conv = c.tool.convention if c.tool else None
    found = sum(1 for f in conv.findings if f.delta and K.of(f) is not K.MAC_CONVENTION) if conv else 0
    return c.reading.causes(stated) + found


def _judge(claim: Claim, candidates: list[Candidate], stated: B.TotalReading) -> Judgement:
    """The claim's tier (tier_of) against the reading that explains it best: the simplest whose digits match it
    (a count before bookkeeping before a departure, rounded before truncated, fewer causes first, a hand formula
    before a counter), else the nearest. A reading that is not a count is named as the cause, beside the count it
    is a variant of."""
    usable = [c for c in candidates if c.tool or c.reading.causes(stated) <= MAX_CAUSES] or candidates

    def simplest(c: Candidate) -> tuple[Any, ...]:
        return (
            ORDER[c.category],
            c.departure > claim.omission_limit,
            c.fit(claim) == "truncated",  # digits met by rounding before digits met only by cutting them off
            _causes(c, stated),
            c.tool is not None,
            c.tool is not None and c.tool.path == "fused attention",
            c.distance,
        )

    fitting = sorted((c for c in usable if c.fit(claim)), key=simplest)
    reading = fitting[0] if fitting else min(usable, key=lambda c: (c.relative, simplest(c)))
    fit = bool(reading.fit(claim))
    tier = tier_of(reading.category, fit, reading.relative, reading.departure, claim.omission_limit)
    base = None if reading.category is Category.COUNT else _count_of(reading, candidates, stated)
    best, cause = (base, reading) if base is not None and base is not reading else (reading, None)
    tools = tuple(c for c in fitting if c.tool)  # every counter whose output the digits match, whatever it counted
    also: tuple[Candidate, ...] = ()
    if tier is Tier.CONSISTENT:
        # another meaning of the same digits, as simple or nearly: said (an alias that is always equal, MACs x CFG
        # for FLOPs, or QK^T-only x CFG for attention, is not a second meaning)
        also = tuple(
            c
            for c in fitting[1:]
            if not c.tool
            and not _same_meaning(c.reading, best.reading)
            and c.value != best.value
            and c.reading.causes(stated) <= best.reading.causes(stated) + 1
        )
    return Judgement(tier, best, cause, tools, also)


def _inputs(claim: Claim, measured: Measured | None) -> str:
    """The input the readings are for: a given model's as built, else the claim's subject's."""
    return measured.inputs if measured is not None else claim.subject.inputs


def judge(
    claim: Claim,
    measured: Measured | None = None,
    counters: list[str] | tuple[tuple[ToolReading, ...], tuple[str, ...]] | Literal[False] | None = None,
    subject: Subject | None = None,
) -> Verdict:
    """The verdict on one claim; `measured`: the caller's own model, measured in its process (specs.measure), and
    `subject` its Subject; `counters`: the counters whose output is a reading (default: every installed one; False:
    none)."""
    if measured is None:  # say which input the verdict is for: the model's own unless the claim states one
        resolution, frames = claim.subject.default_input()
        claim = claim.on_input(resolution, frames)
    ref = reference_breakdowns(claim, measured)
    latent, pixel, tokens, norms, reference = ref.latent, ref.pixel, ref.tokens, ref.norms, ref.label
    kinds = latent.by_kind()
    has_per_sample = kinds.get(Kind.PER_SAMPLE, 0) > 0 and tokens.max() > 1  # T = 1: per token is per sample
    has_attention = kinds.get(Kind.ATTN_SCORE, 0) + kinds.get(Kind.ATTN_VALUE, 0) > 0
    backward = _backward(claim, pixel is not None)
    # the calls' deltas cover the whole model's attention: a claim of it, or of the whole model
    whole = claim.part in (ModelPart.MODEL, ModelPart.ATTENTION)
    masks = frozenset(c for c in MASKED_COVERAGES if whole and B.applies(B.TotalReading(coverage=c), latent))
    explanations = [
        B.explain(r, latent, pixel, tokens, norms, backward)
        for r in _options(claim, has_per_sample, pixel is not None, has_attention, backward is not None, masks)
    ]
    explanations = [e for e in explanations if e.flops > 0]  # a reading of nothing (no block linears in a ResNet)
    stated = B.TotalReading(
        unit=claim.label_unit,
        coverage=B.Coverage.FULL,
        batch=claim.batch,
        cfg=claim.cfg,
        steps=claim.steps,
        training=claim.training,
        pixel=claim.space is Space.PIXEL,
        exact_step=backward is not None,
    )
    values = [Decimal(e.value.numerator) / Decimal(e.value.denominator) for e in explanations]
    candidates = [
        Candidate(v, abs(claim.value - v), e, attention=has_attention, base=(pixel or latent).total, norm=ref.norm)
        if e.reading.pixel
        else Candidate(v, abs(claim.value - v), e, attention=has_attention, base=latent.total, norm=ref.norm)
        for e, v in zip(explanations, values)
    ]
    tool_candidates, notes = ([], ()) if ref.incomplete else _tool_candidates(claim, counters, measured)
    live = measured is not None and subject is None  # a caller's model with no subject: no structure to read
    published, formula_notes = ([], []) if ref.incomplete or live else _formula_candidates(claim, subject)
    fused, fused_notes = ([], []) if ref.incomplete or measured is not None else _fused_candidates(claim)
    candidates += tool_candidates + published + fused
    notes = (*notes, *formula_notes, *fused_notes)
    if not candidates:  # every reading is of nothing: no figure but 0 describes the model, and a claim is positive
        raise InputError(
            f"{claim.model} does no multiply-adds on this input (its exact count is 0 FLOPs): a FLOP figure of it "
            f"says nothing to check; claim a model that computes"
        )
    j = _judge(claim, candidates, stated)
    best, cause = j.best, j.cause
    shown = {id(best), *(id(c) for c in (cause, *j.tools, *j.also) if c is not None)}
    runners = sorted(
        (c for c in candidates if id(c) not in shown and not c.tool),
        key=lambda c: (c.distance / c.value if c.value else Decimal("Infinity"), c.reading.causes(stated)),
    )
    seen = {c.value for c in (best, cause) if c is not None}
    once = []  # an alias (MACs x CFG) once
    for c in runners:
        if c.value not in seen:
            seen.add(c.value)
            once.append(c)
    runners = once
    true = B.explain(stated, latent, pixel, tokens, norms, backward).flops
    if backward is not None:
        reference += " forward + the exact backward on meta"
    # a claim that no reading explains may be the reading that could not be made: no verdict, never wrong for it
    unmade = tuple(n for n in notes if UNMADE in n) if j.tier in (Tier.WRONG, Tier.UNEXPLAINED) else ()
    return Verdict(  # an incomplete count is only a lower bound: no reading of it can vouch for a number
        claim=claim,
        verdict=Tier.INCOMPLETE if ref.incomplete or unmade else j.tier,
        best=best,
        runners_up=tuple(runners[:4]),
        true_flops=true,
        reference=reference,
        cause=cause,
        tools=j.tools,
        also=j.also,
        inputs=_inputs(claim, measured),
        notes=tuple(notes),
        space=(Space.PIXEL if best.reading.pixel else Space.LATENT) if pixel is not None else None,
        stated=stated,
        readings=tuple(sorted(tool_candidates, key=lambda c: c.relative)),
        unmade=unmade,
    )


__all__ = [
    "PASSING",
    "Candidate",
    "Claim",
    "ClaimError",
    "Judgement",
    "Verdict",
    "judge",
    "load_claims",
    "parse_claim",
    "parse_resolution",
]

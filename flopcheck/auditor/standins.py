"""Stand-ins: where counters cannot run on the claim's model, each one's reading carried from smaller models.

Two ways, one driver (`_from_stand_ins`): a reference model's stand-ins are smaller configs of its architecture (its
config's `stand_ins`), each counter's count on one reconciled and every cause carried to the model by the quantity
it is made of; a spec whose work is one list of L >= 3 identical blocks is counted with 1 and 2 of them and each
count, and every cause's delta, scaled per block; where those two are still too big to execute (a video at tens of
thousands of tokens), each is counted at four small widths of its input (cut as seqfit.py says) and fitted to the
model's. Every way of carrying, and its exact fit, is reconciler/carry.py's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from flopcheck.auditor import seqfit
from flopcheck.auditor.claims import Claim
from flopcheck.auditor.fingerprints import fingerprint_words
from flopcheck.auditor.readings import UNMADE, Convention, ToolReading, fill, path_words
from flopcheck.cache import COUNTS, count_key
from flopcheck.counters import COUNTERS
from flopcheck.counters.pool import Job
from flopcheck.reconciler import explain
from flopcheck.reconciler.carry import Carried, carried, fitted, per_block
from flopcheck.types import Count, Finding, ModelPart, Outcome, Space

if TYPE_CHECKING:
    from flopcheck.specs import ModelSpec

MAX_UNCERTAIN = 1000  # a carried value is kept when at most 1/1000 of it is carried at a mixed rate


@dataclass(frozen=True)
class Group:
    """The stand-ins of one attention path: its words, its label, and how a counter's reading is carried from them
    (a counter's reading there, or the one line that says why not)."""

    path: str
    label: str
    carry: Callable[[str], ToolReading | str]


def stand_ins(claim: Claim) -> list[Job]:
    """The stand-in jobs of a whole-model latent claim on a reference model; none for a part, pixels or a spec."""
    if claim.part is not ModelPart.MODEL or claim.space is Space.PIXEL:
        return []
    return claim.subject.stand_ins()


def _executing(names: list[str] | None) -> list[str]:
    """The named counters (default: all) that execute the model: one that reads shapes on meta, as the exact count
    does, has the exact count as its reading already."""
    return [n for n in (names or list(COUNTERS)) if not COUNTERS[n].on_meta]


def _from_stand_ins(
    claim: Claim, why: str, how: str, jobs: list[Any], groups: list[Group], executing: list[str]
) -> tuple[list[ToolReading], list[str]]:
    """Run the executing counters on the stand-ins' jobs, then carry each counter's reading, group by group."""
    fill(jobs, executing)
    out, notes = [], [f"counters not run on the model: {why}; {how}"]
    for group in groups:
        for name in executing:
            got = group.carry(name)
            if isinstance(got, str):
                notes.append(got)
                continue
            out.append(replace(got, path=group.path, stand_in=group.label, not_run=_short(why)))
    return out, sorted(set(notes))


def _missing(name: str, count: Outcome | None) -> str:
    """The line for a counter that gave no count on a stand-in."""
    return f"{name}: {count.error if count is not None else 'no result'}"


def not_carried(got: Carried) -> str:
    """Why a carried reading (reconciler.carry.Carried) is not kept, in words."""
    if got.why:
        return got.why
    assert got.flops is not None  # carry.carried gives no number only with its why
    if got.flops < 0:  # causes scaled past the count itself: their rates do not hold at the model's size
        return (
            f"its causes, each scaled by its own quantity, take it to {got.flops:,} FLOPs, which no count is: "
            f"their rates do not hold at the model's size"
        )
    return (
        f"{got.uncertain:,} FLOPs of it are carried at a mixed rate (elementwise or per-parameter work, whose mix of "
        f"ops changes with size), over 1/{MAX_UNCERTAIN} of the {got.flops:,} carried"
    )


def carried_readings(claim: Claim, names: list[str] | None, why: str) -> tuple[list[ToolReading], list[str]]:
    """Each counter's convention as a reading where it cannot run on the claim's model: its count on a stand-in,
    reconciled, each cause carried to the model by the quantity it is made of (reconciler/carry.py)."""
    jobs = stand_ins(claim)
    if not jobs:
        return scaled_readings(claim, names, why)
    groups = [Group(path_words(job, len(jobs) > 1), job.label, _carrier(claim, job, len(jobs) > 1)) for job in jobs]
    how = "each one's convention is carried from a stand-in"
    return _from_stand_ins(claim, why, how, jobs, groups, _executing(names))


def _carrier(claim: Claim, job: Job, several: bool) -> Callable[[str], ToolReading | str]:
    """How a counter's count on one stand-in job is carried to the claim's model."""
    from flopcheck.reconciler import reference_for  # lazy: torch-free door (the reference builds models)

    resolved = job.resolved()
    small = reference_for(
        job.model, resolved["input_size"], job.attn, 1, tuple(sorted(json.loads(job.overrides).items()))
    )
    model = claim.subject.with_options(attn=job.attn).reference()

    def carry(name: str) -> ToolReading | str:
        c = COUNTS.get(count_key(name, resolved))
        if not isinstance(c, Count):
            return _missing(name, c)
        rec = explain(c, small)
        got = carried(rec, small, model)
        if got.flops is None or got.flops < 0 or got.uncertain * MAX_UNCERTAIN > got.flops:
            where = f" ({path_words(job, True)})" if several else ""
            return f"{name}{where}: not carried to the model: {not_carried(got)}"
        count = replace(
            c,
            model=claim.model,
            input_size=None,
            reported=got.flops / c.unit.flops_per_unit,
            flops=got.flops,
            detail=(),
            skipped=(),
            time_s=None,
            peak_rss_mb=None,
        )
        convention = Convention(fingerprint_words(c, small, rec), got.findings, model.total)
        return ToolReading(count, claim.stated_factor, "", uncertain=got.uncertain, convention=convention)

    return carry


def _depth_stand_ins(claim: Claim) -> list[tuple[ModelSpec, ModelSpec, int, str]]:
    """A spec whose forward counters would not execute, but whose work is one list of L >= 3 identical blocks: its
    stand-ins of 1 and 2 blocks on each attention path, as (1-block spec, 2-block spec, L, path words)."""
    if claim.part is not ModelPart.MODEL or claim.space is Space.PIXEL:
        return []
    lists = claim.subject.blocks()
    if len(lists) != 1 or lists[0].count < 3:
        return []
    paths = claim.subject.paths()
    out: list[tuple[ModelSpec, ModelSpec, int, str]] = []
    for s in paths:
        one, two = (replace(s.named, options=replace(s.named.options, blocks=n)) for n in (1, 2))
        out.append((one, two, lists[0].count, path_words(s.job(), len(paths) > 1)))
    return out


def _job(spec: ModelSpec) -> Job:
    """The pool's job of a spec."""
    return Job.of_spec(spec)


def scaled_readings(
    claim: Claim, names: list[str] | None, why: str, by_length: bool | None = None
) -> tuple[list[ToolReading], list[str]]:
    """Each counter's reading of a spec it cannot execute whole: its counts on the model with 1 and 2 of its L
    identical blocks, scaled per block (every cause's delta too), exact where the blocks are alike; each of the two
    counts fitted over its input's width (seqfit.py) where the 2-block stand-in is over STAND_IN_LIMIT (by_length:
    always, or never)."""
    stand = _depth_stand_ins(claim)
    if not stand:
        return [], [f"counters not run: {why}"]
    _measure(claim, stand, by_length is True)
    cuts = [_cut(claim, one, two, by_length) for one, two, _, _ in stand]
    jobs = [_job(x) for (one, two, _, _), cut in zip(stand, cuts) for s in (one, two) for x in _counted_specs(s, cut)]
    base = claim.subject.truth()
    groups = [
        Group(
            path,
            f"{claim.model} with 1 and 2 of its {blocks} blocks, scaled per block"
            + (f", each {cut.words()}" if isinstance(cut, seqfit.Lengths) else ""),
            _scaler(claim, one, two, blocks, base, cut),
        )
        for (one, two, blocks, path), cut in zip(stand, cuts)
    ]
    how = "each one's count is scaled per block from its stand-ins"
    if any(isinstance(cut, seqfit.Lengths) for cut in cuts):
        how += ", each cut in length too (fitted over its input's width)"
    return _from_stand_ins(claim, why, how, jobs, groups, _executing(names))


STAND_IN_LIMIT = 25 * 10**9  # FLOPs of a 2-block stand-in's forward: beyond it, its input is cut in length too


def _measure(claim: Claim, stand: list[tuple[ModelSpec, ModelSpec, int, str]], cutting: bool) -> None:
    """The stand-ins' exact counts, and when they are to be cut the specs that find the cut (seqfit.probes), in one
    child."""
    from flopcheck.specs.child import measure_all  # lazy: torch-free door (the child imports torch)

    probes = [p for one, _, _, _ in stand for p in seqfit.probes(claim.subject, one)] if cutting else []
    measure_all([s for one, two, _, _ in stand for s in (one, two)] + probes)


def _cut(claim: Claim, one: ModelSpec, two: ModelSpec, by_length: bool | None) -> seqfit.Lengths | str | None:
    """How the stand-ins are cut in length (seqfit.Lengths), why they cannot be, or None: counted at full length."""
    from flopcheck.specs.child import measured  # lazy: torch-free door (the child imports torch)

    if by_length is False or (by_length is None and measured(two).exact.total <= STAND_IN_LIMIT):
        return None
    return seqfit.lengths(claim.subject, one)


def _counted_specs(spec: ModelSpec, cut: seqfit.Lengths | str | None) -> list[ModelSpec]:
    """What counters run for a stand-in: its cut lengths, or itself (where it is not cut, or cannot be)."""
    return cut.specs(spec) if isinstance(cut, seqfit.Lengths) else [spec]


def _counter_on(name: str, spec: ModelSpec, cut: seqfit.Lengths | str | None) -> Count | str:
    """A counter's count of a stand-in: as counted, or fitted over its cut lengths; or why there is none (a stand-in
    that was to be cut: its reading could not be made, unless the library is not installed)."""
    if not isinstance(cut, seqfit.Lengths):
        c: Outcome | None = COUNTS.get(count_key(name, _job(spec).resolved()))
        if isinstance(c, Count):
            return c
        if cut is None or c is None or (c.error or "").startswith("unavailable"):
            return _missing(name, c)
        return f"{name}: {UNMADE}: its count on the stand-in gave none ({c.error}), and {cut}"
    counts = [COUNTS.get(count_key(name, _job(x).resolved())) for x in cut.specs(spec)]
    unavailable = [c for c in counts if c is not None and (c.error or "").startswith("unavailable")]
    if unavailable:  # not installed: no reading anywhere, said as for any model
        return _missing(name, unavailable[0])
    got = fitted(counts, cut.full, cut.widths())
    return got if isinstance(got, Count) else f"{name}: {UNMADE}: {got}"


def _scaler(
    claim: Claim, one: ModelSpec, two: ModelSpec, blocks: int, base: int, cut: seqfit.Lengths | str | None = None
) -> Callable[[str], ToolReading | str]:
    """How a counter's counts on the 1- and 2-block stand-ins (or their fits over length) are scaled to the
    model's L blocks."""
    # lazy: torch-free door (the reference builds models; the spec's child module will import torch)
    from flopcheck.reconciler.reference import reference_of
    from flopcheck.specs.child import measured

    refs = [reference_of(measured(s), measured(s).batch or 1) for s in (one, two)]

    def scale(name: str) -> ToolReading | str:
        counts = [_counter_on(name, s, cut) for s in (one, two)]
        came = [c for c in counts if isinstance(c, Count)]
        if len(came) < 2:
            return next(c for c in counts if isinstance(c, str))
        recs = [explain(c, r) for c, r in zip(came, refs)]
        reported = per_block(came[0].reported, came[1].reported, blocks)
        flops = per_block(came[0].flops, came[1].flops, blocks)
        residuals = [r.residual for r in recs]
        if flops.denominator != 1 or residuals[0] is None or residuals[1] is None:
            return f"{name}: its counts on the stand-ins are not whole per block: not scaled"
        deltas: dict[str, list[Finding]] = {}
        for r in recs:
            for f in r.findings:
                deltas.setdefault(f.code, []).append(f)
        findings = tuple(
            replace(fs[-1], delta=int(per_block(fs[0].delta, fs[-1].delta, blocks)))
            for fs in deltas.values()
            if len(fs) == 2
        )
        residual = int(per_block(residuals[0], residuals[1], blocks))
        count = replace(came[1], model=claim.model, reported=float(reported), flops=int(flops), detail=())
        convention = Convention(fingerprint_words(came[1], refs[1], recs[1]), findings, base, residual)
        return ToolReading(count, claim.stated_factor, "", convention=convention)

    return scale


def _short(why: str) -> str:
    """Why a counter did not run on the model, in a few words."""
    return why.split(":")[0]

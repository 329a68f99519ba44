"""Counters as readings: what each installed counter reports on the claim's model and input.

A published number is usually some tool's output. For a claim about a whole model, every installed
counter runs on that model and input the way `flopcheck counters` runs it (its own worker process,
meta where the library works there, real tensors where it must), on both attention paths where the
model has a switch (the reference models' `attn`, timm's fused-attention switch). Each count is
cached on disk, keyed by the counter's adapter source, its library's version and the job, so a claims
file audits fast the second time; `FLOPCHECK_CACHE` names the folder ('off': no disk cache).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

from flopcheck.auditor.claims import Claim
from flopcheck.cache import COUNTS, FINGERPRINTS, count_key
from flopcheck.types import Count, Finding, Unit


@dataclass(frozen=True)
class Convention:
    """What a counter did on the claim's model, by the reconciler: its fingerprint in words, the findings that take
    the model's exact FLOPs (`base`, per forward) to its count, and what no cause explains; `known`: False where
    its count could not be reconciled (its departure from the model's work is then unknown)."""

    words: str
    findings: tuple[Finding, ...] = ()
    base: int = 0
    residual: int = 0
    known: bool = True


@dataclass(frozen=True)
class ToolReading:
    """One counter's number on the claim's model and input, at the claim's stated scope."""

    count: Count
    factor: int  # the claim's stated scope: batch x CFG x steps x (3 for a training step, the 3x rule)
    path: str  # 'fused attention', 'explicit attention', or '' where the model has no switch
    stand_in: str = ""  # not run on the model: carried by its convention from this stand-in (scaling.py)
    not_run: str = ""  # why it did not run on the model
    uncertain: int = 0  # FLOPs of the carried value at a mixed rate (the stand-in's mix)
    convention: Convention | None = None  # what it did on the model, by the reconciler (carried: from the stand-in)
    reference: Any = field(default=None, compare=False, repr=False)  # what its count is reconciled against, if known

    @property
    def words(self) -> str:
        """Its fingerprint in words ('' until its convention is known)."""
        return self.convention.words if self.convention else ""

    @property
    def value(self) -> Decimal:
        """The reading in the counter's own unit: what it printed x the stated scope."""
        return Decimal(repr(self.count.reported)) * self.factor

    @property
    def unit(self) -> Unit:
        return self.count.unit

    @property
    def flops(self) -> int:
        return self.count.flops * self.factor

    @property
    def tool(self) -> str:
        """'fvcore_jit (fvcore 0.1.5)'."""
        return f"{self.count.counter} ({self.count.library} {self.count.version})"

    def describe(self) -> str:
        """'what fvcore_jit (fvcore 0.1.5) reports on explicit attention'."""
        where = f" on {self.path}" if self.path else ""
        scope = f" x {self.factor}" if self.factor > 1 else ""
        if self.stand_in:
            return (
                f"what {self.tool} would report{where}{scope} by its convention, carried from its count on the "
                f"stand-in {self.stand_in} ({self.not_run})"
            )
        return f"what {self.tool} reports{where}{scope}"


def keep(count: Count, job: dict) -> None:
    """Keep a counter's count of a job (as the worker takes it) in COUNTS; an error is kept in this process only,
    except a library that is not installed (the key holds its version: installing it makes a new key)."""
    COUNTS.put(count_key(count.counter, job), count, keep=count.ok or (count.error or "").startswith("unavailable"))


REAL_TENSOR_LIMIT = 250 * 10**9  # FLOPs of one forward: beyond it counters are run only when named (CPU minutes)


def jobs_of(claim: Claim, named: bool = False) -> tuple[list, str]:
    """The counter jobs for a claim (both attention paths where the model switches), and why there are none;
    a forward over REAL_TENSOR_LIMIT runs counters only when they are `named`."""
    jobs, why = _jobs_of(claim)
    if jobs and not named:
        flops = _forward_flops(claim)
        if flops > REAL_TENSOR_LIMIT:
            return [], (
                f"one forward is {flops / 1e9:,.0f} GFLOPs, which most counters execute on real tensors on "
                f"the CPU: name them to run them (--counter NAME)"
            )
    return jobs, why


def _forward_flops(claim: Claim) -> int:
    """One forward of the claim's model and input, FLOPs (the formula, or the spec's exact count)."""
    return claim.subject.truth()


def _jobs_of(claim: Claim) -> tuple[list, str]:
    if claim.part != "model":
        return [], "counters count whole models"
    if claim.space == "pixel":
        return [], "counters run the model on its latent"
    why = claim.subject.meta_only()
    if why:
        return [], why
    # a spec's code builds and runs in its own child, with a deadline, before any counter runs it
    return [s.job() for s in claim.subject.paths()], ""


def _path_words(job, switch: bool) -> str:
    if not switch:
        return ""
    return "explicit attention" if job.attn == "math" else "fused attention"


def prefetch(claims: list[Claim], names: list[str] | None = None, workers: int | None = None) -> None:
    """Count every claim's jobs (or its stand-ins') with every named counter (default: all) in one pool, filling
    the cache."""
    _measure_specs(claims)
    jobs = []
    for claim in claims:
        try:
            found, _ = jobs_of(claim, names is not None)
            jobs += found or stand_ins(claim)
        except Exception:  # noqa: BLE001  (a claim that cannot be read is refused later, by its own audit)
            continue
    fill(jobs, names, workers)


def fill(jobs: list, names: list[str] | None, workers: int | None = None) -> None:
    """Run the named counters (default: all) the cache lacks on these jobs, in one pool, and keep their counts."""
    from flopcheck.counters import COUNTERS
    from flopcheck.counters.pool import run_jobs

    named = [COUNTERS[n] for n in (names if names is not None else list(COUNTERS))]
    groups: dict[tuple, dict] = {}  # the counters a job lacks -> the jobs that lack just those
    for job in dict.fromkeys(jobs):
        resolved = job.resolved()
        lacking = tuple(s.name for s in named if COUNTS.get(count_key(s.name, resolved)) is None)
        if lacking:
            groups.setdefault(lacking, {})[job] = resolved
    for lacking, todo in groups.items():  # a job counts only what it lacks, never what another job lacks
        run = run_jobs([COUNTERS[n] for n in lacking], list(todo), workers=workers or min(2, os.cpu_count() or 1))
        done = list(todo.values())  # the run's counts are in job order, then counter order
        for i, c in enumerate(run.counts):
            keep(c, done[i // len(lacking)])


# ---------------------------------------------------------------------------------------------
# Stand-ins: where a counter cannot run on the model, its convention on a smaller one of the same architecture
# (the config's stand_ins)
# ---------------------------------------------------------------------------------------------


def stand_ins(claim: Claim) -> list:
    """The stand-in jobs of a whole-model latent claim on a reference model; none for a part, pixels or a spec."""
    if claim.part != "model" or claim.space == "pixel":
        return []
    return claim.subject.stand_ins()


MAX_UNCERTAIN = 1000  # a carried value is kept when at most 1/1000 of it is carried at a mixed rate


def carried_readings(claim: Claim, names: list[str] | None, why: str) -> tuple[list[ToolReading], list[str]]:
    """Each counter's convention as a reading where it cannot run on the claim's model: its count on a stand-in,
    reconciled, each cause carried to the model by the quantity it is made of (reconciler/scaling.py)."""

    from flopcheck.counters import COUNTERS
    from flopcheck.reconciler import explain, reference_for
    from flopcheck.reconciler.scaling import carried

    jobs = stand_ins(claim)
    if not jobs:
        return scaled_readings(claim, names, why)
    # a counter that reads shapes on meta, as the exact count does, has the exact count as its reading already
    executing = [n for n in (names or list(COUNTERS)) if not COUNTERS[n].on_meta]
    fill(jobs, executing)
    factor = claim.batch * (2 if claim.cfg else 1) * claim.steps * (3 if claim.training else 1)
    out, notes = [], [f"counters not run on the model: {why}; each one's convention is carried from a stand-in"]
    for job in jobs:
        resolved = job.resolved()
        small = reference_for(
            job.model, resolved["input_size"], job.attn, 1, tuple(sorted(json.loads(job.overrides).items()))
        )
        model = claim.subject.with_options(attn=job.attn).reference()
        for name in executing:
            c = COUNTS.get(count_key(name, resolved))
            if c is None or not c.ok:
                notes.append(f"{name}: {c.error if c is not None else 'no result'}")
                continue
            rec = explain(c, small)
            got = carried(rec, small, model)
            if got.flops is None or got.uncertain * MAX_UNCERTAIN > abs(got.flops):
                where = f" ({_path_words(job, True)})" if len(jobs) > 1 else ""
                notes.append(
                    f"{name}{where}: not carried to the model: "
                    + (
                        got.why
                        or (
                            f"{got.uncertain:,} FLOPs of it are carried at a mixed rate "
                            "(elementwise or per-parameter work, "
                            f"whose mix of ops changes with size), over 1/{MAX_UNCERTAIN} of the {got.flops:,} carried"
                        )
                    )
                )
                continue
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
            out.append(
                ToolReading(
                    count,
                    factor,
                    _path_words(job, len(jobs) > 1),
                    stand_in=job.label,
                    not_run=_short(why),
                    uncertain=got.uncertain,
                    convention=Convention(_fingerprint_words(c, small, rec), got.findings, model.total),
                )
            )
    return out, sorted(set(notes))


def _depth_stand_ins(claim: Claim) -> list[tuple[Any, Any, int, str]]:
    """A spec whose forward counters would not execute, but whose work is one list of L >= 3 identical blocks: its
    stand-ins of 1 and 2 blocks on each attention path, as (1-block spec, 2-block spec, L, path words)."""
    if claim.part != "model" or claim.space == "pixel":
        return []
    lists = claim.subject.blocks()
    if len(lists) != 1 or lists[0].count < 3:
        return []
    paths = claim.subject.paths()
    out = []
    for s in paths:
        one, two = (replace(s.spec, options=replace(s.spec.options, blocks=n)) for n in (1, 2))
        out.append((one, two, lists[0].count, _path_words(s.job(), len(paths) > 1)))
    return out


def _job(spec):
    """The pool's job of a spec."""
    from flopcheck.counters.pool import Job

    return Job.of_spec(spec)


def _exact(x: float) -> Fraction:
    """A number as printed, exactly (a float by its shortest repr: 4.61e9 is 4610000000)."""
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)


def _per_block(one: float, two: float, blocks: int) -> Fraction:
    """A count of L blocks from counts of 1 and 2: c(1) + (L - 1) (c(2) - c(1)), exact where blocks are alike."""
    return _exact(one) + (blocks - 1) * (_exact(two) - _exact(one))


def scaled_readings(claim: Claim, names: list[str] | None, why: str) -> tuple[list[ToolReading], list[str]]:
    """Each counter's reading of a spec it cannot execute whole: its counts on the model with 1 and 2 of its L
    identical blocks, scaled per block (every cause's delta too), exact where the blocks are alike."""
    from flopcheck.counters import COUNTERS
    from flopcheck.reconciler import explain
    from flopcheck.reconciler.reference import reference_of
    from flopcheck.specs.child import measured

    stand = _depth_stand_ins(claim)
    if not stand:
        return [], [f"counters not run: {why}"]
    executing = [n for n in (names or list(COUNTERS)) if not COUNTERS[n].on_meta]
    fill([_job(s) for one, two, _, _ in stand for s in (one, two)], executing)
    factor = claim.batch * (2 if claim.cfg else 1) * claim.steps * (3 if claim.training else 1)
    base = claim.subject.truth()
    out, notes = [], [f"counters not run on the model: {why}; each one's count is scaled per block from its stand-ins"]
    for one, two, blocks, path in stand:
        refs = [reference_of(measured(s), measured(s).batch or 1) for s in (one, two)]
        label = f"{claim.model} with 1 and 2 of its {blocks} blocks, scaled per block"
        for name in executing:
            counts = [COUNTS.get(count_key(name, _job(s).resolved())) for s in (one, two)]
            if any(c is None or not c.ok for c in counts):
                bad = next(c for c in counts if c is None or not c.ok)
                notes.append(f"{name}: {bad.error if bad is not None else 'no result'}")
                continue
            recs = [explain(c, r) for c, r in zip(counts, refs)]
            reported = _per_block(counts[0].reported, counts[1].reported, blocks)
            flops = _per_block(counts[0].flops, counts[1].flops, blocks)
            if flops.denominator != 1 or any(r.residual is None for r in recs):
                notes.append(f"{name}: its counts on the stand-ins are not whole per block: not scaled")
                continue
            deltas: dict[str, list] = {}
            for r in recs:
                for f in r.findings:
                    deltas.setdefault(f.code, []).append(f)
            findings = tuple(
                replace(fs[-1], delta=int(_per_block(fs[0].delta, fs[-1].delta, blocks)))
                for fs in deltas.values()
                if len(fs) == 2
            )
            residual = int(_per_block(recs[0].residual, recs[1].residual, blocks))
            count = replace(counts[1], model=claim.model, reported=float(reported), flops=int(flops), detail=())
            conv = Convention(_fingerprint_words(counts[1], refs[1], recs[1]), findings, base, residual)
            out.append(ToolReading(count, factor, path, stand_in=label, not_run=_short(why), convention=conv))
    return out, sorted(set(notes))


def _short(why: str) -> str:
    """Why a counter did not run on the model, in a few words."""
    return why.split(":")[0]


def _measure_specs(claims: list[Claim]) -> None:
    """The exact counts of the claims' specs (and of their explicit-attention twins), in as few children as can be."""
    from flopcheck.subject import measure_all

    subjects = []
    for claim in claims:
        if claim.part == "model" and claim.space != "pixel":
            try:
                subjects.append(claim.subject)
            except Exception:  # noqa: BLE001  (refused by the claim's own audit, one line)
                continue
    measure_all(subjects)


def readings(claim: Claim, names: list[str] | None = None) -> tuple[list[ToolReading], list[str]]:
    """Each named counter's (default: every installed one's) reading of the claim, and one line per counter or
    path that gave none (not installed, failed, or not runnable on this claim)."""
    from flopcheck.counters import COUNTERS

    jobs, why = jobs_of(claim, names is not None)
    if not jobs:
        return carried_readings(claim, names, why)
    prefetch([claim], names)
    out, notes = [], []
    for job in jobs:
        resolved = job.resolved()
        counts = [COUNTS.get(count_key(name, resolved)) for name in names or list(COUNTERS)]
        found, missed = readings_of_counts(claim, counts, _path_words(job, len(jobs) > 1))
        out, notes = out + found, notes + missed
    return out, sorted(set(notes))


def readings_of_counts(
    claim: Claim, counts: list, path: str = "", reference: Any = None
) -> tuple[list[ToolReading], list[str]]:
    """Counts made on the claim's model as its readings at the claim's stated scope (batch x CFG x steps x 3 for
    training), and one line per count that gave none; `reference`: what each is reconciled against."""
    factor = claim.batch * (2 if claim.cfg else 1) * claim.steps * (3 if claim.training else 1)
    out, notes = [], []
    for c in counts:
        if c is None or not c.ok:
            notes.append(f"{c.counter}: {c.error}" if c is not None else "a counter: no result")
        elif c.reported:
            out.append(ToolReading(c, factor, path, reference=reference))
    return out, sorted(set(notes))


def convention(t: ToolReading, claim: Claim) -> Convention:
    """What the counter did on this model, by the reconciler's causes: its words ('MACs; fused attention uncounted;
    norms counted ...', its library's convention where the reconciliation cannot be made) and its findings."""
    from flopcheck.counters import COUNTERS
    from flopcheck.reconciler import explain

    if t.convention is not None:
        return t.convention
    key = count_key(
        t.count.counter,
        {
            "model": t.count.model,
            "attn": t.count.attn,
            "input": t.count.input_size,
            "claim": claim.model,
            "resolution": claim.resolution,
        },
    )
    if key in FINGERPRINTS:
        return FINGERPRINTS.get(key)
    try:
        ref = _reference(t, claim)
        r = explain(t.count, ref)
        found = Convention(_fingerprint_words(t.count, ref, r), r.findings, ref.total, r.residual or 0)
    except Exception as err:  # noqa: BLE001  (its library's convention stands in, and its departure is unknown)
        words = f"{t.count.unit.value}s; {COUNTERS[t.count.counter].convention} (not reconciled: {err})"
        found = Convention(words, known=False)
    FINGERPRINTS.put(key, found)
    return found


def _fingerprint_words(count: Count, ref, r) -> str:
    """A count's convention in words, from its reconciliation `r` against `ref`."""
    from flopcheck.reconciler import causes as K
    from flopcheck.types import ATTENTION_KINDS

    findings = [f for f in r.findings if K.of(f) is not K.MAC_CONVENTION and f.delta]
    attention = (
        []
        if any(K.of(f).attention is not None or K.of(f) is K.QK_MISSING for f in findings)
        or not any(k in ATTENTION_KINDS for k in ref.formula.by_kind())
        else ["attention counted"]
    )
    words = [count.unit.value + "s", *attention] + [_words(f, count.unit, ref) for f in findings]
    if r.residual:
        words.append(f"{r.residual:+,} FLOPs unexplained")
    return "; ".join(words)


def _reference(t: ToolReading, claim: Claim):
    """The reference the counter's count is reconciled against: a reference model's formula and exact count on
    the count's path, or the spec's exact count on the count's path."""
    from flopcheck.reconciler import reference_for

    if t.reference is not None:
        return t.reference
    if t.count.input_size is not None:
        return reference_for(t.count.model, t.count.input_size, t.count.attn, t.count.batch)
    return claim.subject.with_options(attn=None if t.count.attn == "sdpa" else t.count.attn).reference()


def _words(f, unit: Unit, ref) -> str:
    """A finding as fingerprint words: 'fused attention uncounted', 'norms counted at 5 MACs per element'."""
    from flopcheck.reconciler import causes as K
    from flopcheck.types import Work

    words = f.title.replace("-", " ")
    if K.of(f) is K.NORM_COUNTED:
        elements = ref.exact.uncounted_by_category().get(Work.NORM, (0, 0))[1]
        rate = f.delta / unit.flops_per_unit / elements if elements else 0
        if rate and abs(rate - round(rate)) <= 0.05 * rate:
            return f"norms at {round(rate)} {unit.value}s per element"
    return words

"""Counters as readings, the types and the running: what each installed counter reports on the claim's model and input.

A published number is usually some tool's output. For a claim about a whole model, every installed
counter runs on that model and input the way `flopcheck counters` runs it (its own worker process,
meta where the library works there, real tensors where it must), on both attention paths where the
model has a switch (the reference models' `attn`, timm's fused-attention switch). Each count is
cached on disk, keyed by the counter's adapter source, its library's version and the job, so a claims
file audits fast the second time; `FLOPCHECK_CACHE` names the folder ('off': no disk cache).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from flopcheck.auditor.claims import Claim
from flopcheck.cache import COUNTS, count_key
from flopcheck.executors import keep as keep  # a count kept as the auditor keeps it (re-exported: tests, conftest)
from flopcheck.types import Count, Finding, ModelPart, Space, Unit

if TYPE_CHECKING:
    from flopcheck.counters.pool import Job


UNMADE = "its reading could not be made"  # a counter's note where its reading was due and not made (standins.py)
FUSED = "reparameterized"  # the name of the reading of a model counted fused (auditor.reparam), as a counter's


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
    stand_in: str = ""  # not run on the model: carried by its convention from this stand-in (reconciler/carry.py)
    not_run: str = ""  # why it did not run on the model
    uncertain: int = 0  # FLOPs of the carried value at a mixed rate (the stand-in's mix)
    convention: Convention | None = None  # what it did on the model, by the reconciler (carried: from the stand-in)
    reference: Any = field(default=None, compare=False, repr=False)  # what its count is reconciled against, if known
    formula: str | None = None  # a published formula's reading: its name in flopcheck.published.FORMULAS

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
        """'fvcore_jit (fvcore 0.1.5)'; a published formula by its title."""
        if self.formula is not None or self.count.counter == FUSED:
            return f"{self.count.counter} ({self.count.library})"
        return f"{self.count.counter} ({self.count.library} {self.count.version})"

    def describe(self) -> str:
        """'what fvcore_jit (fvcore 0.1.5) reports on explicit attention'."""
        where = f" on {self.path}" if self.path else ""
        scope = f" x {self.factor}" if self.factor > 1 else ""
        if self.formula is not None:
            return f"what the published formula {self.formula} ({self.count.library}) gives{scope}"
        if self.count.counter == FUSED:
            return f"the exact count after reparameterization (timm's benchmark convention){scope}"
        if self.stand_in:
            return (
                f"what {self.tool} would report{where}{scope} by its convention, carried from its count on the "
                f"stand-in {self.stand_in} ({self.not_run})"
            )
        return f"what {self.tool} reports{where}{scope}"


REAL_TENSOR_LIMIT = 250 * 10**9  # FLOPs of one forward: beyond it counters are run only when named (CPU minutes)


def jobs_of(claim: Claim, named: bool = False) -> tuple[list[Any], str]:
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


def _jobs_of(claim: Claim) -> tuple[list[Any], str]:
    if claim.part is not ModelPart.MODEL:
        return [], "counters count whole models"
    if claim.space is Space.PIXEL:
        return [], "counters run the model on its latent"
    why = claim.subject.meta_only()
    if why:
        return [], why
    # a spec's code builds and runs in its own child, with a deadline, before any counter runs it
    return [s.job() for s in claim.subject.paths()], ""


def path_words(job: Job, switch: bool) -> str:
    if not switch:
        return ""
    return "explicit attention" if job.attn == "math" else "fused attention"


def fill(jobs: list[Job], names: list[str] | None, workers: int | None = None) -> None:
    """Run the named counters (default: all) the cache lacks on these jobs, one pool (or Ray run: the enclosing
    executors.using) a set of lacking counters, each model's counts kept as it finishes (executors.count_jobs), and
    a progress line on stderr when it is a terminal (a first audit runs every counter on real tensors, minutes)."""
    # lazy: door start-up (the counters' registry imports every adapter; see subject.counts_of)
    from flopcheck.counters import COUNTERS
    from flopcheck.executors import count_jobs, current

    named = [COUNTERS[n] for n in (names if names is not None else list(COUNTERS))]
    groups: dict[tuple[str, ...], list[Job]] = {}  # the counters a job lacks -> the jobs that lack just those
    unique = list(dict.fromkeys(jobs))
    for job in unique:
        resolved = job.resolved()
        lacking = tuple(s.name for s in named if COUNTS.get(count_key(s.name, resolved)) is None)
        if lacking:
            groups.setdefault(lacking, []).append(job)
    whole = len(unique) - sum(len(todo) for todo in groups.values())
    if whole and groups:  # a run that counts something says what it did not have to
        print(f"{whole} of {len(unique)} models from the cache", file=sys.stderr)
    for lacking, todo in groups.items():  # a job counts only what it lacks, never what another job lacks
        count_jobs([COUNTERS[n] for n in lacking], todo, current(workers or min(2, os.cpu_count() or 1)))


def readings_of_counts(
    claim: Claim, counts: list[Any], path: str = "", reference: Any = None
) -> tuple[list[ToolReading], list[str]]:
    """Counts made on the claim's model as its readings at the claim's stated scope (batch x CFG x steps x 3 for
    training), and one line per count that gave none; `reference`: what each is reconciled against."""
    factor = claim.stated_factor
    out, notes = [], []
    for c in counts:
        if not isinstance(c, Count):
            notes.append(f"{c.counter}: {c.error}" if c is not None else "a counter: no result")
        elif c.reported:
            out.append(ToolReading(c, factor, path, reference=reference))
    return out, sorted(set(notes))

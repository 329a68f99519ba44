"""Counters as readings of a claim: each installed counter's count on the claim's model and input where it runs there
(auditor/readings.py), else its convention carried from stand-ins (auditor/standins.py), each with its fingerprint
(auditor/fingerprints.py). Every claim's counts run in one pool first (prefetch), filling the cache.
"""

from __future__ import annotations

from flopcheck.auditor.claims import Claim
from flopcheck.auditor.readings import ToolReading, fill, jobs_of, path_words, readings_of_counts
from flopcheck.auditor.standins import carried_readings, stand_ins
from flopcheck.cache import COUNTS, count_key
from flopcheck.counters import COUNTERS
from flopcheck.counters.pool import Job
from flopcheck.subject import measure_all
from flopcheck.types import ModelPart, Space


def prefetch(claims: list[Claim], names: list[str] | None = None, workers: int | None = None) -> None:
    """Count every claim's jobs (or its stand-ins') with every named counter (default: all) in one pool, filling
    the cache."""
    _measure_specs(claims)
    jobs: list[Job] = []
    for claim in claims:
        try:
            found, _ = jobs_of(claim, names is not None)
            jobs += found or stand_ins(claim)
        except Exception:  # noqa: BLE001  (a claim that cannot be read is refused later, by its own audit)
            continue
    fill(jobs, names, workers)


def _measure_specs(claims: list[Claim]) -> None:
    """The exact counts of the claims' specs (and of their explicit-attention twins), in as few children as can be."""
    subjects = []
    for claim in claims:
        if claim.part is ModelPart.MODEL and claim.space is not Space.PIXEL:
            try:
                subjects.append(claim.subject)
            except Exception:  # noqa: BLE001  (refused by the claim's own audit, one line)
                continue
    measure_all(subjects)


def readings(claim: Claim, names: list[str] | None = None) -> tuple[list[ToolReading], list[str]]:
    """Each named counter's (default: every installed one's) reading of the claim, and one line per counter or
    path that gave none (not installed, failed, or not runnable on this claim)."""
    jobs, why = jobs_of(claim, names is not None)
    if not jobs:
        return _carried_or_none(claim, names, why)
    prefetch([claim], names)
    out: list[ToolReading] = []
    notes: list[str] = []
    for job in jobs:
        resolved = job.resolved()
        counts = [COUNTS.get(count_key(name, resolved)) for name in names or list(COUNTERS)]
        found, missed = readings_of_counts(claim, counts, path_words(job, len(jobs) > 1))
        out, notes = out + found, notes + missed
    return out, sorted(set(notes))


def _carried_or_none(claim: Claim, names: list[str] | None, why: str) -> tuple[list[ToolReading], list[str]]:
    """The counters' readings carried from stand-ins; none, said in a line, where a stand-in cannot be built (the
    claim is still judged on its exact count: only the counters' readings are lost)."""
    from flopcheck.specs import SpecError

    try:
        return carried_readings(claim, names, why)
    except SpecError as err:
        return [], [f"counters not run on the model: {why}; nor on stand-ins, which cannot be built for them: {err}"]

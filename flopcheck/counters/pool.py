"""The one pool that runs counters on models: model-major worker processes, a deadline per count and per
job, every failure an error result, never a lost row.

Jobs (model, input size, attention path, batch) go to `workers` processes (worker.py) running in
parallel, each on cores / workers threads, the largest job first, the next to whichever is free.
A missing package, a crash, a hang or a dead worker becomes that count's error; the rest go on.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flopcheck.children import Child, deadline_s, ready
from flopcheck.counters import COUNTERS, CounterSpec, get_spec
from flopcheck.errors import InputError
from flopcheck.formula import formula_breakdown
from flopcheck.types import Failed, Outcome, outcome_of
from reference_models import create_model, family_of, get_config

if TYPE_CHECKING:
    from flopcheck.specs import ModelSpec

IMPORT_SLACK_S = 120.0  # a worker's imports (torch, timm, the libraries) and a model's build, per job


def meta_only_gb(model: str) -> float | None:
    """The GB of fp32 weights of a model that exists on meta only (counters cannot execute it); None if it runs."""
    if family_of(get_config(model)).executes:
        return None
    gb: float = sum(p.numel() for p in create_model(model).parameters()) * 4 / 1e9
    return gb


def check_executable(model: str) -> None:
    """Counters execute the model on real tensors: a model that exists on meta only is refused, naming the fix."""
    gb = meta_only_gb(model)
    if gb is not None:
        raise InputError(
            f"counters execute the model on real tensors, and {model} exists on meta only "
            f"({gb:.0f} GB of fp32 weights): use `flopcheck count {model}` or "
            f"`flopcheck estimate {model}`"
        )


@dataclass(frozen=True)
class Job:
    """One model to count: a reference model name, its input (latent) size, attention path, batch; or a spec
    (a ModelSpec as JSON) whose own options make its input; or a stand-in of a reference model (`overrides`, its
    config's fields as JSON: fewer blocks, a smaller input), small enough to execute."""

    model: str
    input_size: int | None = None
    attn: str = "sdpa"
    batch: int = 1
    spec: str = ""
    overrides: str = ""

    @classmethod
    def of_spec(cls, spec: ModelSpec, batch: int | None = None) -> Job:
        """The job of a ModelSpec (not a reference name): its options carry its input, and its counts carry the
        batch read from that input (a factory's own inputs have theirs; default: the options' batch)."""
        return cls(
            spec.text,
            None,
            spec.options.attn or "sdpa",
            batch or spec.options.batch,
            json.dumps(spec.to_dict(), sort_keys=True),
        )

    @classmethod
    def stand_in(cls, model: str, attn: str = "sdpa", **overrides: Any) -> Job:
        """A smaller model of the same architecture: `model` with its config's fields replaced."""
        return cls(model, overrides.pop("input_size", None), attn, overrides=json.dumps(overrides, sort_keys=True))

    @property
    def label(self) -> str:
        """The name its counts carry: the model's, and a stand-in's fields ('SD3-medium {depth=1, ...}')."""
        if not self.overrides:
            return self.model
        given = {**({"input_size": self.input_size} if self.input_size else {}), **json.loads(self.overrides)}
        fields = ", ".join(f"{k}={v}" for k, v in given.items())
        return f"{self.model} {{{fields}}}"

    def config(self) -> Any:  # a reference_models config (that package is untyped)
        """Its reference model's config, stand-in fields applied."""
        return get_config(self.model, input_size=self.input_size, attn=self.attn, **json.loads(self.overrides or "{}"))

    def resolved(self) -> dict[str, Any]:
        """As the worker takes it, input_size filled in from the model's config (a spec: its options)."""
        if self.spec:
            return {
                "model": self.model,
                "input_size": None,
                "attn": self.attn,
                "batch": self.batch,
                "spec": json.loads(self.spec),
            }
        if not self.overrides:
            check_executable(self.model)
        cfg = self.config()
        out = {
            "model": self.label,
            "input_size": getattr(cfg, "input_size", None),
            "attn": cfg.attn,
            "batch": self.batch,
        }
        return (
            {**out, "build": {"name": self.model, "overrides": json.loads(self.overrides)}} if self.overrides else out
        )

    def cost(self) -> float:
        """Its expected cost: its FLOPs, explicit attention a little dearer (a spec: unknown, 1)."""
        if self.spec:
            return 1.0
        flops = formula_breakdown(self.model, self.config()).total
        return flops * (1.25 if self.attn == "math" else 1.0)


def error_count(spec: CounterSpec, job: dict[str, Any], message: str) -> Failed:
    """A count that came back as an error: the one-line message in place of a number."""
    return Failed(
        counter=spec.name,
        library=spec.library,
        version="unknown",
        unit=spec.unit,
        model=job["model"],
        input_size=job["input_size"],
        attn=job["attn"],
        batch=job["batch"],
        error=message,
    )


@dataclass
class Run:
    """The counts of a set of jobs, in job order then counter order, and how long it all took."""

    counts: list[Outcome]
    stats: dict[str, float] = field(default_factory=dict)


class _Worker(Child):
    """One counters' worker process (worker.py), the job it is on, and its deadline."""

    def __init__(self, header: dict[str, Any]):
        super().__init__("flopcheck.counters.worker", THP_MEM_ALLOC_ENABLE="1")  # huge pages: 20x fewer faults
        self.job: dict[str, Any] | None = None  # the job it is counting, until it says done
        self.counting = ""  # the counter it is on ("" while it builds the model)
        self.deadline = float("inf")
        self.send(header)

    def assign(self, job: dict[str, Any] | None, deadline: float, skip: tuple[str, ...] = ()) -> None:
        """The next job (less the counters in skip) and its deadline; None: no more jobs, and the worker exits."""
        self.job, self.counting, self.deadline = job, "", (deadline if job is not None else float("inf"))
        self.send({**job, "skip": list(skip)} if job is not None and skip else job)


def run_jobs(
    specs: list[CounterSpec],
    jobs: list[Job],
    workers: int = 1,
    timeout_s: float | None = None,
    paths: tuple[str, ...] = (),
    progress: Callable[[int, int, Outcome], None] | None = None,
) -> Run:
    """Every counter on every job: `workers` model-major workers in parallel, the largest job first; each count has
    timeout_s (default: children.deadline_s())."""
    timeout_s = timeout_s or deadline_s()
    resolved = {j: j.resolved() for j in jobs}
    queue = sorted(dict.fromkeys(jobs), key=Job.cost, reverse=True) if len(jobs) > 1 else list(jobs)
    threads = max(1, (os.cpu_count() or 1) // max(1, workers))
    header = {"specs": [s.payload() for s in specs], "timeout_s": timeout_s, "threads": threads, "paths": list(paths)}
    job_deadline = IMPORT_SLACK_S + timeout_s * len(specs)
    got: dict[tuple[str, str], Outcome] = {}  # (the job, whole, as JSON; the counter) -> its count
    total = len(resolved) * len(specs)
    start = time.perf_counter()
    build_s = 0.0

    def key(job: dict[str, Any], counter: str) -> tuple[str, str]:
        """A count's key by its whole job: two jobs of one model that differ in their options never meet."""
        return json.dumps(job, sort_keys=True), counter

    def keep(c: Outcome, job: dict[str, Any]) -> None:
        got[key(job, c.counter)] = c
        if progress:
            progress(len(got), total, c)

    def lose(job: dict[str, Any], why: str) -> None:
        for s in specs:
            if key(job, s.name) not in got:
                keep(error_count(s, job, why), job)

    redo: list[dict[str, Any]] = []  # jobs whose worker a counter killed: their later counters, in a fresh worker

    def died(w: _Worker, why: str) -> None:
        """The counter the worker was on takes the blame; the job's later counters count in a fresh worker (while
        it was building, the whole job is lost, as no counter had started)."""
        blamed = next((s for s in specs if s.name == w.counting), None)
        if w.job is None or blamed is None:
            return lose(w.job, why) if w.job is not None else None
        keep(error_count(blamed, w.job, f"{why}; the job's later counters counted in a fresh worker"), w.job)
        if any(key(w.job, s.name) not in got for s in specs):
            redo.append(w.job)

    def next_job(w: _Worker) -> None:
        if redo:
            job = redo.pop(0)
            done = tuple(s.name for s in specs if key(job, s.name) in got)
            return w.assign(job, time.monotonic() + job_deadline, done)
        w.assign(resolved[queue.pop(0)] if queue else None, time.monotonic() + job_deadline)

    pool = [_Worker(header) for _ in range(min(max(1, workers), len(queue)))]
    for w in pool:
        next_job(w)
    while pool:
        found = ready([*pool], min(w.deadline for w in pool) - time.monotonic())
        for w in list(pool):
            if w in found:
                lines = w.read()
                if lines is None:  # the worker is gone: the counter it was on is its error
                    died(w, w.why_gone("its worker" if not w.counting else "the worker it ran in"))
                    w.close()
                    pool.remove(w)
                    if queue or redo:
                        pool.append(_Worker(header))
                        next_job(pool[-1])
                    continue
                for d in lines:
                    if "counting" in d:
                        w.counting = d["counting"]
                        continue
                    if d.get("done"):
                        next_job(w)
                        continue
                    build_s += d.pop("build_s", 0.0)
                    assert w.job is not None, "a worker sends counts only while it is on a job"
                    keep(outcome_of(d), w.job)
            elif w.job is not None and time.monotonic() > w.deadline:  # hung outside a count's own deadline: killed
                w.kill()
                lose(w.job, "its worker ran past its deadline and was killed")
                w.job, w.deadline = None, float("inf")
    counts = [got.get(key(r, s.name)) or error_count(s, r, "no result") for r in resolved.values() for s in specs]
    own = sum(c.time_s or 0.0 for c in counts)
    stats = {
        "wall_s": time.perf_counter() - start,
        "counting_s": own,
        "build_s": build_s,
        "workers": workers,
        "threads": threads,
        "counts": len(counts),
        "peak_rss_mb": max((c.peak_rss_mb or 0.0) for c in counts),
    }
    return Run(counts, stats)


def run_counters(
    names: list[str],
    jobs: list[Job],
    timeout_s: float | None = None,
    paths: tuple[str, ...] = (),
    specs: dict[str, CounterSpec] | None = None,
    workers: int = 1,
    progress: Callable[[int, int, Outcome], None] | None = None,
) -> list[Outcome]:
    """Each named counter on every job, counter after counter; unknown names are refused before anything runs."""
    table = specs or COUNTERS
    chosen = [table[n] if n in table else get_spec(n) for n in names]
    counts = run_jobs(chosen, jobs, workers=workers, timeout_s=timeout_s, paths=paths, progress=progress).counts
    return [c for s in chosen for c in counts if c.counter == s.name]

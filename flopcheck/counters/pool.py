"""The one pool that runs counters on models: model-major worker processes, a deadline per count and per
job, every failure an error result, never a lost row.

Jobs (model, input size, attention path, batch) go to `workers` processes (worker.py) running in
parallel, each on cores / workers threads, the largest job first, the next to whichever is free.
A missing package, a crash, a hang or a dead worker becomes that count's error; the rest go on.
The loop is Workers.run, whose processes stay alive across calls: run_jobs uses one once and closes it; a Ray actor
(executors.KeptWorker) keeps one with a single worker for its life.
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

    def assign(self, job: dict[str, Any], deadline: float, skip: tuple[str, ...] = ()) -> None:
        """The next job (less the counters in skip) and its deadline."""
        self.job, self.counting, self.deadline = job, "", deadline
        self.send({**job, "skip": list(skip)} if skip else job)

    def rest(self) -> None:
        """On no job, with no deadline: kept for the next call's jobs."""
        self.job, self.counting, self.deadline = None, "", float("inf")


def _key(job: dict[str, Any], counter: str) -> tuple[str, str]:
    """A count's key by its whole job: two jobs of one model that differ in their options never meet."""
    return json.dumps(job, sort_keys=True), counter


@dataclass
class _Round:
    """One call of Workers.run: the jobs still to hand out, those to finish in a fresh worker, the counts so far."""

    specs: list[CounterSpec]
    queue: list[dict[str, Any]]
    progress: Callable[[int, int, Outcome], None] | None
    got: dict[tuple[str, str], Outcome] = field(default_factory=dict)  # (the job as JSON, the counter) -> its count
    redo: list[dict[str, Any]] = field(default_factory=list)  # jobs a counter's death cut short: their later counters
    build_s: float = 0.0
    total: int = field(init=False)

    def __post_init__(self) -> None:
        self.total = len(self.queue) * len(self.specs)

    def keep(self, c: Outcome, job: dict[str, Any]) -> None:
        """A count of the job, kept and shown."""
        self.got[_key(job, c.counter)] = c
        if self.progress:
            self.progress(len(self.got), self.total, c)

    def counted(self, job: dict[str, Any]) -> tuple[str, ...]:
        """The counters of the job that have their count."""
        return tuple(s.name for s in self.specs if _key(job, s.name) in self.got)

    def lose(self, job: dict[str, Any], why: str) -> None:
        """Every count of the job still to come: the error `why`."""
        for s in self.specs:
            if _key(job, s.name) not in self.got:
                self.keep(error_count(s, job, why), job)

    def died(self, w: _Worker, why: str) -> None:
        """The counter the worker was on takes the blame, and the job's later counters count in a fresh worker;
        while it was building, or between counters, the job's remaining counts are lost (none is to blame)."""
        if w.job is None:
            return
        blamed = next((s for s in self.specs if s.name == w.counting), None)
        if blamed is None or _key(w.job, blamed.name) in self.got:
            return self.lose(w.job, why)
        self.keep(error_count(blamed, w.job, f"{why}; the job's later counters counted in a fresh worker"), w.job)
        if len(self.counted(w.job)) < len(self.specs):  # each death adds a count, so this ends
            self.redo.append(w.job)

    def counts(self, jobs: list[dict[str, Any]]) -> list[Outcome]:
        """The counts in job order, then counter order."""
        return [self.got.get(_key(j, s.name)) or error_count(s, j, "no result") for j in jobs for s in self.specs]


class Workers:
    """`workers` counters' worker processes (worker.py: torch and the libraries imported once a worker), each on
    `threads` threads (default: cores / workers), kept alive across calls of `run` until `close`; each count has
    timeout_s (default: children.deadline_s()), each job its imports' slack and then timeout_s a counter."""

    def __init__(
        self,
        specs: list[CounterSpec],
        timeout_s: float | None = None,
        workers: int = 1,
        threads: int | None = None,
        paths: tuple[str, ...] = (),
    ):
        self.specs = specs
        self.timeout_s = timeout_s or deadline_s()
        self.size = max(1, workers)
        self.threads = threads or max(1, (os.cpu_count() or 1) // self.size)
        self.header = {
            "specs": [s.payload() for s in specs],
            "timeout_s": self.timeout_s,
            "threads": self.threads,
            "paths": list(paths),
        }
        self.job_deadline_s = IMPORT_SLACK_S + self.timeout_s * len(specs)
        self.idle: list[_Worker] = []  # started, on no job: the next call's

    def start(self) -> None:
        """Every worker started now, so their imports overlap what comes before the first call."""
        self.idle += [_Worker(self.header) for _ in range(self.size - len(self.idle))]

    def _take(self) -> _Worker:
        """A kept worker that is still alive, else a fresh one."""
        while self.idle:
            w = self.idle.pop(0)
            if w.proc.poll() is None:
                return w
            w.close()
        return _Worker(self.header)

    def _next(self, w: _Worker, r: _Round) -> bool:
        """The worker on the round's next job (a cut-short job's later counters first); False where none is left."""
        if r.redo:
            job = r.redo.pop(0)
            w.assign(job, time.monotonic() + self.job_deadline_s, r.counted(job))
        elif r.queue:
            w.assign(r.queue.pop(0), time.monotonic() + self.job_deadline_s)
        else:
            w.rest()
        return w.job is not None

    def _retire(self, w: _Worker, r: _Round, busy: list[_Worker]) -> None:
        """A dead or killed worker stopped and gone; a fresh one takes the next job, where one is left."""
        w.close()
        busy.remove(w)
        if r.queue or r.redo:
            busy.append(self._take())
            self._next(busy[-1], r)

    def _read(self, w: _Worker, r: _Round, busy: list[_Worker]) -> None:
        """What the worker sent: the counter it is on, a count, or done (then its next job, or it rests)."""
        lines = w.read()
        if lines is None:  # the worker is gone: the counter it was on is its error
            r.died(w, w.why_gone("its worker" if not w.counting else "the worker it ran in"))
            return self._retire(w, r, busy)
        for d in lines:
            if "counting" in d:
                w.counting = d["counting"]
            elif d.get("done"):
                if not self._next(w, r):
                    busy.remove(w)
                    self.idle.append(w)
            else:
                r.build_s += d.pop("build_s", 0.0)
                assert w.job is not None, "a worker sends counts only while it is on a job"
                r.keep(outcome_of(d), w.job)

    def run(self, jobs: list[dict[str, Any]], progress: Callable[[int, int, Outcome], None] | None = None) -> Run:
        """Every counter on every job (resolved, as Job.resolved gives it), handed out in the order given, the next
        to whichever worker is free; the counts in job order, then counter order. An error here (Ctrl-C) stops the
        workers on a job; the resting ones are kept."""
        start = time.perf_counter()
        r = _Round(self.specs, list(jobs), progress)
        busy: list[_Worker] = []
        try:
            while r.queue and len(busy) < self.size:
                busy.append(self._take())
                self._next(busy[-1], r)
            while busy:
                found = ready([*busy], min(w.deadline for w in busy) - time.monotonic())
                for w in list(busy):
                    if w in found:
                        self._read(w, r, busy)
                    elif w.job is not None and time.monotonic() > w.deadline:  # hung outside a count's deadline
                        r.lose(w.job, "its worker ran past its deadline and was killed")
                        self._retire(w, r, busy)
        except BaseException:
            for w in busy:
                w.close()
            raise
        counts = r.counts(list(jobs))
        stats = {
            "wall_s": time.perf_counter() - start,
            "counting_s": sum(c.time_s or 0.0 for c in counts),
            "build_s": r.build_s,
            "workers": self.size,
            "threads": self.threads,
            "counts": len(counts),
            "peak_rss_mb": max((c.peak_rss_mb or 0.0) for c in counts),
        }
        return Run(counts, stats)

    def close(self) -> None:
        """Every kept worker told there are no more jobs, then stopped."""
        for w in self.idle:
            w.send(None)
            w.close()
        self.idle.clear()


def run_jobs(
    specs: list[CounterSpec],
    jobs: list[Job],
    workers: int = 1,
    timeout_s: float | None = None,
    paths: tuple[str, ...] = (),
    progress: Callable[[int, int, Outcome], None] | None = None,
) -> Run:
    """Every counter on every job, once a job: `workers` model-major workers in parallel (one Workers, used once and
    closed), the largest job first; the counts in job order, then counter order."""
    start = time.perf_counter()
    unique = list(dict.fromkeys(jobs))
    resolved = {j: j.resolved() for j in unique}  # a job that cannot run is refused before any worker starts
    order = sorted(unique, key=Job.cost, reverse=True) if len(unique) > 1 else unique
    pool = Workers(specs, timeout_s, workers, paths=paths)
    try:
        run = pool.run([resolved[j] for j in order], progress)
    finally:
        pool.close()
    n = len(specs)
    of_job = {j: run.counts[i * n : (i + 1) * n] for i, j in enumerate(order)}
    return Run([c for j in unique for c in of_job[j]], {**run.stats, "wall_s": time.perf_counter() - start})


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

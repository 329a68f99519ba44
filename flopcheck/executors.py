"""Where a report's or a claims file's counting runs: an executor, `local` (flopcheck's own pool on this machine, the
default) or `ray` (one Ray actor a CPU, on a local Ray started for the run or on a cluster, each actor keeping one of
the pool's worker processes across the models it is handed, as a local worker does: torch imported once an actor).

One model's work (one Job: its build and every counter on it) is one task. Finished models come back in the order
they finish, each one kept in the on-disk count cache (flopcheck.cache.COUNTS) as it arrives, so a run that is
interrupted and run again redoes only the models it had not finished, and says so ('3 of 5 models from the cache').
The counts then go back in job order, counter order, whichever executor made them: the same report, byte for byte.
A model that fails or runs past its deadline is its counts' errors and one line on stderr; the rest go on.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from flopcheck.cache import COUNTS, count_key
from flopcheck.children import one_line
from flopcheck.errors import InputError
from flopcheck.types import Count, Outcome, outcome_of

if TYPE_CHECKING:
    from flopcheck.counters import CounterSpec
    from flopcheck.counters.pool import Job, Run

RAY_INSTALL = "pip install 'flopcheck[ray]'"
RAY_ENV = "RAY_ADDRESS"  # Ray's own variable: a cluster to join where --executor ray names no address


@dataclass(frozen=True)
class Finished:
    """One model's work done: its job and its counts, in counter order."""

    job: Job
    counts: tuple[Outcome, ...]

    @property
    def failed(self) -> str:
        """The first error where no counter gave a number (the model failed as a whole), else ''."""
        return "" if any(isinstance(c, Count) for c in self.counts) else next((c.error or "" for c in self.counts), "")


OnDone = Callable[[Finished], None]


class Executor(Protocol):
    """Runs jobs, one task a job, calling on_done as each finishes (in the order they finish); returns its stats."""

    name: str

    def run(
        self, specs: list[CounterSpec], jobs: list[Job], timeout_s: float | None, on_done: OnDone
    ) -> dict[str, float]: ...


# ---------------------------------------------------------------------------------------------
# local: flopcheck's own pool
# ---------------------------------------------------------------------------------------------


def _identity(job: dict[str, Any]) -> tuple[Any, ...]:
    """What a job's counts carry of it (model, input, path, batch): how a count finds its job."""
    return job["model"], job["input_size"], job["attn"], job["batch"]


def _count_identity(c: Outcome) -> tuple[Any, ...]:
    return c.model, c.input_size, c.attn, c.batch


@dataclass
class LocalExecutor:
    """flopcheck's pool (counters.pool.run_jobs): `workers` model-major processes on this machine; a job is finished
    when its last counter's count arrives."""

    workers: int = 2
    name: str = "local"

    def run(
        self, specs: list[CounterSpec], jobs: list[Job], timeout_s: float | None, on_done: OnDone
    ) -> dict[str, float]:
        from flopcheck.counters.pool import run_jobs  # lazy: door start-up (the counters' registry)

        by_identity: dict[tuple[Any, ...], list[Job]] = {}
        for job in jobs:
            by_identity.setdefault(_identity(job.resolved()), []).append(job)
        got: dict[Job, dict[str, Outcome]] = {}
        reported: set[Job] = set()

        def arrived(done: int, total: int, c: Outcome) -> None:
            owners = by_identity.get(_count_identity(c), [])
            if len(owners) != 1:  # two jobs that a count cannot tell apart: reported when the run ends
                return
            mine = got.setdefault(owners[0], {})
            mine[c.counter] = c
            if len(mine) == len(specs):
                reported.add(owners[0])
                on_done(Finished(owners[0], tuple(mine[s.name] for s in specs)))

        run = run_jobs(specs, jobs, workers=self.workers, timeout_s=timeout_s, progress=arrived)
        per_job = len(specs)
        for i, job in enumerate(jobs):  # the run's counts: job order, then counter order
            if job not in reported:
                on_done(Finished(job, tuple(run.counts[i * per_job : (i + 1) * per_job])))
        return run.stats


# ---------------------------------------------------------------------------------------------
# ray: one actor a CPU, each keeping one of the pool's workers across its models
# ---------------------------------------------------------------------------------------------


class KeptWorker:
    """A Ray actor (1 CPU): the local pool (counters.pool.Workers) with one worker process (torch and the libraries
    imported once, every model built in it and counted in its forked children), kept across the models it is given,
    one at a time, as a local worker is. The worker watches this actor and dies with it (a Ctrl-C's ray.kill)."""

    def __init__(self, specs: list[CounterSpec], timeout_s: float):
        from flopcheck.counters.pool import Workers

        self.pool = Workers(specs, timeout_s, workers=1, threads=1)
        self.pool.start()  # now: its imports overlap the jobs' dispatch

    def count(self, job: dict[str, Any]) -> dict[str, Any]:
        """One job's counts in counter order as JSON dicts, and its build's seconds: {'counts', 'build_s'} (the pool's
        run of the one job: a counter that kills the worker is its error, the later ones count in a fresh worker)."""
        from flopcheck.codec import encode

        run = self.pool.run([job])
        return {"counts": [encode(c) for c in run.counts], "build_s": run.stats["build_s"]}

    def close(self) -> None:
        """The worker told there are no more jobs, then stopped."""
        self.pool.close()


def _ray() -> Any:
    """The ray module, or the one line that says how to install it."""
    try:
        import ray  # optional: flopcheck[ray]
    except ImportError:
        raise InputError(f"--executor ray needs Ray, which is not installed: {RAY_INSTALL}") from None
    return ray


def _python_path() -> str:
    """What a Ray worker needs to import flopcheck as this process does: its PYTHONPATH."""
    return os.pathsep.join(p for p in [*sys.path, os.environ.get("PYTHONPATH", "")] if p and os.path.isdir(p))


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    """Within the block os.environ has values (a Ray started here: its processes inherit them); after it, as it was."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@dataclass
class RayExecutor:
    """One Ray actor a CPU (KeptWorker: a pool worker each, torch imported once an actor), the jobs handed out the
    largest first, the next to whichever actor is free, as the local pool does; on `address` (ray://HOST:PORT, or
    'auto'), else $RAY_ADDRESS, else a local Ray started for the run with `num_cpus` (default: every core) and shut
    down after it. Ctrl-C kills every actor (and with it the workers under it, which watch their parent) before it
    stops."""

    address: str = ""
    num_cpus: int | None = None
    name: str = "ray"

    def run(
        self, specs: list[CounterSpec], jobs: list[Job], timeout_s: float | None, on_done: OnDone
    ) -> dict[str, float]:
        from flopcheck.children import deadline_s
        from flopcheck.counters.pool import Job, error_count

        ray = _ray()
        start = time.perf_counter()
        started = self._init(ray)
        timeout_s = timeout_s or deadline_s()
        remote = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(KeptWorker)
        queue = sorted(jobs, key=Job.cost, reverse=True) if len(jobs) > 1 else list(jobs)  # the largest first
        cpus = self.num_cpus if started and self.num_cpus else int(ray.cluster_resources().get("CPU", 1))
        actors: list[Any] = []
        pending: dict[Any, tuple[Any, Job]] = {}  # a job's result to come -> (its actor, the job)
        build_s = 0.0

        def actor() -> Any:
            actors.append(remote.remote(specs, timeout_s))
            return actors[-1]

        def give(a: Any) -> None:
            if queue:
                job = queue.pop(0)
                pending[a.count.remote(job.resolved())] = (a, job)

        try:
            for _ in range(max(1, min(cpus, len(queue)))):
                give(actor())
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                a, job = pending.pop(ready[0])
                try:
                    out = ray.get(ready[0])
                    counts = tuple(outcome_of(d) for d in out["counts"])
                    build_s += out["build_s"]
                except Exception as err:  # noqa: BLE001  (an actor that died: its job's error, a fresh one goes on)
                    counts = tuple(
                        error_count(s, job.resolved(), f"its Ray actor failed: {one_line(err)}") for s in specs
                    )
                    with contextlib.suppress(Exception):  # gone already
                        ray.kill(a, no_restart=True)
                    a = actor()
                on_done(Finished(job, counts))
                give(a)
            with contextlib.suppress(Exception):  # each worker told there is no more, and stopped
                ray.get([a.close.remote() for a in actors], timeout=30)
        finally:  # Ctrl-C, or an error here: no actor goes on after us
            for a in actors:
                with contextlib.suppress(Exception):
                    ray.kill(a, no_restart=True)
            if started:
                ray.shutdown()
        return {"wall_s": time.perf_counter() - start, "counting_s": 0.0, "build_s": build_s}

    def _init(self, ray: Any) -> bool:
        """Ray connected: to `address`, $RAY_ADDRESS, or a Ray of our own; True where we started it (and stop it)."""
        if ray.is_initialized():
            return False
        address = self.address or os.environ.get(RAY_ENV, "")
        options: dict[str, Any] = {
            "log_to_driver": False,  # the workers' prints are the models' own: not the user's terminal
            "logging_level": logging.ERROR,  # Ray's start-up lines too
        }
        if not address:
            options.update(num_cpus=self.num_cpus or os.cpu_count() or 1, include_dashboard=False)
        try:
            # a Ray of our own: its processes inherit our PYTHONPATH and import flopcheck from where we do, in the
            # workers Ray starts with it (a runtime_env would start others); a cluster's nodes have it installed
            with warnings.catch_warnings(), _environment(**({} if address else {"PYTHONPATH": _python_path()})):
                warnings.simplefilter("ignore")  # an unreachable client address: Ray warns, then raises; one line
                ray.init(address=address or None, **options)
        except (ConnectionError, ValueError, RuntimeError) as err:
            why = f"cannot reach a Ray cluster at {address!r}: {one_line(err)}; start one with `ray start --head`"
            raise InputError(why) from None
        return True


EXECUTORS: dict[str, Callable[..., Executor]] = {"local": LocalExecutor, "ray": RayExecutor}


def executor_of(name: str = "local", workers: int | None = None) -> Executor:
    """The named executor: 'local' (workers processes, default 2), 'ray' (a local Ray, or $RAY_ADDRESS's cluster),
    'ray://HOST:PORT' (that cluster); an unknown name is refused naming the choices."""
    if name.startswith("ray://") or name == "auto":
        _ray()
        return RayExecutor(address=name)
    if name not in EXECUTORS:
        raise InputError(f"no executor {name!r}: give local, ray, or ray://HOST:PORT (a Ray cluster)")
    if name == "ray":
        _ray()
        return RayExecutor(num_cpus=workers)
    return LocalExecutor(workers=workers or 2)


_CURRENT: contextvars.ContextVar[Executor | None] = contextvars.ContextVar("flopcheck_executor", default=None)


@contextlib.contextmanager
def using(executor: Executor | None) -> Iterator[None]:
    """Within the block every pooled counting (a claims file's, a report's) runs on `executor` (None: as it was)."""
    token = _CURRENT.set(executor) if executor is not None else None
    try:
        yield
    finally:
        if token is not None:
            _CURRENT.reset(token)


def current(workers: int | None = None) -> Executor:
    """The executor set by an enclosing `using`, else the local pool with `workers`."""
    return _CURRENT.get() or LocalExecutor(workers=workers or 2)


# ---------------------------------------------------------------------------------------------
# the run: the cache first, then the executor, progress as models finish
# ---------------------------------------------------------------------------------------------


def _lasting(count: Outcome) -> bool:
    """A count that stands between runs: a number, or its library not installed (the key holds its version)."""
    return isinstance(count, Count) or count.error.startswith("unavailable")


def keep(count: Outcome, job: dict[str, Any]) -> None:
    """A count kept under its key: on disk where it lasts (_lasting), in this process only where it is an error, so
    a failed or timed-out model is counted again next run."""
    COUNTS.put(count_key(count.counter, job), count, keep=_lasting(count))


def cached(specs: list[CounterSpec], job: dict[str, Any]) -> tuple[Outcome, ...] | None:
    """Every counter's count of the job from the cache, in counter order; None where any is missing or an error
    that does not last (a failed model is counted again)."""
    found: list[Outcome] = []
    for s in specs:
        count = COUNTS.get(count_key(s.name, job))
        if count is None or not _lasting(count):
            return None
        found.append(count)
    return tuple(found)


@dataclass
class Progress:
    """Models done, counts closed and the time left, on one line of stderr as each model finishes (a terminal
    only); a model that failed as a whole is one line wherever stderr goes."""

    models: int
    counters: int
    done: int = 0
    closed: int = 0
    start: float = field(default_factory=time.perf_counter)

    def __call__(self, finished: Finished) -> None:
        self.done += 1
        self.closed += sum(isinstance(c, Count) for c in finished.counts)
        tty = sys.stderr.isatty()
        if finished.failed:  # on a terminal, below the progress line
            print(f"{chr(10) if tty else ''}flopcheck: {finished.job.label}: {finished.failed}", file=sys.stderr)
        if not tty:
            return
        elapsed = time.perf_counter() - self.start
        left = elapsed / self.done * (self.models - self.done)
        line = f"{self.done}/{self.models} models, {self.closed} counts closed, about {left:.0f} s left"
        print(f"\r{line:<72s}", end="\n" if self.done == self.models else "", file=sys.stderr, flush=True)


def count_jobs(
    specs: list[CounterSpec],
    jobs: list[Job],
    executor: Executor | None = None,
    timeout_s: float | None = None,
    progress: Callable[[Finished], None] | None = None,
) -> Run:
    """Every counter on every job: the jobs the cache holds whole taken from it (said: 'N of M models from the
    cache'), the rest on the executor (default: the enclosing `using`'s, else the local pool), each kept as it
    arrives; the counts in job order, then counter order."""
    from flopcheck.counters.pool import Run  # lazy: door start-up (the counters' registry)

    start = time.perf_counter()
    jobs = list(dict.fromkeys(jobs))
    resolved = {j: j.resolved() for j in jobs}
    got: dict[Job, tuple[Outcome, ...]] = {}
    for job in jobs:
        if (found := cached(specs, resolved[job])) is not None:
            got[job] = found
    if got:
        print(f"{len(got)} of {len(jobs)} models from the cache", file=sys.stderr)
    todo = [j for j in jobs if j not in got]
    shown = progress or Progress(len(todo), len(specs))

    def done(finished: Finished) -> None:
        got[finished.job] = finished.counts
        for c in finished.counts:
            keep(c, resolved[finished.job])
        shown(finished)

    stats: dict[str, float] = {}
    if todo:
        stats = (executor or current()).run(specs, todo, timeout_s, done)
    counts = [c for j in jobs for c in got[j]]
    return Run(
        counts,
        {
            **stats,
            "wall_s": time.perf_counter() - start,
            "counting_s": sum(c.time_s or 0.0 for c in counts),
            "build_s": stats.get("build_s", 0.0),
            "counts": len(counts),
            "from_cache": len(jobs) - len(todo),
        },
    )


__all__ = [
    "EXECUTORS",
    "Executor",
    "Finished",
    "LocalExecutor",
    "Progress",
    "RayExecutor",
    "count_jobs",
    "current",
    "executor_of",
    "keep",
    "using",
]

"""The report's sweep: every DiT config x every counter x both attention paths, plus T-sweeps, as one
deterministic results dict (full integers, versions, no timings; timings go to `SweepRun.stats`).

Jobs (model, input size, attention path) go to model-major workers (flopcheck.counters.grid_worker)
running in parallel, each on cores / workers threads, largest job first, the next to whichever is free.
Every library counter runs on real CPU tensors; flopcheck's own exact count reads shapes only and runs
on meta, as it is designed to.
"""
from __future__ import annotations

import json
import os
import platform
import select
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from flopcheck.counters import COUNTERS
from flopcheck.counters.runner import Job
from flopcheck.types import Count, Kind

ATTN_PATHS = ("sdpa", "math")
# T-sweeps: S/2 over latent sides 16..128 (T = 64..4096), XL/2 over 16..64 (T = 64..1024)
SWEEPS = {"DiT-S/2": (16, 32, 64, 128), "DiT-XL/2": (16, 32, 64)}
VOLATILE = ("time_s", "peak_rss_mb", "detail")  # never in results.json: they vary run to run or are bulky


@dataclass(frozen=True)
class Plan:
    """What one report covers."""

    models: tuple[str, ...]
    counters: tuple[str, ...]
    attns: tuple[str, ...] = ATTN_PATHS
    sweeps: tuple[tuple[str, tuple[int, ...]], ...] = tuple(SWEEPS.items())

    def jobs(self) -> list[Job]:
        """Grid jobs at each model's default input, then the sweep points not already in the grid."""
        from reference_models import get_config

        out: list[Job] = []
        for model in self.models:
            out += [Job(model, get_config(model).input_size, a) for a in self.attns]
        for model, sizes in self.sweeps:
            out += [Job(model, s, a) for s in sizes for a in self.attns]
        return list(dict.fromkeys(out))


def default_plan(counters: tuple[str, ...] | None = None) -> Plan:
    """The 12 DiT configs, every registered counter, both paths, the two T-sweeps."""
    from reference_models import list_models

    return Plan(models=tuple(list_models("DiT-*")), counters=tuple(counters or COUNTERS))


@dataclass
class SweepRun:
    """The counts of a plan, in job order then counter order, and how long it all took."""

    plan: Plan
    counts: list[Count]
    stats: dict = field(default_factory=dict)


META_COUNTERS = ("flopcheck_exact",)  # reads shapes only: counted on meta, as it is designed to run


def _cost(job: Job) -> float:
    """A job's expected cost: its FLOPs, explicit attention a little dearer."""
    from flopcheck.formula import formula_breakdown
    from reference_models import get_config

    flops = formula_breakdown(job.model, get_config(job.model, input_size=job.input_size)).total
    return flops * (1.25 if job.attn == "math" else 1.0)


def run_plan(plan: Plan, workers: int = 2, timeout_s: float = 600.0,
             progress: Callable[[int, int, Count], None] | None = None) -> SweepRun:
    """Run every counter on every job: `workers` model-major workers in parallel, each taking the next
    job (largest first) when it finishes one; every library counter on real CPU tensors."""
    jobs = plan.jobs()
    queue = sorted(jobs, key=_cost, reverse=True)
    specs = [{**asdict(COUNTERS[n]), "unit": COUNTERS[n].unit.value} for n in plan.counters]
    threads = max(1, (os.cpu_count() or 1) // max(1, workers))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*sys.path[:1], os.environ.get("PYTHONPATH", "")]),
               THP_MEM_ALLOC_ENABLE="1")  # huge pages for large CPU tensors: 20x fewer page faults
    header = {"specs": specs, "timeout_s": timeout_s, "threads": threads, "meta_counters": list(META_COUNTERS)}
    start = time.perf_counter()
    procs = []
    for _ in range(min(max(1, workers), len(queue))):
        proc = subprocess.Popen([sys.executable, "-m", "flopcheck.counters.grid_worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        _send(proc, header)
        _send(proc, queue.pop(0).resolved() if queue else None)
        procs.append(proc)
    got: dict[tuple, Count] = {}
    build_s = 0.0
    total = len(jobs) * len(specs)
    for proc, line in _lines(procs):
        d = json.loads(line)
        if d.get("done"):
            _send(proc, queue.pop(0).resolved() if queue else None)
            continue
        build_s += d.pop("build_s", 0.0)
        c = Count.from_dict(d)
        got[(c.model, c.input_size, c.attn, c.counter)] = c
        if progress:
            progress(len(got), total, c)
    wall = time.perf_counter() - start
    counts = []
    for job in jobs:
        r = job.resolved()
        for spec in plan.counters:
            key = (r["model"], r["input_size"], r["attn"], spec)
            counts.append(got.get(key) or _lost(spec, r))
    own = sum(c.time_s or 0.0 for c in counts)
    stats = {"wall_s": wall, "counting_s": own, "build_s": build_s, "workers": workers, "threads": threads,
             "counts": len(counts), "peak_rss_mb": max((c.peak_rss_mb or 0.0) for c in counts)}
    return SweepRun(plan, counts, stats)


def _send(proc: subprocess.Popen, message: dict | None) -> None:
    """One JSON line to a worker; None closes its stdin (no more jobs)."""
    try:
        if message is None:
            proc.stdin.close()
        else:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
    except (BrokenPipeError, OSError):  # the worker died; its jobs come back as errors
        pass


def _lost(counter: str, job: dict) -> Count:
    spec = COUNTERS[counter]
    return Count(counter=counter, library=spec.library, version="unknown", unit=spec.unit, model=job["model"],
                 input_size=job["input_size"], attn=job["attn"], batch=job["batch"],
                 error="no result: its worker died before reaching it")


def _lines(procs: list[subprocess.Popen]):
    """(worker, line) from every worker's stdout as they come."""
    by_fd = {p.stdout.fileno(): p for p in procs}
    buffers = {fd: b"" for fd in by_fd}
    open_fds = set(by_fd)
    while open_fds:
        ready, _, _ = select.select(list(open_fds), [], [])
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                open_fds.discard(fd)
                _send(by_fd[fd], None)
                continue
            buffers[fd] += chunk
            *lines, buffers[fd] = buffers[fd].split(b"\n")
            yield from ((by_fd[fd], ln) for ln in lines if ln.strip())
    for p in procs:
        p.wait()


# ---------------------------------------------------------------------------------------------
# Results: everything the report shows, deterministic
# ---------------------------------------------------------------------------------------------


def versions(counts: list[Count]) -> dict[str, str]:
    """python, torch, timm and every counter library as the counts saw them."""
    import importlib.metadata as md

    def v(name: str) -> str:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return "not installed"

    out = {"python": platform.python_version(), "flopcheck": v("flopcheck"), "torch": v("torch"), "timm": v("timm")}
    for c in counts:
        out.setdefault(c.library, c.version if c.error is None or not c.error.startswith("unavailable") else
                       "not installed")
    return out


def _formula(model: str, size: int) -> dict:
    from flopcheck.formula import formula_breakdown
    from reference_models import get_config

    cfg = get_config(model, input_size=size)
    b = formula_breakdown(model, cfg)
    return {"model": model, "input_size": size, "tokens": cfg.tokens, "total_flops": b.total,
            "by_kind": {k.value: v for k, v in b.by_kind().items()},
            "terms": [{"path": t.path, "kind": t.kind.value, "flops": t.flops, "formula": t.formula} for t in b.terms]}


def _count_dict(c: Count) -> dict:
    d = c.to_dict()
    for key in VOLATILE:
        d.pop(key, None)
    return d


def _sweeps(plan: Plan, counts: list[Count], whites: dict) -> list[dict]:
    from flopcheck.reconcile.sweep import sweep

    out = []
    for model, sizes in plan.sweeps:
        for attn in plan.attns:
            for counter in plan.counters:
                mine = [c for c in counts if (c.model, c.attn, c.counter) == (model, attn, counter)
                        and c.input_size in sizes]
                ok = [c for c in mine if c.ok]
                entry = {"model": model, "attn": attn, "counter": counter, "unit": COUNTERS[counter].unit.value,
                         "points": [[c.input_size, c.flops] for c in sorted(ok, key=lambda c: c.input_size)]}
                if len(ok) >= 3:
                    s = sweep(ok, model, attn, whites.get((model, min(sizes), attn, counter)))
                    entry.update(b_ratio=s.verdict.b_ratio, c_ratio=s.verdict.c_ratio, verdict_unit=s.verdict.unit,
                                 verdict_attention=s.verdict.attention, agrees=s.agrees)
                else:
                    entry.update(error=f"{len(ok)} of {len(mine)} sizes counted; a fit needs 3")
                out.append(entry)
    return out


def results(run: SweepRun) -> dict:
    """The report's data: formulas, counts, reconciliations (with proofs), sweeps, versions."""
    from flopcheck.reconcile import reconcile
    from flopcheck.report.reconcile import proof, to_dict

    plan, counts = run.plan, run.counts
    sizes = list(dict.fromkeys((c.model, c.input_size) for c in counts))
    recs, whites = [], {}
    for c in counts:
        r = reconcile(c)
        whites[(c.model, c.input_size, c.attn, c.counter)] = r
        recs.append({**to_dict(r), "proof": proof(r)})
    return {
        "report": "flopcheck comparison report",
        "convention": "FLOPs: one multiply-add = 2 FLOPs; MAC counters' numbers are also shown as reported",
        "versions": versions(counts),
        "plan": {"models": list(plan.models), "counters": list(plan.counters), "attns": list(plan.attns),
                 "sweeps": {m: list(s) for m, s in plan.sweeps}},
        "counters": {n: {"library": COUNTERS[n].library, "unit": COUNTERS[n].unit.value,
                         "convention": COUNTERS[n].convention} for n in plan.counters},
        "formulas": [_formula(m, s) for m, s in sizes],
        "counts": [_count_dict(c) for c in counts],
        "reconciliations": recs,
        "sweeps": _sweeps(plan, counts, whites),
        "kinds": [k.value for k in Kind],
    }

"""The report verb: its plan (every DiT config x every counter x both attention paths, plus T-sweeps, or the models
named), its run, and one deterministic results dict (full integers, versions, no timings; timings go to the run's
stats) that flopcheck.render renders without starting a process or building a model.

The counting runs on an executor (flopcheck.executors): the counters' pool on this machine (model-major workers in
parallel, the largest job first) or Ray (one actor a CPU, each keeping one such worker); every library counter on
real CPU tensors, flopcheck's own exact count on meta; each model's counts kept in the on-disk cache as they
arrive, so a second run redoes only the models the first did not finish.
"""

from __future__ import annotations

import importlib.metadata as md
import platform
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flopcheck.codec import encode
from flopcheck.counters import COUNTERS, get_spec
from flopcheck.counters.pool import Job
from flopcheck.errors import InputError
from flopcheck.executors import Executor, Finished, count_jobs, executor_of
from flopcheck.formula import formula_breakdown
from flopcheck.reconciler import explain
from flopcheck.reconciler.sweep import sweep
from flopcheck.render.files import MANIFEST, previous, write_report
from flopcheck.render.reconcile import proof, to_dict
from flopcheck.render.report import read_results, render
from flopcheck.specs import SpecError, is_spec, parse
from flopcheck.specs.child import measure_all
from flopcheck.subject import Subject, subject_of
from flopcheck.types import Count, Kind, Outcome, Reconciliation
from flopcheck.zoo import names
from reference_models import ATTN_PATHS, family_of, get_config, list_models

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

    @property
    def subjects(self) -> list[Subject]:
        """Its models, each resolved once (a spec at its own input, a reference model at its default)."""
        return [subject_of(parse(m)) for m in self.models]

    def jobs(self) -> list[Job]:
        """Grid jobs at each model's default input on each attention path it runs (Subject.paths), then the sweep
        points not already in the grid."""
        out = [p.job() for s in self.subjects for p in s.paths() if p.attn in self.attns]
        for model, sizes in self.sweeps:
            out += [Job(model, s, a) for s in sizes for a in self.attns]
        return list(dict.fromkeys(out))


def plan(
    models: str = "DiT-*",
    counters: list[str] | None = None,
    sweeps: tuple[Any, ...] | None = None,
    timeout_s: float | None = None,
) -> Plan:
    """The report's plan: `models` a shell pattern of reference models that execute, or a comma list of reference
    names and specs (each spec measured in its child now and checked to fit in memory, so a bad one is refused
    before anything is counted); `counters` (default all) checked by name; the T-sweeps (default SWEEPS) where the
    models are reference models."""
    for model, sizes in sweeps or ():
        for size in sizes:
            get_config(model, input_size=size)  # an unknown model or a bad size: refused before anything runs
    out: list[str] = []
    items = [m for t in models.split(",") if t.strip() for m in _zoo_pattern(t.strip())]
    _measure_in_parallel([i for i in items if is_spec(i)], timeout_s)
    for item in items:
        if is_spec(item):
            subject_of(parse(item), timeout_s).check_executable()  # measured above, two children at a time
            out.append(item)
            continue
        found = [m for m in list_models(item) if family_of(get_config(m)).executes]
        if not found:
            raise InputError(
                f"no DiT config matches {item!r}; try 'DiT-*' (or give specs: timm:NAME, torchvision:NAME)"
            )
        out += found
    if not out:
        raise InputError(f"--models {models!r} names no model: give 'DiT-*' or specs like timm:resnet50")
    names = tuple(get_spec(n).name for n in (counters or COUNTERS))
    if sweeps is None:
        sweeps = () if any(is_spec(m) for m in out) else tuple(SWEEPS.items())
    return Plan(models=tuple(dict.fromkeys(out)), counters=names, sweeps=tuple(sweeps))


def _measure_in_parallel(specs: list[str], timeout_s: float | None = None, workers: int = 2) -> None:
    """The specs measured in `workers` children at once, each child several specs (torch and the libraries imported
    once a child, not once a spec; each spec its own deadline: specs.child.measure_all); then any the children left
    unanswered, each in its own child. Every answer is cached, a failure too: the plan's own check of that spec
    says it."""

    def one(text: str) -> None:
        try:
            subject_of(parse(text), timeout_s).measured()
        except SpecError:
            pass  # cached: the plan's check names it

    parsed = []
    for text in specs:
        try:
            parsed.append(parse(text))
        except SpecError:
            continue  # refused by the plan's check, in one line
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda part: measure_all(part, timeout_s), [parsed[i::workers] for i in range(workers)]))
        list(pool.map(one, specs))


def _zoo_pattern(item: str) -> list[str]:
    """A shell pattern of the zoo's models ('zoo:*', 'zoo:timm-*') as its names; any other item as it is."""
    if not (item.startswith("zoo:") and any(c in item for c in "*?[")):
        return [item]
    if not (found := names(item)):
        raise InputError(f"no zoo model matches {item!r}; see flopcheck list-models 'zoo:*'")
    return found


def run(
    chosen: Plan,
    workers: int = 2,
    timeout_s: float = 600.0,
    progress: Callable[[Finished], None] | None = None,
    executor: Executor | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every counter of the plan on every job, on `executor` (default: the local pool of `workers`), the models the
    cache holds taken from it: (the results dict, the run's stats)."""
    done = count_jobs(
        [COUNTERS[n] for n in chosen.counters],
        chosen.jobs(),
        executor or executor_of("local", workers),
        timeout_s=timeout_s,
        progress=progress,
    )
    return results(chosen, done.counts), done.stats


# ---------------------------------------------------------------------------------------------
# Results: everything the report shows, deterministic
# ---------------------------------------------------------------------------------------------


def versions(counts: list[Outcome]) -> dict[str, str]:
    """python, torch, timm and every counter library as the counts saw them."""

    def v(name: str) -> str:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return "not installed"

    out = {"python": platform.python_version(), "flopcheck": v("flopcheck"), "torch": v("torch"), "timm": v("timm")}
    for c in counts:
        out.setdefault(c.library, v(c.library))
    return out


def _formula(model: str, size: int | None) -> dict[str, Any]:

    if is_spec(model):  # no hand formula: the exact count is the reference
        m = subject_of(parse(model)).measured()
        b = m.breakdown()
        return {
            "model": model,
            "input_size": None,
            "tokens": None,
            "inputs": m.inputs,
            "reference": "exact count",
            "total_flops": b.total,
            "by_kind": {k.value: v for k, v in b.by_kind().items()},
            "terms": [{"path": t.path, "kind": t.kind.value, "flops": t.flops, "formula": t.formula} for t in b.terms],
        }
    cfg = get_config(model, input_size=size)
    b = formula_breakdown(model, cfg)
    return {
        "model": model,
        "input_size": size,
        "tokens": cfg.tokens,
        "total_flops": b.total,
        "by_kind": {k.value: v for k, v in b.by_kind().items()},
        "terms": [{"path": t.path, "kind": t.kind.value, "flops": t.flops, "formula": t.formula} for t in b.terms],
    }


def _count_dict(c: Outcome) -> dict[str, Any]:
    d: dict[str, Any] = encode(c)
    for key in VOLATILE:
        d.pop(key, None)
    return d


def _sweeps(
    plan: Plan, counts: list[Outcome], whites: dict[tuple[str, int | None, str, str], Reconciliation]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for model, sizes in plan.sweeps:
        for attn in plan.attns:
            for counter in plan.counters:
                mine = [
                    c
                    for c in counts
                    if (c.model, c.attn, c.counter) == (model, attn, counter) and c.input_size in sizes
                ]
                ok = [c for c in mine if isinstance(c, Count)]
                entry: dict[str, Any] = {
                    "model": model,
                    "attn": attn,
                    "counter": counter,
                    "unit": COUNTERS[counter].unit.value,
                    "points": [
                        [c.input_size, c.flops] for c in sorted(ok, key=lambda c: c.input_size or 0)
                    ],  # sized: in sizes
                }
                if len(ok) >= 3:
                    s = sweep(ok, model, attn, whites.get((model, min(sizes), attn, counter)))
                    entry.update(
                        b_ratio=s.verdict.b_ratio,
                        c_ratio=s.verdict.c_ratio,
                        verdict_unit=s.verdict.label,
                        verdict_attention=s.verdict.attention,
                        agrees=s.agrees,
                    )
                else:
                    entry.update(error=f"{len(ok)} of {len(mine)} sizes counted; a fit needs 3")
                out.append(entry)
    return out


def _path(model: str, attn: str) -> Subject:
    """A spec on one attention path: the path of its own that it ran (Subject.paths)."""
    subject = subject_of(parse(model))
    return next((p for p in subject.paths() if p.attn == attn), subject)


def results(plan: Plan, counts: list[Outcome]) -> dict[str, Any]:
    """The report's data: formulas, counts, reconciliations (with proofs), sweeps, versions."""
    from flopcheck.reconciler.reference import reference_of  # lazy: torch-free door (the reference builds models)

    sizes = list(dict.fromkeys((c.model, c.input_size) for c in counts))
    recs: list[dict[str, Any]] = []
    whites: dict[tuple[str, int | None, str, str], Reconciliation] = {}
    for c in counts:
        r = explain(c, reference_of(_path(c.model, c.attn).measured(), c.batch) if is_spec(c.model) else None)
        whites[(c.model, c.input_size, c.attn, c.counter)] = r
        recs.append({**to_dict(r), "proof": proof(r)})
    return {
        "report": "flopcheck comparison report",
        "convention": "FLOPs: one multiply-add = 2 FLOPs; MAC counters' numbers are also shown as reported",
        "versions": versions(counts),
        "plan": {
            "models": list(plan.models),
            "counters": list(plan.counters),
            "attns": list(plan.attns),
            "sweeps": {m: list(s) for m, s in plan.sweeps},
        },
        "counters": {
            n: {"library": COUNTERS[n].library, "unit": COUNTERS[n].unit.value, "convention": COUNTERS[n].convention}
            for n in plan.counters
        },
        "formulas": [_formula(m, s) for m, s in sizes],
        "counts": [_count_dict(c) for c in counts],
        "reconciliations": recs,
        "sweeps": _sweeps(plan, counts, whites),
        "kinds": [k.value for k in Kind],
    }


def progress_bar(done: int, total: int, count: Outcome) -> None:
    """Progress on stderr: a 30-character bar, done/total and the count just finished; nothing off a terminal."""
    if not sys.stderr.isatty():
        return
    filled = 30 * done // total
    size = f"@{count.input_size}" if count.input_size is not None else ""  # a spec's input is its own
    label = f"{count.model}{size} {count.attn} {count.counter}"
    bar, end = f"[{'#' * filled}{'.' * (30 - filled)}]", "\n" if done == total else ""
    print(f"\r{bar} {done}/{total} {label:<48s}", end=end, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Written:
    """A report written into its folder: the files written, the stale ones kept (no proof they are as flopcheck
    wrote them) and the stale ones removed (each said)."""

    out: Path
    names: tuple[str, ...]
    kept: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    exit_code: int = 0

    def to_text(self) -> str:
        svgs = f"{len(self.names) - 4} SVGs"
        return (
            f"wrote {len(self.names)} files to {self.out}/: index.md, index.html, results.json, results.csv and "
            f"{svgs}, and their list, {MANIFEST}"
        )


def into_folder(
    out: str,
    from_json: str | None = None,
    models: str | None = None,
    counters: list[str] | None = None,
    sweeps: list[Any] | None = None,
    no_sweep: bool = False,
    workers: int | None = None,
    timeout_s: float | None = None,
    executor: str | None = None,
) -> Written:
    """The report counted (or, from_json, rendered from a results.json, counting nothing) and written into `out`,
    touching no file flopcheck did not write there; a flag that shapes the counting beside from_json is refused."""
    folder = Path(out) if out.strip() else None
    counting = {"models": models, "sweep": sweeps, "no-sweep": no_sweep, "workers": workers, "counter": counters}
    counting["executor"] = executor
    given = [flag for flag, value in {**counting, "timeout": timeout_s}.items() if value not in (None, False, [])]
    if from_json and given:  # it would be dropped unseen
        raise InputError(f"--{given[0]} shapes what is counted; --from renders a results.json and counts nothing")
    previous(folder)  # no folder, or a folder that is no report: refused before anything is counted
    if from_json:
        res = read_results(Path(from_json))
    else:
        where = executor_of(executor or "local", workers)  # Ray missing: refused before anything is counted
        chosen = plan(models or "DiT-*", counters, () if no_sweep else tuple(sweeps or ()) or None, timeout_s)
        res, stats = run(chosen, timeout_s=timeout_s or 600.0, executor=where)
        took = f"the counting calls: {stats['counting_s']:.0f} s; building models: {stats['build_s']:.0f} s"
        print(f"counted {stats['counts']} in {stats['wall_s']:.0f} s ({took})", file=sys.stderr)
    assert folder is not None  # previous() refused an empty --out
    names, kept, removed = write_report(folder, render(res))
    return Written(folder, tuple(names), tuple(kept), tuple(removed))

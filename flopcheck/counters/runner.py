"""Run counters on models: one worker process per counter, a deadline per model, errors as results.

A missing package, a crash or a hang becomes that counter's error result; the rest go on.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass

from flopcheck.counters import COUNTERS, CounterSpec, get_spec
from flopcheck.types import Count

IMPORT_SLACK_S = 120.0  # a worker's imports (torch, timm, the library) before its first model


def check_executable(model: str) -> None:
    """Counters execute the model on real tensors: a model that exists on meta only is a ValueError naming the fix."""
    from reference_models import create_model, get_config

    if get_config(model).family != "dit":
        params = sum(p.numel() for p in create_model(model).parameters())
        raise ValueError(f"counters execute the model on real tensors, and {model} exists on meta only "
                         f"({params * 4 / 1e9:.0f} GB of fp32 weights): use `flopcheck count {model}` or "
                         f"`flopcheck estimate {model}`")


@dataclass(frozen=True)
class Job:
    """One model to count: a reference model name, its input (latent) size, attention path, batch."""

    model: str
    input_size: int | None = None
    attn: str = "sdpa"
    batch: int = 1

    def resolved(self) -> dict:
        """As the worker takes it, input_size filled in from the model's config."""
        from reference_models import get_config

        check_executable(self.model)
        cfg = get_config(self.model, input_size=self.input_size, attn=self.attn)
        return {"model": self.model, "input_size": cfg.input_size, "attn": cfg.attn, "batch": self.batch}


def _error(spec: CounterSpec, job: dict, message: str) -> Count:
    return Count(counter=spec.name, library=spec.library, version="unknown", unit=spec.unit, model=job["model"],
                 input_size=job["input_size"], attn=job["attn"], batch=job["batch"], error=message)


def run_counter(spec: CounterSpec, jobs: list[Job], timeout_s: float = 600.0, paths: tuple[str, ...] = ()) -> list[Count]:
    """One worker for `spec` counting every job; results in job order, one per job, always."""
    resolved = [j.resolved() for j in jobs]
    payload = {"spec": {**asdict(spec), "unit": spec.unit.value}, "models": resolved, "timeout_s": timeout_s,
               "paths": list(paths)}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*sys.path[:1], os.environ.get("PYTHONPATH", "")]))
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "flopcheck.counters.worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=stderr, env=env)
        try:
            out, _ = proc.communicate(json.dumps(payload).encode(), timeout=IMPORT_SLACK_S + timeout_s * len(jobs))
            tail = ""
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            tail = "its worker ran past its deadline and was killed"
        if proc.returncode not in (0, None) and not tail:
            stderr.seek(0)
            last = stderr.read().decode(errors="replace").strip().splitlines()[-1:] or [""]
            tail = f"its worker died (exit code {proc.returncode}): {last[0][:200]}"
    counts = [Count.from_dict(json.loads(line)) for line in out.decode().splitlines() if line.strip()]
    return counts + [_error(spec, j, tail or "no result") for j in resolved[len(counts):]]


def run_counters(names: list[str], jobs: list[Job], timeout_s: float = 600.0, paths: tuple[str, ...] = (),
                 specs: dict[str, CounterSpec] | None = None) -> list[Count]:
    """Each named counter on every job, counter after counter; unknown names raise ValueError first."""
    table = specs or COUNTERS
    chosen = [table[n] if n in table else get_spec(n) for n in names]
    results: list[Count] = []
    for spec in chosen:
        results.extend(run_counter(spec, jobs, timeout_s, paths))
    return results

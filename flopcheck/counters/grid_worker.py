"""A model-major worker for sweeps: `python -m flopcheck.counters.grid_worker`, many counters, many models.

Each model is built once (real CPU tensors, values zeroed) and every counter counts it in its own
forked child, so a library's monkeypatches, hooks, crashes and hangs stay in that child, as in
worker.py, while the model's construction is paid once instead of once per counter. The parent
never runs a parallel region (threads are set before anything runs), so forking stays safe.
Jobs arrive one per line, so a parent can hand the next job to whichever worker finishes first.
Results leave as one JSON line per count on the original stdout, in counter order.
"""
from __future__ import annotations

import json
import os
import sys
import time

from flopcheck.counters.worker import _version, build_zeroed, load_adapter, run_forked, timed_run, to_count
from flopcheck.types import Count, Unit


def _count_one(spec: dict, adapter, error: str | None, model_job: dict, model, inputs, timeout_s: float,
               on_meta: bool) -> Count:
    """One counter on one built model, in a forked child; on meta (flopcheck's exact count) from shapes alone."""
    base = dict(counter=spec["name"], library=spec["library"], version=_version(spec["library"]),
                unit=Unit(spec["unit"]), model=model_job["model"], input_size=model_job["input_size"],
                attn=model_job["attn"], batch=model_job["batch"], device="meta" if on_meta else "cpu")
    if error:
        return to_count(base, {"error": error})

    def work():
        return timed_run(adapter, *(build_zeroed(model_job, "meta") if on_meta else (model, inputs)))

    return to_count(base, run_forked(adapter, model_job, timeout_s, work=work))


def main() -> int:
    """stdin: a header line (specs, timeout_s, threads, meta_counters), then one job per line until EOF.
    stdout: one Count per line, and {"done": true} after each job, so the parent can send the next."""
    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever the libraries print goes to stderr
    header = json.loads(sys.stdin.readline())
    import torch

    torch.set_num_threads(header.get("threads", 1))
    specs = header["specs"]
    meta = set(header.get("meta_counters", ()))
    loaded = [load_adapter(s) for s in specs]
    for line in sys.stdin:
        if not line.strip():
            continue
        model_job = json.loads(line)
        build_start = time.perf_counter()
        model, inputs = build_zeroed(model_job)
        build_s = time.perf_counter() - build_start
        for spec, (adapter, error) in zip(specs, loaded):
            count = _count_one(spec, adapter, error, model_job, model, inputs, header["timeout_s"],
                               spec["name"] in meta)
            results.write(json.dumps({**count.to_dict(), "build_s": build_s}) + "\n")
            results.flush()
            build_s = 0.0  # the build is reported once per model
        del model, inputs
        results.write(json.dumps({"done": True}) + "\n")
        results.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

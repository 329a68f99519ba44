"""A model-major worker for sweeps: `python -m flopcheck.counters.grid_worker`, many counters, many models.

Each model is built once (real CPU tensors, values zeroed) and every counter counts it in its own
forked child, so a library's monkeypatches, hooks, crashes and hangs stay in that child, as in
worker.py, while the model's construction is paid once instead of once per counter. The parent
never runs a parallel region (threads are set before anything runs), so forking stays safe.
Jobs arrive one per line, so a parent can hand the next job to whichever worker finishes first.
Results leave as one JSON line per count on the original stdout, in counter order.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import time

from flopcheck.counters.worker import _one_line, _version, run_forked
from flopcheck.types import Count, Item, Skip, Unit


def _load(spec: dict):
    """(adapter module, None) or (None, one-line error) for a counter spec."""
    if importlib.util.find_spec(spec["import_name"]) is None:
        return None, f"unavailable: {spec['install']}"
    try:
        adapter = importlib.import_module(spec["adapter"])
        importlib.import_module(spec["import_name"])
        return adapter, None
    except Exception as err:
        return None, f"import failed: {_one_line(err)}"


def _counted(adapter, model, inputs) -> dict:
    """In the child: the counting call alone, timed."""
    import torch

    with torch.no_grad():
        start = time.perf_counter()
        m = adapter.run(model, inputs)
        elapsed = time.perf_counter() - start
    return {"reported": m.reported, "detail": m.detail, "skipped": m.skipped, "time_s": elapsed}


def _count_one(spec: dict, adapter, error: str | None, model_job: dict, model, inputs, timeout_s: float,
               on_meta: bool) -> Count:
    """One counter on one built model, in a forked child; on meta (flopcheck's exact count) from shapes alone."""
    base = dict(counter=spec["name"], library=spec["library"], version=_version(spec["library"]),
                unit=Unit(spec["unit"]), model=model_job["model"], input_size=model_job["input_size"],
                attn=model_job["attn"], batch=model_job["batch"], device="meta" if on_meta else "cpu")
    if error:
        return Count(**base, error=error)

    def work():
        if on_meta:
            from reference_models import get_config, prepare

            cfg = get_config(model_job["model"], input_size=model_job["input_size"], attn=model_job["attn"])
            meta_model, meta_inputs, _ = prepare(cfg, batch=model_job["batch"], device="meta")
            return _counted(adapter, meta_model, meta_inputs)
        return _counted(adapter, model, inputs)

    out = run_forked(adapter, model_job, timeout_s, work=work)
    if "error" in out:
        return Count(**base, error=out["error"], peak_rss_mb=out.get("peak_rss_mb"))
    unit = base["unit"]
    return Count(**base, reported=out["reported"], flops=int(round(float(out["reported"]) * unit.flops_per_unit)),
                 detail=tuple(Item(**d) for d in out["detail"]), skipped=tuple(Skip(**d) for d in out["skipped"]),
                 time_s=out["time_s"], peak_rss_mb=out["peak_rss_mb"])


def main() -> int:
    """stdin: a header line (specs, timeout_s, threads, meta_counters), then one job per line until EOF.
    stdout: one Count per line, and {"done": true} after each job, so the parent can send the next."""
    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever the libraries print goes to stderr
    header = json.loads(sys.stdin.readline())
    import torch

    torch.set_num_threads(header.get("threads", 1))
    from reference_models import get_config, prepare

    specs = header["specs"]
    meta = set(header.get("meta_counters", ()))
    loaded = [_load(s) for s in specs]
    for line in sys.stdin:
        if not line.strip():
            continue
        model_job = json.loads(line)
        build_start = time.perf_counter()
        cfg = get_config(model_job["model"], input_size=model_job["input_size"], attn=model_job["attn"])
        model, inputs, _ = prepare(cfg, batch=model_job["batch"], device="cpu")
        with torch.no_grad():
            for p in model.parameters():
                p.zero_()
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

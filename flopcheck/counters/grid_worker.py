"""A model-major worker for sweeps: `python -m flopcheck.counters.grid_worker`, many counters, many models.

Each model is built once (real CPU tensors, values zeroed) and every counter counts it in its own
forked child, so a library's monkeypatches, hooks, crashes and hangs stay in that child, as in
worker.py, while the model's construction is paid once instead of once per counter. The parent
never runs a parallel region (threads are set before anything runs), so forking stays safe.
Results leave as one JSON line per count on the original stdout, in job order, counter order.
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


def main() -> int:
    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever the libraries print goes to stderr
    job = json.load(sys.stdin)
    import torch

    torch.set_num_threads(job.get("threads", 1))
    from reference_models import get_config, prepare

    specs = job["specs"]
    loaded = [_load(s) for s in specs]
    for model_job in job["models"]:
        build_start = time.perf_counter()
        cfg = get_config(model_job["model"], input_size=model_job["input_size"], attn=model_job["attn"])
        model, inputs, _ = prepare(cfg, batch=model_job["batch"], device="cpu")
        with torch.no_grad():
            for p in model.parameters():
                p.zero_()
        build_s = time.perf_counter() - build_start
        for spec, (adapter, error) in zip(specs, loaded):
            base = dict(counter=spec["name"], library=spec["library"], version=_version(spec["library"]),
                        unit=Unit(spec["unit"]), model=model_job["model"], input_size=model_job["input_size"],
                        attn=model_job["attn"], batch=model_job["batch"], device="cpu")
            if error:
                count = Count(**base, error=error)
            else:
                out = run_forked(adapter, model_job, job["timeout_s"],
                                 work=lambda a=adapter: _counted(a, model, inputs))
                if "error" in out:
                    count = Count(**base, error=out["error"], peak_rss_mb=out.get("peak_rss_mb"))
                else:
                    unit = base["unit"]
                    count = Count(**base, reported=out["reported"],
                                  flops=int(round(float(out["reported"]) * unit.flops_per_unit)),
                                  detail=tuple(Item(**d) for d in out["detail"]),
                                  skipped=tuple(Skip(**d) for d in out["skipped"]),
                                  time_s=out["time_s"], peak_rss_mb=out["peak_rss_mb"])
            results.write(json.dumps({**count.to_dict(), "build_s": build_s}) + "\n")
            results.flush()
            build_s = 0.0  # the build is reported once per model
        del model, inputs
    return 0


if __name__ == "__main__":
    sys.exit(main())

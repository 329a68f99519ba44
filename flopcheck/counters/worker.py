"""A counters' worker process: `python -m flopcheck.counters.worker`, many counters, many models.

stdin: a header line (the counters, timeout_s, threads, extra sys.path), then one job per line until EOF.
stdout: {"counting": name} before each counter (a worker that dies is that counter's doing), its Count, and
{"done": true} after each job, so the pool can send the next (a job's "skip" names counters it leaves out); the
original stdout is kept for results alone (libraries print, so fd 1 is pointed at stderr).
Each model is built once (real CPU tensors, values zeroed) and every counter counts it in its own
forked child, so a library's monkeypatches, hooks, crashes and hangs stay in that child, and the
model's construction is paid once per model, not once per counter. A counter that reads shapes only
(`on_meta`) counts a model built on meta. The parent runs on one thread, never a parallel region, so
forking stays safe; each child counts on the header's threads.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import math
import os
import re
import sys
import time
import traceback
from typing import TYPE_CHECKING, Any

from flopcheck.children import answer_channel, forked, one_line, watch_parent
from flopcheck.codec import decode, encode
from flopcheck.counters import Adapter
from flopcheck.specs import ModelSpec, SpecError
from flopcheck.specs.fallbacks import _data_dependent, _reads_a_value
from flopcheck.types import Count, Failed, Outcome, Unit
from reference_models import get_config, prepare

if TYPE_CHECKING:
    from torch import nn

# torch-free at import: the parent process imports this module (count_one, version) and never imports torch; torch
# and the modules that import it (specs.build, specs.binding) are imported in the functions a worker runs


def version(library: str) -> str:
    """The installed version of a distribution, or 'unknown'."""
    try:
        return importlib.metadata.version(library)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def build_zeroed(job: dict[str, Any], device: str = "cpu") -> tuple[nn.Module, tuple[Any, ...]]:
    """(model, inputs) of a job, its weights zeroed (values do not change any count); a spec's keyword inputs
    bound into its forward."""
    import torch  # lazy: the parent imports this module without torch (see the note at the top)

    if job.get("spec"):
        from flopcheck.specs.binding import bound  # lazy: torch (see the note at the top)
        from flopcheck.specs.build import build

        built = build(ModelSpec.from_dict(job["spec"]), device)
        # its inputs are torch.empty: whatever the memory held, NaN too, and an op driven by values (a deformable
        # conv's sampling offsets) then reads out of bounds and kills the child; zeros count the same
        given = (*built.args, *built.kwargs.values())
        floats = [t for t in given if isinstance(t, torch.Tensor) and t.is_floating_point()]
        with torch.no_grad():
            for t in floats if device != "meta" and not built.own_inputs else ():  # the user's inputs: as given
                t.zero_()
        return bound(built)

    stand_in = job.get("build") or {"name": job["model"], "overrides": {}}  # a stand-in: a name and its fields
    cfg = get_config(stand_in["name"], input_size=job["input_size"], attn=job["attn"], **stand_in["overrides"])
    model, inputs, _ = prepare(cfg, batch=job["batch"], device=device)
    if device != "meta":
        with torch.no_grad():
            for p in model.parameters():
                p.zero_()
    return model, inputs


def timed_run(run: Adapter, model: nn.Module, inputs: tuple[Any, ...]) -> dict[str, Any]:
    """The counting call alone, timed: what a child sends back."""
    import torch  # lazy: the parent imports this module without torch (see the note at the top)

    with torch.no_grad():
        start = time.perf_counter()
        m = run(model, inputs)
        elapsed = time.perf_counter() - start
    return {
        "reported": m.reported,
        "detail": encode(m.detail),
        "skipped": encode(m.skipped),
        "time_s": elapsed,
        "samples_divided": m.samples_divided,
    }


def load_adapter(spec: dict[str, Any]) -> Adapter | str:
    """The adapter function, or why not in one line: its library imported once, before any fork, with torch and
    timm."""
    if importlib.util.find_spec(spec["import_name"]) is None:
        return f"unavailable: {spec['install']}"
    try:
        run: Adapter = getattr(importlib.import_module(spec["module"]), spec["function"])
        importlib.import_module(spec["import_name"])
        import reference_models.dit  # noqa: F401  (lazy on purpose: torch and timm, once per worker, before it forks)

        return run
    except Exception as err:
        return f"import failed: {one_line(err)}"


def to_count(base: dict[str, Any], out: dict[str, Any]) -> Outcome:
    """A Count (or a Failed one) from the common fields and a child's answer (a number, or an error: a total that is
    not a finite number, NaN or None, is that counter's error, never its worker's death)."""
    reported = out.get("reported")
    if "error" not in out and not (isinstance(reported, (int, float)) and math.isfinite(reported)):
        out = {**out, "error": f"it returned {reported!r}, not a number of {base['unit'].value}s"}
    if "error" in out:
        return Failed(**base, error=out["error"], peak_rss_mb=out.get("peak_rss_mb"))
    return decode(
        Count,
        {
            **base,
            "unit": base["unit"].value,
            "reported": out["reported"],
            "flops": int(round(float(out["reported"]) * base["unit"].flops_per_unit)),
            "detail": out["detail"],
            "skipped": out["skipped"],
            "time_s": out["time_s"],
            "peak_rss_mb": out["peak_rss_mb"],
            "samples_divided": out.get("samples_divided", 1),
        },
    )


def _base(spec: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    """The fields every count of this counter on this job has, whatever it says."""
    return dict(
        counter=spec["name"],
        library=spec["library"],
        version=version(spec["library"]),
        unit=Unit(spec["unit"]),
        model=job["model"],
        input_size=job["input_size"],
        attn=job["attn"],
        batch=job["batch"],
        device="meta" if spec.get("on_meta") else "cpu",
    )


def count_one(
    spec: dict[str, Any],
    loaded: Adapter | str,
    job: dict[str, Any],
    built: tuple[Any, ...],
    timeout_s: float,
    threads: int = 1,
) -> Outcome:
    """One counter on one built model, in a forked child on `threads` threads; a counter on meta builds its own
    from shapes."""
    base = _base(spec, job)
    if isinstance(loaded, str):
        return to_count(base, {"error": loaded})
    run = loaded

    def work() -> dict[str, Any]:
        import torch  # lazy: the parent imports this module without torch (see the note at the top)

        torch.set_num_threads(threads)  # the child's own pool: the parent never started one, so forking is safe
        on_meta = spec.get("on_meta") and not job.get("local")  # a caller's own model: counted as it is
        try:
            if on_meta:
                try:
                    return timed_run(run, *build_zeroed(job, "meta"))
                except Exception as err:
                    if not built or not (_reads_a_value(err) or _data_dependent(err)):
                        raise
                    # a forward that reads a value: counted on the real model the other counters run (as the
                    # exact count's own fallback is)
            return timed_run(run, *built)
        except Exception as err:
            raise _in_library(err, spec) from err

    return to_count(base, forked(work, timeout_s))


class LibraryLimit(Exception):
    """A counter's library failed inside its own code on this model: its limit, said in one line."""

    plain = True


class OwnLimit(Exception):
    """flopcheck's own code, run beside a counter, failed on this model: its limit, said in one line."""

    plain = True


# torch's refusal of an op (a higher-order op: flex_attention) by a dispatch mode with no rule for it, where that
# mode is one of flopcheck's own (counters.base.watching_ops): the op's kind and name
OWN_MODE = re.compile(r"no rule registered for (\w+) (\S+) and mode <flopcheck\.")


def _in_library(err: Exception, spec: dict[str, Any]) -> Exception:
    """The error as the library's own limit when it was raised inside the library's code (its last frame there,
    by file and line), else as it was."""
    package = f"{os.sep}{spec['import_name']}{os.sep}"
    frames = [f for f in traceback.extract_tb(err.__traceback__) if package in f.filename]
    if not frames or spec["import_name"] == "flopcheck":  # flopcheck's own count failing is flopcheck's to say
        return err
    hop = OWN_MODE.search(str(err))
    if hop:  # the mode with no rule is flopcheck's op watcher (run beside the counter), not the library
        return OwnLimit(
            f"flopcheck's op watcher, run beside {spec['import_name']} to list what it skips, has no rule for "
            f"{hop[1]} {hop[2]}: flopcheck's limit, not one of {spec['import_name']}; the exact count and the counters "
            f"that run without it are unaffected"
        )
    where = frames[-1]
    file = where.filename[where.filename.rindex(package) + 1 :]
    return LibraryLimit(
        f"{spec['import_name']} cannot count this model: it failed in its own code ({file}:{where.lineno}, "
        f"{one_line(err)}): the library's limit, not flopcheck's; the other counters are unaffected"
    )


def main() -> int:
    watch_parent()  # a flopcheck that is killed takes this worker (and, through it, its forked children) with it
    send = answer_channel()  # whatever the libraries print goes to stderr; answers behind the parent's token
    header = json.loads(sys.stdin.readline())
    sys.path[:0] = header.get("paths", [])
    import torch  # lazy: after the header's paths are on sys.path (and see the note at the top)

    torch.set_num_threads(1)  # no parallel region in this process: its children fork from it
    specs = header["specs"]
    loaded = [load_adapter(s) for s in specs]
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        start = time.perf_counter()
        try:
            runs_real = any(not s.get("on_meta") and not isinstance(a, str) for s, a in zip(specs, loaded))
            built = build_zeroed(job) if runs_real else ()  # no model built for counters that cannot run
            failed = None
        except Exception as err:  # a spec's code that cannot build: every count of the job says so, one line
            built, failed = (), str(err) if isinstance(err, SpecError) else one_line(err)
        build_s = time.perf_counter() - start
        for spec, adapter in zip(specs, loaded):
            if spec["name"] in job.get("skip", ()):  # counted (or blamed) in a worker that died on this job
                continue
            send({"counting": spec["name"]})  # a death from here on is this counter's
            count = (
                count_one(spec, adapter, job, built, header["timeout_s"], header.get("threads", 1))
                if failed is None
                else to_count(_base(spec, job), {"error": failed})
            )
            send({**encode(count), "build_s": build_s})
            build_s = 0.0  # the build is reported once per model
        del built
        send({"done": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A counter's worker process: `python -m flopcheck.counters.worker`, one counter, many models.

The job arrives as JSON on stdin; each result leaves as one JSON line on the original stdout,
which is kept for results alone (libraries print, so fd 1 is pointed at stderr). torch and the
counter's library are imported once; each model is counted in a forked child, so a library that
monkeypatches torch or leaves hooks behind cannot touch the next model, a crash or a hang costs
one result, and the child's peak RSS is that model's alone.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import os
import select
import signal
import sys
import time
import traceback

from flopcheck.types import Count, Item, Skip, Unit


def _version(library: str) -> str:
    try:
        return importlib.metadata.version(library)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"[:300]


def build_zeroed(job: dict, device: str = "cpu") -> tuple:
    """(model, inputs) of a job, its weights zeroed (values do not change any count)."""
    import torch

    from reference_models import get_config, prepare

    cfg = get_config(job["model"], input_size=job["input_size"], attn=job["attn"])
    model, inputs, _ = prepare(cfg, batch=job["batch"], device=device)
    if device != "meta":
        with torch.no_grad():
            for p in model.parameters():
                p.zero_()
    return model, inputs


def timed_run(adapter, model, inputs) -> dict:
    """The counting call alone, timed: what a child sends back."""
    import torch

    with torch.no_grad():
        start = time.perf_counter()
        m = adapter.run(model, inputs)
        elapsed = time.perf_counter() - start
    return {"reported": m.reported, "detail": m.detail, "skipped": m.skipped, "time_s": elapsed}


def count_model(adapter, job: dict) -> dict:
    """In the child: build the model on real CPU tensors (values zeroed), count it, time the call."""
    return timed_run(adapter, *build_zeroed(job))


def _read_all(fd: int, deadline: float) -> bytes | None:
    """Everything written to fd until EOF, or None if the deadline passes first."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def run_forked(adapter, job: dict, timeout_s: float, work=None) -> dict:
    """Count one model in a forked child with a deadline; the child's peak RSS comes back too.
    `work()` does the counting (default: build the model in the child and count it)."""
    from dataclasses import asdict

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            out = work() if work is not None else count_model(adapter, job)
            out["detail"] = [asdict(i) for i in out["detail"]]
            out["skipped"] = [asdict(s) for s in out["skipped"]]
        except BaseException as err:  # a crashing counter becomes its error result
            traceback.print_exc()
            out = {"error": _one_line(err)}
        data = json.dumps(out).encode()
        while data:
            data = data[os.write(w, data):]
        os._exit(0)
    os.close(w)
    data = _read_all(r, time.monotonic() + timeout_s)
    os.close(r)
    if data is None:
        os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    peak = usage.ru_maxrss / 1024
    if data is None:
        return {"error": f"timed out after {timeout_s:g} s: killed (raise --timeout if it is only slow)",
                "peak_rss_mb": peak}
    if not data:
        return {"error": f"the counting process died ({_status(status)})", "peak_rss_mb": peak}
    out = json.loads(data)
    out["peak_rss_mb"] = peak
    return out


def load_adapter(spec: dict):
    """(adapter module, None) or (None, a one-line error) for a counter spec: its library imported once,
    before any fork, with torch and timm."""
    if importlib.util.find_spec(spec["import_name"]) is None:
        return None, f"unavailable: {spec['install']}"
    try:
        adapter = importlib.import_module(spec["adapter"])
        importlib.import_module(spec["import_name"])
        import reference_models.dit  # noqa: F401  (torch and timm, once)
        return adapter, None
    except Exception as err:
        return None, f"import failed: {_one_line(err)}"


def to_count(base: dict, out: dict) -> Count:
    """A Count from the common fields and a child's answer (a number, or an error)."""
    if "error" in out:
        return Count(**base, error=out["error"], peak_rss_mb=out.get("peak_rss_mb"))
    return Count(**base, reported=out["reported"], flops=int(round(float(out["reported"]) * base["unit"].flops_per_unit)),
                 detail=tuple(Item(**d) for d in out["detail"]), skipped=tuple(Skip(**d) for d in out["skipped"]),
                 time_s=out["time_s"], peak_rss_mb=out["peak_rss_mb"])


def _status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def main() -> int:
    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever the libraries print goes to stderr
    job = json.load(sys.stdin)
    sys.path[:0] = job.get("paths", [])
    spec = job["spec"]
    base = {"counter": spec["name"], "library": spec["library"], "version": _version(spec["library"]),
            "unit": Unit(spec["unit"])}

    def emit(model_job: dict, out: dict) -> None:
        fields = dict(base, model=model_job["model"], input_size=model_job["input_size"], attn=model_job["attn"],
                      batch=model_job["batch"], device="cpu")
        results.write(json.dumps(to_count(fields, out).to_dict()) + "\n")
        results.flush()

    adapter, error = load_adapter(spec)
    for model_job in job["models"]:
        emit(model_job, {"error": error} if error else run_forked(adapter, model_job, job["timeout_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

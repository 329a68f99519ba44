"""Where a spec's code runs: `python -m flopcheck.specs.child JOB_JSON`, a child process with a deadline.

A spec other than a reference name imports and runs code flopcheck does not own (timm's, torchvision's,
diffusers', the user's), so it is built and counted here: stdin is closed, whatever the code prints goes
to stderr, and the answer (or a one-line error) is the last line on stdout. A crash, a segfault,
sys.exit, os._exit, a read of stdin or a hang is one SpecError in the parent, which reads JSON only.
"""
from __future__ import annotations

import json
import os
import sys

SPEC_TIMEOUT_S = 600.0  # a build and one forward on meta: seconds, unless the code never returns
_MEASURED: dict[str, dict] = {}  # spec JSON -> the child's answer: each spec and input is measured once
_FORWARD = {"training": False, "frozen": [], "checkpointed": [], "optimizer": ""}  # a forward only


def main() -> None:
    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the code's prints go to stderr; stdout carries the answer alone
    job = json.loads(sys.argv[1])
    sys.path[:0] = [p for p in job["paths"] if p not in sys.path]
    from flopcheck.specs import SpecError
    from flopcheck.specs.measure import measure
    from flopcheck.specs.sources import one_line

    for spec in job.get("specs") or [job["spec"]]:  # several specs: one import of torch, one answer line each
        try:
            out = measure(spec, training=job.get("training", False), frozen=tuple(job.get("frozen", ())),
                          checkpointed=tuple(job.get("checkpointed", ())), optimizer=job.get("optimizer", ""))
        except SpecError as err:
            out = {"error": str(err)}
        except BaseException as err:  # SystemExit and KeyboardInterrupt from the user's code too: one line
            out = {"error": f"model {spec['text']!r} raised {one_line(err)}"}
        results.write(json.dumps(out) + "\n")
        results.flush()
    os._exit(0)


def measure_all(specs: list, timeout_s: float | None = None) -> None:
    """Measure the forwards of several specs in one child (torch and the libraries imported once), keeping each
    answer for `measured`. Each spec has its own deadline (timeout_s, default SPEC_TIMEOUT_S) from the previous
    answer: the one that overruns it is that timeout's error and the child is stopped; the ones after it, and any a
    child that exits leaves unanswered, are measured alone later, each with its own deadline."""
    import select
    import subprocess
    import time

    todo = {json.dumps({**s.to_dict(), **_FORWARD}, sort_keys=True): s for s in specs}
    todo = {k: s for k, s in todo.items() if k not in _MEASURED}
    if len(todo) < 2:
        return
    limit = timeout_s or SPEC_TIMEOUT_S
    job = json.dumps({"specs": [s.to_dict() for s in todo.values()], "paths": sys.path})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*sys.path[:1], os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "flopcheck.specs.child", job], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    waiting, buffer, deadline = list(todo), b"", time.monotonic() + limit
    while waiting:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:  # the spec in progress overran its deadline: that is its answer; the rest go alone
            _MEASURED[waiting[0]] = _timed_out(todo[waiting[0]], limit)
            break
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:  # the child ended (a spec's code exited): the unanswered ones go alone
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in (ln for ln in lines if ln.strip()):
            _MEASURED[waiting.pop(0)] = json.loads(line)
            deadline = time.monotonic() + limit
    proc.kill()
    proc.wait()
    proc.stdout.close()


def _timed_out(spec, timeout_s: float) -> dict:
    return {"error": f"model {spec.text!r} was not counted within {timeout_s:g} s and was stopped: does its "
                     f"factory or forward ever return?"}


def measured(spec, timeout_s: float | None = None, training: bool = False, frozen: tuple[str, ...] = (),
             checkpointed: tuple[str, ...] = (), optimizer: str = ""):
    """The spec's Measured, from a child process (once per spec and options), within timeout_s (default
    SPEC_TIMEOUT_S); with training, its exact training step too; its failure is a SpecError."""
    from flopcheck.specs import SpecError
    from flopcheck.specs.measure import Measured

    step = {"training": training, "frozen": list(frozen), "checkpointed": list(checkpointed), "optimizer": optimizer}
    step = _FORWARD if step == _FORWARD else step
    key = json.dumps({**spec.to_dict(), **step}, sort_keys=True)
    if key not in _MEASURED:
        _MEASURED[key] = _in_child(spec, timeout_s or SPEC_TIMEOUT_S, step)
    out = _MEASURED[key]
    if "error" in out:
        raise SpecError(out["error"])
    return Measured.from_dict(out)


def _in_child(spec, timeout_s: float, step: dict | None = None) -> dict:
    """The child's answer, or {"error": one line} for whatever went wrong there."""
    import subprocess

    job = json.dumps({"spec": spec.to_dict(), "paths": sys.path, **(step or {})})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*sys.path[:1], os.environ.get("PYTHONPATH", "")]))
    try:
        proc = subprocess.run([sys.executable, "-m", "flopcheck.specs.child", job], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return _timed_out(spec, timeout_s)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": f"model {spec.text!r} ended its process (exit code {proc.returncode}) before it was "
                         f"counted: does its code call sys.exit or os._exit, or crash?"}
    return json.loads(lines[-1])


if __name__ == "__main__":
    main()

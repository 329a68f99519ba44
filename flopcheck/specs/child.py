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
from typing import Any

from flopcheck.cache import MEASURED
from flopcheck.children import Child, answer_channel, answers, deadline_s, one_line, watch_parent
from flopcheck.specs import ModelSpec, SpecError
from flopcheck.specs.decoding import measure_generation
from flopcheck.specs.measure import Measured, measure

_FORWARD = {"training": False, "frozen": [], "checkpointed": [], "optimizer": ""}  # a forward only


def main() -> None:
    watch_parent()  # a flopcheck that is killed takes this child with it
    send = answer_channel()  # the code's prints go to stderr; stdout carries the answer alone, behind a token
    job = json.loads(sys.argv[1])
    sys.path[:0] = [p for p in job["paths"] if p not in sys.path]
    for spec in job.get("specs") or [job["spec"]]:  # several specs: one import of torch, one answer line each
        try:
            out = measure(
                spec,
                training=job.get("training", False),
                frozen=tuple(job.get("frozen", ())),
                checkpointed=tuple(job.get("checkpointed", ())),
                optimizer=job.get("optimizer", ""),
                device=job.get("device", "meta"),
            )
            if job.get("generate"):  # a causal LM's prefill and decode steps with its KV cache
                out["generation"] = measure_generation(spec, *job["generate"])
        except SpecError as err:
            out = {"error": str(err)}
        except BaseException as err:  # SystemExit and KeyboardInterrupt from the user's code too: one line
            out = {"error": f"model {spec['text']!r} raised {one_line(err)}"}
        send(out)
    os._exit(0)


def measure_all(specs: list[ModelSpec], timeout_s: float | None = None) -> None:
    """Measure the forwards of several specs in one child (torch and the libraries imported once), keeping each
    answer for `measured`. Each spec has its own deadline (timeout_s, default children.deadline_s()) from the previous
    answer: the one that overruns it is that timeout's error and the child is stopped; the ones after it, and any a
    child that exits leaves unanswered, are measured alone later, each with its own deadline."""
    todo = {json.dumps({**s.to_dict(), **_FORWARD}, sort_keys=True): s for s in specs}
    todo = {k: s for k, s in todo.items() if k not in MEASURED}
    if len(todo) < 2:
        return
    limit = timeout_s or deadline_s()
    child = Child(
        "flopcheck.specs.child",
        (json.dumps({"specs": [s.to_dict() for s in todo.values()], "paths": sys.path}),),
        stdin=False,
    )
    try:  # a Ctrl-C while it counts (a KeyboardInterrupt here) leaves no child behind
        got, why = answers(child, len(todo), limit)
    finally:
        child.close()
    keys = list(todo)
    for key, answer in zip(keys, got):
        MEASURED.put(key, answer)
    if why == "timeout":  # the spec in progress overran its deadline: that is its answer; the rest go alone
        MEASURED.put(keys[len(got)], _timed_out(todo[keys[len(got)]], limit))


def _timed_out(spec: ModelSpec, timeout_s: float) -> dict[str, Any]:
    return {
        "error": f"model {spec.text!r} was not counted within {timeout_s:g} s and was stopped: does its "
        f"factory or forward ever return?"
    }


def measured(
    spec: ModelSpec,
    timeout_s: float | None = None,
    training: bool = False,
    frozen: tuple[str, ...] = (),
    checkpointed: tuple[str, ...] = (),
    optimizer: str = "",
    device: str = "meta",
    generate: tuple[int, int] | None = None,
) -> Measured:
    """The spec's Measured, from a child process (once per spec and options), within timeout_s (default
    children.deadline_s()); with training, its exact training step too; on `device` (default meta; cpu: real
    tensors); with generate (prompt, steps), a causal LM's generation too; its failure is a SpecError."""
    step = {"training": training, "frozen": list(frozen), "checkpointed": list(checkpointed), "optimizer": optimizer}
    step = _FORWARD if step == _FORWARD else step
    step = step if device == "meta" else {**step, "device": device}
    step = {**step, "generate": list(generate)} if generate else step
    key = json.dumps({**spec.to_dict(), **step}, sort_keys=True)
    if key not in MEASURED:
        MEASURED.put(key, _in_child(spec, timeout_s or deadline_s(), step))
    out = MEASURED.get(key)
    if "error" in out:
        raise SpecError(out["error"])
    return Measured.from_dict(out)


def _in_child(spec: ModelSpec, timeout_s: float, step: dict[str, Any] | None = None) -> dict[str, Any]:
    """The child's answer, or {"error": one line} for whatever went wrong there."""
    child = Child(
        "flopcheck.specs.child", (json.dumps({"spec": spec.to_dict(), "paths": sys.path, **(step or {})}),), stdin=False
    )
    try:  # a Ctrl-C while it counts (a KeyboardInterrupt here) leaves no child behind
        got, why = answers(child, 1, timeout_s)
    finally:
        child.close()
    if why == "timeout":
        return _timed_out(spec, timeout_s)
    if not got:
        return {
            "error": f"model {spec.text!r} ended its process (exit code {child.proc.returncode}) before it was "
            f"counted: does its code call sys.exit or os._exit, or crash?"
        }
    return got[0]


if __name__ == "__main__":
    main()

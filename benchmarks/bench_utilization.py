"""A utilization audit of a small language model against its training count, as a ratio in one run, cache off.

`flopcheck audit "14.3% MFU" --model transformers:LlamaForCausalLM --training ...` reads the model's exact training
step, its inputs and its published formulas; `flopcheck count ... --training` counts the same step. Both build the
model in a child process; the audit needs nothing the step's measurement does not hold, so it should cost about the
count. Each command runs as its own process with FLOPCHECK_CACHE=off, alternately, --repeats times; the cost is the
median CPU seconds of the process and every child it waited for (getrusage of the child: a shared machine's load
moves wall time, not CPU time), wall time printed beside.
Goal (issue 50): audit / count <= 1.25 in CPU seconds (exit 1 above).
Run: python benchmarks/bench_utilization.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL = 1.25
LLAMA = ["--config", str(ROOT / "tests/data/llama_tiny.json"), "--text-tokens", "128", "--training"]
COUNT = ["count", "transformers:LlamaForCausalLM", *LLAMA]
AUDIT = ["audit", "14.3% MFU", "--model", "transformers:LlamaForCausalLM", *LLAMA]
AUDIT += ["--gpu", "H100", "--gpus", "1", "--throughput", "100000 samples/s"]


def measure(args: list[str]) -> tuple[float, float]:
    """(CPU seconds of the process and its waited-for children, wall seconds) of one flopcheck command."""
    env = {**os.environ, "FLOPCHECK_CACHE": "off", "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "flopcheck.cli", *args], stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"benchmark command failed: flopcheck {' '.join(args)}")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    runs: dict[str, list[tuple[float, float]]] = {"count": [], "audit": []}
    for _ in range(args.repeats):  # alternately: a slow spell of the machine falls on both
        runs["count"].append(measure(COUNT))
        runs["audit"].append(measure(AUDIT))
    cpu = {k: statistics.median(c for c, _ in v) for k, v in runs.items()}
    wall = {k: statistics.median(w for _, w in v) for k, v in runs.items()}
    ratio = cpu["audit"] / cpu["count"]
    print(f"tiny Llama (tests/data/llama_tiny.json, 128 tokens), cache off, median of {args.repeats}:")
    print(f"  flopcheck count --training  {cpu['count']:6.2f} CPU s  ({wall['count']:6.2f} s wall)")
    print(f"  flopcheck audit '14.3% MFU' {cpu['audit']:6.2f} CPU s  ({wall['audit']:6.2f} s wall)")
    ok = ratio <= GOAL
    print(
        f"  audit / count  {ratio:5.2f} CPU  ({wall['audit'] / wall['count']:.2f} wall)  (<= {GOAL})  "
        f"{'ok' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

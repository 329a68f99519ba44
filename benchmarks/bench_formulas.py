"""`reconcile --formula all` against `count`, as whole processes, as a ratio in one run: Llama-3-8B (the shipped
config) at 8192 tokens, a training step, on meta. A formula is arithmetic on the structure the count already has,
so explaining every published formula should cost little beyond the count itself.
Goal (issue 40): reconcile --formula all --training / count --training <= 1.2 (exit 1 above).
Run: python benchmarks/bench_formulas.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

GOAL = 1.2
MODEL = ["transformers:LlamaForCausalLM", "--config", "llama-3-8b", "--text-tokens", "8192", "--training"]
COMMANDS = {
    "count": [sys.executable, "-m", "flopcheck.cli", "count", *MODEL, "--json"],
    "reconcile": [sys.executable, "-m", "flopcheck.cli", "reconcile", *MODEL, "--formula", "all", "--json"],
}


def timed(argv: list[str]) -> float:
    """Wall seconds of one whole process; it must succeed."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    times: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(args.repeats):  # interleaved: a slow spell of the machine falls on both alike
        for name, argv in COMMANDS.items():
            times[name].append(timed(argv))
    count, reconcile = (statistics.median(times[k]) for k in COMMANDS)
    ratio = reconcile / count
    print(f"Llama-3-8B at 8192 tokens, a training step, median of {args.repeats} whole processes:")
    print(f"  count --training {count:.2f} s; reconcile --formula all --training {reconcile:.2f} s")
    print(f"  reconcile / count  {ratio:.2f}  (<= {GOAL})  {'ok' if ratio <= GOAL else 'MISSED'}")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())

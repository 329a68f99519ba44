"""Language models by name (issue #49), as whole processes, as ratios in one run.

Goal: `flopcheck count NAME --text-tokens 4096` (on meta) / floor (`import torch, transformers` and the model's class,
what any user of the class pays) <= 1.5, for DeepSeek-V3 (61 layers, 256 routed experts in 58 of them: the largest
module tree of the registry) and Llama-3-8B (the dense baseline).
The count is one parent (flopcheck, no torch) and one child (torch, transformers, the build and the count); the floor
and each count alternate, so a machine whose load drifts weighs on both alike.
Run: python benchmarks/bench_lms.py [--repeats 3] [--model NAME ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_count import FLOPCHECK, PY, measure  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from flopcheck.specs.lms import find  # noqa: E402

GOAL = 1.5
MODELS = ("DeepSeek-V3", "Llama-3-8B")


def ratio(name: str, repeats: int) -> tuple[float, float, float]:
    """(median count seconds, median floor seconds, their ratio) of one registry model, floor and count alternated."""
    lm = find(name)
    if lm is None:
        raise SystemExit(f"{name} is no language model of the registry (flopcheck list-models 'lm:*')")
    floor_cmd = [PY, "-c", f"import torch, transformers; transformers.{lm.cls}"]
    count_cmd = FLOPCHECK + ["count", lm.name, "--text-tokens", "4096"]
    floors, counts = [], []
    for _ in range(repeats):
        floors.append(measure(floor_cmd)[0])
        counts.append(measure(count_cmd)[0])
    floor, count = statistics.median(floors), statistics.median(counts)
    print(f"  {'floor: import torch, transformers; ' + lm.cls:58s} {floor:7.2f} s", flush=True)
    print(f"  {'flopcheck count ' + lm.name + ' --text-tokens 4096':58s} {count:7.2f} s", flush=True)
    return count, floor, count / floor


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", action="append", help=f"a registry name (default: {', '.join(MODELS)})")
    args = ap.parse_args()
    os.environ["FLOPCHECK_CACHE"] = "off"  # nothing kept between runs: each count is made
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    print("whole-process wall time (median):")
    checks = [(name, ratio(name, args.repeats)[2]) for name in args.model or MODELS]
    print("\nratios (goal in brackets):")
    failed = 0
    for name, value in checks:
        ok = value <= GOAL
        failed += not ok
        print(f"  {'count ' + name + ' / floor':40s} {value:7.2f}  (<= {GOAL:g})  {'ok' if ok else 'MISSED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

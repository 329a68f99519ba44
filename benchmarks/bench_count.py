"""`flopcheck count DiT-XL/2` as a whole process, against its floor and against fvcore, as ratios.

Every command runs as its own process; wall time is the median of --repeats runs, peak RSS the
largest resident set any of them reached (getrusage of the child). fvcore cannot count on meta
tensors, so it counts a model built as the DiT code builds it (constructor + the paper's
initialisation, seconds for XL/2); its best case, weights allocated but not initialised, is shown
beside it for honesty. Goals (issue #2), against fvcore as it is used:
  count / floor (`python -c "import torch, timm"`)   <= 1.2
  fvcore / count at input 32                          >= 2.5
  fvcore / count at input 128 (T = 4096)              >= 10
  count peak RSS                                       <= 1.2 GB
Run: python benchmarks/bench_count.py [--repeats 3] [--skip-fvcore-128]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
FLOPCHECK = [PY, "-m", "flopcheck.cli"]


def measure(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one child process; fails loudly if it fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}\n{proc.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024  # ru_maxrss is in KB on Linux


def run(label: str, cmd: list[str], repeats: int) -> dict:
    """Median wall and max peak RSS over `repeats` runs."""
    samples = [measure(cmd) for _ in range(repeats)]
    row = {"label": label, "wall_s": statistics.median(s[0] for s in samples), "rss_mb": max(s[1] for s in samples)}
    print(f"  {label:45s} {row['wall_s']:7.2f} s  {row['rss_mb']:8.0f} MB", flush=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-fvcore-128", action="store_true", help="skip the slow fvcore run at T=4096")
    args = ap.parse_args()
    fv = [PY, str(HERE / "fvcore_worker.py"), "DiT-XL/2"]
    print("whole-process wall time (median) and peak RSS:")
    floor = run('floor: python -c "import torch, timm"', [PY, "-c", "import torch, timm"], args.repeats)
    count32 = run("flopcheck count DiT-XL/2", FLOPCHECK + ["count", "DiT-XL/2"], args.repeats)
    count128 = run(
        "flopcheck count DiT-XL/2 --input-size 128",
        FLOPCHECK + ["count", "DiT-XL/2", "--input-size", "128"],
        args.repeats,
    )
    fv32 = run("fvcore DiT-XL/2 input 32", fv + ["32", "init"], args.repeats)
    fv32_empty = run("fvcore DiT-XL/2 input 32, uninitialised", fv + ["32", "empty"], args.repeats)
    fv128 = None if args.skip_fvcore_128 else run("fvcore DiT-XL/2 input 128 (T=4096)", fv + ["128", "init"], 1)
    print("\nratios (goal in brackets):")
    checks = [
        ("count / floor", count32["wall_s"] / floor["wall_s"], "<=", 1.2),
        ("fvcore / count, input 32", fv32["wall_s"] / count32["wall_s"], ">=", 2.5),
        ("count peak RSS, GB", count32["rss_mb"] / 1024, "<=", 1.2),
        ("fvcore uninitialised / count, input 32", fv32_empty["wall_s"] / count32["wall_s"], "(shown)", None),
        ("fvcore / count peak RSS, input 32", fv32["rss_mb"] / count32["rss_mb"], "(shown)", None),
    ]
    if fv128:
        checks += [
            ("fvcore / count, input 128", fv128["wall_s"] / count128["wall_s"], ">=", 10.0),
            ("count peak RSS at input 128, GB", count128["rss_mb"] / 1024, "<=", 1.2),
        ]
    failed = 0
    for label, value, op, goal in checks:
        if goal is None:
            print(f"  {label:40s} {value:7.2f}  {op}")
            continue
        ok = value <= goal if op == "<=" else value >= goal
        failed += not ok
        print(f"  {label:40s} {value:7.2f}  [{op} {goal}]  {'ok' if ok else 'MISSED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

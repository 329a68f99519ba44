"""`flopcheck report` (the whole sweep) as one process: wall time, peak RSS, and its overhead.

Overhead = the sweep's wall time over the sum of the counting calls' own times (each library's
counting call, timed inside its child). Two workers count in parallel, so the per-core view,
wall x workers / counting, is printed too. Goals (issue #6), on the 2-core CI machine:
  whole sweep (the command, rendering included)   <= 6 minutes
  wall x workers / counting calls                  <= 1.3
Run: python benchmarks/bench_report.py [--out DIR]   (writes the report to a temporary folder)
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import tempfile
import time

GOAL_S, GOAL_OVERHEAD = 360.0, 1.3
STATS = re.compile(r"counted (\d+) in (\d+) s \(the counting calls: (\d+) s; building models: (\d+) s\)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="where the report goes (default: a temporary folder)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="flopcheck-report-")
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "flopcheck.cli", "report", "--out", out, "--workers", str(args.workers)],
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"flopcheck report failed:\n{proc.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    m = STATS.search(proc.stderr)
    counts, sweep_s, counting_s, build_s = (int(x) for x in m.groups())
    per_core = sweep_s * args.workers / counting_s
    print(f"flopcheck report ({counts} counts, {args.workers} workers) -> {out}")
    print(f"  whole command            {wall:7.1f} s   [<= {GOAL_S:g} s] {'ok' if wall <= GOAL_S else 'MISSED'}")
    print(f"  counting phase           {sweep_s:7d} s   (building models {build_s} s)")
    print(f"  counting calls, summed   {counting_s:7d} s")
    print(f"  wall / counting calls    {sweep_s / counting_s:7.2f}")
    print(
        f"  wall x workers / calls   {per_core:7.2f}   [<= {GOAL_OVERHEAD}] "
        f"{'ok' if per_core <= GOAL_OVERHEAD else 'MISSED'}"
    )
    print(f"  peak RSS, largest process {peak:6.0f} MB")
    return 0 if wall <= GOAL_S and per_core <= GOAL_OVERHEAD else 1


if __name__ == "__main__":
    sys.exit(main())

"""Each counter's time and peak RSS beside flopcheck's exact count, as ratios in one run.

Models: DiT-XL/2 at input 32 (T = 256) and DiT-S/2 at input 64 (T = 1024). Counters count a real
CPU model (time: the counting call alone; peak RSS: the counting process, model included); the
exact count runs on meta tensors, measured the same way in its own process.
Run: python benchmarks/bench_counters.py [--counter NAME ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from flopcheck.counters import COUNTERS
from flopcheck.counters.pool import Job, run_counters
from flopcheck.types import Failed

JOBS = [Job("DiT-XL/2", 32), Job("DiT-S/2", 64)]

# imports first, as the counters' workers import torch, timm and their library before counting;
# the first count in a process also pays torch's lazy meta-kernel set-up, so it is timed apart
EXACT = """
import json, resource, sys, time
import reference_models.dit
from flopcheck.exact import exact_count
from reference_models import get_config
cfg = get_config(sys.argv[1], input_size=int(sys.argv[2]))
times = []
for _ in range(2):
    start = time.perf_counter()
    total = exact_count(sys.argv[1], cfg).total
    times.append(time.perf_counter() - start)
print(json.dumps({"first_s": times[0], "time_s": times[1], "flops": total,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def exact(job: Job) -> dict:
    """The exact count of one job in a fresh process: its time and peak RSS."""
    out = subprocess.run(
        [sys.executable, "-c", EXACT, job.model, str(job.input_size)], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--counter", action="append", help="default: every registered counter")
    args = ap.parse_args()
    reference = {(j.model, j.input_size): exact(j) for j in JOBS}
    counts = run_counters(args.counter or list(COUNTERS), JOBS, timeout_s=900)
    print(f"{'counter':20s} {'model':9s} {'input':>5s} {'time s':>8s} {'x exact':>8s} {'RSS MB':>8s} {'x exact':>8s}")
    for (model, size), ref in reference.items():
        print(
            f"{'flopcheck exact':20s} {model:9s} {size:5d} {ref['time_s']:8.2f} {1:8.1f} {ref['peak_rss_mb']:8.0f} "
            f"{1:8.1f}   (first count in a process: {ref['first_s']:.2f} s)"
        )
    for c in counts:
        ref = reference[(c.model, c.input_size)]
        if isinstance(c, Failed):
            print(f"{c.counter:20s} {c.model:9s} {c.input_size:5d}  error: {c.error}")
            continue
        print(
            f"{c.counter:20s} {c.model:9s} {c.input_size:5d} {c.time_s:8.2f} {c.time_s / ref['time_s']:8.1f} "
            f"{c.peak_rss_mb:8.0f} {c.peak_rss_mb / ref['peak_rss_mb']:8.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

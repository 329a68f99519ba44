"""The executors (flopcheck.executors) on a 12-model zoo report, as ratios from one run of this script.

`flopcheck report --models 'zoo:timm-*' --counter torch_dispatch --no-sweep` (the zoo's 12 timm models, real CPU
tensors) four times, each with a cache of its own: the local pool on 1 worker, on 2 workers, Ray on 2 CPUs (a local
Ray started for the run), then the 2-worker run again from its cache. The counting phase is the report's own
'counted N in X s' (the specs' measurement before it, on meta in this process's children, is the same in all four).
Goals (issue 52), on 2 cores:
  per-core efficiency, T(1 worker) / (2 x T(2 workers))   >= 0.75
  Ray's overhead over the local pool, T(ray) / T(2) - 1    <= 15%
  a run from the cache: its counting phase ~0 s, the command at the import floor (python -c 'import flopcheck.cli'
  plus the specs' measurement)
Run: python benchmarks/bench_executor.py   (needs ray for the third run: pip install 'flopcheck[ray]')
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time

MODELS, COUNTER = "zoo:timm-*", "torch_dispatch"
GOAL_EFFICIENCY, GOAL_RAY = 0.75, 0.15
STATS = re.compile(r"counted (\d+) in (\d+) s")


def report(cache: str, *flags: str) -> tuple[float, float, str]:
    """(the whole command's seconds, the counting phase's, stderr) of one report with its own cache."""
    out = tempfile.mkdtemp(prefix="flopcheck-bench-executor-")
    argv = [sys.executable, "-m", "flopcheck.cli", "report", "--models", MODELS, "--counter", COUNTER, "--no-sweep"]
    start = time.perf_counter()
    proc = subprocess.run(
        [*argv, "--out", out, *flags], env=dict(os.environ, FLOPCHECK_CACHE=cache), stderr=subprocess.PIPE, text=True
    )
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"flopcheck report {' '.join(flags)} failed:\n{proc.stderr[-2000:]}")
    m = STATS.search(proc.stderr)
    return wall, float(m.group(2)) if m else float("nan"), proc.stderr


def import_floor() -> float:
    """Seconds of `python -c 'import flopcheck.cli'`: what any command pays before it counts."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import flopcheck.cli"], check=True)
    return time.perf_counter() - start


def main() -> int:
    root = tempfile.mkdtemp(prefix="flopcheck-bench-caches-")
    load = os.getloadavg()[0]
    runs = {
        "local, 1 worker": report(f"{root}/one", "--workers", "1"),
        "local, 2 workers": report(f"{root}/two", "--workers", "2"),
        "ray, 2 CPUs": report(f"{root}/ray", "--executor", "ray", "--workers", "2"),
        "local, 2 workers, from the cache": report(f"{root}/two", "--workers", "2"),
    }
    floor = import_floor()
    print(f"{MODELS} x {COUNTER}, {os.cpu_count()} cores, load average {load:.1f} at the start")
    for name, (wall, counting, _) in runs.items():
        print(f"  {name:34s} command {wall:6.1f} s   counting phase {counting:5.0f} s")
    one, two, ray = (runs[n][1] for n in ("local, 1 worker", "local, 2 workers", "ray, 2 CPUs"))
    efficiency, overhead = one / (2 * two), ray / two - 1
    cached = runs["local, 2 workers, from the cache"]
    said = next((line for line in cached[2].splitlines() if "from the cache" in line), "nothing said")
    print(f"  per-core efficiency T1 / (2 x T2) {efficiency:6.2f}   [>= {GOAL_EFFICIENCY}]")
    print(f"  Ray's overhead T(ray) / T2 - 1    {overhead:6.0%}   [<= {GOAL_RAY:.0%}]")
    print(f"  from the cache: {said}; command {cached[0]:.1f} s, import floor {floor:.1f} s")
    return 0 if efficiency >= GOAL_EFFICIENCY and overhead <= GOAL_RAY else 1


if __name__ == "__main__":
    sys.exit(main())

"""The executors (flopcheck.executors) on a 12-model zoo report, as ratios from one run of this script.

`flopcheck report --models 'zoo:timm-*' --counter torch_dispatch --no-sweep` (the zoo's 12 timm models, real CPU
tensors) four times: the local pool on 2 workers, Ray on 2 CPUs (a local Ray started for the run: one actor a CPU,
each keeping one pool worker), the local pool on 1 worker, each with a cache of its own, then the 2-worker run again
from its cache. The counting phase is the report's own 'counted N in X s' (the specs' measurement before it, on meta
in this process's children, is the same in all three; Ray's start is inside Ray's).
Goals (issue 52), on 2 cores:
  per-core efficiency, T(1 worker) / (2 x T(2 workers))   >= 0.75
  Ray's overhead over the local pool, T(ray) / T(2) - 1    <= 15%
  a run from the cache at the import floor per model: every model from the cache, no spec measured again, the
  command against `python -c 'import flopcheck.cli, torch'` (the report decodes its measurements with flopcheck.exact,
  which imports torch), and what each model adds to it
Beside them: Ray's start alone (ray.init and ray.shutdown with the executor's options, in a process of its own), so
Ray's overhead is also shown past it, and the load average at the start and the highest seen during the run.
Run: python benchmarks/bench_executor.py   (needs ray for the second run: pip install 'flopcheck[ray]')
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time

MODELS, COUNTER, N = "zoo:timm-*", "torch_dispatch", 12
GOAL_EFFICIENCY, GOAL_RAY = 0.75, 0.15
STATS = re.compile(r"counted (\d+) in (\d+) s")
RAY_START = (
    "import logging, ray; ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, "
    "logging_level=logging.ERROR); ray.shutdown()"
)


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


def seconds(code: str) -> float:
    """Seconds of `python -c code`, a process of its own."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def watch_load(peak: list[float], stop: threading.Event) -> None:
    """The highest 1-minute load average seen, every 5 s until stop."""
    while not stop.wait(5.0):
        peak[0] = max(peak[0], os.getloadavg()[0])


def main() -> int:
    root = tempfile.mkdtemp(prefix="flopcheck-bench-caches-")
    load, peak, stop = os.getloadavg()[0], [0.0], threading.Event()
    threading.Thread(target=watch_load, args=(peak, stop), daemon=True).start()
    runs = {
        "local, 2 workers": report(f"{root}/two", "--workers", "2"),
        "ray, 2 CPUs": report(f"{root}/ray", "--executor", "ray", "--workers", "2"),
        "local, 1 worker": report(f"{root}/one", "--workers", "1"),
        "local, 2 workers, from the cache": report(f"{root}/two", "--workers", "2"),
    }
    floor, floor_torch, ray_start = (
        seconds("import flopcheck.cli"),
        seconds("import flopcheck.cli, torch"),
        seconds(RAY_START),
    )
    stop.set()
    print(f"{MODELS} x {COUNTER}, {os.cpu_count()} cores, load average {load:.1f} at the start, {peak[0]:.1f} at most")
    for name, (wall, counting, _) in runs.items():
        print(f"  {name:34s} command {wall:6.1f} s   counting phase {counting:5.0f} s")
    one, two, ray = (runs[n][1] for n in ("local, 1 worker", "local, 2 workers", "ray, 2 CPUs"))
    efficiency, overhead = one / (2 * two), ray / two - 1
    print(f"  per-core efficiency T1 / (2 x T2) {efficiency:6.2f}   [>= {GOAL_EFFICIENCY}]")
    print(f"  Ray's overhead T(ray) / T2 - 1    {overhead:6.0%}   [<= {GOAL_RAY:.0%}]")
    print(
        f"  Ray's start alone {ray_start:.1f} s; past it, (T(ray) - start) / T2 - 1 {(ray - ray_start) / two - 1:.0%}"
    )
    wall, _, err = runs["local, 2 workers, from the cache"]
    said = next((line for line in err.splitlines() if "from the cache" in line), "nothing said")
    print(f"  from the cache: {said}; command {wall:.1f} s")
    print(f"    import floor: flopcheck.cli {floor:.1f} s, flopcheck.cli + torch {floor_torch:.1f} s")
    print(f"    {wall / floor_torch:.2f}x the floor with torch; {(wall - floor_torch) / N:+.2f} s a model past it")
    whole = said.startswith(f"{N} of {N} models")
    return 0 if efficiency >= GOAL_EFFICIENCY and overhead <= GOAL_RAY and whole else 1


if __name__ == "__main__":
    sys.exit(main())

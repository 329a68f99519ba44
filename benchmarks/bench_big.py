"""`flopcheck count Wan2.1-14B --resolution 1280x720 --frames 81` as a whole process: wall time and peak RSS.

Goal (issue #7): at most 10 s and 2 GB peak RSS on two cores. Every counter that executes the model
needs its weights and activations in memory, which this prints beside the count's own figures: the
fp32 weights alone (14,288,491,584 x 4 B = 57 GB) exceed the CI machine's 24 GiB, and an explicit
attention score matrix (40 heads x 75,600^2 x 4 B) is 914 GB. flopcheck counts it on meta tensors.
Run: python benchmarks/bench_big.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_count import FLOPCHECK, run

# (model, (W, H), frames or None)
CASES = [("Wan2.1-14B", (1280, 720), 81), ("HunyuanVideo", (1280, 720), 129), ("FLUX.1-dev", (1024, 1024), None)]
GOAL_S, GOAL_GB = 10.0, 2.0


def needed_to_execute(name: str, overrides: dict) -> tuple[float, float]:
    """(GB of fp32 weights, GB of one explicit fp32 attention score matrix) for running the model for real."""
    from reference_models import create_model, get_config

    cfg = get_config(name, **overrides)
    params = sum(p.numel() for p in create_model(name, **overrides).parameters())
    return params * 4 / 1e9, cfg.num_heads * cfg.attended_tokens**2 * 4 / 1e9


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print("whole-process wall time (median) and peak RSS:")
    failed = 0
    for name, (w, h), frames in CASES:
        flags = ["--resolution", f"{w}x{h}"] + (["--frames", str(frames)] if frames else [])
        row = run(f"flopcheck count {name} {' '.join(flags)}", FLOPCHECK + ["count", name, *flags], args.repeats)
        weights, scores = needed_to_execute(name, {"resolution": (w, h), "frames": frames})
        ok = row["wall_s"] <= GOAL_S and row["rss_mb"] / 1024 <= GOAL_GB
        failed += not ok
        print(
            f"    [<= {GOAL_S:g} s, <= {GOAL_GB:g} GB] {'ok' if ok else 'MISSED'};  executing it would need "
            f"{weights:,.1f} GB of fp32 weights and {scores:,.0f} GB per explicit score matrix"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

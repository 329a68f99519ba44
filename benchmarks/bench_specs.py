"""Any model in every command (issue #12), as whole processes, as ratios in one run.

Goals:
  `flopcheck count timm:vit_base_patch16_224` / floor (`python -c "import torch, timm"`)            <= 1.2
  `flopcheck count diffusers:FluxTransformer2DModel --config ...` (1024 px) / `import torch, diffusers` <= 1.3
  `flopcheck reconcile torchvision:resnet50`, every installed counter, wall seconds on this machine    <= 60
A spec is built and counted in a child process (the user's code runs there), so a count pays two
interpreter starts and the library imports twice: the ratios show what that costs.
Run: python benchmarks/bench_specs.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_count import FLOPCHECK, PY, run  # noqa: E402

FLUX = str(Path(__file__).resolve().parents[1] / "flopcheck" / "data" / "diffusers" / "flux1-dev.json")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print("whole-process wall time (median) and peak RSS:")
    floor = run('floor: python -c "import torch, timm"', [PY, "-c", "import torch, timm"], args.repeats)
    vit = run(
        "flopcheck count timm:vit_base_patch16_224", FLOPCHECK + ["count", "timm:vit_base_patch16_224"], args.repeats
    )
    floor_d = run(
        'floor: python -c "import torch, diffusers"',
        [PY, "-c", "import torch, diffusers; diffusers.FluxTransformer2DModel"],
        args.repeats,
    )
    flux = run(
        "flopcheck count diffusers:Flux... --config",
        FLOPCHECK + ["count", "diffusers:FluxTransformer2DModel", "--config", FLUX],
        args.repeats,
    )
    rec = run("flopcheck reconcile torchvision:resnet50", FLOPCHECK + ["reconcile", "torchvision:resnet50"], 1)
    checks = [
        ("count timm:vit_base / floor", vit["wall_s"] / floor["wall_s"], 1.2),
        ("count diffusers FLUX / floor", flux["wall_s"] / floor_d["wall_s"], 1.3),
        ("reconcile torchvision:resnet50, seconds", rec["wall_s"], 60.0),
    ]
    print("\nratios (goal in brackets):")
    failed = 0
    for label, value, goal in checks:
        ok = value <= goal
        failed += not ok
        print(f"  {label:40s} {value:7.2f}  (<= {goal:g})  {'ok' if ok else 'MISSED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

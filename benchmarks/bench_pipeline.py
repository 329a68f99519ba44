"""A whole pipeline against its denoiser alone (issue #27), as whole processes, as a ratio in one run.

Goal:
  `flopcheck count diffusers-pipeline:FLUX.1-dev` / `flopcheck count diffusers:FluxTransformer2DModel --config ...`
  (both at 1024 px, each a cold process with the build included)                                         <= 1.5
The pipeline counts each component once in one child (torch, diffusers and transformers imported once) and
multiplies the denoiser by its steps, so the steps cost nothing and the text encoders and the VAE are the extra.
Run: python benchmarks/bench_pipeline.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_count import FLOPCHECK, run  # noqa: E402

FLUX = str(Path(__file__).resolve().parents[1] / "flopcheck" / "data" / "diffusers" / "flux1-dev.json")
GOAL = 1.5


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print("whole-process wall time (median) and peak RSS:")
    alone = run(
        "flopcheck count diffusers:Flux... --config (the denoiser)",
        FLOPCHECK + ["count", "diffusers:FluxTransformer2DModel", "--config", FLUX, "--resolution", "1024"],
        args.repeats,
    )
    whole = run(
        "flopcheck count diffusers-pipeline:FLUX.1-dev --steps 28",
        FLOPCHECK + ["count", "diffusers-pipeline:FLUX.1-dev", "--resolution", "1024", "--steps", "28"],
        args.repeats,
    )
    ratio = whole["wall_s"] / alone["wall_s"]
    ok = ratio <= GOAL
    verdict = "ok" if ok else "MISSED"
    print(f"\nratio (goal in brackets):\n  pipeline / denoiser alone {ratio:7.2f}  (<= {GOAL:g})  {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

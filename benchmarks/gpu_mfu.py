"""Measured MFU on a GPU beside `flopcheck estimate`: time bf16 forwards, divide the exact FLOPs by them.

    PYTHONPATH=. python3 benchmarks/gpu_mfu.py [--out DIR]   # on a machine with a CUDA GPU
    python benchmarks/gpu_mfu.py --dry                        # tiny configs on the CPU: checks the script runs

Weights are random (N(0, 0.02)), cast to bf16, forwards run under autocast in eager mode (no
torch.compile) with fused SDPA. FLOPs come from flopcheck's formula, which the tests hold equal to
the exact count. The GPU's ceiling is measured too: an 8192^3 bf16 matmul. Writes gpu_mfu.json and
gpu_mfu.md into --out (default benchmarks/results/, which git ignores). Never run by CI.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flopcheck.formula import formula_breakdown
from flopcheck.gpus import get_gpu
from flopcheck.types import ATTENTION_KINDS
from reference_models import get_config

# (name, overrides, batch, timed iterations)
CASES = [
    ("DiT-XL/2", {}, 1, 20),
    ("DiT-XL/2", {}, 8, 20),
    ("DiT-XL/2", {}, 64, 10),
    ("FLUX.1-dev", {"resolution": (1024, 1024)}, 1, 5),
    ("Wan2.1-1.3B", {"resolution": (832, 480), "frames": 81}, 1, 3),
    ("Wan2.1-14B", {"resolution": (1280, 720), "frames": 81}, 1, 2),
]
DRY_CASES = [
    ("DiT-S/2", {}, 2, 2),
    ("FLUX.1-dev", {"resolution": (128, 128), "depth": 1, "single_depth": 1}, 1, 1),
    ("Wan2.1-1.3B", {"resolution": (128, 64), "frames": 5, "depth": 1}, 1, 1),
    ("SD3-medium", {"resolution": (128, 128), "depth": 2}, 1, 1),
    ("CogVideoX-5B", {"resolution": (64, 64), "frames": 5, "depth": 1}, 1, 1),
    ("HunyuanVideo", {"resolution": (64, 64), "frames": 5, "depth": 1, "single_depth": 1}, 1, 1),
]


def build(cfg, device: str) -> torch.nn.Module:
    """The model with random bf16 weights on `device` (built on meta by the registry, storage allocated there)."""
    from reference_models import build as build_meta

    model = build_meta(cfg, device="meta").to_empty(device=device)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.02)
        for b in model.buffers():
            b.zero_()
    return model.to(torch.bfloat16).eval()


def inputs(cfg, batch: int, device: str) -> tuple:
    """Real tensors with the shapes the exact count used: random floats, timesteps in [0, 1000), labels."""
    from reference_models import prepare

    _, shapes, _ = prepare(cfg, batch=batch, device="meta")
    out = []
    for t in shapes:
        if t.dtype == torch.long:
            out.append(torch.randint(0, 1000, t.shape, device=device))
        elif t.dim() == 1:
            out.append(torch.rand(t.shape, device=device) * 1000)
        else:
            out.append(torch.randn(t.shape, device=device, dtype=torch.bfloat16))
    return tuple(out)


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def time_forward(model, args: tuple, iters: int, device: str) -> list[float]:
    """Seconds per forward: one warm-up, then `iters` timed forwards."""
    with torch.no_grad(), torch.autocast(device_type=device, dtype=torch.bfloat16):
        model(*args)
        sync(device)
        times = []
        for _ in range(iters):
            start = time.perf_counter()
            model(*args)
            sync(device)
            times.append(time.perf_counter() - start)
    return times


def matmul_ceiling(device: str, n: int) -> float:
    """FLOP/s of an n^3 bf16 matmul on random data (mean of 10 after 3 warm-ups)."""
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    sync(device)
    start = time.perf_counter()
    for _ in range(10):
        a @ b
    sync(device)
    return 10 * 2 * n**3 / (time.perf_counter() - start)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))  # git ignores it
    p.add_argument("--dry", action="store_true", help="tiny configs on the CPU")
    p.add_argument("--gpu", default="H200", help="the GPU's datasheet entry for the peak (default H200)")
    a = p.parse_args()
    device = "cpu" if a.dry else "cuda"
    gpu = get_gpu(a.gpu)
    rows = []
    ceiling = matmul_ceiling(device, 512 if a.dry else 8192)
    env = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "datasheet": gpu.name,
        "datasheet_tflops": gpu.tflops,
        "matmul_8192_tflops": ceiling / 1e12,
    }
    print(json.dumps(env), flush=True)
    for name, overrides, batch, iters in DRY_CASES if a.dry else CASES:
        try:
            cfg = get_config(name, **overrides)
            b = formula_breakdown(name, cfg, batch=batch)
            kinds = b.by_kind()
            model = build(cfg, device)
            times = time_forward(model, inputs(cfg, batch, device), iters, device)
            seconds = statistics.median(times)
            row = {
                "model": name,
                "input": cfg.describe_input(),
                "batch": batch,
                "flops": b.total,
                "attention_share": sum(kinds.get(k, 0) for k in ATTENTION_KINDS) / b.total,
                "seconds": seconds,
                "times": times,
                "tflops_per_s": b.total / seconds / 1e12,
                "mfu": b.total / seconds / gpu.peak,
                "of_matmul_ceiling": b.total / seconds / ceiling,
                "estimate_seconds_at_0.45": b.total / (0.45 * gpu.peak),
            }
            del model
            if device == "cuda":
                torch.cuda.empty_cache()
        except Exception as err:  # one case failing must not lose the others
            row = {"model": name, "batch": batch, "error": f"{type(err).__name__}: {str(err)[:300]}"}
        rows.append(row)
        print(json.dumps(row), flush=True)
    Path(a.out).mkdir(parents=True, exist_ok=True)
    Path(a.out, "gpu_mfu.json").write_text(json.dumps({"env": env, "rows": rows}, indent=2) + "\n")
    Path(a.out, "gpu_mfu.md").write_text(markdown(env, rows))
    return 0


def markdown(env: dict, rows: list[dict]) -> str:
    lines = [
        f"Measured on {env['device']}, torch {env['torch']}, bf16 eager with fused SDPA; peak = "
        f"{env['datasheet']} datasheet {env['datasheet_tflops']:g} TFLOPS dense bf16; an 8192^3 bf16 "
        f"matmul ran at {env['matmul_8192_tflops']:.0f} TFLOP/s.",
        "",
        "| model | input | batch | FLOPs per forward | attention | measured | TFLOP/s | MFU | "
        "of matmul ceiling | estimate at MFU 0.45 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | | {r['batch']} | error: {r['error']} | | | | | | |")
            continue
        lines.append(
            f"| {r['model']} | {r['input']} | {r['batch']} | {r['flops']:,} | {r['attention_share']:.0%} "
            f"| {r['seconds']:.4g} s | {r['tflops_per_s']:.0f} | {r['mfu']:.0%} | "
            f"{r['of_matmul_ceiling']:.0%} | {r['estimate_seconds_at_0.45']:.4g} s |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())

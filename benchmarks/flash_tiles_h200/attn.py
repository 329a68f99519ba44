"""Flash SDPA probe: bf16, B=1, H=16, D=128, T=4096, forward only.

Modes: info (versions, timings, kernel grids), prof (one dense and one causal launch, for ncu)."""

import json
import os
import statistics
import sys
import tempfile
import traceback

import torch
import torch.nn.functional as F

B, H, T, D = 1, 16, int(os.environ.get("DEVCHECK_T", 4096)), 128
DEV = os.environ.get("DEVCHECK_DEV", "cuda")  # cpu only for a local dry run


def inputs(d=D, dev=DEV):
    g = torch.Generator(device=dev).manual_seed(0)
    return [torch.randn(B, H, T, d, device=dev, dtype=torch.bfloat16, generator=g) for _ in range(3)]


def flash(q, k, v, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def section(name, fn):
    print(f"== {name}", flush=True)
    try:
        fn()
    except Exception:
        print(f"FAILED {name}:\n{traceback.format_exc()}", flush=True)


def versions():
    print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version.split()[0])
    print("cuda available", torch.cuda.is_available())
    print("gpu", torch.cuda.get_device_name(0), "cc", torch.cuda.get_device_capability(0))
    print("SMs", torch.cuda.get_device_properties(0).multi_processor_count)
    print("flash sdp enabled", torch.backends.cuda.flash_sdp_enabled())
    att = torch.nn.attention
    for name in ("current_flash_attention_impl", "list_flash_attention_impls"):
        if hasattr(att, name):
            try:
                print(name, getattr(att, name)())
            except Exception as e:  # noqa: BLE001
                print(name, "error", e)


def backend_check():
    q, k, v = inputs()
    for causal in (False, True):
        o = flash(q, k, v, causal)
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(SDPBackend.MATH):
            ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
        err = (o.float() - ref).abs().max().item()
        print(f"flash-forced SDPA ran, causal={causal}: out {tuple(o.shape)} {o.dtype}, max|flash-math|={err:.3e}")


def timings():
    q, k, v = inputs()
    res = {}
    for causal in (False, True):
        for _ in range(5):
            flash(q, k, v, causal)
        torch.cuda.synchronize()
        ts = []
        for _ in range(20):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            flash(q, k, v, causal)
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b))
        res[causal] = statistics.median(ts)
        dense_flops = 4 * B * H * T * T * D
        print(
            f"causal={causal}: median {res[causal]:.4f} ms (min {min(ts):.4f}, max {max(ts):.4f}); "
            f"dense-FLOP rate {dense_flops / res[causal] / 1e9:.1f} TFLOP/s"
        )
    r = res[True] / res[False]
    print(f"time ratio causal/dense = {r:.5f} (tiles 128x64|128x128: 0.51563, 64x64: 0.50781, exact: 0.50012)")


def kernel_grids():
    from torch.profiler import ProfilerActivity, profile

    for d in (D, 64):
        q, k, v = inputs(d)
        for causal in (False, True):
            flash(q, k, v, causal)
            if DEV == "cuda":
                torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
                flash(q, k, v, causal)
                if DEV == "cuda":
                    torch.cuda.synchronize()
            path = os.path.join(tempfile.mkdtemp(), "t.json")
            p.export_chrome_trace(path)
            with open(path) as fh:
                ev = json.load(fh)["traceEvents"]
            for e in ev:
                if e.get("cat") == "kernel":
                    a = e.get("args", {})
                    print(
                        f"D={d} causal={causal}: kernel {e['name'][:400]}\n   grid {a.get('grid')} block "
                        f"{a.get('block')} regs {a.get('registers per thread')} smem {a.get('shared memory')} "
                        f"dur {e.get('dur')} us"
                    )
            ops = sorted({e["name"] for e in ev if e.get("cat") == "cpu_op"})
            print(f"D={d} causal={causal}: cpu ops {ops}")


def prof():
    q, k, v = inputs()
    torch.cuda.synchronize()
    flash(q, k, v, False)  # first flash launch: dense
    torch.cuda.synchronize()
    flash(q, k, v, True)  # second flash launch: causal
    torch.cuda.synchronize()
    print("prof done: launches in order dense, causal")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "info"
    if mode == "prof":
        prof()
    else:
        section("versions", versions)
        section("backend check", backend_check)
        section("timings (CUDA events, median of 20 after 5 warm-up)", timings)
        section("kernel names and launch grids (torch.profiler)", kernel_grids)

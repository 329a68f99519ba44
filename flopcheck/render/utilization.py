"""A verdict on a claim of utilization or time as text, a JSON-ready dict and a Markdown row: the run, one sample's
work, the arithmetic, and the pair of readings that gives the claim's digits."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from flopcheck.auditor.utilization import UtilizationVerdict

if TYPE_CHECKING:
    from flopcheck.auditor.claims import Claim

WHAT = {"mfu": "MFU", "hfu": "HFU", "flops": "FLOP/s", "throughput": "throughput", "cost": "cost"}


def percent(x: Fraction) -> str:
    """0.0660 -> '6.60%': three significant digits."""
    return f"{float(x) * 100:#.3g}".rstrip(".") + "%"


def _value(v: UtilizationVerdict, x: Fraction) -> str:
    """The claim's quantity in its own unit: a percentage, or TFLOP/s."""
    return f"{float(x) / 1e12:,.4g} TFLOP/s" if v.claim.rate.kind == "flops" else percent(x)


def headline(v: UtilizationVerdict) -> str:
    """The verdict in one sentence: the pair that gives the digits and the true value, or what the rate means."""
    c, r, j = v.claim, v.claim.rate, v.job
    peak = f"{j.gpus} x {j.gpu.name}'s {j.dtype.upper()} dense peak"
    if r.kind in ("throughput", "cost"):
        means = f"{c.text} means MFU {percent(v.mfu)} (HFU {percent(v.hfu)}) of {peak}"
        return means + ("" if v.mfu <= 1 and v.hfu <= 1 else ": over 100%, no run on these GPUs does that")
    written = _written(c)
    true = f"the true {WHAT[r.kind]} is {_value(v, v.true_value)}"
    if v.best is None:
        return f"{written} is no reading of this run's FLOPs and peak; {true}"
    return f"{written} is {v.best.words(r.kind)}; {true}"


def _written(c: Claim) -> str:
    """The claim's figure as written, without its model and scope words: '73.7% MFU'."""
    from flopcheck.auditor.rates import find

    found = find(c.text)
    return c.text[found[0].start("num") :].strip() if found else c.text


def to_text(v: UtilizationVerdict) -> str:
    """The verdict as a proof: the run, one sample's work by reading, the arithmetic, the verdict."""
    c, j, w = v.claim, v.job, v.work
    scope = "training" if w.training else "inference"
    lines = [
        f"{c.model} · {w.inputs} · {scope} · {j.gpus} x {j.gpu.name} ({j.gpu.tflops_of(j.dtype):g} TFLOPS "
        f"{j.dtype} dense each) · claim: {c.text}",
        "",
        "one sample's FLOPs (exact, on meta; 1 multiply-add = 2 FLOPs)",
    ]
    if w.training:
        lines += [
            f"  model FLOPs        {float(w.model):>26,.0f}  (the exact training step: forward + backward)",
            f"  executed FLOPs     {float(w.executed):>26,.0f}  (+ recompute: what the hardware runs)",
        ]
    lines.append(f"  forward            {float(w.forward):>26,.0f}")
    if w.causal:
        lines.append(f"  attention          {float(w.attention):>26,.0f}  (causal: half of it is needed work)")
    if c.rate.kind == "cost":
        lines.append(f"run: {_run_words(c)} = {v.total_flops:,} model FLOPs in {_written(c)}")
    else:
        lines.append(f"rate: {j.rate_words}")
    lines += [f"MFU {percent(v.mfu)}, HFU {percent(v.hfu)} of {j.gpus} x {j.gpu.tflops_of(j.dtype):g} TFLOPS", ""]
    lines.append(f"verdict: {v.verdict}: {headline(v)}")
    lines.append(f"source of {j.gpu.name}'s figures: {j.gpu.source}")
    return "\n".join(lines)


def _run_words(c: Claim) -> str:
    if c.tokens:
        return f"{c.tokens:,} tokens in sequences of {c.text_tokens:,}"
    return f"{c.steps:,} steps x batch {c.batch}"


def exact(x: Fraction) -> int | float:
    """A FLOP figure as a full integer where it is one (per sample of a batch it may not be)."""
    return x.numerator if x.denominator == 1 else float(x)


def to_dict(v: UtilizationVerdict) -> dict[str, Any]:
    """JSON-ready: the claim, the run, the work per sample (FLOPs), the true MFU and HFU, the pair that matches."""
    c, j, w = v.claim, v.job, v.work
    best = v.best
    peak = j.gpu.tflops_of(j.dtype)
    assert peak is not None  # utilization.denominators refused a dtype the GPU has no peak for
    return {
        "id": c.id,
        "model": c.model,
        "claim": c.text,
        "kind": c.rate.kind,
        "verdict": str(v.verdict),
        "gpu": j.gpu.name,
        "gpus": j.gpus,
        "dtype": j.dtype,
        "peak_flops_per_gpu": float(peak) * 1e12,
        "training": w.training,
        "unit": "FLOP",
        "model_flops_per_sample": exact(w.model),
        "executed_flops_per_sample": exact(w.executed),
        "forward_flops_per_sample": exact(w.forward),
        "samples_per_second": float(j.samples_per_second),
        "mfu": float(v.mfu),
        "hfu": float(v.hfu),
        "true_value": float(v.true_value),
        "numerator": best.top.name if best else None,
        "denominator": best.bottom.name if best else None,
        "explanation": headline(v),
        "run_flops": v.total_flops or None,
    }


def markdown_row(v: UtilizationVerdict) -> str:
    """One row of the audit's Markdown table."""
    c = v.claim
    written = _written(c)
    peak = f"{v.job.gpus} x {v.job.gpu.name}'s {v.job.dtype.upper()} dense peak"
    judged = v.best.words(c.rate.kind) if v.best else f"MFU {percent(v.mfu)} of {peak}"
    off = abs(Fraction(str(c.rate.value)) - v.true_value) / v.true_value if c.rate.kind in WHAT else 0
    if c.rate.kind in ("throughput", "cost"):
        return f"| {c.id} | {written} | {v.verdict} | {judged} | | | MFU {percent(v.mfu)} |"
    return f"| {c.id} | {written} | {v.verdict} | {judged} | | {float(off):.3%} | {_value(v, v.true_value)} |"

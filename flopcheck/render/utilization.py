"""A verdict on a claim of utilization or time as text, a JSON-ready dict and a Markdown row: the run, one sample's
work (the model's FLOPs, attention dense, and the work causal attention needs beside it), the arithmetic whose
printed factors multiply to what it says, and the pair of readings that gives the claim's digits (or the nearest)."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from flopcheck.auditor.rates import RateKind
from flopcheck.auditor.utilization import GpuJob, Pair, UtilizationVerdict

if TYPE_CHECKING:
    from flopcheck.auditor.claims import Claim

WHAT = {RateKind.MFU: "MFU", RateKind.HFU: "HFU", RateKind.FLOPS: "FLOP/s", RateKind.THROUGHPUT: "throughput"}
WHAT |= {RateKind.COST: "cost", RateKind.COMPUTE: "compute"}
HFU_UNKNOWN = "HFU unknown: give --recompute none, selective or full"


def percent(x: Fraction) -> str:
    """0.0660 -> '6.60%': three significant digits."""
    return f"{float(x) * 100:#.3g}".rstrip(".") + "%"


def _value(v: UtilizationVerdict, x: Fraction) -> str:
    """The claim's quantity in its own unit: a percentage, TFLOP/s, or FLOPs of the whole run."""
    kind = v.claim.rate.kind
    if kind is RateKind.COMPUTE:
        return f"{float(x):.4g} FLOPs ({float(x) / 8.64e19:,.4g} PF-days)"
    if kind is RateKind.FLOPS and v.mfu is not None:  # a FLOP/s checked on its run; with its share alone, the share
        return f"{float(x) / 1e12:,.4g} TFLOP/s"
    return percent(x)


def _peak_words(v: UtilizationVerdict, job: GpuJob) -> str:
    """The peak a run's MFU is of: the job's GPUs where their count is known, one GPU's where the claim is GPU-time
    (GPU-hours say nothing of how many GPUs)."""
    dtype = job.dtype.upper()
    if v.claim.rate.kind is RateKind.COST and not v.claim.rate.gpus and not v.claim.gpus:
        return f"{job.gpu.name}'s {dtype} dense peak, per GPU-second"
    return f"{job.gpus} x {job.gpu.name}'s {dtype} dense peak"


def _hfu(v: UtilizationVerdict) -> str:
    return f"HFU {percent(v.hfu)}" if v.hfu is not None else "HFU unknown: no recompute policy stated"


def _distance(p: Pair, v: UtilizationVerdict) -> str:
    """A convention's distance from the model's FLOPs: '3.6% below the model's FLOPs'."""
    policy = v.claim.recompute or v.claim.rate.recompute
    hfu = v.claim.rate.kind is RateKind.HFU and policy
    model = v.work.executed_with(policy) if hfu else v.work.model
    if not model or p.top.value == model:
        return "the model's FLOPs"
    off = (p.top.value - model) / model
    return f"{abs(float(off)):.1%} {'above' if off > 0 else 'below'} the model's FLOPs"


def headline(v: UtilizationVerdict) -> str:
    """The verdict in one sentence: the pair that gives the digits (a convention named with its distance from the
    model's FLOPs) and the true value, the nearest pair where none does, or what the rate means."""
    c, r, j = v.claim, v.claim.rate, v.job
    if r.kind in (RateKind.THROUGHPUT, RateKind.COST):
        assert j is not None and v.mfu is not None  # a time is read on its GPU
        needed = f"; the needed work's MFU {percent(v.needed_mfu)}" if v.needed_mfu is not None and _causal(v) else ""
        means = f"{c.text} means MFU {percent(v.mfu)} ({_hfu(v)}) of {_peak_words(v, j)}{needed}"
        over = v.mfu > 1 or (v.hfu or 0) > 1
        return means + ("" if not over else ": over 100%, no run on these GPUs does that")
    written = _written(c)
    if v.share is not None and v.mfu is None:  # a FLOP/s and its share, checked against themselves alone
        p = v.share
        said = f"{_value_share(p)} is {p.top.words} over {p.bottom.words}"
        return f"{written}: {said}; the share of the true peak is {percent(v.true_value)}"
    true = f"the true {WHAT[r.kind]} is {_value(v, v.true_value)}"
    share = f"; its share: {_value_share(v.share)} is the FLOP/s over {v.share.bottom.words}" if v.share else ""
    if v.best is None:
        near = v.nearest
        nearest = ""
        if near is not None:
            off = (Fraction(str(r.value)) - near.value) / near.value
            nearest = f" (nearest: {near.words(r.kind)}, {_value(v, near.value)}, {abs(float(off)):.1%} away)"
        return f"{written} is no reading of this run's FLOPs and peak{nearest}; {true}{share}"
    said = v.best.words(r.kind)
    if v.best.convention:
        said += f": a documented convention, {_distance(v.best, v)}"
    return f"{written} is {said}; {true}{share}"


def _value_share(p: Pair) -> str:
    return percent(p.value)


def _causal(v: UtilizationVerdict) -> bool:
    return v.work.causal and v.needed_mfu is not None


def _written(c: Claim) -> str:
    """The claim's figure as written, without its model and scope words: '73.7% MFU'."""
    from flopcheck.auditor.rates import find

    found = find(c.text)
    return c.text[found[0].start("num") :].strip() if found else c.text


def to_text(v: UtilizationVerdict) -> str:
    """The verdict as a proof: the run, one sample's work by reading, the arithmetic, the verdict."""
    c, j, w = v.claim, v.job, v.work
    scope = "training" if w.training else "inference"
    count = "" if j is None or c.rate.kind is RateKind.COST and not (c.rate.gpus or c.gpus) else f"{j.gpus} x "
    run = f" · {count}{j.gpu.name} ({j.gpu.tflops_of(j.dtype):g} TFLOPS {j.dtype} dense each)" if j else ""
    lines = [f"{c.model}{f' · {w.inputs}' if w.inputs else ''} · {scope}{run} · claim: {c.text}", ""]
    if w.model:
        lines += _work_lines(v)
    if c.rate.kind is RateKind.COMPUTE:
        lines.append(f"run: {_run_words(c)} x {float(w.model):,.0f} model FLOPs = {v.total_flops:,} FLOPs")
    elif c.rate.kind is RateKind.COST:
        lines.append(f"run: {_run_words(c)} = {v.total_flops:,} model FLOPs in {_written(c)}")
    elif j is not None and j.samples_per_second:
        lines.append(f"rate: {j.rate_words}")
    if j is not None and v.mfu is not None:
        lines += _arithmetic(v, j)
    if v.megatron_x is not None:
        lines.append(
            f"Megatron's time estimate 8TP/(nX) (Narayanan et al. 2021, arXiv:2104.04473 §5.1): this time means "
            f"X = {float(v.megatron_x) / 1e12:,.4g} TFLOP/s per GPU ({w.params:,} parameters, recompute in)"
        )
    lines += [""] if lines[-1] else []
    lines.append(f"verdict: {v.verdict}: {headline(v)}")
    if j is not None:
        lines.append(f"source of {j.gpu.name}'s figures: {j.gpu.source}")
    return "\n".join(lines)


def _work_lines(v: UtilizationVerdict) -> list[str]:
    """One sample's FLOPs: the model's (the truth), the needed work beside it, executed (with the stated policy)."""
    c, w = v.claim, v.work
    lines = ["one sample's FLOPs (exact, on meta; 1 multiply-add = 2 FLOPs)"]
    dense = ", attention dense" if w.causal else ""
    if w.training:
        lines.append(
            f"  model FLOPs        {float(w.model):>26,.0f}  (the exact training step: forward + backward{dense})"
        )
        if w.causal:
            lines.append(
                f"  needed FLOPs       {float(w.needed):>26,.0f}  (attention at the pairs its mask lets through)"
            )
        policy = c.recompute or c.rate.recompute
        if policy:
            executed = w.executed_with(policy)
            lines.append(
                f"  executed FLOPs     {float(executed):>26,.0f}  (+ recompute: what the hardware runs, {policy})"
            )
        else:
            lines.append(f"  executed FLOPs     {'unknown':>26}  (give --recompute none, selective or full)")
    lines.append(f"  forward            {float(w.forward):>26,.0f}")
    if w.causal:
        lines.append(
            f"  attention          {float(w.attention):>26,.0f}  (QK^T and attn@V; causal: half of it is needed work)"
        )
    return lines


def _arithmetic(v: UtilizationVerdict, j: GpuJob) -> list[str]:
    """The division, its printed factors multiplying to what it says: FLOPs x samples/s = FLOP/s; / peak = MFU."""
    assert v.mfu is not None  # a run with a time
    peak = j.gpu.tflops_of(j.dtype)
    needed = f" (the needed work: {percent(v.needed_mfu)})" if _causal(v) and v.needed_mfu is not None else ""
    if v.claim.rate.kind is RateKind.COST:
        return [_mfu_line(v, needed, f"{_peak_words(v, j)} ({peak:g} TFLOPS)")]
    flops = v.work.model * j.samples_per_second
    per_gpu = f", {float(flops) / j.gpus / 1e12:,.4g} per GPU" if j.gpus > 1 else ""
    return [
        f"model FLOP/s: {float(v.work.model):,.0f} x {float(j.samples_per_second):,.6g} samples/s = "
        f"{float(flops) / 1e12:,.4g} TFLOP/s for the job{per_gpu}",
        _mfu_line(v, needed, f"{j.gpus} x {peak:g} TFLOPS"),
    ]


def _mfu_line(v: UtilizationVerdict, needed: str, of: str) -> str:
    """'MFU 4.60%, HFU 4.63% of 16 x 989.4 TFLOPS', the HFU said unknown after it where no policy is stated."""
    assert v.mfu is not None  # a run with a time
    if v.hfu is None:
        return f"MFU {percent(v.mfu)}{needed} of {of}; {_hfu(v)}"
    return f"MFU {percent(v.mfu)}{needed}, HFU {percent(v.hfu)} of {of}"


def _run_words(c: Claim) -> str:
    if c.tokens:
        return f"{c.tokens:,} tokens in sequences of {c.text_tokens:,}"
    return f"{c.steps:,} steps x batch {c.batch}"


def exact(x: Fraction) -> int | float:
    """A FLOP figure as a full integer where it is one (per sample of a batch it may not be)."""
    return x.numerator if x.denominator == 1 else float(x)


def _float(x: Fraction | None) -> float | None:
    return None if x is None else float(x)


def to_dict(v: UtilizationVerdict) -> dict[str, Any]:
    """JSON-ready: the claim, the run, the work per sample (FLOPs), the true MFU and HFU, the pair that matches."""
    c, j, w = v.claim, v.job, v.work
    best = v.best
    peak = j.gpu.tflops_of(j.dtype) if j else None
    policy = c.recompute or c.rate.recompute or None
    return {
        "id": c.id,
        "model": c.model,
        "claim": c.text,
        "kind": c.rate.kind,
        "verdict": str(v.verdict),
        "gpu": j.gpu.name if j else None,
        "gpus": j.gpus if j else None,
        "dtype": j.dtype if j else None,
        "peak_flops_per_gpu": float(peak) * 1e12 if peak else None,
        "training": w.training,
        "unit": "FLOP",
        "model_flops_per_sample": exact(w.model),
        "needed_flops_per_sample": exact(w.needed),
        "recompute": policy,
        "executed_flops_per_sample": exact(w.executed_with(policy)) if policy and w.training else None,
        "forward_flops_per_sample": exact(w.forward),
        "samples_per_second": float(j.samples_per_second)
        if j and c.rate.kind not in (RateKind.COST, RateKind.COMPUTE)
        else None,
        "mfu": _float(v.mfu),
        "needed_mfu": _float(v.needed_mfu),
        "hfu": _float(v.hfu),
        "true_value": float(v.true_value),
        "numerator": best.top.name if best else None,
        "denominator": best.bottom.name if best else None,
        "convention": bool(best and best.convention),
        "nearest": [v.nearest.top.name, v.nearest.bottom.name] if v.nearest and not best else None,
        "explanation": headline(v),
        "run_flops": v.total_flops or None,
        "megatron_x_flops_per_gpu": _float(v.megatron_x),
    }


def markdown_row(v: UtilizationVerdict) -> str:
    """One row of the audit's Markdown table."""
    c, j = v.claim, v.job
    written = _written(c)
    pair = v.best or v.nearest
    if c.rate.kind in (RateKind.THROUGHPUT, RateKind.COST):
        assert j is not None and v.mfu is not None  # a time is read on its GPU
        judged = f"MFU {percent(v.mfu)} of {_peak_words(v, j)}"
        return f"| {c.id} | {written} | {v.verdict} | {judged} | | | MFU {percent(v.mfu)} |"
    judged = pair.words(c.rate.kind) if pair else (v.share.words(RateKind.MFU) if v.share else "")
    claimed = Fraction(str(c.rate.share if v.mfu is None and c.rate.share is not None else c.rate.value))
    off = abs(claimed - v.true_value) / v.true_value if v.true_value else 0
    return f"| {c.id} | {written} | {v.verdict} | {judged} | | {float(off):.3%} | {_value(v, v.true_value)} |"

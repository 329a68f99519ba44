"""A log's verdict as text and as a JSON-ready dict: the format and the lines skipped, the run's rate, one sample's
FLOPs, each logged figure's reading beside the truth, and the spread across the steady lines."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from flopcheck.auditor.logs import Figure, LogVerdict
from flopcheck.auditor.rates import RateKind

WHAT = {RateKind.MFU: "MFU", RateKind.FLOPS: "TFLOP/s per GPU"}


def _pct(x: Fraction) -> str:
    """0.436066 -> '43.61%': four significant digits, as logs print an MFU."""
    return f"{float(x) * 100:.4g}%"


def _hfu(v: LogVerdict) -> str:
    """The HFU, or why there is none: the run's recompute policy decides its executed FLOPs, and none was given."""
    return "unknown (give --recompute none|selective|full)" if v.hfu is None else _pct(v.hfu)


def _value(f: Figure, x: Fraction) -> str:
    """An MFU as a percentage, FLOP/s as TFLOP/s, four significant digits."""
    return _pct(x) if f.what is RateKind.MFU else f"{float(x) / 1e12:,.4g}"


def headline(v: LogVerdict, f: Figure) -> str:
    """One figure in a sentence: the logged value, the reading that gives it, the truth."""
    logged = f"logged {WHAT[f.what]} {f.logged.text or _value(f, f.logged.value)}"
    near = f"{f.reading.words(f.what)} ({_value(f, f.reading.value)})"
    reads = f"reads as {near}" if f.fits else f"is no reading of this run's FLOPs and peak; the nearest is {near}"
    return f"{logged} {reads}; the true {WHAT[f.what]} is {_value(f, f.true)}"


def to_text(v: LogVerdict) -> str:
    """The verdict as a proof: the log, the run, one sample's work, each figure, the verdict."""
    j, w = v.job, v.work
    steady = len(v.lines) - v.skipped
    zero = f", {v.dropped} with a rate of 0 left out" if v.dropped else ""
    lines = [
        f"{v.path} · {v.fmt.title} log ({v.fmt.shape}) · {len(v.lines) + v.dropped} lines read{zero}, {v.skipped} "
        f"warm-up skipped, {steady} steady",
        f"{v.model} · {w.inputs} · training · {j.gpus} x {j.gpu.name} ({j.gpu.tflops_of(j.dtype):g} TFLOPS "
        f"{j.dtype} dense each)",
        "",
        "one sample's FLOPs (exact, on meta; 1 multiply-add = 2 FLOPs)",
        f"  model FLOPs     {float(w.model):>22,.0f}  (the exact training step)",
        f"  executed FLOPs  {float(w.executed):>22,.0f}  (the attention kernel's recompute; no activation recompute)",
    ]
    if w.causal:
        lines.append(f"  attention       {float(w.attention):>22,.0f}  (causal: half of it is needed work)")
    lines += [
        f"rate (the median steady line, {v.median_line}): {v.rate_words} = {float(j.samples_per_second):,.6g} "
        f"samples/s for the job",
        f"true MFU {_pct(v.mfu)}, HFU {_hfu(v)}; spread across the {steady} steady lines {float(v.spread):.2%}",
    ]
    lines += [headline(v, f) for f in v.figures]
    lines += ["", f"verdict: {v.verdict.value}" + (f": {headline(v, v.figures[0])}" if v.figures else "")]
    return "\n".join(lines)


def _figure(f: Figure) -> dict[str, Any]:
    return {
        "what": f.what,
        "logged": float(f.logged.value),
        "reading": {
            "numerator": f.reading.top.name,
            "denominator": f.reading.bottom.name,
            "words": f.reading.words(f.what),
        },
        "reading_value": float(f.reading.value),
        "fits": f.fits,
        "true": float(f.true),
        "verdict": f.verdict.value,
    }


def _exact(x: Fraction) -> int | float:
    """A FLOP count: the full integer where it is one (per sample of a batch it divides), else a float."""
    return x.numerator if x.denominator == 1 else float(x)


def to_dict(v: LogVerdict) -> dict[str, Any]:
    """JSON-ready: full integers where the count gives them, fractions as floats."""
    return {
        "log": v.path,
        "format": v.fmt.name,
        "model": v.model,
        "lines": len(v.lines) + v.dropped,
        "zero_rate_dropped": v.dropped,
        "warmup_skipped": v.skipped,
        "median_line": v.median_line,
        "gpu": v.job.gpu.name,
        "gpus": v.job.gpus,
        "dtype": v.job.dtype,
        "samples_per_second": float(v.job.samples_per_second),
        "rate": v.rate_words,
        "model_flops_per_sample": _exact(v.work.model),
        "executed_flops_per_sample": _exact(v.work.executed),
        "mfu": float(v.mfu),
        "hfu": None if v.hfu is None else float(v.hfu),
        "spread": float(v.spread),
        "figures": [_figure(f) for f in v.figures],
        "verdict": v.verdict.value,
    }

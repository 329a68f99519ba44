"""An Estimate as text and as a JSON-ready dict."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flopcheck.fmt import commas, si, table
from flopcheck.render import hang

if TYPE_CHECKING:  # the estimates render themselves through this module: no import back
    from flopcheck.arithmetic import Estimate, ExactEstimate, Shown, TrainingEstimate


def _secs(s: float) -> str:
    """0.167 -> '0.167 s', 4.68 -> '4.68 s', 1494 -> '24.9 min'."""
    return f"{s:.3g} s" if s < 1 else f"{s:.2f} s" if s < 600 else f"{s / 60:.1f} min"


def _roofline(e: Estimate | ExactEstimate) -> list[str]:
    """The roofline and the time, for either estimate."""
    g = e.gpu
    return [
        "roofline (weights read once per forward, bf16)",
        f"  weights          {commas(e.params)} parameters = {e.weight_bytes / 1e9:.1f} GB",
        f"  intensity        {e.arithmetic_intensity:,.0f} FLOPs per weight byte vs {g.name}'s ridge "
        f"{g.ridge:,.0f}: {e.bound}-bound",
        "",
        f"time = FLOPs / (MFU x peak) = FLOPs / ({e.mfu:g} x {g.tflops:g} TFLOPS)",
        f"  per step {_secs(e.step_seconds)}, per generation {_secs(e.seconds)}",
    ]


def _formula_text(e: Estimate) -> str:
    c, g = e.config, e.gpu
    scope = " x ".join([f"{e.scope.steps} steps"] + (["CFG"] if e.scope.cfg else []))
    lines = [
        f"{e.name} · {c.describe_input()} · batch {e.batch} · {scope} · {g.name} "
        f"({g.tflops:g} TFLOPS dense bf16, {g.tbps:g} TB/s) · MFU {e.mfu:g}",
        "",
        "FLOPs (exact count; 1 multiply-add = 2 FLOPs)",
        f"  per forward      {commas(e.flops_per_forward):>28}  {si(e.flops_per_forward)}",
        f"  per step         {commas(e.flops_per_step):>28}  {si(e.flops_per_step)}"
        + ("  (CFG: conditional + unconditional)" if e.scope.cfg else ""),
        f"  per generation   {commas(e.flops):>28}  {si(e.flops)}  ({e.scope.steps} steps)",
        f"  attention        {e.attention_share:.1%} of a forward (QK^T + attn@V); N = {commas(e.attended_tokens)} "
        f"tokens attended vs the crossover 6d = {commas(e.crossover)}: "
        + ("attention-dominated" if e.attended_tokens > e.crossover else "linear-dominated"),
        "",
        *_roofline(e),
        "",
        "batching (the inference arithmetic's model: MFU(b) = min(0.6, MFU + 0.08*sqrt(b-1)); a batch's step does b "
        "x the FLOPs)",
        table(
            [
                [
                    str(r.batch),
                    f"{r.mfu:.0%}",
                    _secs(r.step_seconds),
                    f"{r.throughput:.3g}/s",
                    f"{r.throughput_x:.2f}x",
                    f"{r.latency_x:.2f}x",
                ]
                for r in e.batches()
            ],
            ["batch", "MFU", "step", "samples' steps", "throughput", "latency"],
            right={1, 2, 3, 4, 5},
        ),
        "",
        _shortcut_text(e),
        "",
        f"source of {g.name}'s figures: {g.source}",
    ]
    if not e.exact_matches:
        lines.append("WARNING: the exact count differs from the formula; the formula's numbers are shown")
    return "\n".join(lines)


def _shortcut_text(e: Estimate) -> str:
    c = e.config
    layers = c.depth + getattr(c, "single_depth", 0)
    diffs = e.differences()
    rows = [[d.part, commas(d.shortcut), commas(d.exact), f"{d.delta:+,}"] for d in diffs]
    rows.append(
        ["total", commas(e.shortcut_flops), commas(e.flops_per_forward), f"{e.flops_per_forward - e.shortcut_flops:+,}"]
    )
    diff_s = e.seconds - e.shortcut_seconds()
    return "\n".join(
        [
            f"the per-layer shortcut: L*(24*T*d^2 + 4*T^2*d) with L = {layers}, T = I + S = {commas(c.tokens)}, "
            f"d = {c.hidden_size} (FLOPs per forward)",
            table(rows, ["part", "shortcut", "exact", "exact - shortcut"], right={1, 2, 3}),
            *(f"  {d.part}: {d.why}" for d in diffs),
            f"  generation time: shortcut {_secs(e.shortcut_seconds())}, exact {_secs(e.seconds)} ({diff_s:+.3g} s, "
            f"{e.flops_per_forward / e.shortcut_flops - 1:+.2%})",
        ]
    )


def _formula_dict(e: Estimate) -> dict[str, Any]:
    c = e.config
    return {
        "model": e.name,
        "input": c.describe_input(),
        "batch": e.batch,
        "steps": e.scope.steps,
        "cfg": e.scope.cfg,
        "unit": "FLOP",
        "flops": e.flops,
        "flops_per_forward": e.flops_per_forward,
        "flops_per_step": e.flops_per_step,
        "attention_flops": e.attention_flops,
        "attention_share": e.attention_share,
        "attended_tokens": e.attended_tokens,
        "crossover_tokens": e.crossover,
        "params": e.params,
        "weight_bytes": e.weight_bytes,
        "arithmetic_intensity": e.arithmetic_intensity,
        "ridge": e.gpu.ridge,
        "bound": e.bound,
        "gpu": {"name": e.gpu.name, "tflops": e.gpu.tflops, "tbps": e.gpu.tbps, "source": e.gpu.source},
        "mfu": e.mfu,
        "step_seconds": e.step_seconds,
        "seconds": e.seconds,
        "batches": [vars(r) for r in e.batches()],
        "shortcut_flops": e.shortcut_flops,
        "shortcut_seconds": e.shortcut_seconds(),
        "differences": [
            {"part": d.part, "shortcut": d.shortcut, "exact": d.exact, "delta": d.delta, "why": d.why}
            for d in e.differences()
        ],
        "exact_matches_formula": e.exact_matches,
    }


def _needed(e: ExactEstimate) -> list[str]:
    """A forward's second figure (attention at its mask's pairs), as count prints it; none when unmasked."""
    from flopcheck.render.attention import needed_line  # lazy: torch-free door (flopcheck.exact's torch)

    return needed_line(e.flops_per_forward, e.measured.exact.attention, indent="  per forward, ")


def _exact_text(e: ExactEstimate) -> str:
    """A spec's estimate: its exact count per forward, step and generation, the roofline and the time."""
    m, g = e.measured, e.gpu
    scope = " x ".join([f"{e.scope.steps} steps"] + (["CFG"] if e.scope.cfg else []))
    return "\n".join(
        [
            f"{m.text} · {m.inputs} · {scope} · {g.name} ({g.tflops:g} TFLOPS dense bf16, {g.tbps:g} TB/s)"
            f" · MFU {e.mfu:g}",
            *m.notes,
            "",
            "FLOPs (exact count; 1 multiply-add = 2 FLOPs; no hand formula for this model)",
            f"  per forward      {commas(e.flops_per_forward):>28}  {si(e.flops_per_forward)}",
            f"  per step         {commas(e.flops_per_step):>28}  {si(e.flops_per_step)}"
            + ("  (CFG: conditional + unconditional)" if e.scope.cfg else ""),
            f"  per generation   {commas(e.flops):>28}  {si(e.flops)}  ({e.scope.steps} steps)",
            f"  attention        {e.attention_share:.1%} of a forward (QK^T + attn@V)",
            *_needed(e),
            "",
            *_roofline(e),
            *_decode_lines(e),
            "",
            f"source of {g.name}'s figures: {g.source}",
        ]
    )


def _decode_lines(e: ExactEstimate) -> list[str]:
    """A causal LM's generation (--generate) on the roofline: the decode steps' FLOPs per byte read."""
    from flopcheck.render.generation import roofline_lines  # lazy: torch-free door (flopcheck.exact's torch)

    g = getattr(e.measured, "generation", None)
    return ["", *roofline_lines(g, e.gpu)] if g is not None else []


def _decode_dict(e: ExactEstimate) -> dict[str, Any]:
    from flopcheck.exact.generation import roofline  # lazy: torch-free door (flopcheck.exact's torch)

    g = getattr(e.measured, "generation", None)
    return {"generation": {**g.to_dict(), **roofline(g, e.gpu)}} if g is not None else {}


def _exact_dict(e: ExactEstimate) -> dict[str, Any]:
    """JSON-ready: full integers."""
    m = e.measured
    return {
        "model": m.text,
        "inputs": m.inputs,
        "notes": list(m.notes),
        "gpu": e.gpu.name,
        "mfu": e.mfu,
        "steps": e.scope.steps,
        "cfg": e.scope.cfg,
        "unit": "FLOP",
        "reference": "exact count",
        "flops_per_forward": e.flops_per_forward,
        "flops_per_step": e.flops_per_step,
        "flops": e.flops,
        "attention_share": e.attention_share,
        "params": m.params,
        "weight_bytes": e.weight_bytes,
        "arithmetic_intensity": e.arithmetic_intensity,
        "bound": e.bound,
        "step_seconds": e.step_seconds,
        "seconds": e.seconds,
        **_decode_dict(e),
    }


def _training_text(e: TrainingEstimate) -> str:
    """Training compute: the exact step, per optimizer step and for the run, the 3x rule beside it, the time."""
    g, s = e.gpu, e.step
    hours = e.seconds / 3600
    return "\n".join(
        [
            f"{e.name} · {e.inputs} · training: {e.steps:,} steps x batch {e.batch} · {g.name} ({g.tflops:g} TFLOPS "
            f"dense bf16) · MFU {e.mfu:g}",
            "",
            "model FLOPs (exact training step on meta: forward + backward, no recompute; 1 multiply-add = 2 FLOPs)",
            f"  per step          {commas(e.flops_per_step):>34}  {si(e.flops_per_step)}  "
            f"(forward {commas(s.forward.total)} + backward {commas(s.backward.total)})",
            f"  whole run         {commas(e.flops):>34}  {si(e.flops)}  ({e.steps:,} steps)",
            f"  by the 3x rule    {commas(e.rule_flops):>34}  {si(e.rule_flops)}  (exact - rule: "
            f"{e.flops - e.rule_flops:+,} FLOPs)",
            "",
            f"time = model FLOPs / (MFU x peak) = FLOPs / ({e.mfu:g} x {g.tflops:g} TFLOPS)",
            f"  per step {_secs(e.step_seconds)}, whole run {hours:,.1f} GPU-hours ({hours / 24:,.1f} GPU-days)",
            f"  executed per step {commas(e.executed_per_step)} FLOPs ({s.kernel} attention kernel, checkpointing's "
            f"recompute): HFU = MFU x executed / model = {e.hfu:.4g}",
            *_measured_lines(e),
            "",
            f"source of {g.name}'s figures: {g.source}",
        ]
    )


def _measured_lines(e: TrainingEstimate) -> list[str]:
    """What a measured throughput means: MFU = model FLOPs per sample x samples/s / (GPUs x peak), and HFU."""
    if e.measured is None:
        return []
    mfu, hfu, words = e.measured
    recompute = (
        f"recomputing the {len(e.step.recomputed)} checkpointed module(s) given"
        if e.step.recomputed
        else "no activation recompute (none given: --checkpointed names what your run recomputes)"
    )
    return [
        "",
        f"measured: {words}",
        f"  MFU = model FLOPs per sample x samples/s / (GPUs x {e.gpu.tflops:g} TFLOPS) = {float(mfu):.4g} "
        f"({float(mfu) * 100:.3g}%)" + ("  over 100%: no run on these GPUs does that" if mfu > 1 or hfu > 1 else ""),
        f"  HFU = executed instead = {float(hfu):.4g} ({float(hfu) * 100:.3g}%), with {recompute}",
    ]


def _training_dict(e: TrainingEstimate) -> dict[str, Any]:
    """JSON-ready: full integers."""
    s = e.step
    return {
        "model": e.name,
        "inputs": e.inputs,
        "batch": e.batch,
        "steps": e.steps,
        "gpu": e.gpu.name,
        "mfu": e.mfu,
        "unit": "FLOP",
        "forward_flops": s.forward.total,
        "backward_flops": s.backward.total,
        "flops_per_step": e.flops_per_step,
        "flops": e.flops,
        "rule_3x_flops": e.rule_flops,
        "step_seconds": e.step_seconds,
        "seconds": e.seconds,
        "gpu_hours": e.seconds / 3600,
        "model_flops_per_step": e.flops_per_step,
        "executed_flops_per_step": e.executed_per_step,
        "attn_kernel": s.kernel,
        "hfu": e.hfu,
        **_measured_keys(e),
    }


def _measured_keys(e: TrainingEstimate) -> dict[str, Any]:
    """--throughput's keys: the MFU and HFU it means (absent without one)."""
    if e.measured is None:
        return {}
    mfu, hfu, words = e.measured
    return {"throughput": words, "throughput_mfu": float(mfu), "throughput_hfu": float(hfu)}


Rendering = tuple[Callable[[Any], str], Callable[[Any], dict[str, Any]]]  # (text, JSON-ready dict)
FORMULA: Rendering = (_formula_text, _formula_dict)  # the inference arithmetic on the hand formula (Estimate)
EXACT: Rendering = (_exact_text, _exact_dict)  # ... on a spec's exact count (ExactEstimate)
TRAINING: Rendering = (_training_text, _training_dict)  # a training run (TrainingEstimate)
# an estimate's type -> its rendering; filled by flopcheck.arithmetic, where the types are (they import this module,
# so it imports none of them)
RENDERERS: dict[type, Rendering] = {}


def to_text(e: Shown) -> str:
    """An estimate (of one generation or of training) as text, within COLUMNS: a longer line wrapped, its next lines
    4 columns in from its own."""
    lines = RENDERERS[type(e)][0](e).splitlines()
    return "\n".join(out for line in lines for out in hang(line, len(line) - len(line.lstrip()) + 4))


def to_dict(e: Shown) -> dict[str, Any]:
    """An estimate as a JSON-ready dict, full integers."""
    return RENDERERS[type(e)][1](e)

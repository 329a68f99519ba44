"""A training log read as a list of claims about one model and one run (`flopcheck audit --log`).

Each format is one registered LogFormat: the line it reads (written from the framework's own print statement, cited),
what each number on it is (a step time, a throughput of one GPU or of the job, TFLOP/s per GPU, an MFU in percent)
and the published formula the framework computes its figure with. The leading warm-up lines (a negative MFU, as
nanoGPT prints before its running mean starts, or a rate more than 10% off the log's median) are skipped and
counted. The steady state's median line is judged like a claim, by the utilization auditor's readings
(auditor.utilization: numerators x denominators): the pair whose arithmetic gives the logged MFU or TFLOP/s (the
framework's formula over which peak), the true MFU and HFU from the exact step at the line's rate, and the spread
of the true MFU across the steady lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from flopcheck import types
from flopcheck.auditor.rates import RateKind
from flopcheck.auditor.utilization import GpuJob, Pair, Reading, SampleWork, denominators, numerators
from flopcheck.errors import InputError
from flopcheck.types import Tier

WARMUP_LIMIT = Fraction(1, 10)  # a leading line whose rate is this far off the log's median is warm-up
CLOSE_LIMIT = Fraction(types.CLOSE_LIMIT)  # the verdict tiers' bounds, one place (flopcheck.types), as fractions
WRONG_LIMIT = Fraction(types.WRONG_LIMIT)
TERA = 10**12


@dataclass(frozen=True)
class Number:
    """A logged number as an exact fraction and half its last printed digit."""

    value: Fraction
    precision: Fraction
    text: str = ""  # as the log prints it: '42.10%', '141.18'


def number(text: str, scale: Fraction = Fraction(1)) -> Number:
    """'42.10' -> 42.10 with precision 0.005; '1,310,720' -> 1310720 (precision 0.5); times `scale`."""
    clean = text.replace(",", "")
    decimals = len(clean.partition(".")[2])
    shown = text + ("%" if scale == PERCENT else " ms" if scale == MS else "")
    return Number(Fraction(clean) * scale, Fraction(1, 2 * 10**decimals) * scale, shown)


@dataclass(frozen=True)
class Line:
    """What one log line says of its step: any of its time, MFU (a fraction), TFLOP/s per GPU (as FLOP/s), tokens/s
    (of one GPU or of the job), samples/s and steps/s (the job's), and the global batch."""

    number: int
    text: str
    step: int | None = None
    seconds: Number | None = None
    mfu: Number | None = None
    flops: Number | None = None  # FLOP/s per GPU
    tokens_per_second: Number | None = None
    tokens_per_gpu: bool = False
    samples_per_second: Number | None = None
    steps_per_second: Number | None = None
    global_batch: int | None = None


Reader = Callable[[re.Match[str]], dict[str, Any]]


@dataclass(frozen=True)
class LogFormat:
    """A framework's log line: its regex, how its groups read into a Line's fields, where the print statement is,
    and the published formula (flopcheck.published) its figures are computed with ('' where it logs none)."""

    name: str
    title: str
    shape: str  # the line, abridged, for the refusal that lists the formats
    source: str
    pattern: re.Pattern[str]
    read: Reader
    formula: str = ""
    peaks: tuple[tuple[str, float], ...] = ()  # the framework's own peak table, TFLOPS by GPU; '*': any other GPU

    def peak_for(self, gpu: str) -> float | None:
        """The peak (TFLOPS) the framework divides by on this GPU, None where it divides by none."""
        table = dict(self.peaks)
        return table.get(gpu, table.get("*"))


FORMATS: dict[str, LogFormat] = {}


def register(fmt: LogFormat) -> LogFormat:
    """Add a format to FORMATS; a second one of the same name is a bug."""
    if fmt.name in FORMATS:
        raise ValueError(f"log format {fmt.name!r} registered twice")
    FORMATS[fmt.name] = fmt
    return fmt


# torchtitan/tools/utils.py get_peak_flops at b5bcd76c (research/formulas.md §15): by device name, BF16 dense;
# a device it does not list falls back to the A100's 312
TORCHTITAN_PEAKS = (
    ("H100-SXM", 989.0),
    ("H200", 989.0),
    ("H100-NVL", 835.0),
    ("H100-PCIe", 756.0),
    ("B200", 2250.0),
    ("B300", 2250.0),
    ("GB200", 2500.0),
    ("L40S", 362.0),
    ("MI300X", 1300.0),
    ("MI325X", 1300.0),
    ("MI250X", 191.5),
    ("TPU-v4", 275.0),
    ("TPU-v5e", 197.0),
    ("TPU-v5p", 459.0),
    ("TPU-v6e", 918.0),
    ("*", 312.0),
)
PERCENT = Fraction(1, 100)
MS = Fraction(1, 1000)

# nanoGPT train.py at 3adf61e1: print(f"iter {iter_num}: loss {lossf:.4f}, time {dt*1000:.2f}ms,
# mfu {running_mfu*100:.2f}%")
# (running_mfu is -1 for the first 5 iterations: printed -100.00%); mfu = estimate_mfu(batch_size *
# gradient_accumulation_steps, dt): one process's sequences per iteration over the A100's 312e12
register(
    LogFormat(
        "nanogpt",
        "nanoGPT",
        "iter N: loss X, time Yms, mfu Z%",
        "karpathy/nanoGPT train.py and model.py GPT.estimate_mfu at 3adf61e1",
        re.compile(r"^iter (\d+): loss \S+, time ([\d.]+)ms, mfu (-?[\d.]+)%"),
        lambda m: {"step": int(m[1]), "seconds": number(m[2], MS), "mfu": number(m[3], PERCENT)},
        "nanogpt",
        (("*", 312.0),),  # "A100 GPU bfloat16 peak flops is 312 TFLOPS", whatever the GPU
    )
)
# nanochat scripts/base_train.py: print0(f"step {step:05d}/{num_iterations:05d} ({pct_done:.2f}%) | loss: ... |
# dt: {dt * 1000:.2f}ms | tok/sec: {tok_per_sec:,} | mfu: {mfu:.2f} | ..."), tok_per_sec = int(total_batch_size / dt)
# (the job's tokens), mfu = 100 x flops_per_token x total_batch_size / dt / (989e12 x world size); newer: 'bf16_mfu:'
register(
    LogFormat(
        "nanochat",
        "nanochat",
        "step N/M (P%) | loss: X | ... | dt: Yms | tok/sec: T | mfu: Z",
        "karpathy/nanochat scripts/base_train.py (its print0 of each step)",
        re.compile(r"^step (\d+)/\d+ .*?\| dt: ([\d.]+)ms \| tok/sec: ([\d,]+) \| (?:bf16_)?mfu: (-?[\d.]+)"),
        lambda m: {
            "step": int(m[1]),
            "seconds": number(m[2], MS),
            "tokens_per_second": number(m[3]),
            "mfu": number(m[4], PERCENT),
        },
        "torchtitan",  # estimate_flops: 6 x (parameters - the token embedding) + 12 l h q t, torchtitan's formula
        (("*", 989.0),),  # promised_flops_per_sec_h100 = 989e12, whatever the GPU
    )
)
# torchtitan torchtitan/components/metrics.py at b5bcd76c: f"step: {step:2}  loss: ...  memory: ...GiB(...%)  tps:
# {round(tps):,}  tflops: {tflops:,.2f}  mfu: {mfu:.2f}%"; tps = tokens / (seconds x non-data-parallel size): one
# GPU's; tflops = flops_per_token x tps / 1e12; mfu = 100 x that / get_peak_flops(device)
register(
    LogFormat(
        "torchtitan",
        "torchtitan",
        "step: N  loss: X  memory: ...  tps: T  tflops: F  mfu: Z%",
        "pytorch/torchtitan torchtitan/components/metrics.py at b5bcd76c",
        re.compile(r"step:\s*(\d+)\s+loss:.*?tps:\s*([\d,]+)\s+tflops:\s*([\d,.]+)\s+mfu:\s*(-?[\d.]+)%"),
        lambda m: {
            "step": int(m[1]),
            "tokens_per_second": number(m[2]),
            "tokens_per_gpu": True,
            "flops": number(m[3], Fraction(TERA)),
            "mfu": number(m[4], PERCENT),
        },
        "torchtitan",
        TORCHTITAN_PEAKS,
    )
)
# Megatron-LM megatron/training/training.py training_log at d98e8a64: ' iteration {:8d}/{:8d} |' ... ' elapsed time per
# iteration (ms): {:.1f} |' ' throughput per GPU (TFLOP/s/GPU): {throughput:.1f} |' ... ' global batch size: {:5d} |';
# throughput = num_floating_point_operations(args, batch_size) / (elapsed x 1e12 x world_size)
register(
    LogFormat(
        "megatron",
        "Megatron-LM",
        "iteration N/M | ... | elapsed time per iteration (ms): Y | throughput per GPU (TFLOP/s/GPU): F | ...",
        "NVIDIA/Megatron-LM megatron/training/training.py training_log at d98e8a64",
        re.compile(r"iteration\s+(\d+)/\s*\d+\s*\|.*?elapsed time per iteration \(ms\):\s*([\d.]+)"),
        lambda m: {"step": int(m[1]), "seconds": number(m[2], MS), **_megatron_rest(m.string)},
        "megatron",
    )
)
# MaxText metric_logger: f"completed step: {step}, seconds: {step_time:.3f}, TFLOP/s/device: {tflops:.3f},
# Tokens/s/device: {tokens:.3f}, total_weights: ..., loss: ..."; TFLOP/s/device from
# calculate_tflops_training_per_device
register(
    LogFormat(
        "maxtext",
        "MaxText",
        "completed step: N, seconds: Y, TFLOP/s/device: F, Tokens/s/device: T, loss: X",
        "AI-Hypercomputer/maxtext metric_logger (the 'completed step' line) and maxtext_utils at e591f30c",
        re.compile(
            r"completed step: (\d+), seconds: ([\d.]+), TFLOP/s/device: ([\d.]+)(?:, Tokens/s/device: ([\d.]+))?"
        ),
        lambda m: {
            "step": int(m[1]),
            "seconds": number(m[2]),
            "flops": number(m[3], Fraction(TERA)),
            **({"tokens_per_second": number(m[4]), "tokens_per_gpu": True} if m[4] else {}),
        },
        "maxtext",
    )
)
# transformers Trainer.train: metrics = speed_metrics("train", start, num_samples, num_steps) -> train_runtime,
# train_samples_per_second (the job's samples over the run), train_steps_per_second; logged as a dict or by
# log_metrics as '  train_samples_per_second = 12.8'
register(
    LogFormat(
        "hf",
        "the transformers Trainer",
        "{'train_runtime': R, 'train_samples_per_second': S, 'train_steps_per_second': P, ...}",
        "huggingface/transformers trainer.py Trainer._inner_training_loop and trainer_utils.speed_metrics",
        re.compile(r"train_(?:samples|steps)_per_second'?\"?\s*[:=]\s*([\d.]+)"),
        lambda m: _hf(m.string),
    )
)
# flopcheck's own Meter.line() and any key=value log: step=, seconds= (or time=, dt=, step_time=; 400ms), mfu=
# (a fraction, or 42.1%), tflops_per_gpu= (or tflops=), tokens_per_second= (the job's), samples_per_second=
register(
    LogFormat(
        "keyvalue",
        "key=value",
        "step=N seconds=Y mfu=Z tflops_per_gpu=F samples_per_second=S",
        "flopcheck.mfu.Utilization.line",
        re.compile(r"\b(?:seconds|step_time|time|dt|mfu|tflops|tflops_per_gpu|samples_per_second)=[\d.]"),
        lambda m: _keyvalue(m.string),
    )
)


def _megatron_rest(text: str) -> dict[str, Any]:
    """Megatron's optional fields: throughput per GPU (TFLOP/s) and the global batch size."""
    out: dict[str, Any] = {}
    if t := re.search(r"throughput per GPU \(TFLOP/s/GPU\):\s*([\d.]+)", text):
        out["flops"] = number(t[1], Fraction(TERA))
    if b := re.search(r"global batch size:\s*(\d+)", text):
        out["global_batch"] = int(b[1])
    return out


def _hf(text: str) -> dict[str, Any]:
    """The Trainer's train_samples_per_second and train_steps_per_second (the job's, over the run)."""
    out: dict[str, Any] = {}
    for key, name in (("samples", "samples_per_second"), ("steps", "steps_per_second")):
        if m := re.search(rf"train_{key}_per_second'?\"?\s*[:=]\s*([\d.]+)", text):
            out[name] = number(m[1])
    return out


KEYS: dict[str, tuple[str, Fraction]] = {  # key -> (Line field, scale)
    "seconds": ("seconds", Fraction(1)),
    "step_time": ("seconds", Fraction(1)),
    "time": ("seconds", Fraction(1)),
    "dt": ("seconds", Fraction(1)),
    "mfu": ("mfu", Fraction(1)),
    "tflops": ("flops", Fraction(TERA)),
    "tflops_per_gpu": ("flops", Fraction(TERA)),
    "tokens_per_second": ("tokens_per_second", Fraction(1)),
    "samples_per_second": ("samples_per_second", Fraction(1)),
}


def _keyvalue(text: str) -> dict[str, Any]:
    """key=value pairs: the KEYS it knows, a time in ms or s, an MFU as a fraction or a percentage."""
    out: dict[str, Any] = {}
    for key, value, suffix in re.findall(r"\b(\w+)=(-?[\d.,]+(?:e[-+]?\d+)?)(ms|s|%)?", text):
        if key in ("step", "iter", "iteration"):
            out["step"] = int(value)
        elif key in KEYS:
            name, scale = KEYS[key]
            scale *= MS if suffix == "ms" else PERCENT if suffix == "%" else 1
            out[name] = _plain(value, scale)
    return out


def _plain(text: str, scale: Fraction) -> Number:
    """A number that may be in e-notation (the meter writes 6 significant digits)."""
    mantissa, _, exponent = text.replace(",", "").partition("e")
    n = number(mantissa, scale)
    shift = Fraction(10) ** int(exponent or 0)
    return Number(n.value * shift, n.precision * shift, text)


def read_lines(text: str, path: str = "") -> tuple[LogFormat, list[Line]]:
    """The log's format (the one that reads most lines) and its lines; a log no format reads is an InputError naming
    the formats."""
    found: dict[str, list[Line]] = {name: [] for name in FORMATS}
    for i, raw in enumerate(text.splitlines(), start=1):
        for fmt in FORMATS.values():
            m = fmt.pattern.search(raw)
            if m:
                found[fmt.name].append(Line(i, raw.strip(), **fmt.read(m)))
    best = max(FORMATS, key=lambda n: len(found[n]))
    if not found[best]:
        shapes = "; ".join(f"{f.title} ({f.shape})" for f in FORMATS.values())
        raise InputError(f"{path or 'the log'} has no line in a format flopcheck reads: {shapes}")
    return FORMATS[best], found[best]


@dataclass(frozen=True)
class RunShape:
    """What the command line says of the run: its GPUs, the sequences (samples) per iteration per GPU, the tokens
    per sample."""

    gpus: int = 1
    batch: int | None = None
    text_tokens: int | None = None


def samples_per_second(line: Line, run: RunShape) -> tuple[Fraction, str]:
    """The job's samples per second on this line, and how it was read; InputError naming what is missing."""
    g = run.gpus
    if line.seconds is not None and line.global_batch is not None:
        return line.global_batch / line.seconds.value, f"global batch {line.global_batch} / {_n(line.seconds)} s"
    if line.seconds is not None and run.batch is not None:
        rate = Fraction(run.batch * g) / line.seconds.value
        return rate, f"{run.batch} samples per iteration per GPU x {g} GPUs / {_n(line.seconds)} s"
    if line.tokens_per_second is not None:
        if not run.text_tokens:
            raise InputError(f"line {line.number} logs tokens/s: give the tokens per sample, --text-tokens 1024")
        per = g if line.tokens_per_gpu else 1
        shown = f"{_n(line.tokens_per_second)} tokens/s" + (f" per GPU x {g} GPUs" if per > 1 else "")
        return line.tokens_per_second.value * per / run.text_tokens, f"{shown} / {run.text_tokens:,} tokens per sample"
    if line.samples_per_second is not None:
        return line.samples_per_second.value, f"{_n(line.samples_per_second)} samples/s (the job's)"
    if line.steps_per_second is not None and run.batch is not None:
        rate = line.steps_per_second.value * run.batch * g
        return rate, f"{_n(line.steps_per_second)} steps/s x {run.batch} samples per step per GPU x {g} GPUs"
    raise InputError(
        f"line {line.number} gives a step time but not its samples: give --batch (samples per iteration per GPU, "
        f"gradient accumulation included)"
    )


def _n(x: Number) -> str:
    """A logged number for the rate's words: whole numbers with commas, others to 6 significant digits."""
    return f"{int(x.value):,}" if x.value.denominator == 1 else f"{float(x.value):,.6g}"


def zero_rate(line: Line) -> bool:
    """A line whose step time or throughput is 0 (a first step's, a timer not started): no rate to read."""
    numbers = (line.seconds, line.tokens_per_second, line.samples_per_second, line.steps_per_second)
    return any(n is not None and n.value <= 0 for n in numbers)


def warmup(lines: list[Line], rates: list[Fraction]) -> int:
    """How many leading lines are warm-up: a negative MFU (nanoGPT's -100% before its running mean), or a rate more
    than WARMUP_LIMIT off the median of the log's rates."""
    ordered = sorted(rates)
    median = ordered[(len(ordered) - 1) // 2]
    n = 0
    for line, rate in zip(lines, rates, strict=True):
        invalid = line.mfu is not None and line.mfu.value < 0
        if not invalid and abs(rate - median) <= WARMUP_LIMIT * median:
            break
        n += 1
    return n if n < len(lines) else 0


@dataclass(frozen=True)
class Figure:
    """A logged figure of the median steady line judged: MFU (a fraction) or FLOP/s per GPU; the pair of readings
    nearest it and whether it gives the printed digits; the truth; the verdict."""

    what: RateKind  # an MFU or a FLOP/s per GPU
    logged: Number
    true: Fraction
    reading: Pair
    fits: bool
    verdict: Tier


@dataclass(frozen=True)
class LogVerdict:
    """The verdict on a log: its format, the lines read and skipped, the steady state's rate, the true MFU and HFU,
    each logged figure judged, and the spread of the true MFU across the steady lines."""

    path: str
    model: str
    fmt: LogFormat
    lines: tuple[Line, ...]
    skipped: int
    job: GpuJob
    work: SampleWork
    rate_words: str
    mfu: Fraction
    hfu: Fraction | None  # None: the run's recompute policy not given, so its executed FLOPs are unknown
    spread: Fraction
    figures: tuple[Figure, ...] = field(default=())
    median_line: int = 0
    dropped: int = 0  # lines with a step time or throughput of 0

    @property
    def verdict(self) -> Tier:
        """The worst figure's verdict; a log of rates only: consistent unless the run is over 100% of the peak."""
        if not self.figures:
            return Tier.CONSISTENT if self.mfu <= 1 and (self.hfu or 0) <= 1 else Tier.WRONG
        order = [Tier.CONSISTENT, Tier.CLOSE, Tier.WRONG, Tier.UNEXPLAINED]
        return max((f.verdict for f in self.figures), key=order.index)

    @property
    def passed(self) -> bool:
        return self.verdict.passes

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1


def _fits(value: Fraction, logged: Number) -> bool:
    """The logged digits are the value's, rounded or truncated."""
    return abs(value - logged.value) <= logged.precision or logged.value <= value < logged.value + 2 * logged.precision


def framework_peak(fmt: LogFormat, job: GpuJob) -> list[Reading]:
    """The peak the framework's own table divides by on this GPU, where no other reading has it."""
    tflops = fmt.peak_for(job.gpu.name)
    bottoms = denominators(job.gpu, job.gpus, job.dtype)
    value = job.gpus * Fraction(str(tflops)) * TERA if tflops else None
    if value is None or any(b.value == value for b in bottoms):
        return []
    each = f"{job.gpus} x " if job.gpus > 1 else ""
    return [Reading("framework", f"{each}{fmt.title}'s own peak for {job.gpu.name}, {tflops:g} TFLOPS", value)]


def _pairs(what: RateKind, work: SampleWork, job: GpuJob, fmt: LogFormat | None = None) -> list[Pair]:
    """Every numerator x denominator reading of an MFU (the peaks, and the framework's own) or of FLOP/s per GPU
    (the job's / its GPUs)."""
    if what is RateKind.MFU:
        bottoms = denominators(job.gpu, job.gpus, job.dtype) + (framework_peak(fmt, job) if fmt else [])
    else:
        bottoms = [Reading("per_gpu", f"per GPU ({job.gpus} GPUs)", Fraction(job.gpus), True)]
    return [Pair(t, b, t.value * job.samples_per_second / b.value) for t in numerators(work) for b in bottoms]


def judge_figure(what: RateKind, logged: Number, work: SampleWork, job: GpuJob, fmt: LogFormat | None = None) -> Figure:
    """A logged MFU or FLOP/s judged like a claim: the pair that gives its digits (the truth first, then the
    framework's own formula and peak) or else the nearest, the truth, and the verdict (consistent: the true pair
    gives the digits; close: within 1%; wrong: further; unexplained: no pair gives the digits and the truth is over
    10% away; a documented convention of the work, as the needed work or a published formula over the true peak:
    close, named with its distance from the truth)."""
    pairs = _pairs(what, work, job, fmt)
    formula = fmt.formula if fmt else ""
    true = next(p for p in pairs if p.departures == 0)

    def key(p: Pair) -> tuple[bool, bool, int, Fraction]:
        """Giving the digits first; among those the truth, then the framework's own formula and peak; then nearest."""
        own = (formula != "" and p.top.formula == formula) + (p.bottom.name == "framework")
        return not _fits(p.value, logged), p.departures > 0, -own, abs(p.value - logged.value) / p.value

    best = min(pairs, key=key)
    fits = _fits(best.value, logged)
    off = abs(logged.value - true.value) / true.value
    if fits and best.departures == 0:
        tier = Tier.CONSISTENT
    elif fits and best.convention:  # a documented convention of the work (the needed work, a formula) over the truth
        tier = Tier.CLOSE
    elif not fits and off > WRONG_LIMIT:
        tier = Tier.UNEXPLAINED
    else:
        tier = Tier.CLOSE if off <= CLOSE_LIMIT else Tier.WRONG
    return Figure(what, logged, true.value, best, fits, tier)


def work_of_log(model: str, config: str | None, text_tokens: int | None, gpu: str, gpus: int, dtype: str) -> SampleWork:
    """One sample's training work of the model (the utilization auditor's, with the published formulas' readings)."""
    from flopcheck.auditor.claims import parse_claim
    from flopcheck.auditor.utilization import work_of

    scope: dict[str, Any] = {"training": True, "gpu": gpu, "gpus": gpus, "dtype": dtype, "config": config}
    if text_tokens:
        scope["text_tokens"] = text_tokens
    return work_of(parse_claim("1 samples/s", model=model, **scope))


def audit_log(
    path: str,
    model: str,
    *,
    gpu: str,
    gpus: int = 1,
    batch: int | None = None,
    text_tokens: int | None = None,
    config: str | None = None,
    dtype: str = "bf16",
    recompute: str | None = None,
) -> LogVerdict:
    """The verdict on a training log of `model` run on `gpus` x `gpu` (`batch`: samples per iteration per GPU,
    gradient accumulation included; `text_tokens`: tokens per sample; `recompute`: the run's activation recompute,
    none, selective or full: the HFU's executed FLOPs, unknown without it)."""
    from flopcheck.gpus import get_gpu

    if not Path(path).is_file():
        raise InputError(f"--log {path}: no such file; give the path of a training log")
    fmt, lines = read_lines(Path(path).read_text(errors="replace"), path)
    run = RunShape(gpus, batch, text_tokens)
    read = len(lines)
    lines = [line for line in lines if not zero_rate(line)]
    if not lines:
        raise InputError(f"{path}: every {fmt.title} line logs a step time or throughput of 0: nothing to divide by")
    rates = [samples_per_second(line, run) for line in lines]
    skipped = warmup(lines, [r for r, _ in rates])
    steady = list(zip(lines[skipped:], rates[skipped:], strict=True))
    work = work_of_log(model, config, text_tokens, gpu, gpus, dtype)
    g = get_gpu(gpu)
    peak = denominators(g, gpus, dtype)[0].value
    model_flops = next(r for r in numerators(work) if r.true).value
    executed = work.executed_with(recompute) if recompute else None
    by_rate = sorted(steady, key=lambda lr: lr[1][0])
    line, (per_second, words) = by_rate[(len(by_rate) - 1) // 2]
    job = GpuJob(g, gpus, dtype, per_second, words)
    truths = [model_flops * r / peak for _, (r, _) in steady]
    mean = model_flops * per_second / peak
    spread = (max(truths) - min(truths)) / mean
    figures = [
        judge_figure(what, value, work, job, fmt)
        for what, value in ((RateKind.MFU, line.mfu), (RateKind.FLOPS, line.flops))
        if value is not None
    ]
    return LogVerdict(
        path,
        model,
        fmt,
        tuple(lines),
        skipped,
        job,
        work,
        words,
        mean,
        None if executed is None else executed * per_second / peak,
        spread,
        tuple(figures),
        line.number,
        read - len(lines),
    )


__all__ = ["FORMATS", "LogFormat", "LogVerdict", "audit_log", "read_lines"]

"""Claims of utilization and time, the grammar: an MFU or HFU in %, a FLOP/s (with its share of the peak: '163
TFLOP/s per A100, 52% of peak'), a throughput (iterations, samples, images, tokens or videos per second, per GPU or
in all; seconds per step), a run's cost (GPU-minutes, -hours or -days, '30.84M H100 GPU-hours', 'N minutes on M
GPUs') or its compute in PF-days (1 PF-day = 10^15 FLOP/s x 86,400 s = 8.64e19 FLOPs), read from text into a Rate;
a recompute policy written after it ('with full recompute'); what each needs that the claim must state (`needs`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from flopcheck import checks
from flopcheck.errors import InputError
from flopcheck.types import Recompute, Word

PREFIXES = {"": 0, "k": 3, "K": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
SECONDS = {"s": 1, "sec": 1, "second": 1, "seconds": 1, "min": 60, "minute": 60, "minutes": 60, "h": 3600}
SECONDS |= {"hour": 3600, "hours": 3600, "hr": 3600, "hrs": 3600, "day": 86400, "days": 86400, "d": 86400}
SECONDS |= {"mins": 60}
MULTIPLIERS = {"": 0, "K": 3, "thousand": 3, "M": 6, "million": 6, "B": 9, "billion": 9}
PF_DAY = Decimal(10**15 * 86400)  # FLOPs: a petaFLOP/s for a day
RECOMPUTE = tuple(r.value for r in Recompute)  # activation recompute policies an HFU depends on
LIMIT = Decimal("1e30")  # no rate, time or share is past 10^30 or below 10^-30 of its unit: a typo


class Thing(Word):
    """What one unit of a throughput counts."""

    ITERATION = "iteration"  # an optimizer step (or a sampling step) of the whole batch
    SAMPLE = "sample"
    IMAGE = "image"
    TOKEN = "token"
    VIDEO = "video"


# what a throughput counts, as written -> the thing one unit of it is
WRITTEN = {
    Thing.ITERATION: ("it", "its", "iter", "iters", "iteration", "iterations", "step", "steps", "batch"),
    Thing.SAMPLE: ("sample", "samples", "seq", "seqs", "sequence", "sequences"),
    Thing.IMAGE: ("img", "imgs", "image", "images"),
    Thing.TOKEN: ("tok", "toks", "token", "tokens"),
    Thing.VIDEO: ("video", "videos", "vid", "vids", "clip", "clips"),
}
THINGS = {word: thing for thing, words in WRITTEN.items() for word in words}
_NUM = r"(?P<num>-?\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?)"
_PER_GPU = r"(?P<pergpu>\s*(?:/|per\s+)(?:gpu|chip|device|accelerator|tpu|core))?"
_MULT = r"(?P<mult>\s*(?:[kKMB]|thousand|million|billion)\b)?"
_TIME = r"(?P<unit>minutes?|mins?|hours?|hrs?|days?)"
_SHARE = r"(?:\s*,?\s*\(?(?P<share>\d[\d,]*(?:\.\d+)?)\s*%\s*(?:of\s+(?:the\s+)?(?:theoretical\s+)?peak|mfu)\)?)?"
# a recompute policy written after the rate: 'with full recompute', '(selective activation recomputation)'
_RECOMPUTE = (
    r"(?P<policy>\s*,?\s*\(?(?:with\s+)?(?P<recompute>full|selective|no)\s+(?:activation\s+)?"
    r"(?:recompute|recomputation|rematerialization|checkpointing)\)?)?"
)
_PATTERNS = (  # (kind, the value's text after the model) in the order tried
    (
        "flops",
        _NUM + r"\s*(?P<prefix>[kKMGTPE]?)flops?(?:(?P<persec>/s(?:ec)?|\s*per\s+second)(?P<pergpu>\s*(?:/|per\s+)"
        r"(?:gpu|chip|device|accelerator|(?P<pergpuname>[A-Za-z][\w.-]*?\d[\w.-]*)))?|(?P<pergpu2>\s*(?:/|per\s+)"
        r"(?:gpu|chip|device|accelerator)))" + _SHARE,
    ),
    ("percent", _NUM + r"\s*%\s*(?P<what>mfu|hfu)\b"),
    ("per_second", _NUM + r"\s*(?P<thing>[a-z]+)\s*(?:/\s*s|/sec|per\s+second)" + _PER_GPU),
    ("seconds_per", _NUM + r"\s*(?P<unit>s|sec|seconds?|ms)\s*(?:/\s*|per\s+)(?P<thing>it|iter|iteration|step|batch)"),
    ("gpu_time", _NUM + _MULT + r"\s*(?P<gpu>[A-Za-z][\w.-]*?\s+)?(?:gpu|tpu|chip|accelerator)[- ]?" + _TIME),
    ("wall_time", _NUM + r"\s*" + _TIME + r"\s+on\s+(?P<gpus>\d+)\s*(?:x\s*)?(?P<gpu>[A-Za-z][\w.-]*?)s?"),
    ("compute", _NUM + r"\s*(?P<unit>pf[- ]?days?|petaflop[- ]?(?:/s[- ])?days?|pfs[- ]?days?)"),
)
_GROUPED = re.compile(r"\d{1,3}(,\d{3})+(\.\d+)?([eE][+-]?\d+)?")


class RateKind(Word):
    """What a claim of utilization or time states: a share of the peak, a speed, or a run's time or compute."""

    MFU = "mfu"  # the model's FLOPs per second over the peak, a fraction
    HFU = "hfu"  # the hardware's FLOPs (recompute included) per second over the peak, a fraction
    FLOPS = "flops"  # FLOP/s
    THROUGHPUT = "throughput"  # things per second
    COST = "cost"  # GPU-seconds
    COMPUTE = "compute"  # a run's FLOPs (PF-days)


@dataclass(frozen=True)
class Rate:
    """A claim of utilization or time as written: its kind, the value in absolute units (a fraction for MFU/HFU,
    FLOP/s, things per second, GPU-seconds), half its last printed digit in the same units, and what it counts."""

    kind: RateKind
    value: Decimal
    precision: Decimal
    label: str  # the unit as written
    thing: Thing | None = None  # what a throughput counts (None: not a throughput)
    per_gpu: bool = False  # a throughput or FLOP/s of one GPU (else of the whole job)
    gpu: str = ""  # named in the text: '675 A100 GPU-days', '7 days on 8 A100s'
    gpus: int | None = None  # '7 days on 8 GPUs'
    written: str = ""  # the rate as written: '2.1 s/it'
    share: Decimal | None = None  # a FLOP/s quoted with its share of the peak: '52% of peak' -> 0.52
    share_precision: Decimal = Decimal(0)
    recompute: str = ""  # the recompute policy the text states: 'none', 'selective', 'full'

    def per_second(self) -> Decimal:
        """A throughput's things per second (seconds per step inverted)."""
        return self.value


def number(text: str, what: str) -> tuple[Decimal, Decimal]:
    """'5.7' -> (5.7, 0.05): a positive finite number with a point for decimals; its half-last-digit precision."""
    if "," in text and not _GROUPED.fullmatch(text.lstrip("-")):
        raise InputError(
            f"cannot read {text!r} in {what!r}: a comma groups thousands (1,234); write decimals with a point"
        )
    plain = text.replace(",", "")
    try:
        value = Decimal(plain)
    except InvalidOperation:
        raise InputError(f"cannot read a number in {what!r}: write it like 5.7") from None
    if not value.is_finite() or value <= 0:
        raise InputError(f"{what!r}: the number must be positive and finite, got {text}")
    if not 1 / LIMIT <= value <= LIMIT:
        raise InputError(f"{what!r}: {text} is out of range (10^-30 to 10^30): check the exponent")
    mantissa, _, exponent = plain.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return value, Decimal(5) * Decimal(10) ** (int(exponent or 0) - decimals - 1)


def find(text: str) -> tuple[re.Match[str], str] | None:
    """The rate in a claim's text, matched at its end, and its kind; None when the text is not a rate."""
    for kind, pattern in _PATTERNS:
        m = re.search(r"(?:^|\s)" + pattern + _RECOMPUTE + r"\s*$", text.strip(), flags=re.I)
        if m:
            return m, kind
    return None


def parse_rate(text: str) -> Rate:
    """A rate from its text: '45.5% MFU', '225 TFLOP/s per GPU', '5.7 it/s', '1.2 s/it', '1,350 img/s', '3,000
    tokens/s/GPU', '675 A100 GPU-days', '7 days on 8 A100s'."""
    found = find(text)
    if found is None:
        raise InputError(
            f"cannot read a rate in {text!r}: write '45.5% MFU', '225 TFLOP/s per GPU', '5.7 it/s', '2.1 s/it', "
            f"'1,350 img/s', '675 A100 GPU-days', '30.84M H100 GPU-hours', '90 minutes on 8 H100s' or '3,640 PF-days'"
        )
    m, kind = found
    value, precision = number(m.group("num"), text.strip())
    rate = _READERS[kind](m, value, precision)
    said = (m.group("recompute") or "").lower()
    written = text.strip()[m.start("num") : m.start("policy") if said else m.end()].strip()
    return replace(rate, written=written, recompute="none" if said == "no" else said)


def _percent(m: re.Match[str], value: Decimal, precision: Decimal) -> Rate:
    if value > 100:
        raise InputError(f"{m.group(0).strip()!r}: a utilization is at most 100% of the peak")
    what = RateKind(m.group("what").lower())  # the pattern matched mfu or hfu
    return Rate(what, value / 100, precision / 100, f"% {what.upper()}")


def _flops(m: re.Match[str], value: Decimal, precision: Decimal) -> Rate:
    scale = Decimal(10) ** PREFIXES[m.group("prefix")]
    per_gpu = bool(m.group("pergpu") or m.group("pergpu2"))
    gpu = m.group("pergpuname") or ""  # '163 TFLOP/s per A100'
    share, half = (None, Decimal(0))
    if m.group("share"):
        share, half = number(m.group("share"), m.group(0).strip())
        if share > 100:
            raise InputError(f"{m.group(0).strip()!r}: a share of the peak is at most 100%")
        share, half = share / 100, half / 100
    return Rate(
        RateKind.FLOPS,
        value * scale,
        precision * scale,
        "FLOP/s",
        per_gpu=per_gpu,
        gpu=gpu,
        share=share,
        share_precision=half,
    )


def _per_second(m: re.Match[str], value: Decimal, precision: Decimal) -> Rate:
    thing = THINGS.get(m.group("thing").lower())
    if thing is None:
        raise InputError(
            f"unknown throughput unit {m.group('thing')!r}: count it/s, samples/s, img/s, tokens/s or videos/s"
        )
    return Rate(RateKind.THROUGHPUT, value, precision, f"{thing}s/s", thing, per_gpu=bool(m.group("pergpu")))


def _seconds_per(m: re.Match[str], value: Decimal, precision: Decimal) -> Rate:
    scale = Decimal("0.001") if m.group("unit").lower() == "ms" else Decimal(1)
    seconds = value * scale
    # x s/it is 1/x it/s; its precision carried through the inverse: d(1/x) = dx / x^2
    return Rate(RateKind.THROUGHPUT, 1 / seconds, precision * scale / (seconds * seconds), "s/it", Thing.ITERATION)


def _gpu_time(m: re.Match[str], value: Decimal, precision: Decimal) -> Rate:
    """GPU-time: 'N [k|M|B|thousand|million|billion] [GPU name] GPU-minutes|hours|days', in GPU-seconds."""
    mult = (m.group("mult") or "").strip()
    scale = (
        Decimal(SECONDS[m.group("unit").lower()])
        * Decimal(10) ** MULTIPLIERS[mult.upper() if len(mult) == 1 else mult.lower()]
    )
    gpu = (m.group("gpu") or "").strip()
    return Rate(RateKind.COST, value * scale, precision * scale, f"GPU-{_unit(m)}", gpu=gpu)


def _unit(m: re.Match[str]) -> str:
    """A time unit as its plural word: 'hrs' -> 'hours'."""
    return {60: "minutes", 3600: "hours", 86400: "days"}[SECONDS[m.group("unit").lower()]]


def _compute(m: re.Match[str], value: Decimal, precision: Decimal) -> Rate:
    """A run's compute in PF-days, in FLOPs (1 PF-day = 10^15 FLOP/s x 86,400 s)."""
    return Rate(RateKind.COMPUTE, value * PF_DAY, precision * PF_DAY, "PF-days")


def _wall_time(m: re.Match[str], value: Decimal, precision: Decimal) -> Rate:
    scale = Decimal(SECONDS[m.group("unit").lower()])
    gpus = int(m.group("gpus"))
    if gpus < 1:
        raise InputError(f"{m.group(0).strip()!r}: a run is on 1 GPU or more")
    gpu = m.group("gpu")
    named = "" if gpu.lower().rstrip("s") in ("gpu", "chip", "tpu", "device", "accelerator") else gpu
    label = f"{_unit(m)} on {gpus} GPUs"
    return Rate(RateKind.COST, value * scale * gpus, precision * scale * gpus, label, gpu=named, gpus=gpus)


_READERS = {
    "percent": _percent,
    "flops": _flops,
    "per_second": _per_second,
    "seconds_per": _seconds_per,
    "gpu_time": _gpu_time,
    "wall_time": _wall_time,
    "compute": _compute,
}


def positive_whole(value: object, name: str) -> int:
    """A GPU count, batch or token count: checks.COUNT's whole number >= 1 (a YAML 8.0 read as 8; bool, 0, negative,
    NaN refused in one line)."""
    return checks.count(name, value)


def needs(rate: Rate, given: Mapping[str, Any]) -> str:
    """What the claim must state for this rate and does not ('' when nothing): the GPU (never a default), its count,
    the batch, the sequence length, the throughput an MFU was read from, an HFU's recompute policy, the steps or
    tokens of a run."""
    gpus = given.get("gpus") or rate.gpus
    named = given.get("gpu") or rate.gpu
    if rate.kind is RateKind.COMPUTE:
        return _length_needs(given)
    if not named:
        return f"{rate.written or rate.label} is read against a GPU's peak: name the GPU with --gpu, like --gpu H100"
    if rate.kind is RateKind.HFU and not (given.get("recompute") or rate.recompute):
        return "an HFU counts the recompute the run did: give --recompute none, selective or full"
    if rate.kind in (RateKind.MFU, RateKind.HFU, RateKind.FLOPS):
        if rate.kind is RateKind.FLOPS and rate.share is not None and not given.get("throughput"):
            return ""  # checked against itself and the datasheet: FLOP/s per GPU / the peak = the share
        if not given.get("throughput"):
            what = rate.label.strip("% ")
            return f"a {what} needs the throughput it was measured at: give --throughput, like '3.1 it/s'"
        inner = parse_rate(given["throughput"])
        if inner.kind is not RateKind.THROUGHPUT:
            return (
                f"--throughput {given['throughput']!r} is not a throughput: write it like '3.1 it/s' or '1,350 img/s'"
            )
        return _throughput_needs(inner, given, gpus, per_gpu=rate.per_gpu or rate.kind is not RateKind.FLOPS)
    if rate.kind is RateKind.THROUGHPUT:
        return _throughput_needs(rate, given, gpus, per_gpu=True)
    return _length_needs(given)


def _length_needs(given: Mapping[str, Any]) -> str:
    """A run's cost or compute needs its length: steps and batch, or tokens."""
    if not given.get("tokens") and not (given.get("steps") and given.get("batch")):
        return "a run's cost needs its length: give --steps and --batch (optimizer steps at that batch) or --tokens"
    return ""


def _throughput_needs(rate: Rate, given: Mapping[str, Any], gpus: int | None, per_gpu: bool) -> str:
    """A throughput needs the batch when it counts iterations, and the GPU count when it is the whole job's and is
    read per GPU."""
    if rate.thing is Thing.ITERATION and not given.get("batch"):
        return f"{rate.label} counts iterations: give the batch one iteration trains on, like --batch 256"
    if rate.thing is Thing.TOKEN and not given.get("text_tokens"):
        return "tokens/s: give the sequence length the tokens come in, like --text-tokens 2048"
    if per_gpu and not rate.per_gpu and not gpus:
        return (
            f"{rate.label} is the whole job's: give the GPU count with --gpus N (or write it per GPU, like img/s/GPU)"
        )
    return ""

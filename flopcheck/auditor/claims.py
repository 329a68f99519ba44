"""Claims: a published FLOP figure as data, parsed from text like 'DiT-XL/2 118.64 GFLOPs'."""

from __future__ import annotations

import difflib
import math
import os
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import cached_property
from typing import Any

import yaml

from flopcheck.auditor import rates
from flopcheck.auditor.rates import Rate, RateKind
from flopcheck.errors import InputError
from flopcheck.sent import check_shape, read_sent
from flopcheck.specs import lms, parse
from flopcheck.subject import Subject, subject_of
from flopcheck.types import ModelPart, Space, Tier, Unit

PREFIXES = {"": 0, "K": 3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
# unit labels as people write them -> the unit the label names
LABELS = {
    "flop": Unit.FLOP,
    "flops": Unit.FLOP,
    "mac": Unit.MAC,
    "macs": Unit.MAC,
    "madd": Unit.MAC,
    "madds": Unit.MAC,
    "mult-adds": Unit.MAC,
    "multiply-adds": Unit.MAC,
}
_NUMBER = re.compile(
    r"(?:^|\s)(?P<num>-?\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(?P<prefix>[kKMGTPE]?)(?P<label>[A-Za-z-]*s?)\s*$"
)


MAX_VALUE = Decimal(10) ** 30  # FLOPs: beyond any model's training run; a bigger number is a typo
MAX_WHOLE = 2**31 - 1  # a batch or a step count past this is a typo (the command line's bound too)


_GROUPED = re.compile(r"\d{1,3}(,\d{3})+(\.\d+)?([eE][+-]?\d+)?")


class ClaimError(InputError):
    """A claim that cannot be read: the message names the problem and the fix."""


@dataclass(frozen=True)
class Claim:
    """A published number with what it says it covers; the value in absolute units of its label."""

    text: str  # as written: '118.64 Gflops'
    model: str  # a reference model name or a spec: 'timm:deit_small_patch16_224'
    value: Decimal  # absolute: 118.64e9
    label: str  # the unit label as written: 'Gflops'
    label_unit: Unit  # what the label names
    precision: Decimal  # half the last printed digit, absolute: 0.005e9
    resolution: tuple[int, int] | None = None
    frames: int | None = None
    steps: int = 1
    cfg: bool = False
    training: bool = False
    batch: int = 1
    part: ModelPart = ModelPart.MODEL  # the whole model; linear (block linears) or attention; DiT: embeddings or block
    space: Space = Space.LATENT  # latent, or pixel when the claim says it was counted on pixels
    source: str = ""
    id: str = ""
    input_shape: tuple[int, ...] | None = field(default=None)
    tolerance: Decimal | None = None  # a stated tolerance wider than the printed digits, absolute
    # the share of the model's multiply-adds a reading may leave out (or count that the model does not do) and
    # still pass: the users' own "<10% discrepancy"; not the tolerance, which is about the printed digits
    omission_limit: Decimal = Decimal("0.10")
    config: str | None = None  # diffusers:CLASS: its config.json
    inputs: str | None = None  # a spec's inputs: 'package.module:fn'
    expect: Tier | None = None  # a claims file's pinned verdict (checked by its tests), with its one-line reason
    why: str = ""
    rate: Rate | None = None  # a claim of utilization or time (auditor.rates): MFU, FLOP/s, throughput, cost
    gpu: str | None = None  # the GPU a rate was measured on
    gpus: int | None = None  # how many
    dtype: str | None = None  # the dtype whose peak a utilization is of (bf16 unless given)
    throughput: str | None = None  # an MFU, HFU or FLOP/s claim's measured throughput: '3.1 it/s'
    tokens: int | None = None  # a language model's run: the tokens it trained on
    text_tokens: int | None = None  # a language model's sequence length
    recompute: str | None = None  # the run's activation recompute: 'none', 'selective', 'full' (what an HFU needs)
    stated: frozenset[str] = frozenset()  # the scope keys the claim states: a stated steps 1 is not "not stated"

    def __post_init__(self) -> None:
        """A claim that says something impossible is refused, naming the field."""
        for name in ("steps", "batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ClaimError(f"{name} must be a whole number >= 1, got {value!r}")
            if value > MAX_WHOLE:  # past a float, and a meta tensor's size: a typo
                raise ClaimError(f"{name} must be at most {MAX_WHOLE:,}, got {value:.3g}")
        for name in ("frames", "text_tokens"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ClaimError(f"{name} must be a whole number >= 1, got {value!r}")
            if value is not None and value > MAX_WHOLE:
                raise ClaimError(f"{name} must be at most {MAX_WHOLE:,}, got {value:.3g}")
        for name in ("cfg", "training"):
            if not isinstance(getattr(self, name), bool):
                raise ClaimError(f"{name} must be true or false, got {getattr(self, name)!r}")
        _check_rate_fields(self)
        if self.training and (self.steps > 1 and self.rate is None or self.cfg):
            raise ClaimError(
                "a training step has no sampling steps or CFG: a claim covers either training or generation"
            )
        for name, word in (("part", ModelPart), ("space", Space)):
            if not isinstance(getattr(self, name), word):  # parse_claim reads the text once; inside, the member
                raise ClaimError(f"{name} must be a {word.__name__}, read by parse_claim, got {getattr(self, name)!r}")
        if self.expect is not None and not isinstance(self.expect, Tier):
            raise ClaimError(f"expect must be a Tier, read by parse_claim, got {self.expect!r}")
        if not (isinstance(self.omission_limit, Decimal) and 0 <= self.omission_limit < 1):
            raise ClaimError(f"omission_limit must be a fraction in [0, 1), like 0.10, got {self.omission_limit!r}")

    @cached_property
    def subject(self) -> Subject:
        """The claim's model resolved once, on the input the claim states (resolution, frames, shape, config)."""
        o = {"resolution": self.resolution, "frames": self.frames, "input_shape": self.input_shape}
        if self.text_tokens:
            o["text_tokens"] = self.text_tokens
        return subject_of(parse(self.model, **o, config=self.config, inputs=self.inputs))

    def on_input(self, resolution: tuple[int, int] | None, frames: int | None) -> Claim:
        """The claim stated on an input where it states none (its model's default: what its subject already runs
        on), carrying its resolved subject rather than resolving it again."""
        resolution, frames = self.resolution or resolution, self.frames or frames
        if (resolution, frames) == (self.resolution, self.frames):
            return self
        moved = replace(self, resolution=resolution, frames=frames)
        if "subject" in self.__dict__:  # a default input is the one the subject runs on: the same model
            moved.__dict__["subject"] = self.subject
        return moved

    @property
    def stated_factor(self) -> int:
        """What the claim's stated scope multiplies one forward by: batch x CFG x steps x 3 for training (the 3x
        rule a counter's forward is read by)."""
        return self.batch * (2 if self.cfg else 1) * self.steps * (3 if self.training else 1)

    @property
    def allowed(self) -> Decimal:
        """How far a reading may be and still match: the printed precision, or a stated tolerance."""
        return max(self.precision, self.tolerance or Decimal(0))

    @property
    def claimed_flops(self) -> Decimal:
        """The number in FLOPs, taking its label at its word."""
        return self.value * self.label_unit.flops_per_unit


def parse_value(text: str) -> tuple[Decimal, str, Unit, Decimal]:
    """'118.64 GFLOPs' -> (118.64e9, 'GFLOPs', FLOP, 0.005e9); '2.37e11 FLOPs' -> (2.37e11, ..., 0.005e11)."""
    m = _NUMBER.search(text.strip())
    if not m:
        raise ClaimError(f"cannot read a number and unit in {text!r}: write it like '118.64 GFLOPs' or '4.6 GMACs'")
    prefix, label = m.group("prefix"), m.group("label")
    if LABELS.get(label.lower()) is None and LABELS.get((prefix + label).lower()):  # '96 MACs': no prefix, M is MAC's
        prefix, label = "", prefix + label
    unit = LABELS.get(label.lower())
    if unit is None:
        raise ClaimError(f"unknown unit {prefix + label!r} in {text!r}: use FLOPs or MACs with a K/M/G/T/P prefix")
    num = m.group("num")
    if "," in num and not _GROUPED.fullmatch(num.lstrip("-")):
        raise ClaimError(
            f"cannot read {num!r} in {text!r}: a comma groups thousands (1,234,567); write decimals "
            f"with a point, like 118.64"
        )
    num = num.replace(",", "")
    if num.startswith("-") or float(num) == 0:
        raise ClaimError(f"a FLOP count must be positive, got {text.strip()!r}")
    mantissa, _, exponent = num.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    scale = Decimal(10) ** (PREFIXES[prefix] + int(exponent or 0))
    value = Decimal(mantissa) * scale
    if value > MAX_VALUE:
        raise ClaimError(f"{text.strip()!r} is more than 10^30: no FLOP count is; check the exponent and prefix")
    precision = Decimal(5) * Decimal(10) ** (-decimals - 1) * scale
    return value, prefix + label, unit, precision


RATE_KEYS = (
    "gpu",
    "gpus",
    "dtype",
    "throughput",
    "tokens",
    "text_tokens",
    "recompute",
)  # what a rate claim states of its run
SCOPE_KEYS = (
    "resolution",
    "frames",
    "steps",
    "cfg",
    "training",
    "batch",
    "part",
    "space",
    "source",
    "id",
    "input_shape",
    "tolerance",
    "omission_limit",
    "config",
    "inputs",
    "expect",
    "why",
    *RATE_KEYS,
)  # a Claim's fields past its number


def same_model(a: str, b: str) -> bool:
    """Two names of one model: equal, or two spellings of one published language model ('Llama 3 8B', 'Llama-3-8B')."""
    return a == b or (lms.find(a) is not None and lms.find(a) is lms.find(b))


def parse_claim(text: str, model: str | None = None, **scope: Any) -> Claim:
    """A claim from text: the model name before the number unless `model` is given; `scope`: what it covers
    (resolution, frames, steps, cfg, training, batch, space, part) and a named model's input (input_shape, config,
    inputs)."""
    unknown = [k for k in scope if k not in SCOPE_KEYS]
    if unknown:
        raise ClaimError(f"unknown scope {unknown[0]!r}: give {', '.join(SCOPE_KEYS)}")
    for key in (k for k in _TEXT_SCOPE if scope.get(k) is not None):
        if not isinstance(scope[key], str):  # a throughput of 5.7 was an AttributeError deep in the rate reader
            raise ClaimError(f"{key} must be a string, like {_LIKE.get(key, repr('...'))}, got {scope[key]!r}")
    if rates.find(text) is not None:
        return _rate_claim(text, model, scope)
    m = _NUMBER.search(text.strip())
    if not m:
        parse_value(text)  # raises with the message
    assert m is not None, text
    named = text.strip()[: m.start("num")].strip()
    if model and named and not same_model(named, model):
        raise ClaimError(f"the claim names {named!r} and the model given is {model!r}: name one model")
    chosen = model or named
    if not chosen:
        raise ClaimError(f"no model in {text!r}: write 'DiT-XL/2 118.64 GFLOPs' or name the model separately")
    value, label, unit, precision = parse_value(text.strip()[m.start("num") :])
    claim = Claim(text=text.strip(), model=chosen, value=value, label=label, label_unit=unit, precision=precision)
    if scope.get("omission_limit") is not None:
        scope["omission_limit"] = _fraction(scope["omission_limit"], "omission_limit")
    _words(scope)
    given = {k: v for k, v in scope.items() if v is not None}
    return replace(claim, **given, stated=frozenset(given))


def _rate_claim(text: str, model: str | None, scope: dict[str, Any]) -> Claim:
    """A claim of utilization or time: 'DiT-XL/2 training 5.7 it/s', 'LLM 45.5% MFU'; 'training' or 'inference'
    after the model says the scope; what the rate needs and the claim does not state is one line naming it."""
    found = rates.find(text)
    assert found is not None  # parse_claim sends it only a text that holds a rate
    m, _ = found
    words = text.strip()[: m.start("num")].split()
    training = None
    while words and words[-1].lower() in ("training", "inference", "trains", "train", "at"):
        training = training if training is not None else words[-1].lower() != "inference"
        words.pop()
    named = " ".join(words)
    if model and named and not same_model(named, model):
        raise ClaimError(f"the claim names {named!r} and the model given is {model!r}: name one model")
    chosen = model or named
    if not chosen:
        raise ClaimError(f"no model in {text!r}: write 'DiT-XL/2 training 5.7 it/s' or name the model separately")
    try:  # counts as whole numbers >= 1 first (a YAML 1.4e12 tokens is a float)
        counts = ("gpus", "tokens", "text_tokens")
        scope.update({k: rates.positive_whole(scope[k], k) for k in counts if scope.get(k) is not None})
        rate = rates.parse_rate(text.strip()[m.start("num") :])
        missing = rates.needs(rate, scope)
    except InputError as err:
        raise ClaimError(str(err)) from None
    if missing:
        raise ClaimError(missing)
    if scope.get("training") is None and training is not None:
        scope["training"] = training
    _words(scope)
    claim = Claim(text.strip(), chosen, rate.value, rate.label, Unit.FLOP, rate.precision, rate=rate)
    given = {k: v for k, v in scope.items() if v is not None}
    return replace(claim, **given, stated=frozenset(given))


def _words(scope: dict[str, Any]) -> None:
    """The scope's part, space and pinned verdict as their enums, read once here: a bad value is one line naming
    the choices."""
    try:
        if scope.get("part") is not None:
            scope["part"] = ModelPart.parse(scope["part"], "part")
        if scope.get("space") is not None:
            scope["space"] = Space.parse(scope["space"], "space", "latent or pixel")
        if scope.get("expect") is not None:
            scope["expect"] = Tier.parse(scope["expect"], "expect")
    except InputError as err:
        raise ClaimError(str(err)) from None


def _check_rate_fields(c: Claim) -> None:
    """A rate claim's run: a known GPU, whole counts >= 1, a dtype the GPU has a peak for; none on a FLOP claim."""
    from flopcheck.gpus import DTYPES, the_gpu

    given = [k for k in RATE_KEYS if getattr(c, k) is not None and k != "text_tokens"]
    if c.rate is None:
        if given:
            raise ClaimError(f"{given[0]} applies to a claim of utilization or time (MFU, FLOP/s, it/s, GPU-days)")
        return
    if c.part is not ModelPart.MODEL or c.space is not Space.LATENT or c.tolerance is not None:
        what = "part" if c.part is not ModelPart.MODEL else "space" if c.space is not Space.LATENT else "tolerance"
        raise ClaimError(f"{what} applies to a FLOP claim: a rate is read on the whole model, to its printed digits")
    if c.rate.gpus and c.gpus and c.rate.gpus != c.gpus:
        raise ClaimError(f"the claim says {c.rate.gpus} GPUs and gpus is {c.gpus}: state the count once")
    dropped = [k for k in ("gpu", "gpus", "dtype", "throughput") if getattr(c, k) is not None]
    if c.rate.kind is RateKind.COMPUTE and dropped:
        raise ClaimError(
            f"{dropped[0]} applies to a rate or a time; a run's compute in PF-days is FLOPs, read on no GPU"
        )
    if c.recompute is not None and c.recompute not in rates.RECOMPUTE:
        raise ClaimError(f"recompute must be one of {', '.join(rates.RECOMPUTE)}, got {c.recompute!r}")
    if c.recompute and c.rate.recompute and c.recompute != c.rate.recompute:
        raise ClaimError(f"the claim says {c.rate.recompute} recompute and recompute is {c.recompute}: state it once")
    if c.training and c.rate.kind not in (RateKind.COST, RateKind.COMPUTE) and "steps" in c.stated:
        raise ClaimError(
            "steps is a run's length: a training rate is per iteration; drop steps, or claim the run's time "
            "('3 days on 8 H100s') with steps and batch"
        )
    try:
        for name in ("gpus", "tokens", "text_tokens"):
            if getattr(c, name) is not None:
                rates.positive_whole(getattr(c, name), name)
        gpu = the_gpu(c.rate.gpu, c.gpu)
        if c.throughput is not None:
            rates.parse_rate(str(c.throughput))
    except InputError as err:
        raise ClaimError(str(err)) from None
    if c.dtype is not None and c.dtype not in DTYPES:
        raise ClaimError(f"dtype must be one of {', '.join(DTYPES)}, got {c.dtype!r}")
    if gpu is not None and gpu.tflops_of(c.dtype or "bf16") is None:
        has = ", ".join(d for d, _ in gpu.dense)
        raise ClaimError(f"{gpu.name} has no {c.dtype or 'bf16'} peak in its datasheet: give dtype one of {has}")


def _fraction(value: object, name: str) -> Decimal:
    """A number as an exact Decimal ('0.1' stays 0.1, not the nearest binary float); anything else is refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        raise ClaimError(f"{name} must be a number, like 0.10, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ClaimError(f"{name} must be a finite number, like 0.10, got {value!r}")
    try:
        number = Decimal(str(value).strip())
        if not number.is_finite():  # 'nan', 'inf' as text: no share of anything
            raise ClaimError(f"{name} must be a finite number, like 0.10, got {value!r}")
        return number
    except ArithmeticError:
        raise ClaimError(f"{name} must be a number, like 0.10, got {value!r}") from None


def parse_shape(text: str | None) -> tuple[int, ...] | None:
    """'1,3,224,224' -> (1, 3, 224, 224): whole numbers >= 1, at most 2^40 elements in all."""
    if text is None:
        return None
    try:
        shape = tuple(int(x) for x in str(text).replace(" ", "").split(","))
    except ValueError:
        raise ClaimError(f"input shape {text!r}: write whole numbers separated by commas, like 1,3,224,224") from None
    if not shape or min(shape) < 1:
        raise ClaimError(f"input shape {text!r}: every dimension must be >= 1, like 1,3,224,224")
    elements = 1
    for n in shape:
        elements *= n
    if elements > 2**40:
        raise ClaimError(f"input shape {text!r} has {elements:,} elements: more than 2^40, no model input is")
    return shape


def parse_resolution(text: str | int | None) -> tuple[int, int] | None:
    """'256' -> (256, 256); '1280x720' -> (1280, 720)."""
    if text is None:
        return None
    parts = str(text).lower().split("x")
    try:
        sides = tuple(int(p) for p in parts)
    except ValueError:
        raise ClaimError(f"cannot read resolution {text!r}: write 256, 512 or WxH like 1280x720") from None
    if len(sides) == 1:
        sides = sides * 2
    if len(sides) != 2 or min(sides) <= 0:
        raise ClaimError(f"cannot read resolution {text!r}: write 256, 512 or WxH like 1280x720")
    return sides


KEYS = (
    "id",
    "model",
    "claim",
    "resolution",
    "frames",
    "steps",
    "cfg",
    "training",
    "batch",
    "part",
    "space",
    "source",
    "tolerance",
    "omission_limit",
    "config",
    "inputs",
    "input_shape",
    "expect",
    "why",
    *RATE_KEYS,
)
_TEXT_SCOPE = ("gpu", "dtype", "throughput", "part", "space", "config", "inputs", "source", "expect", "why")
_LIKE = {"throughput": "'3.1 it/s'", "gpu": "'H100'", "dtype": "'bf16'", "part": "'attention'", "space": "'pixel'"}
_TYPES: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "model": str,
    "claim": (str, int, float),
    "resolution": (str, int),
    "frames": int,
    "steps": int,
    "cfg": bool,
    "training": bool,
    "batch": int,
    "part": str,
    "space": str,
    "source": str,
    "tolerance": (str, int, float),
    "omission_limit": (int, float),
    "config": str,
    "inputs": str,
    "input_shape": str,
    "expect": str,
    "why": str,
    "gpu": str,
    "gpus": int,
    "dtype": str,
    "throughput": str,
    "tokens": (int, float),
    "text_tokens": int,
    "recompute": str,
}


def load_claims(path: str) -> list[Claim]:
    """Claims from a YAML list of mappings (KEYS: model and claim required), checked against that schema: a problem
    is a ClaimError naming the file, the line and the key."""
    what = "a YAML list of claims (see claims/)"
    try:  # someone else's file: a plain file of bounded size, parsed within bounded depth and size
        text = read_sent(path, what)
    except InputError as err:
        raise ClaimError(str(err)) from None
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
        check_shape(data, path, what)
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f":{where.line + 1}" if where is not None else ""
        raise ClaimError(f"{path}{line}: not valid YAML ({getattr(err, 'problem', None) or err})") from None
    except RecursionError:
        raise ClaimError(f"{path}: nested deeper than flopcheck reads: give {what}") from None
    except InputError as err:
        raise ClaimError(str(err)) from None
    finally:
        loader.dispose()
    if not data:
        raise ClaimError(f"{path}: no claims; write a list of entries like - {{model: DiT-XL/2, claim: 118.64 GFLOPs}}")
    assert root is not None  # no document, no data: refused above
    if not isinstance(root, yaml.SequenceNode):
        raise ClaimError(f"{path}:{root.start_mark.line + 1}: a claims file is a list, one claim per entry (- ...)")
    claims: list[Claim] = []
    ids: dict[str, int] = {}
    for node, entry in zip(root.value, data):
        line = node.start_mark.line + 1
        claims.append(_entry(path, line, node, entry))
        if claims[-1].id and claims[-1].id in ids:
            raise ClaimError(f"{path}:{line}: id {claims[-1].id!r} is given twice (first on line {ids[claims[-1].id]})")
        ids[claims[-1].id] = line
    return claims


def _entry(path: str, line: int, node: yaml.Node, entry: Any) -> Claim:
    """One entry of a claims file as a Claim, every key checked."""
    if not isinstance(node, yaml.MappingNode) or not isinstance(entry, dict):
        raise ClaimError(
            f"{path}:{line}: an entry is a mapping with model and claim, like {{model: DiT-XL/2, claim: 118.64 GFLOPs}}"
        )
    seen: dict[str, int] = {}
    for key_node, _ in node.value:
        key, at = str(key_node.value), key_node.start_mark.line + 1
        if key in seen:
            raise ClaimError(f"{path}:{at}: key {key!r} is given twice in one entry")
        seen[key] = at
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ClaimError(f"{path}:{at}: unknown key {key!r}: {hint}the keys are {', '.join(KEYS)}")
        if not isinstance(entry[key], _TYPES[key]) or (isinstance(entry[key], bool) and _TYPES[key] is not bool):
            raise ClaimError(f"{path}:{at}: {key} must be {_type_words(_TYPES[key])}, got {entry[key]!r}")
    for key in ("model", "claim"):
        if key not in entry:
            raise ClaimError(f"{path}:{line}: the entry has no {key!r} (e.g. model: DiT-XL/2, claim: 118.64 GFLOPs)")
    try:
        scope = {
            k: entry.get(k)
            for k in (
                "steps",
                "cfg",
                "training",
                "batch",
                "part",
                "source",
                "id",
                "frames",
                "space",
                "inputs",
                "expect",
                "why",
                *RATE_KEYS,
            )
        }
        scope["resolution"] = parse_resolution(entry.get("resolution"))
        scope["input_shape"] = parse_shape(entry.get("input_shape"))
        if entry.get("config") is not None:  # a config path is read from the claims file's own folder
            near = os.path.join(os.path.dirname(os.path.abspath(path)), entry["config"])
            shipped = "/" not in entry["config"] and not os.path.exists(near)  # a config flopcheck ships, by name
            scope["config"] = entry["config"] if shipped else near
        if entry.get("tolerance") is not None:
            scope["tolerance"] = parse_value(str(entry["tolerance"]))[0]
        if entry.get("omission_limit") is not None:
            scope["omission_limit"] = entry["omission_limit"]
        return parse_claim(str(entry["claim"]), model=entry["model"], **scope)
    except ClaimError as err:
        raise ClaimError(f"{path}:{line}: {err}") from None


def _type_words(kind: type | tuple[type, ...]) -> str:
    names = {str: "text", int: "a whole number", float: "a number", bool: "true or false"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names[k] for k in kinds)

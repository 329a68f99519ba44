"""Claims: a published FLOP figure as data, parsed from text like 'DiT-XL/2 118.64 GFLOPs'."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from decimal import Decimal

from flopcheck.errors import InputError
from flopcheck.types import Unit

PREFIXES = {"": 0, "K": 3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
# unit labels as people write them -> the unit the label names
LABELS = {"flop": Unit.FLOP, "flops": Unit.FLOP, "mac": Unit.MAC, "macs": Unit.MAC, "madd": Unit.MAC,
          "madds": Unit.MAC, "mult-adds": Unit.MAC, "multiply-adds": Unit.MAC}
_NUMBER = re.compile(
    r"(?:^|\s)(?P<num>-?\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(?P<prefix>[kKMGTPE]?)(?P<label>[A-Za-z-]*s?)\s*$")


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
    part: str = "model"  # 'model'; 'linear' (block linears) or 'attention'; DiT: 'embeddings' or 'block'
    space: str = "latent"  # 'latent', or 'pixel' when the claim says it was counted on pixels
    source: str = ""
    id: str = ""
    input_shape: tuple[int, ...] | None = field(default=None)
    tolerance: Decimal | None = None  # a stated tolerance wider than the printed digits, absolute

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
    label = m.group("label")
    unit = LABELS.get(label.lower())
    if unit is None:
        raise ClaimError(f"unknown unit {m.group('prefix') + label!r} in {text!r}: use FLOPs or MACs "
                         f"with a K/M/G/T/P prefix")
    num = m.group("num").replace(",", "")
    if num.startswith("-") or float(num) == 0:
        raise ClaimError(f"a FLOP count must be positive, got {text.strip()!r}")
    mantissa, _, exponent = num.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    scale = Decimal(10) ** (PREFIXES[m.group("prefix")] + int(exponent or 0))
    value = Decimal(mantissa) * scale
    precision = Decimal(5) * Decimal(10) ** (-decimals - 1) * scale
    return value, m.group("prefix") + label, unit, precision


def parse_claim(text: str, model: str | None = None, **scope) -> Claim:
    """A claim from text: the model name before the number unless `model` is given."""
    m = _NUMBER.search(text.strip())
    if not m:
        parse_value(text)  # raises with the message
    named = text.strip()[: m.start("num")].strip()
    chosen = model or named
    if not chosen:
        raise ClaimError(f"no model in {text!r}: write 'DiT-XL/2 118.64 GFLOPs' or name the model separately")
    value, label, unit, precision = parse_value(text.strip()[m.start("num"):])
    claim = Claim(text=text.strip(), model=chosen, value=value, label=label, label_unit=unit, precision=precision)
    return replace(claim, **{k: v for k, v in scope.items() if v is not None})


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


def load_claims(path: str) -> list[Claim]:
    """Claims from a YAML list: model, claim (value with unit), and optionally resolution, steps,
    cfg, training, batch, part, source, id."""
    import yaml

    with open(path) as f:
        entries = yaml.safe_load(f) or []
    claims = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or "claim" not in e or "model" not in e:
            raise ClaimError(f"{path}: entry {i + 1} needs 'model' and 'claim' (e.g. claim: '118.64 GFLOPs')")
        scope = {k: e.get(k) for k in ("steps", "cfg", "training", "batch", "part", "source", "id", "frames", "space")}
        scope["resolution"] = parse_resolution(e.get("resolution"))
        if e.get("tolerance"):
            scope["tolerance"] = parse_value(str(e["tolerance"]))[0]
        claims.append(parse_claim(str(e["claim"]), model=e["model"], **scope))
    return claims

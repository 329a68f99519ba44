"""The numbers and switches a user gives, checked in one place: the command line's flags (flopcheck.flags parses the
text, then asks these rules) and the Python doors (flopcheck.api, flopcheck.testing, the pipelines) ask the same
rules, so `estimate(gpus=0)` is refused as `--gpus 0` is. A bool is not a number here (True is no GPU count).

Every refusal is an InputError naming the argument, what it must be, and what it got: one line, exit 2 at the CLI.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from flopcheck.errors import InputError

N = TypeVar("N", int, float)

MAX_WHOLE = 2**31 - 1  # a size, batch, step or frame count past this is a typo (and would overflow a meta tensor)
MAX_SECONDS = 7 * 24 * 3600  # a deadline past a week is a typo (and past time_t's range at 1e10 s: OverflowError)


@dataclass(frozen=True)
class Rule:
    """A number of a kind (int: whole numbers only; float: any real number) for which ok(value) holds; `what` is the
    words of the refusal: 'must be {what}'."""

    kinds: tuple[type, ...]
    ok: Callable[[float], bool]
    what: str

    def holds(self, value: object) -> bool:
        """value is of the rule's kinds (never a bool), finite, and ok."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not isinstance(value, self.kinds):
            return False
        try:
            number = float(value)
        except OverflowError:  # an int past a float's range: no count, size or deadline is that large
            return False
        return math.isfinite(number) and self.ok(number)

    def check(self, name: str, value: object) -> None:
        """Nothing when value holds; else an InputError: '{name} must be {what}, got {value!r}'."""
        if not self.holds(value):
            raise InputError(f"{name} must be {self.what}, got {_shown(value)}")

    def __call__(self, name: str, value: N) -> N:
        """value itself when it holds; else check's InputError."""
        self.check(name, value)
        return value


def _shown(value: object) -> str:
    """The value as given, at most 60 characters (a list or a huge number shown whole would be a wall of text)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# sizes, batches, steps, frames, GPUs, workers
WHOLE = Rule((int,), lambda v: 1 <= v <= MAX_WHOLE, f"a whole number from 1 to {MAX_WHOLE:,}")
SECONDS = Rule((int, float), lambda v: 0 < v <= MAX_SECONDS, f"a positive number of seconds, at most {MAX_SECONDS:,}")
FRACTION = Rule((int, float), lambda v: 0 < v <= 1, "a fraction in (0, 1], like 0.45")  # an MFU
SHARE = Rule((int, float), lambda v: 0 <= v < 1, "a fraction in [0, 1), like 0.10")  # an omission limit
COUNT = Rule((int,), lambda v: v >= 1, "a whole number >= 1")  # tokens: no upper bound (2e12 is a real run)


def whole(name: str, value: int) -> int:
    """A size, batch, step count, frame count or GPU count: an int from 1 to 2^31 - 1 (no bool, no float)."""
    return WHOLE(name, value)


def count(name: str, value: object) -> int:
    """A GPU, batch or token count as a file or a caller gives it: COUNT's whole number >= 1 (no upper bound: 2e12
    tokens is a real run), an integral float (YAML's 8.0) read as its int."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return COUNT(name, value)
    raise InputError(f"{name} must be {COUNT.what}, got {_shown(value)}")


def seconds(name: str, value: float) -> float:
    """A deadline: a finite number of seconds in (0, one week]."""
    return float(SECONDS(name, value))


def fraction(name: str, value: float) -> float:
    """A utilisation (MFU): a finite fraction in (0, 1]."""
    return float(FRACTION(name, value))


def number(name: str, value: float, low: float = 0.0, low_open: bool = True) -> float:
    """A finite real number above `low` (at it too, when not low_open): a FLOP figure, a tolerance, a rate."""
    bound = f"> {low:g}" if low_open else f">= {low:g}"
    rule = Rule((int, float), (lambda v: v > low) if low_open else (lambda v: v >= low), f"a finite number {bound}")
    return float(rule(name, value))


def maybe(rule: Callable[[str, N], N], name: str, value: N | None) -> N | None:
    """None (not given) as it is; anything else checked by rule."""
    return None if value is None else rule(name, value)


def switch(name: str, value: object) -> bool:
    """A yes/no option: True or False only ('no', 0 and None are not a switch: `cfg='no'` would turn it on)."""
    if not isinstance(value, bool):
        raise InputError(f"{name} must be True or False, got {_shown(value)}")
    return value


def maybe_switch(name: str, value: object) -> bool | None:
    """A yes/no option that may be left to a default: None, True or False."""
    return None if value is None else switch(name, value)


def text(name: str, value: object, like: str) -> str:
    """A string option (a throughput, a GPU, a claim); anything else is refused with an example of one."""
    if not isinstance(value, str):
        raise InputError(f"{name} must be a string, like {like}, got {_shown(value)}")
    return value


def names(name: str, value: object, like: str) -> list[str] | None:
    """None, or a list (tuple) of strings: counters, formulas, patterns; one string is a list of one."""
    if value is None or isinstance(value, str):
        return None if value is None else [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{name} must be a list of names, like {like}, got {_shown(value)}")
    return list(value)


def _wholes(value: object, n: int | None = None) -> bool:
    """A tuple or list of whole numbers from 1 to MAX_WHOLE (n of them, when given)."""
    return (
        isinstance(value, (tuple, list))
        and bool(value)
        and (n is None or len(value) == n)
        and all(WHOLE.holds(v) for v in value)
    )


def model_options(options: Mapping[str, object]) -> None:
    """A named model's input options, as the command line's flags allow them: batch, frames, text_tokens and
    input_size whole numbers; resolution one side or (W, H); input_shape whole numbers; attn, space, config and
    inputs text. (batch=0 counted 0 FLOPs; batch=True counted as 1.)"""
    for key in ("batch", "frames", "text_tokens", "input_size"):
        if options.get(key) is not None:
            WHOLE.check(key, options[key])
    resolution = options.get("resolution")
    if resolution is not None and not (WHOLE.holds(resolution) or _wholes(resolution, 2)):
        raise InputError(
            f"resolution must be one side or (W, H), whole numbers from 1 to {MAX_WHOLE:,}, like (1280, 720), got "
            f"{_shown(resolution)}"
        )
    shape = options.get("input_shape")
    if shape is not None and not _wholes(shape):
        raise InputError(
            f"input_shape must be whole numbers from 1 to {MAX_WHOLE:,}, like (1, 3, 224, 224), got {_shown(shape)}"
        )
    for key in ("attn", "space", "config", "inputs"):
        if options.get(key) is not None:
            text(key, options[key], "'sdpa'" if key == "attn" else "'pixel'" if key == "space" else "'...'")


# a config's counts and sizes: num_hidden_layers, hidden_size, attention_head_dim, in_channels (never an *_id)
COUNT_KEY = re.compile(r"^(num_\w+|\w+_(size|layers|heads|dim|channels))$")


def config_counts(config: object, where: str = "") -> None:
    """A config.json's layer, head and channel counts and sizes (COUNT_KEY), nested ones too, are >= 0: a negative
    one (num_hidden_layers: -2) builds a model of nonsense or fails far from the cause, so it is refused here."""
    if isinstance(config, dict):
        for key, value in config.items():
            path = f"{where}.{key}" if where else str(key)
            if isinstance(value, (dict, list)):
                config_counts(value, path)
            elif COUNT_KEY.match(str(key)) and isinstance(value, (int, float)) and not isinstance(value, bool):
                if value < 0:
                    raise InputError(f"{path} is {value!r}: a count or size is a whole number >= 0; fix the file")
    elif isinstance(config, list):
        for i, item in enumerate(config):
            config_counts(item, f"{where}[{i}]")


__all__ = [
    "COUNT",
    "FRACTION",
    "MAX_SECONDS",
    "MAX_WHOLE",
    "SECONDS",
    "SHARE",
    "WHOLE",
    "Rule",
    "config_counts",
    "fraction",
    "maybe",
    "maybe_switch",
    "model_options",
    "names",
    "number",
    "seconds",
    "switch",
    "text",
    "whole",
]

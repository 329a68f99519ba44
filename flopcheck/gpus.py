"""The accelerator table (flopcheck/data/gpus.yaml) as data: each GPU's (or TPU chip's) dense and 2:4-sparse tensor
peak per dtype, its memory bandwidth and the datasheet's own words. `estimate` and the utilization audit read it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from flopcheck.errors import InputError

DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")  # the dtypes a peak is printed for


@dataclass(frozen=True)
class GPU:
    """A GPU's dense BF16 peak (`tflops`) and memory bandwidth, each dtype's dense and sparse peak (TFLOPS, TOPS for
    int8), its family (its neighbours) and where the figures come from."""

    name: str
    tflops: float
    tbps: float
    source: str
    dense: tuple[tuple[str, float], ...] = ()
    sparse: tuple[tuple[str, float], ...] = ()
    family: str = ""
    datasheet: str = ""

    @property
    def peak(self) -> float:
        """FLOP/s."""
        return self.tflops * 1e12

    @property
    def ridge(self) -> float:
        """The roofline's knee, FLOPs per byte: peak / bandwidth."""
        return self.tflops / self.tbps

    def tflops_of(self, dtype: str, sparse: bool = False) -> float | None:
        """The dtype's peak in TFLOPS, dense or 2:4-sparse; None where the datasheet prints none."""
        return dict(self.sparse if sparse else self.dense).get(dtype)

    def peak_of(self, dtype: str) -> float:
        """The dtype's dense peak, FLOP/s; a dtype the GPU has no peak for is an InputError naming those it has."""
        tflops = self.tflops_of(dtype)
        if tflops is None:
            has = ", ".join(d for d, _ in self.dense)
            raise InputError(f"{self.name} has no {dtype} peak in its datasheet: use one of {has}")
        return tflops * 1e12


def _peaks(entry: dict[str, Any], key: str) -> tuple[tuple[str, float], ...]:
    """A mapping dtype -> TFLOPS as ordered pairs, every dtype known and every figure positive."""
    pairs = tuple((str(d), float(v)) for d, v in (entry.get(key) or {}).items())
    bad = [d for d, v in pairs if d not in DTYPES or not (math.isfinite(v) and v > 0)]
    if bad:
        raise ValueError(f"gpus.yaml: {entry['name']} {key} {bad[0]!r}: a dtype of {DTYPES}, a positive TFLOPS")
    return pairs


@lru_cache(maxsize=1)
def gpus() -> dict[str, GPU]:
    """name or alias (upper case) -> GPU, from flopcheck/data/gpus.yaml."""
    import yaml

    entries = yaml.safe_load(resources.files("flopcheck").joinpath("data/gpus.yaml").read_text())
    table = {}
    for e in entries:
        gpu = GPU(
            e["name"],
            float(e["tflops"]),
            float(e["tbps"]),
            e["source"],
            _peaks(e, "dense"),
            _peaks(e, "sparse"),
            e.get("family", ""),
            e.get("datasheet", ""),
        )
        for key in [e["name"], *e.get("aliases", [])]:
            table[str(key).upper()] = gpu
    return table


def names() -> list[str]:
    """Every GPU's name, in the table's order."""
    return list(dict.fromkeys(g.name for g in gpus().values()))


def get_gpu(name: str) -> GPU:
    """A GPU by name or alias, case-insensitive; an unknown one is an InputError with the nearest names."""
    import difflib

    table = gpus()
    key = str(name).strip().upper()
    if key not in table:
        close = difflib.get_close_matches(key, list(table), n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(dict.fromkeys(table[c].name for c in close))}? " if close else ""
        raise InputError(f"unknown GPU {name!r}: {hint}the table has {', '.join(names())}")
    return table[key]


def neighbours(gpu: GPU) -> list[GPU]:
    """The other GPUs of its family (H100-SXM: H100-PCIe, H100-NVL, H200), in the table's order."""
    seen = {g.name: g for g in gpus().values()}
    return [g for g in seen.values() if g.family == gpu.family and g.name != gpu.name and gpu.family]


def the_gpu(in_text: str | None, given: str | None) -> GPU | None:
    """The run's GPU, named in the claim's text, given (--gpu), or both: two names of one peak ('A100' in the text,
    --gpu A100-40GB: the same dense peaks) are one GPU, the given one; two peaks are refused."""
    text_gpu = get_gpu(in_text) if in_text else None
    given_gpu = get_gpu(given) if given else None
    if text_gpu and given_gpu and text_gpu.dense != given_gpu.dense:
        raise InputError(f"the claim names {in_text} and --gpu {given}, whose peaks differ: name one GPU")
    return given_gpu or text_gpu

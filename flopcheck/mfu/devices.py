"""The GPU a loop runs on, read from torch.cuda and matched to the GPU table (flopcheck/data/gpus.yaml).

torch reports a marketing name ('NVIDIA H100 80GB HBM3', 'NVIDIA A100-SXM4-40GB', 'AMD Instinct MI300X'); each rule
below names the words that pick one entry of the table, most specific first. A name no rule matches is refused in one
line asking for `gpu=`: a peak is never guessed (the A100 fallback of torchtitan and OLMo-core is a known mistake).
"""

from __future__ import annotations

import re

from flopcheck.errors import InputError
from flopcheck.gpus import GPU, get_gpu, names

# (patterns that must all match the device's name as words, upper case; the table's entry), most specific first.
# Word boundaries keep a GH200 ('NVIDIA GH200 480GB') from reading as an H200: it is unlisted, so refused.
DEVICE_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    ((r"\bH100\b", r"\bNVL\b"), "H100-NVL"),
    ((r"\bH100\b", r"\bPCIE\b"), "H100-PCIe"),
    ((r"\bH100\b",), "H100-SXM"),
    ((r"\bH200\b",), "H200"),
    ((r"\bGB200\b",), "GB200"),
    ((r"\bB200\b",), "B200"),
    ((r"\bB300\b",), "B300"),
    ((r"\bA100\b", r"\bPCIE\b", r"\b40GB\b"), "A100-40GB-PCIe"),
    ((r"\bA100\b", r"\bPCIE\b"), "A100-PCIe"),
    ((r"\bA100\b", r"\b40GB\b"), "A100-40GB"),
    ((r"\bA100\b",), "A100"),
    ((r"\bL40S\b",), "L40S"),
    ((r"\bRTX 5090\b",), "RTX5090"),
    ((r"\bRTX 4090\b",), "RTX4090"),
    ((r"\bMI325X\b",), "MI325X"),
    ((r"\bMI300X\b",), "MI300X"),
    ((r"\bMI250X\b",), "MI250X"),
)


def match_device(device_name: str) -> GPU:
    """The table's GPU for a device name as torch.cuda reports it; an unmatched one is an InputError asking gpu=."""
    upper = device_name.upper().replace("-", " ")
    for patterns, entry in DEVICE_RULES:
        if all(re.search(p, upper) for p in patterns):
            return get_gpu(entry)
    raise InputError(
        f"torch reports the GPU as {device_name!r}, which flopcheck's GPU table does not list: name it, "
        f"gpu='H100' (one of {', '.join(names())})"
    )


def current_gpu() -> GPU:
    """The GPU torch.cuda runs on (device 0), matched to the table; no CUDA device is an InputError asking for gpu=."""
    import torch  # lazy: torch-free import of flopcheck.mfu

    if not torch.cuda.is_available():
        raise InputError("no CUDA device to read the GPU from: name the GPU the MFU is of, gpu='H100'")
    return match_device(torch.cuda.get_device_name(0))

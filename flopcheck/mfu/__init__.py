"""MFU where it is made: a meter for the training loop (Meter), the exact FLOPs per token for torchtitan-style loops
(flops_per_token), and callbacks for Lightning (flopcheck.mfu.lightning.MFUCallback, extra `lightning`) and the
transformers Trainer (flopcheck.mfu.hf.MFUTrainerCallback, extra `transformers`). FLOPs are 2 per multiply-add."""

from __future__ import annotations

from flopcheck.mfu.devices import current_gpu, match_device
from flopcheck.mfu.meter import Meter, Utilization
from flopcheck.mfu.tokens import flops_per_token

__all__ = ["Meter", "Utilization", "current_gpu", "flops_per_token", "match_device"]

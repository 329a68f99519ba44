"""Autoregressive generation with a KV cache, counted exactly: a prefill of P tokens, then N decode steps of one
token each attending to the cache; FLOPs (2 per multiply-add) per step and per output token, and the elements each
decode step must read (weights and cache), for the roofline.

Bytes are elements x BYTES_PER_ELEMENT (bf16, as the inference arithmetic's roofline reads weights). A decode step
reads every weight once (an embedding table: only the rows it gathers, batch x width) and the whole cache it attends.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flopcheck.gpus import GPU

BYTES_PER_ELEMENT = 2  # bf16 weights and cache


@dataclass(frozen=True)
class Generation:
    """One generation: the prefill's FLOPs, each decode step's FLOPs, and what each decode step reads."""

    prompt: int  # P: prompt tokens, one prefill forward
    batch: int
    prefill: int  # FLOPs of the prefill (with the cache written)
    decode: tuple[int, ...]  # FLOPs of each decode step: one token in, attending to P + i + 1 cached positions
    weight_elements: int  # weights a decode step reads (embedding tables: the rows it gathers)
    # cache elements each decode step reads (transformers' cache, read back): K/V, and an SSM's conv and recurrent state
    cache_elements: tuple[int, ...]
    parameters: int = 0  # the model's parameters (0: not read): weight_elements is fewer when experts sit idle
    latent_per_token: int = 0  # MLA's latent per token: (kv_lora_rank + qk_rope_head_dim) x layers (0: no MLA)

    @property
    def steps(self) -> int:
        return len(self.decode)

    @property
    def decode_total(self) -> int:
        return sum(self.decode)

    @property
    def total(self) -> int:
        """Prefill + every decode step, FLOPs."""
        return self.prefill + self.decode_total

    def step_bytes(self, i: int) -> int:
        """Bytes decode step i reads: (weights + its cache) x BYTES_PER_ELEMENT."""
        return (self.weight_elements + self.cache_elements[i]) * BYTES_PER_ELEMENT

    def intensity(self, i: int) -> float:
        """FLOPs per byte read of decode step i."""
        return self.decode[i] / self.step_bytes(i)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every integer, and the derived totals (FLOPs per output token: decode steps' mean, batch
        sequences each)."""
        n = self.steps
        return {
            **{k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()},
            "steps": n,
            "unit": "FLOP",
            "decode_total": self.decode_total,
            "total": self.total,
            "decode_flops_per_output_token": self.decode_total // (n * self.batch) if n else 0,
            "decode_flops_per_output_token_exact": [self.decode_total, n * self.batch],
            "bytes_per_element": BYTES_PER_ELEMENT,
            "decode_bytes": [self.step_bytes(i) for i in range(n)],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Generation:
        return cls(
            d["prompt"],
            d["batch"],
            d["prefill"],
            tuple(d["decode"]),
            d["weight_elements"],
            tuple(d["cache_elements"]),
            d.get("parameters", 0),
            d.get("latent_per_token", 0),
        )


def roofline(g: Generation, gpu: GPU) -> dict[str, Any]:
    """Each decode step on a GPU's roofline (gpus.GPU): FLOPs per byte read against its ridge, and the time its
    reads take at full bandwidth (a lower bound on a bandwidth-bound step)."""
    n = g.steps
    read = sum(g.step_bytes(i) for i in range(n))
    worst = max(g.intensity(i) for i in range(n))
    return {
        "gpu": gpu.name,
        "ridge_flops_per_byte": gpu.ridge,
        "decode_intensity_first": g.intensity(0),
        "decode_intensity_last": g.intensity(n - 1),
        "decode_bound": "compute" if worst > gpu.ridge else "bandwidth",
        "decode_bytes_total": read,
        "decode_seconds_at_bandwidth": read / (gpu.tbps * 1e12),
        "decode_step_seconds_at_bandwidth_last": g.step_bytes(n - 1) / (gpu.tbps * 1e12),
    }

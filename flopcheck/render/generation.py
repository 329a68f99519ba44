"""A generation with a KV cache in words: prefill, decode steps, per output token, the bytes a step reads and the
decode steps on a GPU's roofline (the numbers: exact/generation.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flopcheck.exact.generation import BYTES_PER_ELEMENT, Generation, roofline
from flopcheck.fmt import commas, si

if TYPE_CHECKING:
    from flopcheck.gpus import GPU


def to_lines(g: Generation) -> list[str]:
    """The generation, step by step in short: prefill, first and last decode step, totals, per output token."""
    n, last = g.steps, g.steps - 1
    per_token = g.decode_total / (n * g.batch)
    return [
        f"generation with a KV cache (transformers' DynamicCache, on meta): a prefill of {g.prompt} tokens, then "
        f"{n} decode steps of one token each, batch {g.batch}; FLOPs:",
        f"  prefill                 {commas(g.prefill):>24}",
        f"  decode step 1           {commas(g.decode[0]):>24}  (attends {g.prompt + 1} positions)",
        f"  decode step {n:<11} {commas(g.decode[last]):>24}  (attends {g.prompt + n} positions)",
        f"  decode, {n} steps{'':<8}{commas(g.decode_total):>24}",
        f"  prefill + decode        {commas(g.total):>24} = {si(g.total)}",
        f"  per output token        {per_token:>24,.1f}  (decode FLOPs / (steps x batch))",
        f"  a decode step reads {commas(g.step_bytes(0))} bytes at step 1, {commas(g.step_bytes(last))} at step {n} "
        f"(weights {commas(g.weight_elements)} + cache {commas(g.cache_elements[last])} elements: K/V, and an SSM "
        f"layer's conv and recurrent state, at "
        f"{BYTES_PER_ELEMENT} bytes, bf16): {g.intensity(last):.2f} FLOPs per byte",
        *_weights_words(g),
        *_cache_words(g),
    ]


def _weights_words(g: Generation) -> list[str]:
    """Why a decode step reads fewer weights than the model has: its experts sit idle (none when it reads them all
    but the embedding rows)."""
    if not g.parameters or g.parameters - g.weight_elements <= g.parameters // 100:
        return []
    return [
        f"  weights read: {commas(g.weight_elements)} of {commas(g.parameters)} parameters: a mixture of experts "
        f"reads only the experts {g.batch} token(s) reach, at most min(E, batch x k) of E a layer"
    ]


def _cache_words(g: Generation) -> list[str]:
    """The cache per token, in elements and bytes; MLA's compressed latent named when that is what it holds."""
    positions = (g.prompt + g.steps) * g.batch
    per_token, rest = divmod(g.cache_elements[-1], positions) if positions else (0, 1)
    if rest or not per_token:
        return []
    line = f"  cache per token: {commas(per_token)} elements = {commas(per_token * BYTES_PER_ELEMENT)} bytes (bf16)"
    if g.latent_per_token and per_token == g.latent_per_token:
        line += ": MLA's compressed latent, (kv_lora_rank + qk_rope_head_dim) x layers, not K and V per head"
    return [line]


def roofline_lines(g: Generation, gpu: GPU) -> list[str]:
    """The decode steps on the roofline, in words."""
    r = roofline(g, gpu)
    return [
        *to_lines(g),
        f"  decode on {gpu.name}: {r['decode_intensity_first']:.2f} to {r['decode_intensity_last']:.2f} FLOPs per byte "
        f"read vs its ridge {gpu.ridge:.0f}: {r['decode_bound']}-bound; its {commas(r['decode_bytes_total'])} bytes "
        f"take {r['decode_seconds_at_bandwidth']:.4g} s at {gpu.tbps:g} TB/s "
        f"({r['decode_step_seconds_at_bandwidth_last'] * 1e3:.3g} ms for the last step)",
    ]

"""Wan 2.1 text-to-video (Wan team, "Wan: Open and Advanced Large-Scale Video Generative Models", 2025).

Video tokens only in the blocks: self-attention over the I video tokens, cross-attention from
them to the S = 512 umT5 tokens (keys and values projected from the text in every block), and an
MLP of width h (13824 for 14B, 8960 for 1.3B: not 4d). The timestep's 6d modulation is computed
once per sample (time_projection) and every block adds its own learned (1, 6, d) offset. Per block:
self q/k/v/o 8*I*d^2, cross q/o 4*I*d^2, cross k/v 4*S*d^2, FFN 4*I*d*h, self-attention 4*I^2*d,
cross-attention 4*I*S*d. Facts from the paper and the public configs (14B: d 5120, 40 heads,
40 blocks; 1.3B: d 1536, 12 heads, 30 blocks; patch (1, 2, 2), VAE (4, 8, 8)); the code is
flopcheck's own. Meta only.
"""

from __future__ import annotations

import torch
from torch import nn

from reference_models.configs import LatentTransformerConfig
from reference_models.layers import (
    FeedForward,
    apply_rope,
    attention,
    heads,
    layer_norm,
    merge_heads,
    rope_tables,
    sinusoid,
)


class WanAttention(nn.Module):
    """q from x, k and v from `source` (x itself, or the text), RMS-normed q and k over the full width."""

    def __init__(self, d: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.q, self.k, self.v, self.o = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.norm_q = nn.RMSNorm(d, eps=1e-6)
        self.norm_k = nn.RMSNorm(d, eps=1e-6)

    def forward(self, x: torch.Tensor, source: torch.Tensor, rope=None) -> torch.Tensor:
        q = heads(self.norm_q(self.q(x)), self.num_heads)  # (N, H, I, D/H)
        k = heads(self.norm_k(self.k(source)), self.num_heads)  # (N, H, I or S, D/H)
        v = heads(self.v(source), self.num_heads)  # (N, H, I or S, D/H)
        if rope is not None:
            q, k = apply_rope(q, *rope), apply_rope(k, *rope)
        return self.o(merge_heads(attention(q, k, v)))  # (N, I, D)


class WanBlock(nn.Module):
    """x += e2 * self_attn(adaLN(x)); x += cross_attn(LN(x), text); x += e5 * ffn(adaLN(x))."""

    def __init__(self, d: int, num_heads: int, ffn_dim: int):
        super().__init__()
        self.norm1 = layer_norm(d)
        self.self_attn = WanAttention(d, num_heads)
        self.norm3 = layer_norm(d, affine=True)
        self.cross_attn = WanAttention(d, num_heads)
        self.norm2 = layer_norm(d)
        self.ffn = FeedForward(d, ffn_dim)
        self.modulation = nn.Parameter(torch.empty(1, 6, d))

    def forward(self, x: torch.Tensor, e: torch.Tensor, context: torch.Tensor, rope) -> torch.Tensor:
        shift, scale, gate, shift2, scale2, gate2 = (self.modulation + e).unbind(1)  # 6 x (N, D)
        y = self.norm1(x) * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)  # (N, I, D)
        x = x + gate.unsqueeze(1) * self.self_attn(y, y, rope)  # (N, I, D)
        x = x + self.cross_attn(self.norm3(x), context)  # (N, I, D)
        y = self.norm2(x) * (1 + scale2.unsqueeze(1)) + shift2.unsqueeze(1)  # (N, I, D)
        return x + gate2.unsqueeze(1) * self.ffn(y)  # (N, I, D)


class WanHead(nn.Module):
    """x -> Linear(d, p_t*p_h*p_w*C_out)(adaLN(x)) with a learned (1, 2, d) offset on the per-sample t."""

    def __init__(self, d: int, out_dim: int):
        super().__init__()
        self.norm = layer_norm(d)
        self.head = nn.Linear(d, out_dim)
        self.modulation = nn.Parameter(torch.empty(1, 2, d))

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        shift, scale = (self.modulation + t.unsqueeze(1)).unbind(1)  # 2 x (N, D)
        return self.head(self.norm(x) * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1))  # (N, I, p^3*C_out)


class WanModel(nn.Module):
    """(latents (N, C, F', H', W'), umT5 tokens (N, S, 4096), t (N,)) -> velocity per latent cell."""

    flop_kinds = (
        ("patch_embedding", "conv"),
        ("time_embedding.*", "per_sample"),
        ("time_projection.*", "per_sample"),
        ("head.head", "head"),
    )

    def __init__(self, config: LatentTransformerConfig):
        super().__init__()
        self.config = config
        d = config.hidden_size
        self.patch_embedding = nn.Conv3d(config.in_channels, d, kernel_size=config.patch, stride=config.patch)
        self.text_embedding = nn.Sequential(nn.Linear(config.text_dim, d), nn.GELU(approximate="tanh"), nn.Linear(d, d))
        self.time_embedding = nn.Sequential(nn.Linear(config.freq_dim, d), nn.SiLU(), nn.Linear(d, d))
        self.time_projection = nn.Sequential(nn.SiLU(), nn.Linear(d, 6 * d))
        self.blocks = nn.ModuleList(WanBlock(d, config.num_heads, config.mlp_hidden) for _ in range(config.depth))
        self.head = WanHead(d, config.patch_volume * config.out_channels)

    def forward(self, x: torch.Tensor, context: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        cfg = self.config
        x = self.patch_embedding(x).flatten(2).transpose(1, 2)  # (N, I, D)
        e = self.time_embedding(sinusoid(t, cfg.freq_dim))  # (N, D)
        e6 = self.time_projection(e).unflatten(1, (6, cfg.hidden_size))  # (N, 6, D)
        context = self.text_embedding(context)  # (N, S, D)
        rope = rope_tables(cfg.grid, cfg.head_dim, device=x.device)  # 2 x (I, D/H)
        for block in self.blocks:
            x = block(x, e6, context, rope)  # (N, I, D)
        return self.head(x, e)  # (N, I, p^3*C_out)


def make_inputs(config: LatentTransformerConfig, batch: int) -> tuple:
    """(latents (N, C, F', H', W'), text tokens (N, S, 4096), t (N,)) on meta."""
    t, h, w = config.grid
    pt, ph, pw = config.patch
    return (
        torch.empty(batch, config.in_channels, t * pt, h * ph, w * pw, device="meta"),
        torch.empty(batch, config.text_tokens, config.text_dim, device="meta"),
        torch.empty(batch, device="meta"),
    )

"""MMDiT, the transformer of Stable Diffusion 3 (Esser et al., "Scaling Rectified Flow Transformers", 2024).

Two streams with separate weights, image tokens (I) and text tokens (S), meet in one joint
attention over T = I + S. Per joint block: adaLN-Zero for each stream (6 modulations from the
per-sample vector), q/k/v for each stream, attention over T, an output projection and a 4d MLP per
stream. The last block is "context pre-only": its text stream stops after q/k/v (one 2-way adaLN,
no text output projection, no text MLP). Facts from the paper and the public SD3-medium config
(24 blocks, d = 1536, 24 heads, patch 2, 16 latent channels, T5 4096-wide tokens, pooled CLIP 2048);
the code is flopcheck's own. Built on the meta device only.
"""

from __future__ import annotations

import torch
from torch import nn

from reference_models.configs import LatentTransformerConfig
from reference_models.layers import (
    FeedForward,
    MLPEmbedder,
    Modulation,
    TimestepMLP,
    attention,
    heads,
    layer_norm,
    merge_heads,
    modulate,
)

POS_EMBED_MAX = 192  # the learned-free sin-cos table is cropped from a 192 x 192 grid (a buffer, no weights)


class JointAttention(nn.Module):
    """q/k/v per stream, attention over [image; text]: 2*(I+S)*d*3d + 4*T^2*d + output projections."""

    def __init__(self, d: int, num_heads: int, context_pre_only: bool):
        super().__init__()
        self.num_heads = num_heads
        self.to_q, self.to_k, self.to_v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.add_q_proj, self.add_k_proj, self.add_v_proj = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.to_out = nn.Linear(d, d)
        self.to_add_out = None if context_pre_only else nn.Linear(d, d)

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        n_img = x.shape[1]
        q = heads(torch.cat([self.to_q(x), self.add_q_proj(c)], dim=1), self.num_heads)  # (N, H, T, D/H)
        k = heads(torch.cat([self.to_k(x), self.add_k_proj(c)], dim=1), self.num_heads)  # (N, H, T, D/H)
        v = heads(torch.cat([self.to_v(x), self.add_v_proj(c)], dim=1), self.num_heads)  # (N, H, T, D/H)
        out = merge_heads(attention(q, k, v))  # (N, T, D)
        x_out, c_out = out[:, :n_img], out[:, n_img:]  # (N, I, D), (N, S, D)
        return self.to_out(x_out), (self.to_add_out(c_out) if self.to_add_out is not None else None)


class JointBlock(nn.Module):
    """Both streams: x += g * attn(adaLN(x)); x += g * mlp(adaLN(x)); the text stream likewise unless pre-only."""

    def __init__(self, d: int, num_heads: int, mlp_hidden: int, context_pre_only: bool = False):
        super().__init__()
        self.context_pre_only = context_pre_only
        self.norm1 = Modulation(d, d, 6)
        self.norm1_context = Modulation(d, d, 2 if context_pre_only else 6)
        self.ln1, self.ln1_context = layer_norm(d), layer_norm(d)
        self.attn = JointAttention(d, num_heads, context_pre_only)
        self.ln2 = layer_norm(d)
        self.ff = FeedForward(d, mlp_hidden)
        if not context_pre_only:
            self.ln2_context = layer_norm(d)
            self.ff_context = FeedForward(d, mlp_hidden)

    def forward(self, x: torch.Tensor, c: torch.Tensor, vec: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shift, scale, gate, shift2, scale2, gate2 = self.norm1(vec)  # 6 x (N, D)
        c_mod = self.norm1_context(vec)
        x_out, c_out = self.attn(modulate(self.ln1(x), shift, scale), modulate(self.ln1_context(c), *c_mod[:2]))
        x = x + gate.unsqueeze(1) * x_out  # (N, I, D)
        x = x + gate2.unsqueeze(1) * self.ff(modulate(self.ln2(x), shift2, scale2))  # (N, I, D)
        if self.context_pre_only:
            return x, c
        _, _, c_gate, c_shift2, c_scale2, c_gate2 = c_mod  # shift and scale were applied before attention
        c = c + c_gate.unsqueeze(1) * c_out  # (N, S, D)
        c = c + c_gate2.unsqueeze(1) * self.ff_context(modulate(self.ln2_context(c), c_shift2, c_scale2))  # (N, S, D)
        return x, c


class TimeTextEmbed(nn.Module):
    """vec = MLP(sinusoid(t)) + MLP(pooled text): 2*N*(f*d + d^2) + 2*N*(P*d + d^2) FLOPs."""

    def __init__(self, freq_dim: int, pooled_dim: int, d: int):
        super().__init__()
        self.timestep_embedder = TimestepMLP(freq_dim, d)
        self.text_embedder = MLPEmbedder(pooled_dim, d)

    def forward(self, t: torch.Tensor, pooled: torch.Tensor) -> torch.Tensor:
        return self.timestep_embedder(t) + self.text_embedder(pooled)  # (N, D)


class MMDiT(nn.Module):
    """(latents (N, C, H, W), text tokens (N, S, 4096), pooled (N, P), t (N,)) -> velocity (N, C, H, W)."""

    flop_kinds = (
        ("time_text_embed.*", "per_sample"),
        ("transformer_blocks.*.norm1*", "per_sample"),
        ("norm_out.*", "per_sample"),
        ("proj_out", "head"),
    )

    def __init__(self, config: LatentTransformerConfig):
        super().__init__()
        self.config = config
        d, p, L = config.hidden_size, config.patch[1], config.depth
        self.patch_embed = nn.Conv2d(config.in_channels, d, kernel_size=p, stride=p)
        self.register_buffer("pos_embed", torch.zeros(1, POS_EMBED_MAX, POS_EMBED_MAX, d), persistent=False)
        self.context_embedder = nn.Linear(config.text_dim, d)
        self.time_text_embed = TimeTextEmbed(config.freq_dim, config.pooled_dim, d)
        self.transformer_blocks = nn.ModuleList(
            JointBlock(d, config.num_heads, config.mlp_hidden, context_pre_only=i == L - 1) for i in range(L)
        )
        self.norm_out = Modulation(d, d, 2)
        self.ln_out = layer_norm(d)
        self.proj_out = nn.Linear(d, p * p * config.out_channels)

    def forward(self, x: torch.Tensor, context: torch.Tensor, pooled: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        n, _, height, width = x.shape
        p, c_out = self.config.patch[1], self.config.out_channels
        h, w = height // p, width // p
        top, left = (POS_EMBED_MAX - h) // 2, (POS_EMBED_MAX - w) // 2
        pos = self.pos_embed[:, top : top + h, left : left + w].reshape(1, h * w, -1)  # (1, I, D), centre crop
        x = self.patch_embed(x).flatten(2).transpose(1, 2) + pos  # (N, I, D)
        c = self.context_embedder(context)  # (N, S, D)
        vec = self.time_text_embed(t, pooled)  # (N, D)
        for block in self.transformer_blocks:
            x, c = block(x, c, vec)  # (N, I, D), (N, S, D)
        shift, scale = self.norm_out(vec)  # 2 x (N, D); SD3's AdaLayerNormContinuous chunks scale first
        x = self.proj_out(modulate(self.ln_out(x), scale, shift))  # (N, I, p*p*C_out)
        x = x.reshape(n, h, w, p, p, c_out).permute(0, 5, 1, 3, 2, 4)  # (N, C_out, h, p, w, p)
        return x.reshape(n, c_out, height, width)  # (N, C_out, H, W)


def make_inputs(config: LatentTransformerConfig, batch: int) -> tuple:
    """(latents, text tokens, pooled text, t) on meta, batch N."""
    _, h, w = config.grid
    p = config.patch[1]
    return (
        torch.empty(batch, config.in_channels, h * p, w * p, device="meta"),
        torch.empty(batch, config.text_tokens, config.text_dim, device="meta"),
        torch.empty(batch, config.pooled_dim, device="meta"),
        torch.empty(batch, device="meta"),
    )

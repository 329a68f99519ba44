"""CogVideoX (Yang et al., "CogVideoX: Text-to-Video Diffusion Models with An Expert Transformer", 2024).

One sequence of [text; video] tokens (T = S + I) through shared q/k/v/out and a shared 4d MLP in
every block ("expert" adaLN: separate shift/scale/gate for the two kinds of token, from one
Linear(E, 6d) per norm on the timestep embedding of width E = 512): 24*T*d^2 + 4*T^2*d per block.
The timestep MLP reads a sinusoid as wide as the model (d) and narrows it to E. Facts from the paper
and the public CogVideoX-5B config (42 blocks, 48 heads of 64, d 3072, patch 2, VAE (4, 8, 8),
226 T5 tokens); the code is flopcheck's own. Meta only.
"""

from __future__ import annotations

import torch
from torch import nn

from reference_models.configs import LatentTransformerConfig
from reference_models.layers import (
    FeedForward,
    MLPEmbedder,
    apply_rope,
    attention,
    heads,
    layer_norm,
    merge_heads,
    rope_tables,
    sinusoid,
)


class PatchEmbed(nn.Module):
    """Each latent frame through Conv2d(C, d, p, p); the T5 tokens through Linear(4096, d); -> [text; video]."""

    def __init__(self, config: LatentTransformerConfig):
        super().__init__()
        p = config.patch[1]
        self.proj = nn.Conv2d(config.in_channels, config.hidden_size, kernel_size=p, stride=p)
        self.text_proj = nn.Linear(config.text_dim, config.hidden_size)

    def forward(self, text: torch.Tensor, video: torch.Tensor) -> torch.Tensor:
        n, frames, c, height, width = video.shape
        v = self.proj(video.reshape(n * frames, c, height, width))  # (N*F', D, h, w)
        v = v.flatten(2).transpose(1, 2).reshape(n, -1, v.shape[1])  # (N, I, D)
        return torch.cat([self.text_proj(text), v], dim=1)  # (N, T, D)


class ExpertLayerNormZero(nn.Module):
    """LN over [text; video] with per-kind shift, scale and gate: Linear(E, 6d) on SiLU(temb)."""

    def __init__(self, time_dim: int, d: int):
        super().__init__()
        self.linear = nn.Linear(time_dim, 6 * d)
        self.norm = layer_norm(d, affine=True, eps=1e-5)

    def forward(self, x: torch.Tensor, text_tokens: int, temb: torch.Tensor) -> tuple:
        shift, scale, gate, t_shift, t_scale, t_gate = self.linear(nn.functional.silu(temb)).chunk(6, dim=1)
        y = self.norm(x)  # (N, T, D)
        text = y[:, :text_tokens] * (1 + t_scale.unsqueeze(1)) + t_shift.unsqueeze(1)  # (N, S, D)
        video = y[:, text_tokens:] * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)  # (N, I, D)
        return torch.cat([text, video], dim=1), t_gate, gate


class CogAttention(nn.Module):
    """Shared q/k/v/out over [text; video], LN on q and k per head, RoPE on the video tokens."""

    def __init__(self, d: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.to_q, self.to_k, self.to_v, self.to_out = (nn.Linear(d, d) for _ in range(4))
        self.norm_q = layer_norm(d // num_heads, affine=True)
        self.norm_k = layer_norm(d // num_heads, affine=True)

    def forward(self, x: torch.Tensor, text_tokens: int, rope) -> torch.Tensor:
        q = self.norm_q(heads(self.to_q(x), self.num_heads))  # (N, H, T, D/H)
        k = self.norm_k(heads(self.to_k(x), self.num_heads))  # (N, H, T, D/H)
        v = heads(self.to_v(x), self.num_heads)  # (N, H, T, D/H)
        s = text_tokens
        q = torch.cat([q[:, :, :s], apply_rope(q[:, :, s:], *rope)], dim=2)  # (N, H, T, D/H)
        k = torch.cat([k[:, :, :s], apply_rope(k[:, :, s:], *rope)], dim=2)  # (N, H, T, D/H)
        return self.to_out(merge_heads(attention(q, k, v)))  # (N, T, D)


class CogBlock(nn.Module):
    """x += gate * attn(expert adaLN(x)); x += gate * ff(expert adaLN(x)); gates per kind of token."""

    def __init__(self, d: int, num_heads: int, mlp_hidden: int, time_dim: int):
        super().__init__()
        self.norm1 = ExpertLayerNormZero(time_dim, d)
        self.attn1 = CogAttention(d, num_heads)
        self.norm2 = ExpertLayerNormZero(time_dim, d)
        self.ff = FeedForward(d, mlp_hidden)

    @staticmethod
    def gated(out: torch.Tensor, text_tokens: int, text_gate: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        """[text_gate * out_text; gate * out_video]."""
        s = text_tokens
        return torch.cat([text_gate.unsqueeze(1) * out[:, :s], gate.unsqueeze(1) * out[:, s:]], dim=1)

    def forward(self, x: torch.Tensor, text_tokens: int, temb: torch.Tensor, rope) -> torch.Tensor:
        y, t_gate, gate = self.norm1(x, text_tokens, temb)
        x = x + self.gated(self.attn1(y, text_tokens, rope), text_tokens, t_gate, gate)  # (N, T, D)
        y, t_gate, gate = self.norm2(x, text_tokens, temb)
        return x + self.gated(self.ff(y), text_tokens, t_gate, gate)  # (N, T, D)


class AdaLayerNorm(nn.Module):
    """LN(x) * (1 + scale) + shift with Linear(E, 2d) on SiLU(temb)."""

    def __init__(self, time_dim: int, d: int):
        super().__init__()
        self.linear = nn.Linear(time_dim, 2 * d)
        self.norm = layer_norm(d, affine=True, eps=1e-5)

    def forward(self, x: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        shift, scale = self.linear(nn.functional.silu(temb)).chunk(2, dim=1)  # 2 x (N, D)
        return self.norm(x) * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)  # (N, I, D)


class CogVideoXTransformer(nn.Module):
    """(latents (N, F', C, H', W'), T5 tokens (N, S, 4096), t (N,)) -> velocity per latent cell."""

    flop_kinds = (
        ("patch_embed.proj", "conv"),
        ("time_embedding.*", "per_sample"),
        ("transformer_blocks.*.norm*", "per_sample"),
        ("norm_out.*", "per_sample"),
        ("proj_out", "head"),
    )

    def __init__(self, config: LatentTransformerConfig):
        super().__init__()
        self.config = config
        d, e, p = config.hidden_size, config.timestep_width, config.patch[1]
        self.patch_embed = PatchEmbed(config)
        self.time_embedding = MLPEmbedder(d, e, e)  # sinusoid of width d -> E -> E
        self.transformer_blocks = nn.ModuleList(
            CogBlock(d, config.num_heads, config.mlp_hidden, e) for _ in range(config.depth)
        )
        self.norm_final = layer_norm(d, affine=True, eps=1e-5)
        self.norm_out = AdaLayerNorm(e, d)
        self.proj_out = nn.Linear(d, p * p * config.out_channels)

    def forward(self, video: torch.Tensor, text: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        cfg = self.config
        s = cfg.text_tokens
        temb = self.time_embedding(sinusoid(t, cfg.hidden_size))  # (N, E)
        x = self.patch_embed(text, video)  # (N, T, D)
        rope = rope_tables(cfg.grid, cfg.head_dim, device=video.device)  # 2 x (I, D/H)
        for block in self.transformer_blocks:
            x = block(x, s, temb, rope)  # (N, T, D)
        x = self.norm_final(x)[:, s:]  # (N, I, D)
        return self.proj_out(self.norm_out(x, temb))  # (N, I, p*p*C_out)


def make_inputs(config: LatentTransformerConfig, batch: int) -> tuple:
    """(latents (N, F', C, H', W'), T5 tokens (N, S, 4096), t (N,)) on meta."""
    t, h, w = config.grid
    p = config.patch[1]
    return (
        torch.empty(batch, t, config.in_channels, h * p, w * p, device="meta"),
        torch.empty(batch, config.text_tokens, config.text_dim, device="meta"),
        torch.empty(batch, device="meta"),
    )

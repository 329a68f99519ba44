"""Double- then single-stream transformers: FLUX.1 (Black Forest Labs, 2024) and HunyuanVideo (Kong et al., 2024).

Double-stream block: image and text keep separate weights (adaLN 6d, qkv, proj, 4d MLP per
stream) and meet in one joint attention over T = I + S, as in MMDiT. Single-stream block: the
joined sequence goes through one Linear(d, 3d + h) that yields q, k, v and the MLP's input
together, attention, and one Linear(d + h, d) over [attention out; GELU(MLP)]; adaLN 3d.
Both are 24*T*d^2 + 4*T^2*d per block. FLUX.1-dev: 19 + 38 blocks, d = 3072, 24 heads, latents
packed 2x2 into 64 channels, 512 T5 tokens, guidance-distilled. HunyuanVideo: 20 + 40 blocks,
d = 3072, 3D patches (1, 2, 2) of a 4x/8x/8x causal VAE, 256 LLaVA tokens through a 2-block token
refiner. Facts from the papers and the public configs; the code is flopcheck's own. Meta only.
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
    apply_rope,
    attention,
    heads,
    layer_norm,
    merge_heads,
    modulate,
    rope_tables,
)


class StreamAttention(nn.Module):
    """One stream's projections: qkv Linear(d, 3d) with RMS-normed q and k per head, proj Linear(d, d)."""

    def __init__(self, d: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(d, 3 * d)
        self.q_norm = nn.RMSNorm(d // num_heads, eps=1e-6)
        self.k_norm = nn.RMSNorm(d // num_heads, eps=1e-6)
        self.proj = nn.Linear(d, d)

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(N, T, D) -> q, k, v, each (N, H, T, D/H)."""
        q, k, v = (heads(part, self.num_heads) for part in self.qkv(x).chunk(3, dim=-1))
        return self.q_norm(q), self.k_norm(k), v


class DoubleStreamBlock(nn.Module):
    """Image and text streams with their own weights, one joint attention: 24*T*d^2 + 4*T^2*d + 2*12*d^2."""

    def __init__(self, d: int, num_heads: int, mlp_hidden: int):
        super().__init__()
        self.img_mod, self.txt_mod = Modulation(d, d, 6), Modulation(d, d, 6)
        self.img_norm1, self.txt_norm1 = layer_norm(d), layer_norm(d)
        self.img_attn, self.txt_attn = StreamAttention(d, num_heads), StreamAttention(d, num_heads)
        self.img_norm2, self.txt_norm2 = layer_norm(d), layer_norm(d)
        self.img_mlp, self.txt_mlp = FeedForward(d, mlp_hidden), FeedForward(d, mlp_hidden)

    def forward(self, img: torch.Tensor, txt: torch.Tensor, vec: torch.Tensor, rope) -> tuple[torch.Tensor, ...]:
        i_shift, i_scale, i_gate, i_shift2, i_scale2, i_gate2 = self.img_mod(vec)  # 6 x (N, D)
        t_shift, t_scale, t_gate, t_shift2, t_scale2, t_gate2 = self.txt_mod(vec)  # 6 x (N, D)
        qi, ki, vi = self.img_attn.project(modulate(self.img_norm1(img), i_shift, i_scale))  # (N, H, I, D/H)
        qt, kt, vt = self.txt_attn.project(modulate(self.txt_norm1(txt), t_shift, t_scale))  # (N, H, S, D/H)
        q, k, v = (torch.cat(pair, dim=2) for pair in ((qt, qi), (kt, ki), (vt, vi)))  # (N, H, T, D/H)
        out = merge_heads(attention(apply_rope(q, *rope), apply_rope(k, *rope), v))  # (N, T, D)
        txt_out, img_out = out[:, : txt.shape[1]], out[:, txt.shape[1] :]  # (N, S, D), (N, I, D)
        img = img + i_gate.unsqueeze(1) * self.img_attn.proj(img_out)  # (N, I, D)
        img = img + i_gate2.unsqueeze(1) * self.img_mlp(modulate(self.img_norm2(img), i_shift2, i_scale2))
        txt = txt + t_gate.unsqueeze(1) * self.txt_attn.proj(txt_out)  # (N, S, D)
        txt = txt + t_gate2.unsqueeze(1) * self.txt_mlp(modulate(self.txt_norm2(txt), t_shift2, t_scale2))
        return img, txt


class SingleStreamBlock(nn.Module):
    """[text; image] through Linear(d, 3d+h), attention, Linear(d+h, d): 24*T*d^2 + 4*T^2*d + 6*d^2 (h = 4d)."""

    def __init__(self, d: int, num_heads: int, mlp_hidden: int):
        super().__init__()
        self.num_heads, self.d, self.mlp_hidden = num_heads, d, mlp_hidden
        self.modulation = Modulation(d, d, 3)
        self.pre_norm = layer_norm(d)
        self.linear1 = nn.Linear(d, 3 * d + mlp_hidden)
        self.linear2 = nn.Linear(d + mlp_hidden, d)
        self.q_norm = nn.RMSNorm(d // num_heads, eps=1e-6)
        self.k_norm = nn.RMSNorm(d // num_heads, eps=1e-6)

    def forward(self, x: torch.Tensor, vec: torch.Tensor, rope) -> torch.Tensor:
        shift, scale, gate = self.modulation(vec)  # 3 x (N, D)
        qkv, mlp = self.linear1(modulate(self.pre_norm(x), shift, scale)).split([3 * self.d, self.mlp_hidden], -1)
        q, k, v = (heads(part, self.num_heads) for part in qkv.chunk(3, dim=-1))  # (N, H, T, D/H)
        q, k = apply_rope(self.q_norm(q), *rope), apply_rope(self.k_norm(k), *rope)
        out = merge_heads(attention(q, k, v))  # (N, T, D)
        mlp = nn.functional.gelu(mlp, approximate="tanh")  # (N, T, h)
        return x + gate.unsqueeze(1) * self.linear2(torch.cat([out, mlp], dim=-1))  # (N, T, D)


class RefinerBlock(nn.Module):
    """HunyuanVideo's token refiner: self-attention and a SiLU MLP over the S text tokens, gated by c."""

    def __init__(self, d: int, num_heads: int, mlp_hidden: int):
        super().__init__()
        self.num_heads = num_heads
        self.norm1 = layer_norm(d, affine=True)
        self.self_attn_qkv = nn.Linear(d, 3 * d)
        self.self_attn_proj = nn.Linear(d, d)
        self.norm2 = layer_norm(d, affine=True)
        self.mlp = FeedForward(d, mlp_hidden, act="silu")
        self.adaLN_modulation = Modulation(d, d, 2)

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        gate_msa, gate_mlp = self.adaLN_modulation(c)  # 2 x (N, D)
        q, k, v = (heads(part, self.num_heads) for part in self.self_attn_qkv(self.norm1(x)).chunk(3, dim=-1))
        x = x + gate_msa.unsqueeze(1) * self.self_attn_proj(merge_heads(attention(q, k, v)))  # (N, S, D)
        return x + gate_mlp.unsqueeze(1) * self.mlp(self.norm2(x))  # (N, S, D)


class TokenRefiner(nn.Module):
    """Text tokens (N, S, k) -> (N, S, D): input Linear, then refiner blocks conditioned on t and the mean token."""

    def __init__(self, config: LatentTransformerConfig):
        super().__init__()
        d = config.hidden_size
        self.input_embedder = nn.Linear(config.text_dim, d)
        self.t_embedder = TimestepMLP(config.freq_dim, d)
        self.c_embedder = MLPEmbedder(config.text_dim, d)
        self.blocks = nn.ModuleList(
            RefinerBlock(d, config.num_heads, config.mlp_hidden) for _ in range(config.refiner_depth)
        )

    def forward(self, txt: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        c = self.t_embedder(t) + self.c_embedder(txt.mean(dim=1))  # (N, D)
        x = self.input_embedder(txt)  # (N, S, D)
        for block in self.blocks:
            x = block(x, c)  # (N, S, D)
        return x


class PackedPatches(nn.Module):
    """FLUX: latents (N, C, H, W) packed into 2x2 patches (N, I, 4C), then Linear(4C, d)."""

    def __init__(self, config: LatentTransformerConfig):
        super().__init__()
        self.p = config.patch[1]
        self.proj = nn.Linear(config.in_channels * self.p * self.p, config.hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, height, width = x.shape
        p = self.p
        x = x.reshape(n, c, height // p, p, width // p, p).permute(0, 2, 4, 1, 3, 5)  # (N, h, w, C, p, p)
        return self.proj(x.reshape(n, (height // p) * (width // p), c * p * p))  # (N, I, D)


class VideoPatches(nn.Module):
    """HunyuanVideo: Conv3d(C, d, (1, 2, 2)) over (N, C, F, H, W), flattened to (N, I, D)."""

    def __init__(self, config: LatentTransformerConfig):
        super().__init__()
        self.proj = nn.Conv3d(config.in_channels, config.hidden_size, kernel_size=config.patch, stride=config.patch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x).flatten(2).transpose(1, 2)  # (N, I, D)


class FinalLayer(nn.Module):
    """adaLN (2d) then Linear(d, p_t*p_h*p_w*C_out) on the image tokens."""

    def __init__(self, d: int, out_dim: int):
        super().__init__()
        self.adaLN_modulation = Modulation(d, d, 2)
        self.norm_final = layer_norm(d)
        self.linear = nn.Linear(d, out_dim)

    def forward(self, x: torch.Tensor, vec: torch.Tensor) -> torch.Tensor:
        shift, scale = self.adaLN_modulation(vec)  # 2 x (N, D)
        return self.linear(modulate(self.norm_final(x), shift, scale))  # (N, I, p^3*C_out)


class DualStreamDiT(nn.Module):
    """(latents, text tokens (N, S, 4096), pooled (N, 768), t (N,), guidance (N,)) -> velocity per latent cell."""

    flop_kinds = (
        ("img_in.*", "conv"),  # the patch embedding, a Linear on packed patches in FLUX
        ("time_in.*", "per_sample"),
        ("vector_in.*", "per_sample"),
        ("guidance_in.*", "per_sample"),
        ("txt_in.t_embedder.*", "per_sample"),
        ("txt_in.c_embedder.*", "per_sample"),
        ("*.adaLN_modulation.*", "per_sample"),
        ("*_mod.*", "per_sample"),
        ("*.modulation.*", "per_sample"),
        ("final_layer.linear", "head"),
    )

    def __init__(self, config: LatentTransformerConfig):
        super().__init__()
        self.config = config
        d = config.hidden_size
        self.img_in = VideoPatches(config) if config.video else PackedPatches(config)
        self.time_in = TimestepMLP(config.freq_dim, d)
        self.guidance_in = TimestepMLP(config.freq_dim, d) if config.guidance_embed else None
        self.vector_in = MLPEmbedder(config.pooled_dim, d)
        self.txt_in = TokenRefiner(config) if config.refiner_depth else nn.Linear(config.text_dim, d)
        self.double_blocks = nn.ModuleList(
            DoubleStreamBlock(d, config.num_heads, config.mlp_hidden) for _ in range(config.depth)
        )
        self.single_blocks = nn.ModuleList(
            SingleStreamBlock(d, config.num_heads, config.mlp_hidden) for _ in range(config.single_depth)
        )
        self.final_layer = FinalLayer(d, config.patch_volume * config.out_channels)

    def forward(
        self, x: torch.Tensor, txt: torch.Tensor, pooled: torch.Tensor, t: torch.Tensor, guidance: torch.Tensor
    ) -> torch.Tensor:
        cfg = self.config
        img = self.img_in(x)  # (N, I, D)
        vec = self.time_in(t) + self.vector_in(pooled)  # (N, D)
        if self.guidance_in is not None:
            vec = vec + self.guidance_in(guidance)  # (N, D)
        txt = self.txt_in(txt, t) if cfg.refiner_depth else self.txt_in(txt)  # (N, S, D)
        rope = rope_tables(cfg.grid, cfg.head_dim, lead=cfg.text_tokens, device=x.device)  # 2 x (T, D/H)
        for block in self.double_blocks:
            img, txt = block(img, txt, vec, rope)  # (N, I, D), (N, S, D)
        x = torch.cat([txt, img], dim=1)  # (N, T, D)
        for block in self.single_blocks:
            x = block(x, vec, rope)  # (N, T, D)
        return self.final_layer(x[:, cfg.text_tokens :], vec)  # (N, I, p^3*C_out)


def make_inputs(config: LatentTransformerConfig, batch: int) -> tuple:
    """(latents, text tokens, pooled, t, guidance) on meta; video latents are (N, C, F', H', W')."""
    t, h, w = config.grid
    pt, ph, pw = config.patch
    spatial = (h * ph, w * pw)
    latents = (batch, config.in_channels, t * pt, *spatial) if config.video else (batch, config.in_channels, *spatial)
    return (
        torch.empty(latents, device="meta"),
        torch.empty(batch, config.text_tokens, config.text_dim, device="meta"),
        torch.empty(batch, config.pooled_dim, device="meta"),
        torch.empty(batch, device="meta"),
        torch.empty(batch, device="meta"),
    )

"""DiT (Peebles & Xie, "Scalable Diffusion Models with Transformers", 2023), module for module.

Same module paths as the paper's code (x_embedder, t_embedder, y_embedder, blocks.N.attn / mlp /
adaLN_modulation, final_layer), same parameter counts, same ops, built on timm's PatchEmbed,
Attention and Mlp. Written for flopcheck from the paper's description; the attention path
(fused SDPA or explicit matmuls) comes from the config, set on every Attention module.
"""

from __future__ import annotations

import math

import torch
from timm.layers import Attention, Mlp, PatchEmbed
from torch import nn

from reference_models.configs import DiTConfig


def modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """adaLN: x * (1 + scale) + shift, with per-sample (N, D) shift and scale broadcast over T."""
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)  # (N, T, D)


# ---------------------------------------------------------------------------------------------
# Embedding layers for timesteps and class labels
# ---------------------------------------------------------------------------------------------


class TimestepEmbedder(nn.Module):
    """t -> Linear(SiLU(Linear(sinusoid_f(t)))): 2*N*(f*d + d*d) FLOPs, once per sample."""

    def __init__(self, hidden_size: int, frequency_embedding_size: int = 256):
        super().__init__()
        self.frequency_embedding_size = frequency_embedding_size
        self.mlp = nn.Sequential(
            nn.Linear(frequency_embedding_size, hidden_size, bias=True),
            nn.SiLU(),
            nn.Linear(hidden_size, hidden_size, bias=True),
        )

    @staticmethod
    def sinusoid(t: torch.Tensor, dim: int, max_period: float = 10000.0) -> torch.Tensor:
        """[cos(t * w_i), sin(t * w_i)], w_i = max_period^(-i / (dim/2)), i < dim/2."""
        half = dim // 2
        exponents = torch.arange(half, dtype=torch.float32, device=t.device) / half  # (dim/2,)
        freqs = torch.exp(-math.log(max_period) * exponents)  # (dim/2,)
        args = t[:, None].float() * freqs[None]  # (N, dim/2)
        emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)  # (N, 2*(dim/2))
        if dim % 2:
            emb = torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=-1)  # (N, dim)
        return emb

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.sinusoid(t, self.frequency_embedding_size))  # (N, D)


class LabelEmbedder(nn.Module):
    """y -> table[y]; a null class row (index num_classes) serves label dropout and CFG. 0 FLOPs."""

    def __init__(self, num_classes: int, hidden_size: int, dropout_prob: float):
        super().__init__()
        self.num_classes = num_classes
        self.dropout_prob = dropout_prob
        self.embedding_table = nn.Embedding(num_classes + int(dropout_prob > 0), hidden_size)

    def token_drop(self, labels: torch.Tensor, force_drop_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Replace labels by the null class, at random (training) or where force_drop_ids == 1."""
        if force_drop_ids is None:
            drop = torch.rand(labels.shape[0], device=labels.device) < self.dropout_prob  # (N,)
        else:
            drop = force_drop_ids == 1  # (N,)
        return torch.where(drop, self.num_classes, labels)  # (N,)

    def forward(self, labels: torch.Tensor, train: bool, force_drop_ids: torch.Tensor | None = None) -> torch.Tensor:
        if (train and self.dropout_prob > 0) or force_drop_ids is not None:
            labels = self.token_drop(labels, force_drop_ids)
        return self.embedding_table(labels)  # (N, D)


# ---------------------------------------------------------------------------------------------
# The DiT block and the final layer
# ---------------------------------------------------------------------------------------------


class DiTBlock(nn.Module):
    """x += g1 * attn(adaLN(x)); x += g2 * mlp(adaLN(x)); (24*T*d^2 + 4*T^2*d) * N + 12*d^2 * N FLOPs."""

    def __init__(self, hidden_size: int, num_heads: int, mlp_ratio: float, attn: str):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
        self.attn = Attention(hidden_size, num_heads=num_heads, qkv_bias=True)
        self.attn.fused_attn = attn == "sdpa"  # the config decides, not timm's global
        self.norm2 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
        self.mlp = Mlp(
            in_features=hidden_size,
            hidden_features=int(hidden_size * mlp_ratio),
            act_layer=lambda: nn.GELU(approximate="tanh"),
            drop=0,
        )
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden_size, 6 * hidden_size, bias=True))

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        mods = self.adaLN_modulation(c).chunk(6, dim=1)  # 6 x (N, D)
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = mods
        x = x + gate_msa.unsqueeze(1) * self.attn(modulate(self.norm1(x), shift_msa, scale_msa))  # (N, T, D)
        x = x + gate_mlp.unsqueeze(1) * self.mlp(modulate(self.norm2(x), shift_mlp, scale_mlp))  # (N, T, D)
        return x


class FinalLayer(nn.Module):
    """x -> Linear(adaLN(x)) to p*p*C_out per token: 2*N*T*d*p^2*C_out + 4*N*d^2 FLOPs."""

    def __init__(self, hidden_size: int, patch_size: int, out_channels: int):
        super().__init__()
        self.norm_final = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
        self.linear = nn.Linear(hidden_size, patch_size * patch_size * out_channels, bias=True)
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden_size, 2 * hidden_size, bias=True))

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        shift, scale = self.adaLN_modulation(c).chunk(2, dim=1)  # 2 x (N, D)
        x = modulate(self.norm_final(x), shift, scale)  # (N, T, D)
        return self.linear(x)  # (N, T, p*p*C_out)


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------


class DiT(nn.Module):
    """Class-conditional latent diffusion transformer: (x_t, t, y) -> (epsilon, sigma) per pixel."""

    # module-path pattern -> kind of term, for the layers that are not per-token linears
    flop_kinds = (
        ("t_embedder.mlp.*", "per_sample"),  # timestep MLP on (N, f): once per sample
        ("blocks.*.adaLN_modulation.*", "per_sample"),  # c (N, d) -> 6 modulations per sample
        ("final_layer.adaLN_modulation.*", "per_sample"),
        ("final_layer.linear", "head"),
    )

    def __init__(self, config: DiTConfig):
        super().__init__()
        self.config = config
        self.in_channels = config.in_channels
        self.out_channels = config.out_channels
        self.patch_size = config.patch_size
        d = config.hidden_size
        self.x_embedder = PatchEmbed(config.input_size, config.patch_size, config.in_channels, d, bias=True)
        self.t_embedder = TimestepEmbedder(d, config.frequency_embedding_size)
        self.y_embedder = LabelEmbedder(config.num_classes, d, config.class_dropout_prob)
        # fixed 2D sin-cos table; a Parameter (requires_grad=False) as in the paper's code, so it counts
        self.pos_embed = nn.Parameter(torch.zeros(1, self.x_embedder.num_patches, d), requires_grad=False)
        self.blocks = nn.ModuleList(
            DiTBlock(d, config.num_heads, config.mlp_ratio, config.attn) for _ in range(config.depth)
        )
        self.final_layer = FinalLayer(d, config.patch_size, self.out_channels)

    def unpatchify(self, x: torch.Tensor) -> torch.Tensor:
        """(N, T, p*p*C_out) -> (N, C_out, H, W), T = (H/p) * (W/p)."""
        c, p = self.out_channels, self.patch_size
        h = w = int(x.shape[1] ** 0.5)
        x = x.reshape(x.shape[0], h, w, p, p, c)  # (N, h, w, p, p, C_out)
        x = torch.einsum("nhwpqc->nchpwq", x)  # (N, C_out, h, p, w, p)
        return x.reshape(x.shape[0], c, h * p, w * p)  # (N, C_out, H, W)

    def forward(self, x: torch.Tensor, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = self.x_embedder(x) + self.pos_embed  # (N, T, D), T = H * W / p^2
        t = self.t_embedder(t)  # (N, D)
        y = self.y_embedder(y, self.training)  # (N, D)
        c = t + y  # (N, D)
        for block in self.blocks:
            x = block(x, c)  # (N, T, D)
        x = self.final_layer(x, c)  # (N, T, p*p*C_out)
        return self.unpatchify(x)  # (N, C_out, H, W)

    def forward_with_cfg(self, x: torch.Tensor, t: torch.Tensor, y: torch.Tensor, cfg_scale: float) -> torch.Tensor:
        """Classifier-free guidance: one forward over [cond; uncond] (batch 2N), eps mixed by cfg_scale."""
        half = x[: len(x) // 2]  # (N, C, H, W)
        out = self.forward(torch.cat([half, half], dim=0), t, y)  # (2N, C_out, H, W)
        eps, rest = out[:, : self.in_channels], out[:, self.in_channels :]  # (2N, C, H, W) each
        cond_eps, uncond_eps = torch.split(eps, len(eps) // 2, dim=0)  # (N, C, H, W) each
        half_eps = uncond_eps + cfg_scale * (cond_eps - uncond_eps)  # (N, C, H, W)
        return torch.cat([torch.cat([half_eps, half_eps], dim=0), rest], dim=1)  # (2N, C_out, H, W)


# ---------------------------------------------------------------------------------------------
# Building, inputs, initialisation
# ---------------------------------------------------------------------------------------------


def build_dit(config: DiTConfig, device: str = "meta") -> DiT:
    """DiT on `device` without initialising weights: built on meta, storage allocated uninitialised."""
    with torch.device("meta"):
        model = DiT(config)
    if str(device) != "meta":
        model = model.to_empty(device=device)
    return model.eval()


def make_inputs(config: DiTConfig, batch: int = 1, device: str = "meta", cfg: bool = False) -> tuple:
    """(x, t, y) for one forward: x (N, C, H, W) latents, t (N,) timesteps, y (N,) labels; N doubles with cfg."""
    n = batch * (2 if cfg else 1)
    shape = (n, config.in_channels, config.input_size, config.input_size)
    if str(device) == "meta":
        x = torch.empty(shape, device="meta")
        t = torch.empty(n, device="meta")
        y = torch.empty(n, dtype=torch.long, device="meta")
        return x, t, y
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=gen).to(device)  # (N, C, H, W)
    t = torch.randint(0, 1000, (n,), generator=gen).float().to(device)  # (N,)
    y = torch.randint(0, config.num_classes, (n,), generator=gen).to(device)  # (N,)
    if cfg:
        y[batch:] = config.num_classes  # the null class drives the unconditional half
    return x, t, y


def prepare_dit(config: DiTConfig, batch: int = 1, device: str = "meta", cfg: bool = False) -> tuple:
    """(model, inputs, forward) for one counted forward; with cfg, forward_with_cfg on batch 2N."""
    model = build_dit(config, device=device)
    inputs = make_inputs(config, batch=batch, device=device, cfg=cfg)
    forward = (lambda x, t, y: model.forward_with_cfg(x, t, y, cfg_scale=4.0)) if cfg else model
    return model, inputs, forward


def sincos_pos_embed(dim: int, grid: int) -> torch.Tensor:
    """2D sin-cos table (grid^2, dim): half the channels encode rows, half columns."""
    coords = torch.arange(grid, dtype=torch.float64)  # (g,)
    rows, cols = torch.meshgrid(coords, coords, indexing="ij")  # (g, g) each

    def embed_1d(pos: torch.Tensor, width: int) -> torch.Tensor:
        omega = 1.0 / 10000 ** (torch.arange(width // 2, dtype=torch.float64) / (width / 2.0))  # (w/2,)
        angles = pos.reshape(-1)[:, None] * omega[None]  # (g^2, w/2)
        return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)  # (g^2, w)

    return torch.cat([embed_1d(cols, dim // 2), embed_1d(rows, dim // 2)], dim=1).float()  # (g^2, dim)


@torch.no_grad()
def initialize_weights(model: DiT) -> DiT:
    """The paper's scheme: xavier linears, zero biases, N(0, 0.02) embeddings, adaLN and output zeroed."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight)
            nn.init.zeros_(module.bias)
    grid = int(model.x_embedder.num_patches**0.5)
    model.pos_embed.copy_(sincos_pos_embed(model.pos_embed.shape[-1], grid)[None])
    w = model.x_embedder.proj.weight
    nn.init.xavier_uniform_(w.view(w.shape[0], -1))
    nn.init.zeros_(model.x_embedder.proj.bias)
    nn.init.normal_(model.y_embedder.embedding_table.weight, std=0.02)
    nn.init.normal_(model.t_embedder.mlp[0].weight, std=0.02)
    nn.init.normal_(model.t_embedder.mlp[2].weight, std=0.02)
    zeroed = [b.adaLN_modulation[-1] for b in model.blocks]
    zeroed += [model.final_layer.adaLN_modulation[-1], model.final_layer.linear]
    for layer in zeroed:
        nn.init.zeros_(layer.weight)
        nn.init.zeros_(layer.bias)
    return model

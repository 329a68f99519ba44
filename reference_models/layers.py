"""Pieces the text-conditioned transformers share: timestep MLPs, modulation, MLPs, attention, RoPE.

FLOPs are counted on the Linear and Conv layers and on attention; everything else here is
elementwise (RoPE, modulate, gates) and is recorded by the exact count without a FLOP value.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def sinusoid(t: torch.Tensor, dim: int, max_period: float = 10000.0) -> torch.Tensor:
    """[cos(t * w_i), sin(t * w_i)], w_i = max_period^(-i / (dim/2)): (N,) -> (N, dim)."""
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t[:, None].float() * freqs[None]  # (N, dim/2)
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)  # (N, dim)


def modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """x * (1 + scale) + shift, per-sample (N, D) broadcast over the tokens of x (N, T, D)."""
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)  # (N, T, D)


def layer_norm(d: int, affine: bool = False, eps: float = 1e-6) -> nn.LayerNorm:
    """LayerNorm over the width; the adaLN models' norms carry no weights of their own."""
    return nn.LayerNorm(d, elementwise_affine=affine, eps=eps)


class MLPEmbedder(nn.Module):
    """x -> linear_2(SiLU(linear_1(x))): 2*N*(k*d + d*d) FLOPs on (N, k), once per sample."""

    def __init__(self, in_dim: int, d: int, out_dim: int | None = None):
        super().__init__()
        self.linear_1 = nn.Linear(in_dim, d)
        self.linear_2 = nn.Linear(d, out_dim or d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear_2(F.silu(self.linear_1(x)))  # (N, D)


class TimestepMLP(MLPEmbedder):
    """t -> MLP(sinusoid_f(t)): 2*N*(f*d + d*d) FLOPs."""

    def __init__(self, freq_dim: int, d: int, out_dim: int | None = None):
        super().__init__(freq_dim, d, out_dim)
        self.freq_dim = freq_dim

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return super().forward(sinusoid(t, self.freq_dim))  # (N, D)


class Modulation(nn.Module):
    """c (N, E) -> k chunks of (N, D): Linear(SiLU(c)), 2*N*E*k*D FLOPs, once per sample."""

    def __init__(self, in_dim: int, d: int, chunks: int):
        super().__init__()
        self.chunks = chunks
        self.linear = nn.Linear(in_dim, chunks * d)

    def forward(self, c: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.linear(F.silu(c)).chunk(self.chunks, dim=1)  # chunks x (N, D)


class FeedForward(nn.Module):
    """x -> fc2(act(fc1(x))): 2*T*d*h + 2*T*h*d FLOPs per sample."""

    def __init__(self, d: int, hidden: int, act: str = "gelu_tanh"):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)
        self.act = act

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)  # (N, T, h)
        h = F.gelu(h, approximate="tanh") if self.act == "gelu_tanh" else F.silu(h)
        return self.fc2(h)  # (N, T, D)


def heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(N, T, D) -> (N, H, T, D/H)."""
    n, t, d = x.shape
    return x.view(n, t, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(N, H, T, D/H) -> (N, T, D)."""
    n, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(n, t, h * dh)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(d_h)) v, fused: 2*H*Tq*Tk*d_h (QK^T) + the same (attn@V) FLOPs per sample."""
    return F.scaled_dot_product_attention(q, k, v)  # (N, H, Tq, D/H)


# ---------------------------------------------------------------------------------------------
# Rotary position embedding over a (t, h, w) grid
# ---------------------------------------------------------------------------------------------


def rope_axes(head_dim: int) -> tuple[int, int, int]:
    """Channels of a head given to the t, h and w positions: h and w equal and even, t the rest."""
    side = head_dim // 3 // 2 * 2
    return head_dim - 2 * side, side, side


def rope_tables(
    grid: tuple[int, int, int],
    head_dim: int,
    lead: int = 0,
    theta: float = 10000.0,
    device: torch.device | str = "meta",
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin (lead + t*h*w, head_dim): per-axis angles pos * theta^(-2i/axis); `lead` text rows at angle 0."""
    halves = []
    for axis, (size, dim) in enumerate(zip(grid, rope_axes(head_dim))):
        freqs = theta ** (-torch.arange(0, dim, 2, dtype=torch.float32, device=device) / dim)  # (dim/2,)
        shape = [1, 1, 1]
        shape[axis] = size
        pos = torch.arange(size, dtype=torch.float32, device=device).view(*shape, 1)  # (t|1, h|1, w|1, 1)
        halves.append((pos * freqs).expand(*grid, dim // 2))  # (t, h, w, dim/2)
    angles = torch.cat(halves, dim=-1).reshape(-1, head_dim // 2)  # (I, head_dim/2)
    if lead:
        angles = torch.cat([angles.new_zeros(lead, head_dim // 2), angles], dim=0)  # (S + I, head_dim/2)
    angles = torch.cat([angles, angles], dim=-1)  # (T, head_dim)
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x * cos + rotate_half(x) * sin on (N, H, T, D/H); elementwise, 0 multiply-adds counted."""
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin  # (N, H, T, D/H)

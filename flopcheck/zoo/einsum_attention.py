"""A user's attention written with einsums and a GRU: QK^T and attn@V as 'bhqd,bhkd->bhqk' and 'bhqk,bhkd->bhqd'."""

import torch
from torch import nn


class EinsumAttention(nn.Module):
    """x (N, T, d) -> qkv Linear -> einsum attention over h heads -> proj Linear -> GRU."""

    def __init__(self, d: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.gru = nn.GRU(d, d, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, t, d = x.shape
        q, k, v = self.qkv(x).view(n, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)  # (N, h, T, e) each
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * (d // self.heads) ** -0.5  # (N, h, T, T)
        out = torch.einsum("bhqk,bhkd->bhqd", scores.softmax(-1), v)  # (N, h, T, e)
        y = self.proj(out.transpose(1, 2).reshape(n, t, d))  # (N, T, d)
        h: torch.Tensor = self.gru(y)[0]  # (N, T, d)
        return h


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): batch 2, T = 8, d = 16, 2 heads."""
    return EinsumAttention(), (torch.zeros(2, 8, 16),)

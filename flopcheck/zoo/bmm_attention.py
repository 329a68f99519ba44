"""A user's attention written with torch.baddbmm (QK^T scaled by alpha onto a zero bias) and torch.bmm (attn@V),
then a BatchNorm1d over the tokens."""

import torch
from torch import nn


class BmmAttention(nn.Module):
    """x (N, T, d) -> qkv Linear -> baddbmm scores, softmax, bmm -> out Linear -> BatchNorm1d(T)."""

    def __init__(self, d: int = 16, tokens: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.norm = nn.BatchNorm1d(tokens)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, -1)  # (N, T, d) each
        scores = torch.baddbmm(x.new_zeros(n, t, t), q, k.transpose(1, 2), alpha=d**-0.5)  # (N, T, T)
        out: torch.Tensor = self.norm(self.out(torch.bmm(scores.softmax(-1), v)))  # (N, T, d)
        return out


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): batch 2, T = 8, d = 16; in eval mode."""
    return BmmAttention().eval(), (torch.zeros(2, 8, 16),)

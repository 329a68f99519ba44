"""nn.MultiheadAttention, an LSTM and an einsum, left in train mode as nn.Module builds it: B 2, T 32, d 64."""

import torch
from torch import nn


class MhaLstm(nn.Module):
    """x (2, 32, 64) -> self-attention (4 heads, batch_first, need_weights=False) -> LSTM 64 -> 64 -> an einsum
    attention of the LSTM's states over themselves (one head of 64)."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(64, 4, batch_first=True)
        self.lstm = nn.LSTM(64, 64, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, _ = self.attn(x, x, x, need_weights=False)  # (2, 32, 64)
        h, _ = self.lstm(a)  # (2, 32, 64)
        s = torch.einsum("bqd,bkd->bqk", h, h).softmax(-1)  # (2, 32, 32)
        return torch.einsum("bqk,bkd->bqd", s, h)  # (2, 32, 64)


def factory() -> tuple[nn.Module, tuple[torch.Tensor], dict[str, torch.Tensor]]:
    """The model as built (train mode), on x (2, 32, 64)."""
    return MhaLstm(), (torch.randn(2, 32, 64),), {}

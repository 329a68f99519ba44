"""A user's model as people write them: nn.MultiheadAttention, an LSTM and an einsum, batch 2 in its own inputs."""

import torch
from torch import nn


class MhaLstm(nn.Module):
    """x (N, T, d) -> MHA self-attention -> LSTM -> einsum with a learned (d, d) map."""

    def __init__(self, d: int = 16, heads: int = 2, dropout: float = 0.0) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, dropout=dropout, batch_first=True)
        self.lstm = nn.LSTM(d, d, batch_first=True)
        self.mix = nn.Parameter(torch.zeros(d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, _ = self.attn(x, x, x, need_weights=False)  # (N, T, d)
        h, _ = self.lstm(a)  # (N, T, d)
        return torch.einsum("ntd,de->nte", h, self.mix)  # (N, T, d)


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): batch 2, T = 8, d = 16, in eval mode (MultiheadAttention takes its fused fast path)."""
    return MhaLstm().eval(), (torch.zeros(2, 8, 16),)


def factory_train() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): the same model in train mode, as nn.Module builds it."""
    return MhaLstm(), (torch.zeros(2, 8, 16),)


def factory_train_dropout() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): in train mode with attention dropout 0.1, as a user's freshly built model is: SDPA with dropout
    runs on the CPU's math path (its matmuls visible to every dispatch counter)."""
    return MhaLstm(dropout=0.1), (torch.zeros(2, 8, 16),)

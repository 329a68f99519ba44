"""A user's sequence model: an embedding, a dilated Conv1d stack with pooling, a 2-layer bidirectional GRU, a head."""

import torch
from torch import nn


class SequenceNet(nn.Module):
    """ids (N, T) -> Embedding(100, 16) -> Conv1d(16, 16, 3, pad 1), ReLU, Conv1d(16, 16, 3, dilation 2, pad 2)
    -> GRU(16, 16, 2 layers, bidirectional) -> Linear(32, 4)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(100, 16)
        self.convs = nn.Sequential(
            nn.Conv1d(16, 16, 3, padding=1), nn.ReLU(), nn.Conv1d(16, 16, 3, padding=2, dilation=2)
        )
        self.rnn = nn.GRU(16, 16, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(32, 4)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.convs(self.embed(ids).transpose(1, 2)).transpose(1, 2)  # (N, T, 16)
        h, _ = self.rnn(x)  # (N, T, 32)
        out: torch.Tensor = self.head(h)  # (N, T, 4)
        return out


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): ids (2, 8); in eval mode."""
    return SequenceNet().eval(), (torch.zeros(2, 8, dtype=torch.long),)

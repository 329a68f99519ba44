"""A ModuleList of unlike layers, as diffusers writes its feed-forward (ff.net = [GELU, Dropout, Linear]) and its
attention output (to_out = [Linear, Dropout])."""

import torch
from torch import nn


class UnlikeList(nn.Module):
    """x (N, T, 8) -> GELU, Dropout, Linear(8, 16) -> Linear(16, 8), Dropout."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.ModuleList([nn.GELU(), nn.Dropout(0.0), nn.Linear(8, 16)])
        self.to_out = nn.ModuleList([nn.Linear(16, 8), nn.Dropout(0.0)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.net:
            x = layer(x)  # (N, T, 16) after the Linear
        for layer in self.to_out:
            x = layer(x)  # (N, T, 8)
        return x


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): x (2, 4, 8)."""
    return UnlikeList(), (torch.zeros(2, 4, 8),)

"""One module object at three paths, as CoaT shares its conv position encodings between a stage's blocks: a model
attribute and each of two blocks hold the same Conv2d."""

import torch
from torch import nn


class Block(nn.Module):
    """x (N, 4, 8, 8) -> the shared conv(x)."""

    def __init__(self, conv: nn.Conv2d) -> None:
        super().__init__()
        self.conv = conv

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y: torch.Tensor = self.conv(x)  # (N, 4, 8, 8)
        return y


class SharedModule(nn.Module):
    """x (N, 4, 8, 8) -> two blocks, each the same Conv2d(4, 4, 3, padding=1), reachable at conv, blocks.0.conv and
    blocks.1.conv."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.blocks = nn.ModuleList([Block(self.conv), Block(self.conv)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)  # (N, 4, 8, 8)
        return x


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): x (1, 4, 8, 8)."""
    return SharedModule(), (torch.zeros(1, 4, 8, 8),)

"""A video classifier's stem and head as in r3d_18: Conv3d, 3-D average pooling over time and space, a Linear."""

import torch
from torch import nn


class VideoPool(nn.Module):
    """x (N, 3, 4, 8, 8) -> Conv3d(3, 4, 3, pad 1) -> AvgPool3d(2) -> AdaptiveAvgPool3d(1) -> Linear(4, 5) -> (N, 5)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv3d(3, 4, 3, padding=1, bias=False)
        self.pool = nn.AvgPool3d(2)
        self.avgpool = nn.AdaptiveAvgPool3d(1)
        self.fc = nn.Linear(4, 5, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pool(self.conv(x))  # (N, 4, 2, 4, 4)
        out: torch.Tensor = self.fc(self.avgpool(y).flatten(1))  # (N, 5)
        return out


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): N = 2 clips of 4 frames at 8 x 8; in eval mode."""
    return VideoPool().eval(), (torch.zeros(2, 3, 4, 8, 8),)

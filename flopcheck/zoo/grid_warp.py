"""An image warp by F.grid_sample (a spatial transformer or optical-flow user's module) between two convolutions."""

import torch
import torch.nn.functional as F
from torch import nn


class GridWarp(nn.Module):
    """x (N, 4, 8, 8) -> Conv2d 3x3 -> grid_sample at a flow-shifted grid (bilinear) -> Conv2d 1x1 -> (N, 4, 8, 8)."""

    def __init__(self, c: int = 4) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.flow = nn.Conv2d(c, 2, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)  # (N, C, H, W)
        grid = self.flow(y).permute(0, 2, 3, 1)  # (N, H, W, 2)
        return F.grid_sample(y, grid, align_corners=False)  # (N, C, H, W)


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): N = 2, 4 channels at 8 x 8; in eval mode."""
    return GridWarp().eval(), (torch.zeros(2, 4, 8, 8),)

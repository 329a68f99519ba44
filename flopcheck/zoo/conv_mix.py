"""A user's decoder as people write them: grouped and depthwise convolutions, a transposed convolution, nearest and
bilinear upsampling, a custom autograd.Function, and one block used twice (one module at one path, called twice)."""

from typing import Any

import torch
from torch import nn


class Scale(torch.autograd.Function):
    """y = 2x, with its own backward: counters that trace or hook see no layer in it."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad * 2


class ConvMix(nn.Module):
    """x (N, 8, 8, 8) -> grouped conv -> depthwise conv -> shared 1x1 conv twice -> transposed conv (x2) ->
    upsample x2 (nearest, then bilinear) -> Scale."""

    def __init__(self) -> None:
        super().__init__()
        self.grouped = nn.Conv2d(8, 16, 3, padding=1, groups=4)
        self.depthwise = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.shared = nn.Conv2d(16, 16, 1)
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.nearest = nn.Upsample(scale_factor=2, mode="nearest")
        self.bilinear = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.depthwise(self.grouped(x))  # (N, 16, 8, 8)
        x = self.shared(self.shared(x))  # (N, 16, 8, 8), the same module twice
        x = self.up(x)  # (N, 8, 16, 16)
        y: torch.Tensor = Scale.apply(self.bilinear(self.nearest(x)))  # (N, 8, 64, 64)
        return y


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): batch 2, 8 channels, 8x8."""
    return ConvMix(), (torch.zeros(2, 8, 8, 8),)

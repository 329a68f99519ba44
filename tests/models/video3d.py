"""A tiny video stem of 3D convolutions only (S3D's shape of layer): every multiply-add is an aten::conv3d, so a
counter with no conv3d formula (torch.profiler's list) counts nothing of it."""

import torch
from torch import nn


class Video3d(nn.Module):
    """conv3d 2 -> 4 (kernel 1 x 3 x 3, padding (0, 1, 1)), ReLU, conv3d 4 -> 4 (kernel 3 x 1 x 1, padding 1, 0, 0)."""

    def __init__(self) -> None:
        super().__init__()
        self.spatial = nn.Conv3d(2, 4, (1, 3, 3), padding=(0, 1, 1), bias=False)
        self.temporal = nn.Conv3d(4, 4, (3, 1, 1), padding=(1, 0, 0), bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.spatial(x))  # (1, 4, 2, 4, 4)
        return self.temporal(x)  # (1, 4, 2, 4, 4)


def factory() -> tuple[nn.Module, tuple[torch.Tensor], dict[str, torch.Tensor]]:
    """The stem in eval, on one clip of 2 frames of 4 x 4 pixels, 2 channels: x (1, 2, 2, 4, 4)."""
    return Video3d().eval(), (torch.randn(1, 2, 2, 4, 4),), {}

"""A deformable-conv model for the tests: a Conv2d(4, 18, 3x3) gives the offsets of torchvision's DeformConv2d(4, 6,
3x3), an operator outside aten (torchvision::deform_conv2d)."""

import torch
from torchvision.ops import DeformConv2d


class Deform(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.offset, self.dcn = torch.nn.Conv2d(4, 18, 3, padding=1), DeformConv2d(4, 6, 3, padding=1)

    def forward(self, x):  # x (N, 4, H, W)
        return self.dcn(x, self.offset(x))  # (N, 6, H, W)

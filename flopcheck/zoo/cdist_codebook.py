"""A vector-quantizer's lookup: a Linear, then torch.cdist from each token to every codebook entry (a retrieval or
VQ-VAE user's module); cdist runs as one op, aten._euclidean_dist, a matmul of [x, |x|^2, 1] by [y, 1, |y|^2]."""

import torch
from torch import nn


class CdistCodebook(nn.Module):
    """x (N, T, d) -> Linear(d, d) -> cdist to codes (K, d) -> (N, T, K) distances."""

    def __init__(self, d: int = 8, codes: int = 40) -> None:
        super().__init__()
        self.proj = nn.Linear(d, d, bias=False)
        self.codes = nn.Parameter(torch.zeros(codes, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.proj(x)  # (N, T, d)
        return torch.cdist(z, self.codes.expand(z.shape[0], -1, -1))  # (N, T, K)


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): N = 2, T = 30 tokens of d = 8, a codebook of K = 40 (cdist's matmul path: T, K > 25)."""
    return CdistCodebook().eval(), (torch.zeros(2, 30, 8),)

"""A hierarchical ViT's two attentions, both by F.scaled_dot_product_attention: local attention over windows as one
5-D call (N, windows, heads, tokens, e), which the CPU runs on its math path (plain matmuls), and global attention as
a 4-D call, which it runs fused."""

import torch
import torch.nn.functional as F
from torch import nn


class WindowSdpa(nn.Module):
    """x (N, T, d) -> qkv Linear -> windowed SDPA (5-D) -> global SDPA (4-D) -> out Linear -> (N, T, d)."""

    def __init__(self, d: int = 16, heads: int = 2, window: int = 4) -> None:
        super().__init__()
        self.heads, self.window = heads, window
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, t, d = x.shape
        h, w, e = self.heads, self.window, d // self.heads
        q, k, v = self.qkv(x).chunk(3, -1)  # (N, T, d) each
        local = [z.reshape(n, t // w, w, h, e).transpose(2, 3) for z in (q, k, v)]  # (N, T/w, h, w, e)
        y = F.scaled_dot_product_attention(*local).transpose(2, 3).reshape(n, h, t, e)  # (N, h, T, e)
        y = F.scaled_dot_product_attention(y, y, y)  # (N, h, T, e): global, fused on the CPU
        out: torch.Tensor = self.out(y.transpose(1, 2).reshape(n, t, d))  # (N, T, d)
        return out


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): N = 2, T = 8 tokens of d = 16, 2 heads of e = 8, windows of 4; in eval mode."""
    return WindowSdpa().eval(), (torch.zeros(2, 8, 16),)

"""Packed sequences: three documents of 3, 5 and 8 tokens in one row of 16, attending within their own document
through a block-diagonal mask built from their offsets (cu_seqlens), as packed LM training does."""

import torch
import torch.nn.functional as F
from torch import nn


class PackedAttention(nn.Module):
    """x (1, T, d), cu_seqlens (n + 1,) -> qkv Linear -> SDPA under the documents' block-diagonal mask -> proj."""

    def __init__(self, dim: int = 8, heads: int = 2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)  # (b, h, T, e)
        lengths = cu_seqlens[1:] - cu_seqlens[:-1]  # (n,)
        doc = torch.repeat_interleave(torch.arange(len(lengths), device=x.device), lengths)  # (T,): each token's doc
        mask = doc[:, None] == doc[None, :]  # (T, T): block diagonal
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (b, h, T, e)
        projected: torch.Tensor = self.proj(out.transpose(1, 2).reshape(b, t, d))  # (b, T, dim)
        return projected


def model() -> PackedAttention:
    return PackedAttention()


def inputs(net: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    """x (1, 16, 8) and the offsets of documents of 3, 5 and 8 tokens."""
    return torch.zeros(1, 16, 8), torch.tensor([0, 3, 8, 16])


def factory() -> tuple[nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    """(model, args): documents of 3, 5 and 8 tokens packed in one row of 16, d = 8, 2 heads of e = 4; in eval."""
    net = model().eval()
    return net, inputs(net)

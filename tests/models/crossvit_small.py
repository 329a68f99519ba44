"""timm's CrossViT at a small size: one multi-scale block, a 12 px and a 16 px branch (dims 8 and 16, 2 heads each) on
a 48 px image, each branch's class token fused into the other by a CrossAttention."""

import torch
from timm.models.crossvit import CrossVit
from torch import nn


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): 4 x 4 + 1 = 17 and 3 x 3 + 1 = 10 tokens."""
    model = CrossVit(
        img_size=48,
        patch_size=(12, 16),
        embed_dim=(8, 16),
        depth=((1, 1, 0),),
        num_heads=(2, 2),
        mlp_ratio=(2.0, 2.0, 1.0),
        num_classes=10,
    )
    return model.eval(), (torch.zeros(1, 3, 48, 48),)

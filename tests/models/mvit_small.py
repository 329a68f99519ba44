"""torchvision's MViT at a small size: two blocks of MViTv2's pooled attention with relative positions (two einsums
and a torch.matmul beside QK^T and attn@V), 8 channels, 1 head, on a (1, 3, 4, 32, 32) clip."""

import torch
from torch import nn
from torchvision.models.video.mvit import MSBlockConfig, MViT


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): the patch embedding makes (t, h, w) = (2, 8, 8) tokens and a class token; k and v pooled by
    (1, 2, 2) to (2, 4, 4); q not pooled."""
    block = MSBlockConfig(1, 8, 8, kernel_q=[1, 1, 1], kernel_kv=[3, 3, 3], stride_q=[1, 1, 1], stride_kv=[1, 2, 2])
    model = MViT(
        spatial_size=(32, 32),
        temporal_size=4,
        block_setting=[block, block],  # one block divides by 0 (its stochastic depth's i / (blocks - 1))
        residual_pool=True,
        residual_with_cls_embed=False,
        rel_pos_embed=True,
        proj_after_attn=True,
        dropout=0.0,
        num_classes=10,
    )
    return model.eval(), (torch.zeros(1, 3, 4, 32, 32),)

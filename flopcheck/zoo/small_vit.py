"""torchvision's VisionTransformer at a small size (its encoder blocks hold nn.MultiheadAttention), batch 2."""

import torch
from torch import nn


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): image 32, patch 16 (T = 4 + 1 class token), 1 layer, d = 32, 2 heads, MLP 64, batch 2;
    in eval mode."""
    # lazy: torchvision is an optional library (timm's dependency, not flopcheck's)
    from torchvision.models.vision_transformer import VisionTransformer

    model = VisionTransformer(
        image_size=32, patch_size=16, num_layers=1, num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=10
    )
    return model.eval(), (torch.zeros(2, 3, 32, 32),)

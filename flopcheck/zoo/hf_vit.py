"""transformers' ViTModel at a small size: patch embedding as a conv, its own attention (SDPA), a pooler."""

from typing import Any

import torch
from torch import nn


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...], dict[str, Any]]:
    """(model, args, kwargs): image 32, patch 8 (T = 16 + 1 class token), 2 layers, d = 32, 2 heads, MLP 64;
    pixel_values (1, 3, 32, 32); in eval mode."""
    from transformers import ViTConfig, ViTModel  # lazy: transformers is optional

    config = ViTConfig(
        image_size=32, patch_size=8, num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64
    )
    model: nn.Module = ViTModel(config)
    return model.eval(), (), {"pixel_values": torch.zeros(1, 3, 32, 32), "return_dict": False}

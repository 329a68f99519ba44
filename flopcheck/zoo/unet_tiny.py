"""diffusers' UNet2DConditionModel (Stable Diffusion's denoiser) at a tiny width: ResNet blocks, a cross-attention
transformer down and up, timestep embedding, down- and upsampling."""

from collections.abc import Callable
from typing import Any, cast

import torch
from torch import nn


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...], dict[str, Any]]:
    """(model, args, kwargs): channels (32, 64), 1 layer per block, cross-attention dim 32, heads of 8; latent
    (1, 4, 8, 8), timestep 1, text (1, 8, 32); in eval mode."""
    from diffusers import UNet2DConditionModel  # lazy: diffusers is optional

    # diffusers' __init__ is untyped and mypy does not see its nn.Module base: its class as what it makes
    make = cast("Callable[..., nn.Module]", UNet2DConditionModel)
    model = make(
        sample_size=8,
        in_channels=4,
        out_channels=4,
        layers_per_block=1,
        block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32,
        attention_head_dim=8,
        norm_num_groups=8,
    )
    args = (torch.zeros(1, 4, 8, 8), torch.tensor([1]), torch.zeros(1, 8, 32))
    return model.eval(), args, {"return_dict": False}

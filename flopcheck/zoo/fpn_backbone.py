"""torchvision's detection backbone: a ResNet-18 under a feature pyramid (lateral 1x1 convs, nearest upsampling,
3x3 output convs, a max-pooled extra level), as Faster R-CNN builds it, without weights."""

import torch
from torch import nn


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): resnet_fpn_backbone('resnet18'), every layer trainable, 256 channels out; image (1, 3, 64, 64);
    in eval mode."""
    # lazy: torchvision is an optional library (timm's dependency, not flopcheck's)
    from torchvision.models.detection.backbone_utils import resnet_fpn_backbone

    model = resnet_fpn_backbone(backbone_name="resnet18", weights=None, trainable_layers=5)
    return model.eval(), (torch.zeros(1, 3, 64, 64),)

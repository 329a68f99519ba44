"""torch's own nn.Transformer at a small size: its encoder layer's fused fast path in eval (one op for the whole
layer) and its decoder's MultiheadAttention (self and cross), batch first."""

import torch
from torch import nn


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): d = 16, 2 heads, feed-forward 32, 1 encoder and 1 decoder layer; src (2, 8, 16), tgt (2, 4, 16);
    in eval mode."""
    model = nn.Transformer(
        d_model=16,
        nhead=2,
        num_encoder_layers=1,
        num_decoder_layers=1,
        dim_feedforward=32,
        dropout=0.0,
        batch_first=True,
    )
    return model.eval(), (torch.zeros(2, 8, 16), torch.zeros(2, 4, 16))

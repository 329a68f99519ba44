"""transformers' GPT-2 at a small config with an attention mask: its mask code reads a value (.item()), so its
forward cannot run on meta tensors."""

from typing import Any

import torch
from torch import nn


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...], dict[str, Any]]:
    """(model, args, kwargs): 2 layers, d = 64, 2 heads, vocabulary 1,000; input_ids and attention_mask (2, 16)."""
    from transformers import GPT2Config, GPT2LMHeadModel  # lazy: transformers is optional

    config = GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=1000, n_positions=128, use_cache=False)
    model: nn.Module = GPT2LMHeadModel(config)
    model.eval()
    ids = torch.zeros(2, 16, dtype=torch.long)
    return model, (), {"input_ids": ids, "attention_mask": torch.ones(2, 16, dtype=torch.long), "return_dict": False}

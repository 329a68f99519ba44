"""GPT-2 as transformers builds it, with an attention mask, whose values transformers' mask code reads."""

import torch
from transformers import GPT2Config, GPT2Model


def build():
    m = GPT2Model(GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=1000, n_positions=128))
    ids = torch.zeros(1, 32, dtype=torch.long)
    return m, (ids,), {"attention_mask": torch.ones(1, 32, dtype=torch.long), "use_cache": False}

"""Count a causal LM's generation step by step on meta with transformers' own KV cache (DynamicCache): the prefill
forward writes the cache, each decode step runs one token through the model against it, and every forward is one
exact count."""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch import nn

from flopcheck.exact.counter import count_forward
from flopcheck.exact.generation import Generation


class GenerationError(ValueError):
    """A model that cannot be run with a KV cache: one line saying why."""


def cache_keyword(model: nn.Module) -> str:
    """The forward's cache argument: 'cache' (transformers 5.x's name) or 'past_key_values'."""
    params = inspect.signature(model.forward).parameters
    for name in ("cache", "past_key_values"):
        if name in params:
            return name
    raise GenerationError(
        f"{type(model).__name__}.forward takes no past_key_values: --generate counts a causal LM's decoding "
        f"(a transformers *ForCausalLM class)"
    )


def weight_elements(model: nn.Module, batch: int) -> int:
    """Elements of weights one decode step reads: every parameter once, but an embedding table only the rows its
    batch of tokens gathers (batch x width), unless a layer also multiplies by it (tied lm_head)."""
    tables = {id(m.weight): m.weight for m in model.modules() if isinstance(m, nn.Embedding)}
    multiplied = {id(m.weight) for m in model.modules() if isinstance(m, nn.Linear)}
    total = 0
    for p in model.parameters():  # each parameter once, shared ones too
        if id(p) in tables and id(p) not in multiplied:
            total += batch * int(p.shape[-1])
        else:
            total += p.numel()
    return total


STATES = ("conv_states", "recurrent_states")  # a linear-attention or SSM layer's cache: its state, one per index


def cache_elements(cache: Any) -> int:
    """Elements the cache holds, what the next step reads, from transformers' cache layers: an attention layer's K
    and V (growing a position a step), a Mamba or linear-attention layer's conv and recurrent states (its cache is
    its state: a fixed size, read whole every step)."""
    total = 0
    for layer in getattr(cache, "layers", ()):
        for name in ("keys", "values"):
            t = getattr(layer, name, None)
            if isinstance(t, torch.Tensor):
                total += t.numel()
        for name in STATES:
            states = getattr(layer, name, None)
            for t in states.values() if isinstance(states, dict) else ():
                total += t.numel() if isinstance(t, torch.Tensor) else 0
    return total


def check_positions(model: nn.Module, prompt: int, steps: int) -> None:
    """A generation past the positions the model was made for (its config's max_position_embeddings: a learned
    position table has no row past it, a rotary one was never trained there) is refused in one line."""
    limit = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 and prompt + steps > limit:
        raise GenerationError(
            f"a prompt of {prompt} tokens and {steps} decode steps reach position {prompt + steps}, past "
            f"{type(model).__name__}'s max_position_embeddings {limit}: give P + N <= {limit}"
        )


def count_generation(model: nn.Module, prompt: int, steps: int, batch: int = 1, device: str = "meta") -> Generation:
    """Prefill P tokens, then `steps` decode steps of one token, each counted exactly, with a DynamicCache."""
    from transformers import DynamicCache

    key = cache_keyword(model)
    check_positions(model, prompt, steps)
    cache = DynamicCache(config=getattr(model, "config", None))
    ids = torch.zeros(batch, prompt, dtype=torch.long, device=device)  # (batch, P): id 0, in every vocabulary
    kwargs = {key: cache, "use_cache": True, "return_dict": False}
    prefill = count_forward(model, (ids,), kwargs=kwargs).total
    decode, cached = [], []
    for _ in range(steps):
        token = torch.zeros(batch, 1, dtype=torch.long, device=device)  # (batch, 1): the token just generated
        decode.append(count_forward(model, (token,), kwargs=kwargs).total)
        cached.append(cache_elements(cache))  # after the step's update: the positions it attended
    return Generation(prompt, batch, prefill, tuple(decode), weight_elements(model, batch), tuple(cached))

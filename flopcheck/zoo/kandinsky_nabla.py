"""diffusers' Kandinsky 5 video DiT (Kandinsky5Transformer3DModel) at a tiny width with its NABLA sparse attention:
each visual self-attention builds a flex_attention BlockMask of 64 x 64 blocks from its queries and keys (nablaT_v2)
and runs through diffusers' "flex" backend, so a count on real tensors reads the blocks it selected.

Its selection depends on values. `flopcheck count flopcheck.zoo.kandinsky_nabla:factory --device cpu` zeroes the
weights: every query and key is 0, NABLA's block map is uniform (1/4 a block of the 4), and P = 0.2 keeps one block
a row (ascending cumulative mass 0.25, 0.5, 0.75 short of 1 - P = 0.8, then 1.0), the last of 4 tied values in
torch's CPU sort: key block 3. With the STA mask (the row's own frame, 2 blocks), rows 0 and 1 list {0, 1, 3}, rows
2 and 3 {2, 3}: 10 of 16 blocks (tests/test_nabla.py). Kandinsky 5 Lite's 10 s configs' P = 0.9 would keep every
block of a uniform map (and their wT = 11 spans both frames). Counted in this process with the model's own weights
(`flopcheck.count`), it selects by those. On meta the blocks are unknown: counted dense, and said.
"""

from collections.abc import Callable
from typing import Any, Protocol, cast

import torch
from torch import nn

FRAMES, HEIGHT, WIDTH = 2, 32, 16  # latent video: 2 frames of 32 x 16, patches 2 x 2: 16 x 8 = 128 tokens a frame
TEXT_TOKENS = 8
CONFIG: dict[str, Any] = {
    "in_visual_dim": 4,
    "out_visual_dim": 4,
    "in_text_dim": 16,
    "in_text_dim2": 16,
    "time_dim": 16,
    "patch_size": (1, 2, 2),
    "model_dim": 32,
    "ff_dim": 64,
    "num_text_blocks": 1,
    "num_visual_blocks": 2,
    "axes_dims": (4, 6, 6),  # head dim 16: 2 heads
    "attention_type": "nabla",
    "attention_P": 0.2,  # keep the fewest blocks holding 20% of each row's map
    "attention_wT": 1,  # STA: the query's own frame
    "attention_wH": 3,
    "attention_wW": 3,
    "attention_add_sta": True,
    "attention_method": "topcdf",
}


def model() -> nn.Module:
    """Kandinsky5Transformer3DModel(**CONFIG), through diffusers' flex backend, where NABLA's BlockMask runs."""
    from diffusers import Kandinsky5Transformer3DModel  # lazy: diffusers is optional

    # diffusers' __init__ is untyped and mypy does not see its nn.Module base: its class as what it makes
    net = cast("Callable[..., nn.Module]", Kandinsky5Transformer3DModel)(**CONFIG)
    cast(_Backends, net).set_attention_backend("flex")
    return net


class _Backends(Protocol):
    """A diffusers model's attention backends (ModelMixin.set_attention_backend, untyped in diffusers)."""

    def set_attention_backend(self, backend: str) -> None: ...


def sparse_params(net: nn.Module, device: torch.device | str) -> dict[str, Any]:
    """The pipeline's sparse_params for this latent (Kandinsky5T2VPipeline.get_sparse_params): the STA mask of its
    (frames, height / 16, width / 16) grid of 8 x 8-token blocks, NABLA's P, tokens in fractal order."""
    from diffusers.pipelines.kandinsky5.pipeline_kandinsky import Kandinsky5T2VPipeline

    c: Any = net.config  # diffusers' FrozenDict: untyped
    t, h, w = FRAMES, HEIGHT // 2 // 8, WIDTH // 2 // 8
    sta = Kandinsky5T2VPipeline.fast_sta_nabla(t, h, w, c.attention_wT, c.attention_wH, c.attention_wW, device=device)
    return {"sta_mask": sta[None, None], "to_fractal": True, "P": c.attention_P}


def inputs(net: nn.Module) -> tuple[tuple[torch.Tensor, ...], dict[str, Any]]:
    """latent (1, 2, 32, 16, 4) channels last, text (1, 8, 16), timestep, pooled text (1, 16), RoPE positions and
    the sparse_params; positional (hidden_states, encoder_hidden_states, timestep, pooled_projections)."""
    device = next(net.parameters()).device
    args = (
        torch.zeros(1, FRAMES, HEIGHT, WIDTH, 4, device=device),
        torch.zeros(1, TEXT_TOKENS, 16, device=device),
        torch.ones(1, device=device),
        torch.zeros(1, 16, device=device),
    )
    rope = [torch.arange(n, device=device) for n in (FRAMES, HEIGHT // 2, WIDTH // 2)]
    kwargs = {
        "visual_rope_pos": rope,
        "text_rope_pos": torch.arange(TEXT_TOKENS, device=device),
        "sparse_params": sparse_params(net, device),
        "return_dict": False,
    }
    return args, kwargs


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...], dict[str, Any]]:
    """(model, args, kwargs): 1 text and 2 visual blocks, width 32, 2 heads of 16, 256 visual tokens (4 NABLA blocks
    of 64) and 8 text tokens; in eval mode."""
    net = model().eval()
    args, kwargs = inputs(net)
    return net, args, kwargs

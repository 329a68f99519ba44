"""Inputs of one forward of a diffusers transformer, one builder per class, by the pipeline's own convention.

Pixels become latents through the VAE's stride (8 per side; video 4 per frame, 4k+1 frames), the
text encoder's output is (B, S, its width), and the timestep is one number per sample. The defaults
are the published pipelines' (the inference arithmetic's inputs): FLUX and SD3 at 1024x1024, Wan at 832x480 x 81
frames, CogVideoX at 720x480 x 49, HunyuanVideo at 1280x720 x 129, DiT at its sample size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from flopcheck.specs import Options, SpecError


@dataclass(frozen=True)
class Convention:
    """A class's default input: pixels (W, H), frames (1 for images), text tokens S, and its builder."""

    resolution: tuple[int, int] | None  # None: the config's sample size x 8
    frames: int
    text_tokens: int
    build: Callable[[Any, int, int, int, int, int, str], tuple[tuple, dict]]  # (config, B, F, H, W, S, device)


def _latent(side: int, stride: int, what: str) -> int:
    if side % stride:
        raise SpecError(f"{what} {side} is not a multiple of {stride} (the VAE's stride x the patch): give one that is")
    return side // stride


def _dit(c, n, f, h, w, s, device):
    """DiTTransformer2DModel(hidden_states (B, C, h, w), timestep (B,), class_labels (B,))."""
    long = dict(dtype=torch.long, device=device)
    return (torch.empty(n, c.in_channels, h // 8, w // 8, device=device),), {
        "timestep": torch.zeros(n, **long),
        "class_labels": torch.zeros(n, **long),
    }


def _sd3(c, n, f, h, w, s, device):
    """SD3Transformer2DModel(hidden_states (B, C, h, w), encoder_hidden_states (B, S, 4096), pooled (B, 2048), t)."""
    return (torch.empty(n, c.in_channels, h // 8, w // 8, device=device),), {
        "encoder_hidden_states": torch.empty(n, s, c.joint_attention_dim, device=device),
        "pooled_projections": torch.empty(n, c.pooled_projection_dim, device=device),
        "timestep": torch.zeros(n, device=device),
    }


def _flux(c, n, f, h, w, s, device):
    """FluxTransformer2DModel: latents packed 2x2 into (B, h/2*w/2, 64); text (B, S, 4096); ids per token."""
    tokens = (h // 16) * (w // 16)
    kwargs = {
        "encoder_hidden_states": torch.empty(n, s, c.joint_attention_dim, device=device),
        "pooled_projections": torch.empty(n, c.pooled_projection_dim, device=device),
        "timestep": torch.zeros(n, device=device),
        "img_ids": torch.zeros(tokens, 3, device=device),
        "txt_ids": torch.zeros(s, 3, device=device),
    }
    if c.guidance_embeds:
        kwargs["guidance"] = torch.zeros(n, device=device)
    return (torch.empty(n, tokens, c.in_channels, device=device),), kwargs


def _frames(f: int) -> int:
    """Latent frames of a 4x temporal VAE: (F - 1) / 4 + 1."""
    if f < 1 or (f - 1) % 4:
        raise SpecError(f"frames {f} must be 4k+1 for a 4x temporal VAE (81, 49, 129, ...)")
    return (f - 1) // 4 + 1


def _wan(c, n, f, h, w, s, device):
    """WanTransformer3DModel(hidden_states (B, C, F', h, w), timestep (B,), encoder_hidden_states (B, S, 4096))."""
    return (torch.empty(n, c.in_channels, _frames(f), h // 8, w // 8, device=device),), {
        "timestep": torch.zeros(n, device=device),
        "encoder_hidden_states": torch.empty(n, s, c.text_dim, device=device),
    }


def _cogvideox(c, n, f, h, w, s, device):
    """CogVideoXTransformer3DModel(hidden_states (B, F', C, h, w): frames before channels; text (B, S, 4096))."""
    return (torch.empty(n, _frames(f), c.in_channels, h // 8, w // 8, device=device),), {
        "encoder_hidden_states": torch.empty(n, s, c.text_embed_dim, device=device),
        "timestep": torch.zeros(n, device=device),
    }


def _hunyuan(c, n, f, h, w, s, device):
    """HunyuanVideoTransformer3DModel(hidden_states (B, C, F', h, w), t, text (B, S, 4096) and its mask, pooled)."""
    kwargs = {
        "timestep": torch.zeros(n, device=device),
        "encoder_hidden_states": torch.empty(n, s, c.text_embed_dim, device=device),
        "encoder_attention_mask": torch.ones(n, s, device=device),
        "pooled_projections": torch.empty(n, c.pooled_projection_dim, device=device),
    }
    if c.guidance_embeds:
        kwargs["guidance"] = torch.zeros(n, device=device)
    return (torch.empty(n, c.in_channels, _frames(f), h // 8, w // 8, device=device),), kwargs


# stride: pixels per token side (VAE 8 x patch), checked before building
CONVENTIONS: dict[str, tuple[Convention, int]] = {
    "DiTTransformer2DModel": (Convention(None, 1, 0, _dit), 16),
    "SD3Transformer2DModel": (Convention((1024, 1024), 1, 333, _sd3), 16),  # CLIP 77 + T5 256
    "FluxTransformer2DModel": (Convention((1024, 1024), 1, 512, _flux), 16),
    "WanTransformer3DModel": (Convention((832, 480), 81, 512, _wan), 16),
    "CogVideoXTransformer3DModel": (Convention((720, 480), 49, 226, _cogvideox), 16),
    "HunyuanVideoTransformer3DModel": (Convention((1280, 720), 129, 256, _hunyuan), 16),
}


def diffusers_inputs(cls: str, config, o: Options, device: str) -> tuple[tuple, dict, str]:
    """(args, kwargs, a line saying what they are) for one forward of a diffusers class at the options' input."""
    if cls not in CONVENTIONS:
        raise SpecError(
            f"flopcheck has no input builder for diffusers' {cls}: give its inputs with --inputs "
            f"module:fn, or use one of {', '.join(CONVENTIONS)}"
        )
    conv, stride = CONVENTIONS[cls]
    if o.frames and conv.frames == 1:
        raise SpecError(f"frames apply to video models; {cls} is an image model")
    w, h = o.resolution or conv.resolution or (config.sample_size * 8, config.sample_size * 8)
    _latent(w, stride, "width"), _latent(h, stride, "height")
    f, s = o.frames or conv.frames, o.text_tokens or conv.text_tokens
    args, kwargs = conv.build(config, o.batch, f, h, w, s, device)
    kwargs["return_dict"] = False  # a tuple of tensors, which every counter (jit traces too) can take
    words = (
        f"input {w}x{h} px"
        + (f" x {f} frames" if conv.frames > 1 else "")
        + (f", {s} text tokens" if conv.text_tokens else "")
        + f", batch {o.batch} (the pipeline's convention)"
    )
    return args, kwargs, words

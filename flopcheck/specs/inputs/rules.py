"""A diffusers transformer's forward inputs, one rule per parameter: (config, latent grid) -> its value, or None
where it does not apply. The shared rules fill any class's parameter of that name; the others are the conventions'
own (conventions.py names which class takes which)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch

from flopcheck.specs.inputs.common import first_set


@dataclass(frozen=True)
class Grid:
    """One forward's latent grid: batch n, latent frames f (1: an image), latent rows h and columns w, text tokens s."""

    n: int
    f: int
    h: int
    w: int
    s: int
    device: str

    def empty(self, *shape: int) -> torch.Tensor:
        return torch.empty(*shape, device=self.device)

    def zeros(self, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.zeros(*shape, dtype=dtype, device=self.device)


# how the latent is laid out as hidden_states, from the grid and the config's input channels
LAYOUTS: dict[str, Callable[[Grid, int], tuple[int, ...]]] = {
    "nchw": lambda g, c: (g.n, c, g.h, g.w),
    "ncfhw": lambda g, c: (g.n, c, g.f, g.h, g.w),
    "nfchw": lambda g, c: (g.n, g.f, c, g.h, g.w),  # CogVideoX: frames before channels
    "packed": lambda g, c: (g.n, g.f * (g.h // 2) * (g.w // 2), c),  # FLUX: 2x2 latent patches as tokens of c = 4C
    "tokens": lambda g, c: (g.n, g.f * g.h * g.w, c),  # LTX-Video: each latent pixel one token
    "nfhwc": lambda g, c: (g.n, g.f, g.h, g.w, c),  # Kandinsky 5: channels last
}

IN_CHANNELS = ("in_channels", "in_visual_dim", "in_dim")
TEXT_WIDTH = (
    "joint_attention_dim",
    "text_embed_dim",
    "text_dim",
    "caption_channels",
    "cap_feat_dim",
    "context_in_dim",
    "text_in_dim",
    "in_text_dim",
    "cross_attention_dim",
    "condition_dim",
    "text_hidden_dim",
    "encoder_hidden_size",
)
POOLED_WIDTH = ("pooled_projection_dim", "in_text_dim2")


def text_states(c: Any, g: Grid) -> torch.Tensor | None:
    width = first_set(c, TEXT_WIDTH)
    return g.empty(g.n, g.s, width) if width and g.s else None


def _pooled(c: Any, g: Grid) -> torch.Tensor | None:
    width = first_set(c, POOLED_WIDTH)
    return g.empty(g.n, width) if width else None


def mask(c: Any, g: Grid) -> torch.Tensor | None:
    """A text mask of ones (every text token attends), float as the pipelines that add it as a bias pass it."""
    return torch.ones(g.n, g.s, device=g.device) if g.s else None


def bool_mask(c: Any, g: Grid) -> torch.Tensor | None:
    """A text mask of ones as a pipeline that gathers the valid tokens by it passes it (Mochi's: .bool()): a count
    on real tensors zeroes float inputs, and a float one would drop every text token."""
    return torch.ones(g.n, g.s, dtype=torch.bool, device=g.device) if g.s else None


# the inputs the rules make as a text mask of ones, said in the input's words
TEXT_MASKS = ("encoder_attention_mask", "encoder_hidden_states_mask", "encoder_attention_mask_2")


def _axes(c: Any) -> int:
    """How many position ids each token carries (FLUX: 3, FLUX.2: 4): the rotary embedding's axes."""
    axes = getattr(c, "axes_dims_rope", None)
    return len(axes) if isinstance(axes, (list, tuple)) else 3


def _guidance(c: Any, g: Grid) -> torch.Tensor | None:
    return g.zeros(g.n) if getattr(c, "guidance_embeds", False) else None


def _sizes(c: Any, g: Grid) -> torch.Tensor:
    """CogView's micro-conditions (original size, target size, crop): (B, 2) each."""
    return torch.tensor([[g.h * 8, g.w * 8]] * g.n, dtype=torch.float32, device=g.device)


SHARED: dict[str, Callable[[Any, Grid], Any]] = {
    "encoder_hidden_states": text_states,
    "pooled_projections": _pooled,
    "encoder_attention_mask": mask,
    "encoder_hidden_states_mask": mask,
    "img_ids": lambda c, g: g.zeros(g.f * (g.h // 2) * (g.w // 2), _axes(c)),
    "txt_ids": lambda c, g: g.zeros(g.s, _axes(c)) if g.s else None,
    "guidance": _guidance,
    "class_labels": lambda c, g: g.zeros(g.n, dtype=torch.long),
    "original_size": _sizes,
    "target_size": _sizes,
    "crop_coords": lambda c, g: g.zeros(g.n, 2),
}
TIMESTEPS = ("timestep", "timesteps", "t", "timestep_r", "r_timestep")  # one number per sample
# what a pipeline passes though the forward marks it optional; any other shared rule fills a required parameter only
# (HunyuanImage's optional timestep_r turns on a MeanFlow embedder its default config does not build)
CONDITIONING = {
    "encoder_hidden_states",
    "pooled_projections",
    "encoder_attention_mask",
    "encoder_hidden_states_mask",
    "img_ids",
    "txt_ids",
    "guidance",
    "timestep",
    "timesteps",
    "class_labels",
}


def pixart_conditions(c: Any, g: Grid) -> dict[str, torch.Tensor | None]:
    """PixArt-alpha's micro-conditions (a config of sample size 128 uses them unless it says otherwise): resolution
    (B, 2) and aspect ratio (B, 1); None otherwise."""
    use = c.use_additional_conditions
    if not (use if use is not None else c.sample_size == 128):
        return {"resolution": None, "aspect_ratio": None}
    return {"resolution": g.zeros(g.n, 2), "aspect_ratio": g.zeros(g.n, 1)}


def qwen_shapes(c: Any, g: Grid) -> list[list[tuple[int, int, int]]]:
    """Qwen-Image's img_shapes: one [(frames, rows, columns)] of 2x2-packed latent patches per sample."""
    return [[(g.f, g.h // 2, g.w // 2)]] * g.n


def per_sample(fn: Callable[[Any, Grid], Any]) -> Callable[[Any, Grid], list[Any]]:
    """A forward that takes a list with one tensor per sample (Z-Image)."""
    return lambda c, g: [fn(c, replace(g, n=1))[0] for _ in range(g.n)]


def full(value: Callable[[Grid], int], dtype: torch.dtype = torch.long) -> Callable[[Any, Grid], torch.Tensor]:
    return lambda c, g: torch.full((g.n,), value(g), dtype=dtype, device=g.device)


def krea_positions(c: Any, g: Grid) -> torch.Tensor:
    """Krea 2's rotary coordinates: (S + image tokens, 3), text at the origin (its pipeline's prepare_position_ids)."""
    return g.zeros(g.s + (g.h // 2) * (g.w // 2), 3)


def kandinsky_rope(c: Any, g: Grid) -> list[torch.Tensor]:
    """Kandinsky 5's visual rope positions: aranges over latent frames and 2x2-patched rows and columns."""
    return [torch.arange(n, device=g.device) for n in (g.f, g.h // 2, g.w // 2)]


def per_frame(c: Any, g: Grid) -> torch.Tensor:
    """A timestep per sample and latent frame (AnyFlow's): (B, F)."""
    return g.zeros(g.n, g.f)


def joint(g: Grid) -> int:
    """One packed sequence of the text tokens and the 2x2-packed latent tokens (Ideogram 4's): S + (h/2)(w/2)."""
    return g.s + (g.h // 2) * (g.w // 2)


def role(text: int, image: int) -> Callable[[Any, Grid], torch.Tensor]:
    """Ideogram 4's indicator: each token's role, text for the S text tokens and image after them."""
    return lambda c, g: torch.cat(
        [torch.full((g.n, g.s), text, device=g.device), torch.full((g.n, joint(g) - g.s), image, device=g.device)],
        dim=1,
    ).long()


def qwen21_slots(c: Any, g: Grid) -> torch.Tensor:
    """Qwen-Image 2.1's img_mask over its joint sequence: the S text positions, then one slot (True) per 2x2 group
    of the packed target tokens, as its pipeline's append_target_slots builds it."""
    text = torch.zeros(g.n, g.s, dtype=torch.bool, device=g.device)
    return torch.cat([text, torch.ones(g.n, (g.h // 2) * (g.w // 2) // 4, dtype=torch.bool, device=g.device)], dim=1)


def ltx2_audio(c: Any, g: Grid) -> int:
    """LTX-2's audio latents over the video's seconds, as its pipeline rounds them: frames / 24 fps x (sampling rate /
    hop / the audio VAE's temporal factor, which the config's audio_scale_factor states) latents a second (16000 /
    160 / 4 = 25)."""
    frames = (g.f - 1) * 8 + 1
    latents: int = round(frames / 24.0 * c.audio_sampling_rate / c.audio_hop_length / c.audio_scale_factor)
    return latents


def h3_rows(c: Any, g: Grid) -> tuple[int, int, int]:
    """MiniMax H3's packed rows: text S, video patches F x H/p x W/p, and audio latents over the video's seconds
    (16 fps and 25 audio latents a second: flopcheck's assumption, no pipeline states them)."""
    _, ph, pw = c.patch_size
    audio = round(((g.f - 1) * 4 + 1) / 16 * 25)
    return g.s, g.f * (g.h // ph) * (g.w // pw), audio


def h3_span(which: int) -> Callable[[Any, Grid], torch.Tensor]:
    """The positions of one modality's rows (0 text, 1 video, 2 audio) in the packed sequence, text first."""

    def span(c: Any, g: Grid) -> torch.Tensor:
        rows = h3_rows(c, g)
        start = sum(rows[:which])
        return torch.arange(start, start + rows[which], device=g.device)

    return span


def h3_tags(c: Any, g: Grid) -> torch.Tensor:
    """Each packed row's modality as MiniMax H3 tags it: 1 text, 0 video, 2 audio."""
    s, v, a = h3_rows(c, g)
    return torch.cat([torch.full((n,), tag, device=g.device) for n, tag in ((s, 1), (v, 0), (a, 2))]).long()

"""Inputs of one forward of a diffusers transformer: a registry of families, each the pipeline's own convention,
and one rule per forward parameter that builds it from the family's latent grid and the model's config.

Pixels become latents through the VAE's strides (8 per side and 4 per frame unless the family says otherwise:
(F - 1) / 4 + 1 latent frames), the text encoder's output is (B, S, its width), the timestep is one number per
sample. A family's defaults are its published pipeline's (FLUX and SD3 at 1024x1024, Wan at 832x480 x 81 frames,
CogVideoX at 720x480 x 49, HunyuanVideo at 1280x720 x 129, LTX-Video at 704x480 x 161, DiT and PixArt at the
config's sample size); a class in no family gets flopcheck's generic input (1024x1024, or 832x480 x 81 frames for a
3D class; 256 text tokens), and its note says so. A parameter the forward requires and no rule builds is refused in
one line naming it and --inputs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from math import prod
from typing import Any

import torch

from flopcheck.specs import Options, SpecError


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


@dataclass(frozen=True)
class Family:
    """Classes whose pipelines build their inputs alike: the default input, the VAE's strides, the latent's layout,
    the timestep's dtype and the rules that replace or add to the shared ones."""

    classes: tuple[str, ...]
    resolution: tuple[int, int] | None  # (W, H) px; None: the config's sample size x the VAE's stride
    frames: int  # pixel frames; 1: an image model
    text_tokens: int  # 0: no text
    layout: str
    spatial: int = 8  # pixels per latent side
    temporal: int = 4  # pixel frames per latent frame (after the first)
    rules: dict[str, Callable[[Any, Grid], Any]] | None = None
    integer_timestep: bool = False
    generic: bool = False  # flopcheck's assumption, not a pipeline's
    audio: int = 0  # an audio model: latents per forward (its grid is 1 x audio); 0: an image or video model


# ---------------------------------------------------------------------------------------------
# The rules: one per forward parameter, (config, grid) -> its value, or None where it does not apply
# ---------------------------------------------------------------------------------------------


def _first(c, keys: tuple[str, ...]) -> int | None:
    """The first of the config's keys that is set."""
    for k in keys:
        v = getattr(c, k, None) if not isinstance(c, dict) else c.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


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


def _text(c, g: Grid) -> torch.Tensor | None:
    width = _first(c, TEXT_WIDTH)
    return g.empty(g.n, g.s, width) if width and g.s else None


def _pooled(c, g: Grid) -> torch.Tensor | None:
    width = _first(c, POOLED_WIDTH)
    return g.empty(g.n, width) if width else None


def _mask(c, g: Grid) -> torch.Tensor | None:
    return torch.ones(g.n, g.s, device=g.device) if g.s else None


def _axes(c) -> int:
    """How many position ids each token carries (FLUX: 3, FLUX.2: 4): the rotary embedding's axes."""
    axes = getattr(c, "axes_dims_rope", None)
    return len(axes) if isinstance(axes, (list, tuple)) else 3


def _guidance(c, g: Grid) -> torch.Tensor | None:
    return g.zeros(g.n) if getattr(c, "guidance_embeds", False) else None


def _sizes(c, g: Grid) -> torch.Tensor:
    """CogView's micro-conditions (original size, target size, crop): (B, 2) each."""
    return torch.tensor([[g.h * 8, g.w * 8]] * g.n, dtype=torch.float32, device=g.device)


SHARED: dict[str, Callable[[Any, Grid], Any]] = {
    "encoder_hidden_states": _text,
    "pooled_projections": _pooled,
    "encoder_attention_mask": _mask,
    "encoder_hidden_states_mask": _mask,
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


def _pixart_conditions(c, g: Grid) -> dict:
    """PixArt-alpha's micro-conditions (a config of sample size 128 uses them unless it says otherwise): resolution
    (B, 2) and aspect ratio (B, 1); None otherwise."""
    use = c.use_additional_conditions
    if not (use if use is not None else c.sample_size == 128):
        return {"resolution": None, "aspect_ratio": None}
    return {"resolution": g.zeros(g.n, 2), "aspect_ratio": g.zeros(g.n, 1)}


def _qwen_shapes(c, g: Grid) -> list:
    """Qwen-Image's img_shapes: one [(frames, rows, columns)] of 2x2-packed latent patches per sample."""
    return [[(g.f, g.h // 2, g.w // 2)]] * g.n


def _per_sample(fn: Callable[[Any, Grid], Any]) -> Callable[[Any, Grid], list]:
    """A forward that takes a list with one tensor per sample (Z-Image)."""
    return lambda c, g: [fn(c, replace(g, n=1))[0] for _ in range(g.n)]


def _full(value: Callable[[Grid], int], dtype=torch.long) -> Callable[[Any, Grid], torch.Tensor]:
    return lambda c, g: torch.full((g.n,), value(g), dtype=dtype, device=g.device)


def _krea_positions(c, g: Grid) -> torch.Tensor:
    """Krea 2's rotary coordinates: (S + image tokens, 3), text at the origin (its pipeline's prepare_position_ids)."""
    return g.zeros(g.s + (g.h // 2) * (g.w // 2), 3)


def _kandinsky_rope(c, g: Grid) -> list:
    """Kandinsky 5's visual rope positions: aranges over latent frames and 2x2-patched rows and columns."""
    return [torch.arange(n, device=g.device) for n in (g.f, g.h // 2, g.w // 2)]


def _per_frame(c, g: Grid) -> torch.Tensor:
    """A timestep per sample and latent frame (AnyFlow's): (B, F)."""
    return g.zeros(g.n, g.f)


def _joint(g: Grid) -> int:
    """One packed sequence of the text tokens and the 2x2-packed latent tokens (Ideogram 4's): S + (h/2)(w/2)."""
    return g.s + (g.h // 2) * (g.w // 2)


def _role(text: int, image: int) -> Callable[[Any, Grid], torch.Tensor]:
    """Ideogram 4's indicator: each token's role, text for the S text tokens and image after them."""
    return lambda c, g: torch.cat(
        [torch.full((g.n, g.s), text, device=g.device), torch.full((g.n, _joint(g) - g.s), image, device=g.device)],
        dim=1,
    ).long()


def _qwen21_slots(c, g: Grid) -> torch.Tensor:
    """Qwen-Image 2.1's img_mask over its joint sequence: the S text positions, then one slot (True) per 2x2 group
    of the packed target tokens, as its pipeline's append_target_slots builds it."""
    text = torch.zeros(g.n, g.s, dtype=torch.bool, device=g.device)
    return torch.cat([text, torch.ones(g.n, (g.h // 2) * (g.w // 2) // 4, dtype=torch.bool, device=g.device)], dim=1)


def _ltx2_audio(c, g: Grid) -> int:
    """LTX-2's audio latents over the video's seconds, as its pipeline rounds them: frames / 24 fps x (sampling rate /
    hop / the audio VAE's temporal factor, which the config's audio_scale_factor states) latents a second (16000 /
    160 / 4 = 25)."""
    frames = (g.f - 1) * 8 + 1
    return round(frames / 24.0 * c.audio_sampling_rate / c.audio_hop_length / c.audio_scale_factor)


def _h3_rows(c, g: Grid) -> tuple[int, int, int]:
    """MiniMax H3's packed rows: text S, video patches F x H/p x W/p, and audio latents over the video's seconds
    (16 fps and 25 audio latents a second: flopcheck's assumption, no pipeline states them)."""
    _, ph, pw = c.patch_size
    audio = round(((g.f - 1) * 4 + 1) / 16 * 25)
    return g.s, g.f * (g.h // ph) * (g.w // pw), audio


def _h3_span(which: int) -> Callable[[Any, Grid], torch.Tensor]:
    """The positions of one modality's rows (0 text, 1 video, 2 audio) in the packed sequence, text first."""

    def span(c, g: Grid) -> torch.Tensor:
        rows = _h3_rows(c, g)
        start = sum(rows[:which])
        return torch.arange(start, start + rows[which], device=g.device)

    return span


def _h3_tags(c, g: Grid) -> torch.Tensor:
    """Each packed row's modality as MiniMax H3 tags it: 1 text, 0 video, 2 audio."""
    s, v, a = _h3_rows(c, g)
    return torch.cat([torch.full((n,), tag, device=g.device) for n, tag in ((s, 1), (v, 0), (a, 2))]).long()


IMAGE, VIDEO = (1024, 1024), (832, 480)


def _image(classes, tokens: int, layout: str = "nchw", **kw) -> Family:
    return Family(tuple(classes.split()), kw.pop("resolution", IMAGE), 1, tokens, layout, **kw)


def _video(classes, tokens: int, layout: str = "ncfhw", **kw) -> Family:
    return Family(tuple(classes.split()), kw.pop("resolution", VIDEO), kw.pop("frames", 81), tokens, layout, **kw)


# each family's defaults are its diffusers pipeline's __call__ defaults (height, width, num_frames,
# max_sequence_length) unless a comment says otherwise
FAMILIES = (
    Family(("DiTTransformer2DModel",), None, 1, 0, "nchw", integer_timestep=True),
    _image("SD3Transformer2DModel", 333),  # CLIP 77 + T5 256
    _image("FluxTransformer2DModel ChromaTransformer2DModel", 512, "packed"),
    _image("BriaTransformer2DModel", 128, "packed"),
    _image(
        "BriaFiboTransformer2DModel",
        2048,
        "packed",
        rules={  # its text encoder's hidden states, one per block of the transformer
            "text_encoder_layers": lambda c, g: [
                g.empty(g.n, g.s, c.text_encoder_dim) for _ in range(c.num_layers + c.num_single_layers)
            ]
        },
    ),
    # Bria FIBO 2: 1024 px (default_sample_size 128 x 8); its text encoder's bundles (B, 1 + injection layers, S,
    # width) padded to the longest prompt, no fixed length: 1024 tokens is flopcheck's assumption
    _image(
        "BriaFibo2Transformer2DModel",
        1024,
        generic=True,
        rules={"encoder_hidden_states": lambda c, g: g.empty(g.n, 1 + len(c.injection_layer_ids), g.s, c.cap_feat_dim)},
    ),
    _image("OvisImageTransformer2DModel", 256, "packed"),
    _image("LongCatImageTransformer2DModel", 512, "packed"),
    _image("Flux2Transformer2DModel Flux3Transformer2DModel", 512, "packed"),
    _image("QwenImageTransformer2DModel", 512, "packed", rules={"img_shapes": _qwen_shapes}),
    _image("NucleusMoEImageTransformer2DModel", 512, "packed", rules={"img_shapes": _qwen_shapes}),
    _image(
        "QwenImage21Transformer2DModel", 512, "packed", rules={"img_shapes": _qwen_shapes, "img_mask": _qwen21_slots}
    ),
    # Ideogram 4: 2048 px through an 8x VAE and 2x2 packing, max_sequence_length 2048, text and image tokens in one
    # sequence (hidden states, text features, 3-axis positions, segments and roles over S + image tokens)
    _image(
        "Ideogram4Transformer2DModel",
        2048,
        "packed",
        resolution=(2048, 2048),
        rules={
            "hidden_states": lambda c, g: g.empty(g.n, _joint(g), c.in_channels),
            "encoder_hidden_states": lambda c, g: g.empty(g.n, _joint(g), c.llm_features_dim),
            "position_ids": lambda c, g: g.zeros(g.n, _joint(g), 3, dtype=torch.long),
            "segment_ids": lambda c, g: torch.ones(g.n, _joint(g), dtype=torch.long, device=g.device),
            "indicator": _role(3, 2),  # its LLM_TOKEN_INDICATOR and OUTPUT_IMAGE_INDICATOR
        },
    ),
    _image(
        "Krea2Transformer2DModel",
        512,
        "packed",
        rules={
            "position_ids": _krea_positions,  # its text encoder's hidden states of every layer: (B, S, layers, width)
            "encoder_hidden_states": lambda c, g: g.empty(g.n, g.s, c.num_text_layers, c.text_hidden_dim),
        },
    ),
    _image("AuraFlowTransformer2DModel", 256),
    # Lumina 2: 1024 px (sample size 128 x 8), max_sequence_length 256, its tokenizer's mask (integers: it sums it
    # to find each prompt's length)
    Family(
        ("Lumina2Transformer2DModel",),
        None,
        1,
        256,
        "nchw",
        rules={"encoder_attention_mask": lambda c, g: torch.ones(g.n, g.s, dtype=torch.long, device=g.device)},
    ),
    _image("CogView3PlusTransformer2DModel", 226),
    _image("CogView4Transformer2DModel", 1024),
    # GLM-Image: its autoregressive prior's image tokens, one per latent patch (none dropped)
    _image(
        "GlmImageTransformer2DModel",
        2048,
        rules={
            "prior_token_id": lambda c, g: g.zeros(g.n, (g.h // 2) * (g.w // 2), dtype=torch.long),
            "prior_token_drop": lambda c, g: g.zeros(g.n, (g.h // 2) * (g.w // 2), dtype=torch.bool),
        },
    ),
    # Allegro: 1280x720 x 85 frames, its config's latent sample (22 frames of 90 x 160) through a 4x / 8x VAE
    _video("AllegroTransformer3DModel", 512, resolution=(1280, 720), frames=85),
    _video("WanTransformer3DModel ChronoEditTransformer3DModel SkyReelsV2Transformer3DModel", 512),
    _video(
        "WanVACETransformer3DModel",
        512,
        rules={"control_hidden_states": lambda c, g: g.empty(g.n, c.vace_in_channels, g.f, g.h, g.w)},
    ),
    _video(
        "Kandinsky5Transformer3DModel",
        256,
        "nfhwc",
        rules={"visual_rope_pos": _kandinsky_rope, "text_rope_pos": lambda c, g: torch.arange(g.s, device=g.device)},
    ),
    # Mochi 1: 848x480, 19 frames (its pipeline's defaults) through its 8x / 6x VAE, max_sequence_length 256
    _video("MochiTransformer3DModel", 256, resolution=(848, 480), frames=19, temporal=6),
    # HunyuanVideo 1.5: its latents, the conditioning latents and their mask concatenated (65 channels) through a 16x
    # VAE; Qwen 2.5-VL text (tokenizer_max_length 1000), ByT5 glyph text (256), 729 SigLIP tokens (zeros when no image)
    _video(
        "HunyuanVideo15Transformer3DModel",
        1000,
        resolution=(1280, 720),
        frames=121,
        spatial=16,
        generic=True,
        rules={
            "encoder_hidden_states_2": lambda c, g: g.empty(g.n, 256, c.text_embed_2_dim),
            "encoder_attention_mask_2": lambda c, g: torch.ones(g.n, 256, device=g.device),
            "image_embeds": lambda c, g: g.zeros(g.n, 729, c.image_embed_dim),
        },
    ),
    # JoyImage Edit+: its latents patchified by the pipeline, (B, patches, C, 1, 2, 2), and each sample's shapes
    _video(
        "JoyImageEditPlusTransformer3DModel",
        1024,
        generic=True,
        rules={
            "hidden_states": lambda c, g: g.empty(g.n, g.f * (g.h // 2) * (g.w // 2), c.in_channels, 1, 2, 2),
            "shape_list": lambda c, g: [[(g.f, g.h // 2, g.w // 2)]] * g.n,
        },
    ),
    # Kandinsky 6: channels last; with visual conditioning the latents, the condition and its mask (2C + 1)
    _video(
        "Kandinsky6Transformer3DModel",
        256,
        generic=True,
        rules={
            "hidden_states": lambda c, g: g.empty(
                g.n, g.f, g.h, g.w, 2 * c.in_visual_dim + 1 if getattr(c, "visual_cond", True) else c.in_visual_dim
            )
        },
    ),
    # Wan 2.2 Animate: one 77-frame segment at 1280x720; the noisy latents, the reference frame before them and the
    # conditioning channels (2C + 4, T + 1 frames), the pose latents (C, T), the face video in pixels (3 x 77 x
    # 512 x 512, its motion_encoder_size) and 257 CLIP image tokens
    _video(
        "WanAnimateTransformer3DModel",
        512,
        resolution=(1280, 720),
        frames=77,
        rules={
            "hidden_states": lambda c, g: g.empty(g.n, c.in_channels, g.f + 1, g.h, g.w),
            "pose_hidden_states": lambda c, g: g.empty(g.n, c.latent_channels, g.f, g.h, g.w),
            "face_pixel_values": lambda c, g: g.empty(
                g.n, 3, 4 * (g.f - 1) + 1, c.motion_encoder_size, c.motion_encoder_size
            ),
            "encoder_hidden_states_image": lambda c, g: g.empty(g.n, 257, c.image_dim),
        },
    ),
    # MiniMax H3 (no diffusers pipeline): text, video and audio rows in one packed sequence, one noise level
    _video(
        "MiniMaxH3Transformer3DModel",
        256,
        generic=True,
        rules={
            "hidden_states": lambda c, g: g.empty(g.n, _h3_rows(c, g)[1], c.in_channels * prod(c.patch_size)),
            "audio_hidden_states": lambda c, g: g.empty(g.n, _h3_rows(c, g)[2], c.audio_in_channels),
            "encoder_hidden_states": lambda c, g: g.empty(g.n, g.s, c.text_dim),
            "timestep": lambda c, g: g.zeros(1),
            "timestep_indices": lambda c, g: g.zeros(sum(_h3_rows(c, g)), dtype=torch.long),
            "token_tags": _h3_tags,
            "position_ids": lambda c, g: g.zeros(sum(_h3_rows(c, g)), 3, dtype=torch.long),
            "text_indices": _h3_span(0),
            "video_indices": _h3_span(1),
            "audio_indices": _h3_span(2),
        },
    ),
    # Kandinsky 6 SR: one tile of the first of its config's tile_sizes (512x512 px) through its 16x / 4x VAE, channels
    # last, the noisy latent, the anchor latent and its mask (2C + 1); 81 frames is flopcheck's assumption
    _video(
        "Kandinsky6SRTransformer3DModel",
        0,
        "nfhwc",
        resolution=(512, 512),
        spatial=16,
        generic=True,
        rules={"hidden_states": lambda c, g: g.empty(g.n, g.f, g.h, g.w, 2 * c.in_visual_dim + 1)},
    ),
    _video("HeliosTransformer3DModel", 226, resolution=(640, 384), frames=33),
    # AnyFlow-FAR: the whole 81 frames in one forward, split as its config's chunk_partition (1 + 3 x 6 + 2 latent
    # frames), with no KV cache: its training forward; the pipeline runs one chunk at a time against a cache of the
    # earlier ones, which flopcheck does not model
    _video(
        "AnyFlowFARTransformer3DModel",
        226,
        "nfchw",
        generic=True,
        rules={
            **dict.fromkeys(("timestep", "r_timestep"), _per_frame),
            "chunk_partition": lambda c, g: list(c.chunk_partition) if sum(c.chunk_partition) == g.f else None,
        },
    ),
    _video("AnyFlowTransformer3DModel", 226, "nfchw", rules=dict.fromkeys(("timestep", "r_timestep"), _per_frame)),
    # HunyuanImage 2.1: 2048 px (default_sample_size 64 x its 32x VAE), tokenizer_max_length 1000
    _image("HunyuanImageTransformer2DModel", 1000, resolution=(2048, 2048), spatial=32),
    _video("CogVideoXTransformer3DModel ConsisIDTransformer3DModel", 226, "nfchw", resolution=(720, 480), frames=49),
    _video("HunyuanVideoTransformer3DModel", 256, resolution=(1280, 720), frames=129),  # the seeds' input
    # PixArt-alpha's pipeline: 1024 px (sample size 128 x 8), max_sequence_length 120, a T5 mask of ones
    Family(("PixArtTransformer2DModel",), None, 1, 120, "nchw", rules={"added_cond_kwargs": _pixart_conditions}),
    # SANA's DC-AE is 32x per side
    _image("SanaTransformer2DModel", 300, spatial=32),
    _video("SanaVideoTransformer3DModel", 300),
    # SANA-WM: 1280x704 x 161 frames through its 32x / 8x VAE, 300 text tokens; a timestep per latent frame (B, 1,
    # F'), the text mask under its own name, and the camera: a raymap (B, F', 20) and the Pluecker coordinates
    # packed by chunk (B, 6 x 8, F', H', W')
    _video(
        "SanaWMTransformer3DModel",
        300,
        resolution=(1280, 704),
        frames=161,
        spatial=32,
        temporal=8,
        rules={
            "timestep": lambda c, g: g.zeros(g.n, 1, g.f),
            "mask": _mask,
            "camera_conditions": lambda c, g: g.empty(g.n, g.f, 20),
            "chunk_plucker": lambda c, g: g.empty(g.n, c.chunk_plucker_channels, g.f, g.h, g.w),
        },
    ),
    # LTX-Video at 704x480 (its model card's), 161 frames, 128 text tokens; its VAE is 32x per side and 8x per frame
    _video(
        "LTXVideoTransformer3DModel",
        128,
        "tokens",
        resolution=(704, 480),
        frames=161,
        spatial=32,
        temporal=8,
        rules={"num_frames": lambda c, g: g.f, "height": lambda c, g: g.h, "width": lambda c, g: g.w},
    ),
    # LTX-2: video and audio in one forward, 768x512 x 121 frames at 24 fps (its pipeline's defaults), 1024 text
    # tokens; the audio's latents over the same seconds (_ltx2_audio)
    _video(
        "LTX2VideoTransformer3DModel",
        1024,
        "tokens",
        resolution=(768, 512),
        frames=121,
        spatial=32,
        temporal=8,
        rules={
            "audio_hidden_states": lambda c, g: g.empty(g.n, _ltx2_audio(c, g), c.audio_in_channels),
            "encoder_hidden_states": lambda c, g: g.empty(
                g.n, g.s, c.caption_channels if c.use_prompt_embeddings else c.cross_attention_dim
            ),
            "audio_encoder_hidden_states": lambda c, g: g.empty(
                g.n, g.s, c.caption_channels if c.use_prompt_embeddings else c.audio_cross_attention_dim
            ),
            "audio_encoder_attention_mask": _mask,
            "num_frames": lambda c, g: g.f,
            "height": lambda c, g: g.h,
            "width": lambda c, g: g.w,
            "audio_num_frames": _ltx2_audio,
        },
    ),
    _video(
        "CosmosTransformer3DModel",
        512,
        resolution=(1280, 704),
        frames=93,
        rules={"padding_mask": lambda c, g: g.zeros(1, 1, g.h * 8, g.w * 8), "fps": lambda c, g: 16},
    ),
    # ACE-Step 1.5: 60 s of audio (its audio_duration) at 48 kHz / 1920 = 25 latents a second; the context latents
    # (the source latents and their chunk mask) beside the noisy ones; its condition encoder's states, here the 256
    # tokens of max_text_length (the lyrics' 2048 and the timbre it also packs are flopcheck's to leave out)
    Family(
        ("AceStepTransformer1DModel",),
        None,
        1,
        256,
        "tokens",
        generic=True,
        audio=1500,
        rules={
            "hidden_states": lambda c, g: g.empty(g.n, g.w, c.audio_acoustic_hidden_dim),
            "context_latents": lambda c, g: g.empty(g.n, g.w, c.in_channels - c.audio_acoustic_hidden_dim),
            "encoder_hidden_states": lambda c, g: g.empty(g.n, g.s, c.encoder_hidden_size or c.hidden_size),
        },
    ),
    # MiniMax Music 3 (no diffusers pipeline): latents (B, C, L) and frame-aligned conditioning (B, L, width); 1500
    # latents is flopcheck's assumption
    Family(
        ("MiniMaxMusic3Transformer1DModel",),
        None,
        1,
        0,
        "tokens",
        generic=True,
        audio=1500,
        rules={
            "hidden_states": lambda c, g: g.empty(g.n, c.in_channels, g.w),
            "encoder_hidden_states": lambda c, g: g.empty(g.n, g.w, c.condition_dim),
        },
    ),
    _image(
        "ZImageTransformer2DModel",
        512,
        rules={
            "x": _per_sample(lambda c, g: g.empty(1, c.in_channels, 1, g.h, g.w)),
            "t": lambda c, g: g.zeros(g.n),
            "cap_feats": _per_sample(lambda c, g: g.empty(1, g.s, c.cap_feat_dim)),
        },
    ),
    # ERNIE-Image: 128 channels at 16 px per latent side (a 2x2-packed 32-channel VAE) and 256 text tokens are
    # flopcheck's reading, not its pipeline's numbers
    _image(
        "ErnieImageTransformer2DModel",
        256,
        spatial=16,
        generic=True,
        rules={"text_bth": _text, "text_lens": _full(lambda g: g.s)},
    ),
)
BY_CLASS = {cls: fam for fam in FAMILIES for cls in fam.classes}


def _generic(cls: str) -> Family:
    """A class in no family: an image at 1024x1024 or a video at 832x480 x 81 frames (a 3D class), 256 text
    tokens, the latent as (B, C, H, W) or (B, C, F, H, W), by flopcheck's assumption."""
    video = "3D" in cls
    return Family(
        (cls,),
        (832, 480) if video else (1024, 1024),
        81 if video else 1,
        256,
        "ncfhw" if video else "nchw",
        generic=True,
    )


# ---------------------------------------------------------------------------------------------
# Building the inputs
# ---------------------------------------------------------------------------------------------


def _patch(c) -> int:
    """The transformer's patch side (an int, or the last of a [t, h, w] list)."""
    p = getattr(c, "patch_size", None)
    if isinstance(p, (list, tuple)):
        p = p[-1]
    return p if isinstance(p, int) and p > 0 else 1


def _latent(side: int, stride: int, what: str) -> int:
    if side % stride:
        raise SpecError(f"{what} {side} is not a multiple of {stride} (the VAE's stride x the patch): give one that is")
    return side // stride


def _latent_frames(f: int, temporal: int) -> int:
    """Latent frames of a temporal VAE: (F - 1) / t + 1."""
    if f < 1 or (f - 1) % temporal:
        examples = "81, 49, 129" if temporal == 4 else f"{temporal + 1}, {2 * temporal + 1}, {3 * temporal + 1}"
        raise SpecError(
            f"frames {f} must be {temporal}k+1 for a VAE of {temporal} frames per latent frame ({examples}, ...)"
        )
    return (f - 1) // temporal + 1


def _parameters(model) -> list[inspect.Parameter]:
    return [
        p
        for p in inspect.signature(type(model).forward).parameters.values()
        if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _grid(cls: str, fam: Family, c, o: Options, s: int, device: str) -> tuple[Grid, str]:
    """An image or video family's latent grid at the options' size, and the size in words ('1024x1024 px')."""
    if o.frames and fam.frames == 1:
        raise SpecError(f"frames apply to video models; {cls} is an image model")
    sample = _first(c, ("sample_size",))
    w, h = o.resolution or fam.resolution or ((sample or 128) * fam.spatial,) * 2
    stride = fam.spatial * _patch(c) * (2 if fam.layout == "packed" else 1)
    _latent(w, stride, "width"), _latent(h, stride, "height")
    f = o.frames or fam.frames
    lf = _latent_frames(f, fam.temporal) if fam.frames > 1 else 1
    return Grid(o.batch, lf, h // fam.spatial, w // fam.spatial, s, device), f"{w}x{h} px" + (
        f" x {f} frames" if fam.frames > 1 else ""
    )


def _audio_grid(cls: str, fam: Family, o: Options, s: int, device: str) -> tuple[Grid, str]:
    """An audio family's grid: its latents in a row (1 x L), and their count in words."""
    if o.resolution or o.frames:
        raise SpecError(f"--resolution and --frames apply to image and video models; {cls} is an audio model")
    return Grid(o.batch, 1, 1, fam.audio, s, device), f"{fam.audio} audio latents"


def build_inputs(cls: str, model, o: Options, device: str) -> tuple[tuple, dict, str]:
    """(args, kwargs, a line saying what they are) for one forward of a diffusers class at the options' input: the
    family's rules, then the shared ones, for each parameter of the forward that has one."""
    fam = BY_CLASS.get(cls) or _generic(cls)
    c = model.config
    if o.text_tokens and not fam.text_tokens:
        raise SpecError(f"--text-tokens applies to text-conditioned models; {cls} takes no text")
    s = o.text_tokens if o.text_tokens is not None else fam.text_tokens
    g, size = _audio_grid(cls, fam, o, s, device) if fam.audio else _grid(cls, fam, c, o, s, device)
    channels = _first(c, IN_CHANNELS)
    if channels is None:
        raise SpecError(f"{cls}'s config names no input channels ({', '.join(IN_CHANNELS)}): give --inputs module:fn")
    timestep = (lambda c, g: g.zeros(g.n, dtype=torch.long)) if fam.integer_timestep else (lambda c, g: g.zeros(g.n))
    rules = {**SHARED, **dict.fromkeys(TIMESTEPS, timestep), **(fam.rules or {})}
    args: list = []
    kwargs: dict = {}
    missing = []
    for i, p in enumerate(_parameters(model)):
        if i == 0:
            first = rules.get(p.name)
            args.append(first(c, g) if first else g.empty(*LAYOUTS[fam.layout](g, channels)))
            continue
        rule = rules.get(p.name)
        own = p.name in (fam.rules or {}) or p.name in CONDITIONING or p.default is p.empty
        value = rule(c, g) if rule and own else None
        if value is not None:
            kwargs[p.name] = value
        elif p.default is p.empty:
            missing.append(p.name)
    if missing:
        raise SpecError(
            f"flopcheck cannot build {cls}'s input{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(its forward requires {'them' if len(missing) > 1 else 'it'}): give its inputs with --inputs module:fn"
        )
    if "return_dict" in {p.name for p in _parameters(model)}:
        kwargs["return_dict"] = False  # a tuple of tensors, which every counter (jit traces too) can take
    words = f"input {size}" + (f", {s} text tokens" if s else "") + f", batch {o.batch}" + _whose(fam)
    return tuple(args), kwargs, words


def _whose(fam: Family) -> str:
    """Whose input it is, in words: the pipeline's convention, or flopcheck's assumption and how to give another."""
    if not fam.generic:
        return " (the pipeline's convention)"
    if fam.audio:
        give = "--text-tokens or --inputs module:fn" if fam.text_tokens else "--inputs module:fn"
        return f" (flopcheck's reading of its pipeline: give {give} for others)"
    return (
        " (flopcheck's generic input for a class with no pipeline convention here: give --resolution, "
        "--frames, --text-tokens or --inputs for the pipeline's)"
    )


__all__ = ["FAMILIES", "Family", "Grid", "build_inputs"]


# ---------------------------------------------------------------------------------------------
# Autoencoders: 'diffusers:CLASS.decode' (the default: what a pipeline runs once per generation) or '.encode'
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Vae:
    """An autoencoder's geometry: pixel frames per latent frame (0: an image VAE; 1: a video VAE run on one frame,
    Qwen-Image's) and the spatial stride where the model states none."""

    temporal: int = 0
    spatial: int | None = None


VAES = {
    "AutoencoderKL": Vae(),
    "AutoencoderKLFlux2": Vae(),
    "AutoencoderDC": Vae(),
    "AutoencoderTiny": Vae(),
    "AutoencoderKLQwenImage": Vae(1),
    "AutoencoderKLWan": Vae(4),
    "AutoencoderKLHunyuanVideo": Vae(4),
    "AutoencoderKLHunyuanVideo15": Vae(4),
    "AutoencoderKLCogVideoX": Vae(4, 8),
    "AutoencoderKLAllegro": Vae(4),
    "AutoencoderKLMagvit": Vae(4),
    "AutoencoderKLMochi": Vae(6),
    "AutoencoderKLLTXVideo": Vae(8),
    "AutoencoderKLCosmos": Vae(8),
}
METHODS = ("decode", "encode")


def _spatial(model, vae: Vae) -> int:
    """Pixels per latent side: the model's spatial_compression_ratio, else its config's, else 2^(down blocks - 1)."""
    ratio = getattr(model, "spatial_compression_ratio", None) or getattr(model.config, "scale_factor_spatial", None)
    if isinstance(ratio, int) and ratio > 0:
        return ratio
    if vae.spatial:
        return vae.spatial
    return 2 ** (len(model.config.block_out_channels) - 1)


def vae_inputs(cls: str, model, method: str, o: Options, device: str) -> tuple[tuple, dict, str]:
    """(args, kwargs, words) for CLASS.decode(z) or CLASS.encode(x) at the options' input: z (B, latent channels,
    [F',] H/s, W/s), x (B, 3, [F,] H, W); an image at 1024x1024, a video at 832x480 x 81 frames unless given."""
    vae = VAES.get(cls)
    if vae is None:
        raise SpecError(
            f"flopcheck has no input rule for diffusers' {cls}: give its inputs with --inputs module:fn, or use one "
            f"of {', '.join(VAES)}"
        )
    video = vae.temporal > 1
    if o.text_tokens:
        raise SpecError(f"--text-tokens applies to text-conditioned models; {cls}.{method} takes no text")
    if o.frames and not video:
        raise SpecError(f"frames apply to video autoencoders; {cls} encodes images")
    c, s = model.config, _spatial(model, vae)
    w, h = o.resolution or ((832, 480) if video else (1024, 1024))
    _latent(w, s, "width"), _latent(h, s, "height")
    f = o.frames or (81 if video else 1)
    lf = _latent_frames(f, vae.temporal) if video else 1
    frames = (lf if method == "decode" else f,) if vae.temporal else ()
    latent = _first(c, ("latent_channels", "z_dim"))
    if method == "decode":
        x = torch.empty(o.batch, latent, *frames, h // s, w // s, device=device)
    else:
        x = torch.empty(o.batch, _first(c, ("in_channels", "input_channels")) or 3, *frames, h, w, device=device)
    kwargs = {"return_dict": False} if "return_dict" in {p.name for p in _parameters_of(model, method)} else {}
    words = (
        f"{method} {w}x{h} px"
        + (f" x {f} frames ({lf} latent)" if video else "")
        + f", latent {latent} channels at 1/{s} per side, batch {o.batch}"
        + ("" if o.resolution else " (flopcheck's default size: give --resolution" + (", --frames)" if video else ")"))
    )
    return (x,), kwargs, words


def _parameters_of(model, method: str) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(getattr(type(model), method)).parameters.values() if p.name != "self"]


# ---------------------------------------------------------------------------------------------
# Text encoders: 'transformers:CLASS'
# ---------------------------------------------------------------------------------------------

TEXT_DEFAULT = 512  # tokens, where the config states no maximum (T5: the FLUX pipeline's max_sequence_length)
# no attention_mask: every token attends, as FLUX's and SD3's pipelines call their text encoders (a mask of ones would
# cost no FLOPs, but transformers reads its values to skip it, which meta tensors have none of)
TEXT_RULES: dict[str, Callable[[int, int, str], torch.Tensor]] = {
    "input_ids": lambda n, s, d: torch.zeros(n, s, dtype=torch.long, device=d),  # id 0: in every vocabulary
    "token_type_ids": lambda n, s, d: torch.zeros(n, s, dtype=torch.long, device=d),
}


def text_inputs(cls: str, model, o: Options, device: str) -> tuple[tuple, dict, str]:
    """(args, kwargs, words) for one forward of a text encoder on S tokens: --text-tokens, else the config's
    max_position_embeddings (CLIP: 77), else 512."""
    most = _first(model.config, ("max_position_embeddings",))
    s = o.text_tokens or most or TEXT_DEFAULT
    if most and s > most:
        raise SpecError(f"--text-tokens {s}: {cls} takes at most {most} (its max_position_embeddings)")
    kwargs, missing = {}, []
    for p in inspect.signature(type(model).forward).parameters.values():
        if p.name in TEXT_RULES and (p.name != "token_type_ids" or p.default is p.empty):
            kwargs[p.name] = TEXT_RULES[p.name](o.batch, s, device)
        elif p.name not in ("self", "return_dict") and p.default is p.empty and p.kind not in (p.VAR_KEYWORD,):
            missing.append(p.name)
    if missing:
        raise SpecError(
            f"flopcheck cannot build {cls}'s input{'s' if len(missing) > 1 else ''} {', '.join(missing)}: count its "
            f"encoder (T5EncoderModel, CLIPTextModel) or give --inputs module:fn"
        )
    ids = kwargs.pop("input_ids", None)
    if ids is None:
        raise SpecError(f"{cls}'s forward takes no input_ids: give its inputs with --inputs module:fn")
    kwargs["return_dict"] = False
    words = f"{s} tokens" + (
        "" if o.text_tokens else " (its max_position_embeddings)" if most else " (flopcheck's default)"
    )
    return (ids,), kwargs, words + f", batch {o.batch}"

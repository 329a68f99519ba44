"""Each diffusers transformer class's input convention: its pipeline's default size, frames and text tokens, the
VAE's strides, the latent's layout and the rules (rules.py) for its own inputs; a class in none gets flopcheck's
generic input, an image or a video by VIDEO_CLASSES."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod
from typing import Any

import torch

from flopcheck.specs.inputs.rules import (
    Grid,
    bool_mask,
    full,
    h3_rows,
    h3_span,
    h3_tags,
    joint,
    kandinsky_rope,
    krea_positions,
    ltx2_audio,
    mask,
    per_frame,
    per_sample,
    pixart_conditions,
    qwen21_slots,
    qwen_shapes,
    role,
    text_states,
)


@dataclass(frozen=True)
class InputConvention:
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


IMAGE, VIDEO = (1024, 1024), (832, 480)


def _image(classes: str, tokens: int, layout: str = "nchw", **kw: Any) -> InputConvention:
    return InputConvention(tuple(classes.split()), kw.pop("resolution", IMAGE), 1, tokens, layout, **kw)


def _video(classes: str, tokens: int, layout: str = "ncfhw", **kw: Any) -> InputConvention:
    return InputConvention(
        tuple(classes.split()), kw.pop("resolution", VIDEO), kw.pop("frames", 81), tokens, layout, **kw
    )


# each convention's defaults are its diffusers pipeline's __call__ defaults (height, width, num_frames,
# max_sequence_length) unless a comment says otherwise
CONVENTIONS = (
    InputConvention(("DiTTransformer2DModel",), None, 1, 0, "nchw", integer_timestep=True),
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
    _image("QwenImageTransformer2DModel", 512, "packed", rules={"img_shapes": qwen_shapes}),
    _image("NucleusMoEImageTransformer2DModel", 512, "packed", rules={"img_shapes": qwen_shapes}),
    _image("QwenImage21Transformer2DModel", 512, "packed", rules={"img_shapes": qwen_shapes, "img_mask": qwen21_slots}),
    # Ideogram 4: 2048 px through an 8x VAE and 2x2 packing, max_sequence_length 2048, text and image tokens in one
    # sequence (hidden states, text features, 3-axis positions, segments and roles over S + image tokens)
    _image(
        "Ideogram4Transformer2DModel",
        2048,
        "packed",
        resolution=(2048, 2048),
        rules={
            "hidden_states": lambda c, g: g.empty(g.n, joint(g), c.in_channels),
            "encoder_hidden_states": lambda c, g: g.empty(g.n, joint(g), c.llm_features_dim),
            "position_ids": lambda c, g: g.zeros(g.n, joint(g), 3, dtype=torch.long),
            "segment_ids": lambda c, g: torch.ones(g.n, joint(g), dtype=torch.long, device=g.device),
            "indicator": role(3, 2),  # its LLM_TOKEN_INDICATOR and OUTPUT_IMAGE_INDICATOR
        },
    ),
    _image(
        "Krea2Transformer2DModel",
        512,
        "packed",
        rules={
            "position_ids": krea_positions,  # its text encoder's hidden states of every layer: (B, S, layers, width)
            "encoder_hidden_states": lambda c, g: g.empty(g.n, g.s, c.num_text_layers, c.text_hidden_dim),
        },
    ),
    _image("AuraFlowTransformer2DModel", 256),
    # Lumina 2: 1024 px (sample size 128 x 8), max_sequence_length 256, its tokenizer's mask (integers: it sums it
    # to find each prompt's length)
    InputConvention(
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
        rules={"visual_rope_pos": kandinsky_rope, "text_rope_pos": lambda c, g: torch.arange(g.s, device=g.device)},
    ),
    # Mochi 1: 848x480, 19 frames (its pipeline's defaults) through its 8x / 6x VAE, max_sequence_length 256; its
    # pipeline's text mask is boolean (.bool()), and its attention gathers the tokens it marks (nonzero)
    _video(
        "MochiTransformer3DModel",
        256,
        resolution=(848, 480),
        frames=19,
        temporal=6,
        rules={"encoder_attention_mask": bool_mask},
    ),
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
            "hidden_states": lambda c, g: g.empty(g.n, h3_rows(c, g)[1], c.in_channels * prod(c.patch_size)),
            "audio_hidden_states": lambda c, g: g.empty(g.n, h3_rows(c, g)[2], c.audio_in_channels),
            "encoder_hidden_states": lambda c, g: g.empty(g.n, g.s, c.text_dim),
            "timestep": lambda c, g: g.zeros(1),
            "timestep_indices": lambda c, g: g.zeros(sum(h3_rows(c, g)), dtype=torch.long),
            "token_tags": h3_tags,
            "position_ids": lambda c, g: g.zeros(sum(h3_rows(c, g)), 3, dtype=torch.long),
            "text_indices": h3_span(0),
            "video_indices": h3_span(1),
            "audio_indices": h3_span(2),
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
            **dict.fromkeys(("timestep", "r_timestep"), per_frame),
            "chunk_partition": lambda c, g: list(c.chunk_partition) if sum(c.chunk_partition) == g.f else None,
        },
    ),
    _video("AnyFlowTransformer3DModel", 226, "nfchw", rules=dict.fromkeys(("timestep", "r_timestep"), per_frame)),
    # HunyuanImage 2.1: 2048 px (default_sample_size 64 x its 32x VAE), tokenizer_max_length 1000
    _image("HunyuanImageTransformer2DModel", 1000, resolution=(2048, 2048), spatial=32),
    _video("CogVideoXTransformer3DModel ConsisIDTransformer3DModel", 226, "nfchw", resolution=(720, 480), frames=49),
    _video("HunyuanVideoTransformer3DModel", 256, resolution=(1280, 720), frames=129),  # the seeds' input
    # PixArt-alpha's pipeline: 1024 px (sample size 128 x 8), max_sequence_length 120, a T5 mask of ones
    InputConvention(
        ("PixArtTransformer2DModel",), None, 1, 120, "nchw", rules={"added_cond_kwargs": pixart_conditions}
    ),
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
            "mask": mask,
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
    # tokens; the audio's latents over the same seconds (ltx2_audio)
    _video(
        "LTX2VideoTransformer3DModel",
        1024,
        "tokens",
        resolution=(768, 512),
        frames=121,
        spatial=32,
        temporal=8,
        rules={
            "audio_hidden_states": lambda c, g: g.empty(g.n, ltx2_audio(c, g), c.audio_in_channels),
            "encoder_hidden_states": lambda c, g: g.empty(
                g.n, g.s, c.caption_channels if c.use_prompt_embeddings else c.cross_attention_dim
            ),
            "audio_encoder_hidden_states": lambda c, g: g.empty(
                g.n, g.s, c.caption_channels if c.use_prompt_embeddings else c.audio_cross_attention_dim
            ),
            "audio_encoder_attention_mask": mask,
            "num_frames": lambda c, g: g.f,
            "height": lambda c, g: g.h,
            "width": lambda c, g: g.w,
            "audio_num_frames": ltx2_audio,
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
    InputConvention(
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
    InputConvention(
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
            "x": per_sample(lambda c, g: g.empty(1, c.in_channels, 1, g.h, g.w)),
            "t": lambda c, g: g.zeros(g.n),
            "cap_feats": per_sample(lambda c, g: g.empty(1, g.s, c.cap_feat_dim)),
        },
    ),
    # ERNIE-Image: 128 channels at 16 px per latent side (a 2x2-packed 32-channel VAE) and 256 text tokens are
    # flopcheck's reading, not its pipeline's numbers
    _image(
        "ErnieImageTransformer2DModel",
        256,
        spatial=16,
        generic=True,
        rules={"text_bth": text_states, "text_lens": full(lambda g: g.s)},
    ),
)
BY_CLASS = {cls: conv for conv in CONVENTIONS for cls in conv.classes}


# the classes in no convention whose forward takes a video's latents: the generic input is a video for them
VIDEO_CLASSES = frozenset(
    (
        "EasyAnimateTransformer3DModel",
        "HunyuanVideoFramepackTransformer3DModel",
        "JoyImageEditTransformer3DModel",
        "LatteTransformer3DModel",
        "MotifVideoTransformer3DModel",
        "SanaWMLTX2RefinerTransformer3DModel",
        "UNet3DConditionModel",
        "WanAnimate2Transformer3DModel",
    )
)


def generic(cls: str) -> InputConvention:
    """A class in no convention: an image at 1024x1024, or a video at 832x480 x 81 frames (a class of VIDEO_CLASSES),
    256 text tokens, the latent as (B, C, H, W) or (B, C, F, H, W), by flopcheck's assumption."""
    video = cls in VIDEO_CLASSES
    return InputConvention(
        (cls,), VIDEO if video else IMAGE, 81 if video else 1, 256, "ncfhw" if video else "nchw", generic=True
    )

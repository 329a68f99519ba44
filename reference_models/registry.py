"""The model registry: names (the papers' own) -> configs, and families -> builders.

Importing this module imports no torch; `create_model` imports the family's builder on demand.
"""

from __future__ import annotations

import difflib
import fnmatch
from dataclasses import fields, replace
from typing import Any

from reference_models.configs import ConfigError, DiTConfig, LatentTransformerConfig
from reference_models.families import family_of

_CONFIGS: dict[str, Any] = {}
_PIPELINES: dict[str, str] = {}  # a model -> the shipped diffusers pipeline whose denoiser it is


class UnknownModelError(KeyError):
    """A model name that is not registered; the message names the closest ones."""

    def __init__(self, name: str):
        close = difflib.get_close_matches(name, list(_CONFIGS), n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        self.message = f"unknown model {name!r}{hint} (see `flopcheck list-models`)"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


def register(name: str, config: Any, pipeline: str = "") -> None:
    """Add one named config (and the shipped pipeline it is the denoiser of); a name registers once."""
    if name in _CONFIGS:
        raise ValueError(f"model {name!r} is registered twice")
    _CONFIGS[name] = config
    if pipeline:
        _PIPELINES[name] = pipeline


def pipeline_of(name: str) -> str | None:
    """The shipped pipeline (flopcheck/data/pipelines) whose denoiser the named model is, if any."""
    return _PIPELINES.get(name)


def list_models(pattern: str = "*") -> list[str]:
    """Registered names matching a shell pattern ('DiT-XL/*'), in registration order."""
    return [n for n in _CONFIGS if fnmatch.fnmatchcase(n, pattern)]


def get_config(name: str, **overrides: Any) -> Any:
    """The named config with fields replaced; `resolution=(W, H)` and `frames` set the input of any model,
    `space='pixel'` moves a model that can run on pixels there. A field the model does not have is a
    ConfigError naming it."""
    if name not in _CONFIGS:
        raise UnknownModelError(name)
    base = _CONFIGS[name]
    space = overrides.pop("space", None)
    resolution = overrides.pop("resolution", None)
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if resolution is not None:
        overrides.update(base.resolution_fields(resolution, space))
    unknown = sorted(set(overrides) - {f.name for f in fields(base)})
    if unknown:
        hint = "; set the resolution (WxH) and, for video, the frames" if "input_size" in unknown else ""
        raise ConfigError(f"{name} has no setting {', '.join(unknown)}{hint}")
    cfg = replace(base, **overrides)
    if space == "pixel":
        if not family_of(cfg).pixel_space:
            raise ConfigError(f"{name} runs on VAE latents only; pixel space applies to DiT")
        cfg = cfg.on_pixels(image_size=overrides.get("input_size"))
    return cfg


def build(config: Any, device: str = "meta"):
    """A torch model for `config`, on `device` ('meta': no storage, no initialisation)."""
    return family_of(config).load("build")(config, device=device)


def prepare(config: Any, batch: int = 1, device: str = "meta", cfg: bool = False) -> tuple:
    """(model, inputs, forward) ready to run one forward of `config`; cfg doubles the batch."""
    return family_of(config).load("prepare")(config, batch=batch, device=device, cfg=cfg)


def create_model(name: str, device: str = "meta", **overrides: Any):
    """Build the named model with overrides (input_size=64, attn='math', ...) on `device`."""
    return build(get_config(name, **overrides), device=device)


# DiT paper (Peebles & Xie 2023), Table 1: layers, hidden size, heads; Table 4: patch sizes 2, 4, 8.
_DIT_SIZES = {"S": (12, 384, 6), "B": (12, 768, 12), "L": (24, 1024, 16), "XL": (28, 1152, 16)}
for _size, (_depth, _width, _heads) in _DIT_SIZES.items():
    for _patch in (2, 4, 8):
        register(
            f"DiT-{_size}/{_patch}", DiTConfig(depth=_depth, hidden_size=_width, num_heads=_heads, patch_size=_patch)
        )


# The models of seed 001 at their published dimensions, each with the input the seed uses by default.
# Sources: SD3 paper (Esser et al. 2024) and the SD3-medium config; FLUX.1-dev config (flux repo);
# Wan 2.1 configs (t2v_14B, t2v_1_3B); CogVideoX-5B config; HunyuanVideo paper and config.
_VIDEO = dict(video=True, vae_stride=(4, 8, 8))
register(
    "SD3-medium",
    LatentTransformerConfig(
        family="mmdit",
        hidden_size=1536,
        num_heads=24,
        mlp_hidden=4 * 1536,
        depth=24,
        text_tokens=77 + 256,
        width=1024,
        height=1024,
        pooled_dim=2048,
    ),
    pipeline="SD3-medium",
)
register(
    "FLUX.1-dev",
    LatentTransformerConfig(
        family="flux",
        hidden_size=3072,
        num_heads=24,
        mlp_hidden=4 * 3072,
        depth=19,
        single_depth=38,
        text_tokens=512,
        width=1024,
        height=1024,
        pooled_dim=768,
        guidance_embed=True,
    ),
    pipeline="FLUX.1-dev",
)
register(
    "Wan2.1-1.3B",
    LatentTransformerConfig(
        family="wan",
        hidden_size=1536,
        num_heads=12,
        mlp_hidden=8960,
        depth=30,
        text_tokens=512,
        width=832,
        height=480,
        frames=81,
        **_VIDEO,
    ),
    pipeline="Wan2.1-T2V-1.3B",
)
register(
    "Wan2.1-14B",
    LatentTransformerConfig(
        family="wan",
        hidden_size=5120,
        num_heads=40,
        mlp_hidden=13824,
        depth=40,
        text_tokens=512,
        width=1280,
        height=720,
        frames=81,
        **_VIDEO,
    ),
    pipeline="Wan2.1-T2V-14B",
)
register(
    "CogVideoX-5B",
    LatentTransformerConfig(
        family="cogvideox",
        hidden_size=3072,
        num_heads=48,
        mlp_hidden=4 * 3072,
        depth=42,
        text_tokens=226,
        width=720,
        height=480,
        frames=49,
        time_embed_dim=512,
        **_VIDEO,
    ),
    pipeline="CogVideoX-5B",
)
register(
    "HunyuanVideo",
    LatentTransformerConfig(
        family="flux",
        hidden_size=3072,
        num_heads=24,
        mlp_hidden=4 * 3072,
        depth=20,
        single_depth=40,
        text_tokens=256,
        width=1280,
        height=720,
        frames=129,
        pooled_dim=768,
        guidance_embed=True,
        refiner_depth=2,
        **_VIDEO,
    ),
    pipeline="HunyuanVideo",
)

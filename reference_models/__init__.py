"""Reference models that get counted: DiT-S/B/L/XL x patch 2/4/8, and the text-conditioned transformers
of seed 001 (SD3-medium, FLUX.1-dev, Wan 2.1 1.3B and 14B, CogVideoX-5B, HunyuanVideo) on meta.

`create_model(name, device='meta', **overrides)` and `list_models(pattern)`, as in timm.
Importing this package imports no torch.
"""

from reference_models.configs import ATTN_PATHS, Attn, ConfigError, DiTConfig, LatentTransformerConfig, pixel_space
from reference_models.families import FAMILIES, Family, family_of
from reference_models.registry import (
    UnknownModelError,
    build,
    create_model,
    get_config,
    list_models,
    pipeline_of,
    prepare,
)

__all__ = [
    "ATTN_PATHS",
    "Attn",
    "ConfigError",
    "DiTConfig",
    "FAMILIES",
    "Family",
    "LatentTransformerConfig",
    "UnknownModelError",
    "build",
    "create_model",
    "family_of",
    "get_config",
    "list_models",
    "pipeline_of",
    "pixel_space",
    "prepare",
]

"""Reference models that get counted: DiT-S/B/L/XL x patch 2/4/8 (more families later).

`create_model(name, device='meta', **overrides)` and `list_models(pattern)`, as in timm.
Importing this package imports no torch.
"""
from reference_models.configs import ATTN_PATHS, DiTConfig, pixel_space
from reference_models.registry import UnknownModelError, build, create_model, get_config, list_models, prepare

__all__ = [
    "ATTN_PATHS", "DiTConfig", "UnknownModelError", "build", "create_model", "get_config", "list_models",
    "pixel_space", "prepare",
]

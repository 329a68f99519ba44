"""The model registry: names (the papers' own) -> configs, and families -> builders.

Importing this module imports no torch; `create_model` imports the family's builder on demand.
"""
from __future__ import annotations

import difflib
import fnmatch
import importlib
from dataclasses import replace
from typing import Any

from reference_models.configs import DiTConfig, pixel_space

_CONFIGS: dict[str, Any] = {}
# family -> "module:function" building a torch model from (config, device)
_BUILDERS: dict[str, str] = {"dit": "reference_models.dit:build_dit"}
# family -> "module:function" giving (model, inputs, forward) from (config, batch, device, cfg)
_PREPARERS: dict[str, str] = {"dit": "reference_models.dit:prepare_dit"}


def _load(spec: str):
    """'module:function' -> the function, imported on demand."""
    module, func = spec.split(":")
    return getattr(importlib.import_module(module), func)


class UnknownModelError(KeyError):
    """A model name that is not registered; the message names the closest ones."""

    def __init__(self, name: str):
        close = difflib.get_close_matches(name, list(_CONFIGS), n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        self.message = f"unknown model {name!r}{hint} (see `flopcheck list-models`)"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


def register(name: str, config: Any) -> None:
    """Add one named config; a name registers once."""
    if name in _CONFIGS:
        raise ValueError(f"model {name!r} is registered twice")
    _CONFIGS[name] = config


def list_models(pattern: str = "*") -> list[str]:
    """Registered names matching a shell pattern ('DiT-XL/*'), in registration order."""
    return [n for n in _CONFIGS if fnmatch.fnmatchcase(n, pattern)]


def get_config(name: str, **overrides: Any) -> Any:
    """The named config with fields replaced; overrides=dict(space='pixel') moves a DiT to pixels."""
    if name not in _CONFIGS:
        raise UnknownModelError(name)
    space = overrides.pop("space", None)
    cfg = replace(_CONFIGS[name], **{k: v for k, v in overrides.items() if v is not None})
    if space == "pixel" and cfg.space != "pixel":
        cfg = pixel_space(cfg, image_size=overrides.get("input_size"))
    return cfg


def build(config: Any, device: str = "meta"):
    """A torch model for `config`, on `device` ('meta': no storage, no initialisation)."""
    return _load(_BUILDERS[config.family])(config, device=device)


def prepare(config: Any, batch: int = 1, device: str = "meta", cfg: bool = False) -> tuple:
    """(model, inputs, forward) ready to run one forward of `config`; cfg doubles the batch."""
    return _load(_PREPARERS[config.family])(config, batch=batch, device=device, cfg=cfg)


def create_model(name: str, device: str = "meta", **overrides: Any):
    """Build the named model with overrides (input_size=64, attn='math', ...) on `device`."""
    return build(get_config(name, **overrides), device=device)


# DiT paper (Peebles & Xie 2023), Table 1: layers, hidden size, heads; Table 4: patch sizes 2, 4, 8.
_DIT_SIZES = {"S": (12, 384, 6), "B": (12, 768, 12), "L": (24, 1024, 16), "XL": (28, 1152, 16)}
for _size, (_depth, _width, _heads) in _DIT_SIZES.items():
    for _patch in (2, 4, 8):
        register(f"DiT-{_size}/{_patch}", DiTConfig(depth=_depth, hidden_size=_width, num_heads=_heads, patch_size=_patch))

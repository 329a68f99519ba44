"""Building and preparing the text-conditioned transformers (SD3, FLUX.1, Wan 2.1, CogVideoX, HunyuanVideo).

They exist on the meta device only: no weights are ever allocated (Wan2.1-14B would need 57 GB in
fp32), so only flopcheck's exact count, which reads shapes, can count them.
"""
from __future__ import annotations

import importlib

import torch

from reference_models.configs import ConfigError, LatentTransformerConfig
from reference_models.families import family_of


def _check_meta(config: LatentTransformerConfig, device) -> None:
    if str(device) != "meta":
        raise ConfigError(f"{config.family} models are built on the meta device only (no weights), not on "
                          f"{device}: count them on meta")


def build_latent_transformer(config: LatentTransformerConfig, device: str = "meta") -> torch.nn.Module:
    """The model for `config` on meta: every parameter shaped, none allocated."""
    _check_meta(config, device)
    with torch.device("meta"):
        model = family_of(config).load("model")(config)
    return model.eval()


def prepare_latent_transformer(config: LatentTransformerConfig, batch: int = 1, device: str = "meta",
                               cfg: bool = False) -> tuple:
    """(model, inputs, forward) for one counted forward; CFG runs the conditional and unconditional rows as batch 2N."""
    _check_meta(config, device)
    model = build_latent_transformer(config)
    module = family_of(config).model.partition(":")[0]  # the model's module makes its inputs
    inputs = importlib.import_module(module).make_inputs(config, batch * (2 if cfg else 1))
    return model, inputs, model

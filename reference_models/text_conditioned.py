"""Building and preparing the text-conditioned transformers (SD3, FLUX.1, Wan 2.1, CogVideoX, HunyuanVideo).

They exist on the meta device only: no weights are ever allocated (Wan2.1-14B would need 57 GB in
fp32), so only flopcheck's exact count, which reads shapes, can count them.
"""

from __future__ import annotations

import importlib

import torch

from reference_models.configs import ConfigError, LatentTransformerConfig
from reference_models.families import family_of

STAND_IN_PARAMS = 50_000_000  # a config this small (200 MB of fp32 weights) may execute: a stand-in of the real one


def _check_meta(config: LatentTransformerConfig, device) -> None:
    """Meta only, except a stand-in small enough to execute (fewer, narrower blocks: counters' convention on it)."""
    if str(device) == "meta":
        return
    with torch.device("meta"):
        params = sum(p.numel() for p in family_of(config).load("model")(config).parameters())
    if params > STAND_IN_PARAMS:
        raise ConfigError(
            f"{config.family} models are built on the meta device only (no weights), not on "
            f"{device}: count them on meta"
        )


def build_latent_transformer(config: LatentTransformerConfig, device: str = "meta") -> torch.nn.Module:
    """The model for `config` on meta: every parameter shaped, none allocated (a small stand-in: on `device`)."""
    _check_meta(config, device)
    with torch.device(device):
        model = family_of(config).load("model")(config)
    return model.eval()


def _materialised(t: torch.Tensor, device) -> torch.Tensor:
    """A meta input as values on `device`: uniform in [0, 1) (timesteps and guidance included), integers 0."""
    if str(device) == "meta":
        return t
    return torch.rand(t.shape, device=device) if t.dtype.is_floating_point else torch.zeros(t.shape, dtype=t.dtype)


def prepare_latent_transformer(
    config: LatentTransformerConfig, batch: int = 1, device: str = "meta", cfg: bool = False
) -> tuple:
    """(model, inputs, forward) for one counted forward; CFG runs the conditional and unconditional rows as batch 2N."""
    model = build_latent_transformer(config, device)
    module = family_of(config).model.partition(":")[0]  # the model's module makes its inputs
    inputs = importlib.import_module(module).make_inputs(config, batch * (2 if cfg else 1))
    inputs = tuple(_materialised(t, device) for t in inputs)
    return model, inputs, model

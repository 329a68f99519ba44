"""Inputs of a diffusers autoencoder's half: 'diffusers:CLASS.decode' (the default: what a pipeline runs once per
generation) or '.encode', at an image's or a video's size through the autoencoder's strides."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from flopcheck.specs import Options, SpecError
from flopcheck.specs.inputs.common import first_set, latent_frames, latent_side


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


def half_forward(cls: type, method: str) -> Callable[..., Any]:
    """CLASS.decode or CLASS.encode as a forward whose outputs are tensors: encode's latent distribution (a
    DiagonalGaussianDistribution, which no tracer takes as an output) as the moments tensor it holds; no op added."""
    half = getattr(cls, method)

    def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _as_tensors(half(self, *args, **kwargs))

    forward.__dict__.update(__signature__=inspect.signature(half))  # a function attribute: its inputs' names
    return forward


def _as_tensors(out: Any) -> Any:
    """A half's output with each distribution (anything holding a `parameters` tensor) as that tensor."""
    if isinstance(out, (tuple, list)):
        return type(out)(_as_tensors(x) for x in out)
    dist = getattr(out, "latent_dist", None)
    moments = getattr(dist if dist is not None else out, "parameters", None)
    return moments if isinstance(moments, torch.Tensor) else out


def _spatial(model: Any, vae: Vae) -> int:  # model: a diffusers autoencoder
    """Pixels per latent side: the model's spatial_compression_ratio, else its config's, else 2^(down blocks - 1)."""
    ratio = getattr(model, "spatial_compression_ratio", None) or getattr(model.config, "scale_factor_spatial", None)
    if isinstance(ratio, int) and ratio > 0:
        return ratio
    if vae.spatial:
        return vae.spatial
    by_blocks: int = 2 ** (len(model.config.block_out_channels) - 1)
    return by_blocks


def vae_inputs(
    cls: str, model: Any, method: str, o: Options, device: str
) -> tuple[tuple[torch.Tensor], dict[str, Any], str]:
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
    latent_side(w, s, "width"), latent_side(h, s, "height")
    f = o.frames or (81 if video else 1)
    lf = latent_frames(f, vae.temporal) if video else 1
    frames = (lf if method == "decode" else f,) if vae.temporal else ()
    latent = first_set(c, ("latent_channels", "z_dim"))
    if latent is None:
        raise SpecError(f"{cls}'s config names no latent channels (latent_channels, z_dim): give --inputs module:fn")
    if method == "decode":
        x = torch.empty(o.batch, latent, *frames, h // s, w // s, device=device)
    else:
        x = torch.empty(o.batch, first_set(c, ("in_channels", "input_channels")) or 3, *frames, h, w, device=device)
    kwargs = {"return_dict": False} if "return_dict" in {p.name for p in _parameters_of(model, method)} else {}
    words = (
        f"{method} {w}x{h} px"
        + (f" x {f} frames ({lf} latent)" if video else "")
        + f", latent {latent} channels at 1/{s} per side, batch {o.batch}"
        + ("" if o.resolution else " (flopcheck's default size: give --resolution" + (", --frames)" if video else ")"))
    )
    return (x,), kwargs, words


def _parameters_of(model: Any, method: str) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(getattr(type(model), method)).parameters.values() if p.name != "self"]

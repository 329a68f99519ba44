"""Inputs of one forward of a diffusers transformer: its class's input convention (conventions.py), the pipeline's
own, and one rule per forward parameter (rules.py) that builds it from the convention's latent grid and the config.

Pixels become latents through the VAE's strides (8 per side and 4 per frame unless the convention says otherwise:
(F - 1) / 4 + 1 latent frames), the text encoder's output is (B, S, its width), the timestep is one number per
sample. A convention's defaults are its published pipeline's (FLUX and SD3 at 1024x1024, Wan at 832x480 x 81 frames,
CogVideoX at 720x480 x 49, HunyuanVideo at 1280x720 x 129, LTX-Video at 704x480 x 161, DiT and PixArt at the
config's sample size); a class in none gets flopcheck's generic input (1024x1024, or 832x480 x 81 frames for a
video class; 256 text tokens), and its note says so. A parameter the forward requires and no rule builds is refused in
one line naming it and --inputs.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

from flopcheck.specs import Options, SpecError
from flopcheck.specs.inputs.common import first_set, latent_frames, latent_side
from flopcheck.specs.inputs.conventions import BY_CLASS, InputConvention, generic
from flopcheck.specs.inputs.rules import CONDITIONING, IN_CHANNELS, LAYOUTS, SHARED, TEXT_MASKS, TIMESTEPS, Grid


def _patch(c: Any) -> int:  # c: a diffusers config
    """The transformer's patch side (an int, or the last of a [t, h, w] list)."""
    p = getattr(c, "patch_size", None)
    if isinstance(p, (list, tuple)):
        p = p[-1]
    return p if isinstance(p, int) and p > 0 else 1


def _parameters(model: Any) -> list[inspect.Parameter]:
    return [
        p
        for p in inspect.signature(type(model).forward).parameters.values()
        if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _grid(
    cls: str, conv: InputConvention, c: Any, o: Options, s: int, device: str
) -> tuple[Grid, str, tuple[int, int] | None]:
    """An image or video convention's latent grid at the options' size, the size in words ('1024x1024 px'), and in
    pixels (W, H)."""
    if o.frames and conv.frames == 1:
        raise SpecError(f"frames apply to video models; {cls} is an image model")
    sample = first_set(c, ("sample_size",))
    w, h = o.resolution or conv.resolution or ((sample or 128) * conv.spatial,) * 2
    stride = conv.spatial * _patch(c) * (2 if conv.layout == "packed" else 1)
    latent_side(w, stride, "width"), latent_side(h, stride, "height")
    f = o.frames or conv.frames
    lf = latent_frames(f, conv.temporal) if conv.frames > 1 else 1
    t = _temporal_patch(c)
    padded = f" ({lf} latent frames padded to {lf + -lf % t}, as its pipeline pads them)" if lf % t else ""
    lf += -lf % t  # CogVideoX 1.5's pipeline pads the latent frames to a multiple of its temporal patch
    words = f"{w}x{h} px" + (f" x {f} frames{padded}" if conv.frames > 1 else "")
    return Grid(o.batch, lf, h // conv.spatial, w // conv.spatial, s, device), words, (w, h)


def _temporal_patch(c: Any) -> int:  # c: a diffusers config
    """The transformer's temporal patch (patch_size_t, or the first of a [t, h, w] patch_size), 1 where it has none."""
    p = getattr(c, "patch_size_t", None)
    if p is None and isinstance(getattr(c, "patch_size", None), (list, tuple)) and len(c.patch_size) == 3:
        p = c.patch_size[0]
    return p if isinstance(p, int) and p > 0 else 1


def _audio_grid(
    cls: str, conv: InputConvention, o: Options, s: int, device: str
) -> tuple[Grid, str, tuple[int, int] | None]:
    """An audio convention's grid: its latents in a row (1 x L), their count in words, and no pixels (None)."""
    if o.resolution or o.frames:
        raise SpecError(f"--resolution and --frames apply to image and video models; {cls} is an audio model")
    return Grid(o.batch, 1, 1, conv.audio, s, device), f"{conv.audio} audio latents", None


def build_inputs(
    cls: str, model: Any, o: Options, device: str
) -> tuple[tuple[Any, ...], dict[str, Any], str, tuple[int, int] | None]:  # model: a diffusers model
    """(args, kwargs, a line saying what they are, their (W, H) pixels: None for audio) for one forward of a diffusers
    class at the options' input: the convention's rules, then the shared ones, for each parameter of the forward that
    has one."""
    conv = BY_CLASS.get(cls) or generic(cls)
    c = model.config
    if o.text_tokens and not conv.text_tokens:
        raise SpecError(f"--text-tokens applies to text-conditioned models; {cls} takes no text")
    s = o.text_tokens if o.text_tokens is not None else conv.text_tokens
    g, size, pixels = _audio_grid(cls, conv, o, s, device) if conv.audio else _grid(cls, conv, c, o, s, device)
    channels = first_set(c, IN_CHANNELS)
    if channels is None:
        raise SpecError(f"{cls}'s config names no input channels ({', '.join(IN_CHANNELS)}): give --inputs module:fn")
    timestep = (lambda c, g: g.zeros(g.n, dtype=torch.long)) if conv.integer_timestep else (lambda c, g: g.zeros(g.n))
    rules = {**SHARED, **dict.fromkeys(TIMESTEPS, timestep), **(conv.rules or {})}
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    missing: list[str] = []
    for i, p in enumerate(_parameters(model)):
        if i == 0:
            first = rules.get(p.name)
            args.append(first(c, g) if first else g.empty(*LAYOUTS[conv.layout](g, channels)))
            continue
        rule = rules.get(p.name)
        own = p.name in (conv.rules or {}) or p.name in CONDITIONING or p.default is p.empty
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
    words = f"input {size}" + (f", {s} text tokens" if s else "") + _masks(kwargs) + f", batch {o.batch}" + _whose(conv)
    return tuple(args), kwargs, words, pixels


def _masks(kwargs: dict[str, Any]) -> str:
    """The text masks the inputs carry, in words: ones, every text token attends ('' for none)."""
    given = [n for n in TEXT_MASKS if isinstance(kwargs.get(n), torch.Tensor)]
    return f", a text mask of ones ({', '.join(given)}: every text token attends)" if given else ""


def _whose(conv: InputConvention) -> str:
    """Whose input it is, in words: the pipeline's convention, or flopcheck's assumption and how to give another."""
    if not conv.generic:
        return " (the pipeline's convention)"
    if conv.audio:
        give = "--text-tokens or --inputs module:fn" if conv.text_tokens else "--inputs module:fn"
        return f" (flopcheck's reading of its pipeline: give {give} for others)"
    return (
        " (flopcheck's generic input for a class with no pipeline convention here: give --resolution, "
        "--frames, --text-tokens or --inputs for the pipeline's)"
    )

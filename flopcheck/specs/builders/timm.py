"""timm:NAME, built without weights; its input from its pretrained_cfg."""

from __future__ import annotations

import difflib
from typing import Any

import timm
import torch
from timm.layers.config import set_fused_attn, use_fused_attn  # timm.layers imports them, exports neither

from flopcheck.specs import REPARAMETERIZABLE, ModelSpec, SpecError
from flopcheck.specs.binding import given
from flopcheck.specs.builders import DEFAULT_SHAPE, image_shape
from flopcheck.specs.built import Built
from flopcheck.specs.meta import construct


def from_timm(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """timm.create_model(NAME, pretrained=False); input (B, *pretrained_cfg['input_size']). attn='math' turns
    timm's fused attention off (timm.layers.set_fused_attn) for the build."""
    name, o = spec.name, spec.options
    _timm_known(name)
    fused = use_fused_attn()
    if o.attn == "math":
        set_fused_attn(False)
        notes.append("timm's fused attention turned off (timm.layers.set_fused_attn(False)): explicit matmuls")
    try:
        model = construct(lambda: timm.create_model(name, pretrained=False), device, notes, spec.text)
    finally:
        set_fused_attn(fused)
    model = _reparameterized(model, name, o.reparam, notes)
    if o.inputs:
        return given(model, o, device, notes)
    size = tuple(model.pretrained_cfg.get("input_size", DEFAULT_SHAPE[1:]))
    shape = image_shape((1, *size), o)
    return Built(
        model,
        (torch.empty(shape, device=device),),
        {},
        notes
        + [
            f"input from timm's pretrained_cfg['input_size'] {size}"
            if not (o.resolution or o.input_shape)
            else "input from the options"
        ],
    )


FUSES = ("fuse", "reparameterize", "switch_to_deploy")  # the methods timm's reparameterize_model calls


def _reparameterized(model: Any, name: str, fuse: bool, notes: list[str]) -> Any:
    """The model as built, with a note where it has modules timm's reparameterize_model fuses (RepVGG's 3x3 + 1x1 +
    identity branches into one 3x3); with `fuse`, fused (on the model's device: meta stays meta), else a SpecError."""
    from timm.utils.model import reparameterize_model

    fusable = sum(1 for m in model.modules() if any(hasattr(m, f) for f in FUSES))
    if not fusable:
        if fuse:
            raise SpecError(f"timm:{name} has no module timm's reparameterize_model fuses: it counts as built")
        return model
    if not fuse:
        notes.append(f"timm:{name} {REPARAMETERIZABLE} ({fusable} modules): counted as built, with them")
        return model
    with torch.device(next(model.parameters()).device):  # its kernels are made on the default device
        fused = reparameterize_model(model, inplace=True)
    notes.append(f"timm:{name} counted after timm's reparameterize_model fused its {fusable} modules")
    return fused


def _timm_known(name: str) -> None:
    """A timm architecture ('convnext_base') or one of its pretrained tags ('convnext_base.fb_in22k_ft_in1k_384',
    the names the Hugging Face hub shows), whose pretrained_cfg can set another input size and head; else
    SpecError with the close names."""
    base, dot, tag = name.partition(".")
    if name.startswith("hf-hub:") or name.startswith("hf_hub:"):
        raise SpecError(
            f"timm:{name} loads a config from the Hugging Face hub, which flopcheck does not reach: "
            f"write the model's timm name, like timm:vit_base_patch16_224.augreg2_in21k_ft_in1k"
        )
    if base in timm.list_models() and (not dot or name in timm.list_models(f"{base}.*", pretrained=True)):
        return
    if dot and base in timm.list_models():
        tags = timm.list_models(f"{base}.*", pretrained=True)
        close = difflib.get_close_matches(name, tags, n=5, cutoff=0.6) or tags[:5]
        raise SpecError(
            f"timm's {base} has no pretrained tag {tag!r}"
            + (f"; close: {', '.join(close)}" if tags else "; it has none: write timm:" + base)
        )
    models = timm.list_models()
    # the nearest spellings first ('resnet5' -> resnet50, resnet18), then the names that contain it, shortest first
    near = difflib.get_close_matches(base, models, n=5, cutoff=0.6)
    close = near or (sorted(timm.list_models(f"*{base}*"), key=len)[:5] if base else [])  # '*' alone: every model
    raise SpecError(
        f"timm has no model {name!r}"
        + (f"; did you mean {', '.join('timm:' + c for c in close)}?" if close else "")
        + "; list them with timm.list_models()"
    )

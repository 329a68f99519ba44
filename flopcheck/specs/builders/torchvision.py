"""torchvision:NAME, built without weights as its default weights build it; its input from their transforms."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch
import torchvision
from torch import nn

from flopcheck.specs import ModelSpec, SpecError
from flopcheck.specs.binding import given
from flopcheck.specs.builders import image_shape
from flopcheck.specs.built import Built
from flopcheck.specs.meta import construct


def torchvision_side(name: str) -> tuple[int, str] | None:
    """The image side of a torchvision model's default weights' transforms and which it is: the crop (inception_v3
    299), else the resize of a model that takes no crop (segmentation: 520, the side its GFLOPS are counted at); or
    None."""
    try:
        weights = torchvision.models.get_model_weights(name).DEFAULT
    except (ValueError, KeyError):
        return None
    keywords = getattr(weights.transforms, "keywords", {}) or {}
    for key, word in (("crop_size", "crop"), ("resize_size", "resize")):
        side = keywords.get(key)
        if side:
            return int(side[0] if isinstance(side, (list, tuple)) else side), word
    return None


def _vit_image_size(name: str) -> int | None:
    """The image size a torchvision ViT's default weights build it for (their meta's min_size), or None."""
    try:
        return int(torchvision.models.get_model_weights(name).DEFAULT.meta["min_size"][0])
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _as_its_weights_build(
    name: str, builder: Callable[..., nn.Module], notes: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """The builder's keywords that make, without weights, the model its default weights make; and the notes."""
    takes = inspect.signature(builder).parameters
    # detection and segmentation models load an ImageNet backbone unless told not to: no weights, no network
    extra: dict[str, Any] = {"weights_backbone": None} if "weights_backbone" in takes else {}
    size = _vit_image_size(name) if builder.__module__.endswith(".vision_transformer") else None
    if size:  # a ViT's weights set its image size (vit_h_14's default weights: 518; the builder's default is 224)
        extra["image_size"] = size
    if "aux_loss" in takes:  # its weights build the auxiliary head, which runs in eval too (and is in its GFLOPS)
        extra["aux_loss"] = True
        notes = notes + ["its auxiliary classifier built, as its published weights have it (aux_loss=True)"]
    return extra, notes


def _two_stage(name: str, model: nn.Module) -> bool:
    """A detection model whose second stage (roi_heads: Faster, Mask, Keypoint R-CNN) runs on the boxes NMS keeps."""
    detection = name in torchvision.models.list_models(module=torchvision.models.detection)
    return detection and hasattr(model, "roi_heads")


def _one_stage(name: str, model: nn.Module) -> str:
    """Why a one-stage detector's multiply-adds do not depend on values (SSD, SSDlite, RetinaNet, FCOS: every conv
    runs on the whole image before NMS picks boxes), or ""."""
    detection = name in torchvision.models.list_models(module=torchvision.models.detection)
    if not detection or hasattr(model, "roi_heads"):
        return ""
    return "a one-stage detector: every multiply-add runs on the whole image before NMS keeps boxes by their values"


def _fixed_side(model: nn.Module) -> int | None:
    """The side a detector's transform resizes every image to (SSDlite 320, SSD 300), or None."""
    fixed = getattr(getattr(model, "transform", None), "fixed_size", None)
    return int(fixed[0]) if fixed else None


def _no_input_size(text: str, name: str, model: nn.Module) -> str:
    """Why a torchvision model whose weights state no image size gets no default input, and what to give."""
    if _two_stage(name, model):
        return (
            f"{text} is a two-stage detection model: its second stage runs on the boxes its first stage's NMS "
            f"keeps, a number that depends on the image's values, so its FLOPs do too and no count on shapes gives "
            f"them; count a part with fixed shapes (a factory returning its backbone)"
        )
    needed = [
        p.name
        for p in inspect.signature(model.forward).parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    fix = (
        f"it takes {len(needed)} inputs ({', '.join(needed)}): give them (--inputs module:fn)"
        if len(needed) > 1
        else "give the input shape (--input-shape)"
    )
    return f"{text}: its weights state no image size, so its input is not known: {fix}"


# torchvision's published GFLOPS (meta["_ops"]) of all nine video weights are per 16-frame clip (r3d_18's 40.697
# is the exact count at (1, 3, 16, 112, 112)), whatever clip_len their accuracy was evaluated with
VIDEO_FRAMES = 16


def from_torchvision(spec: ModelSpec, device: str, notes: list[str]) -> Built:
    """torchvision.models.get_model(NAME, weights=None, ...) as its default weights build it; input (B, 3, side,
    side) from its weights' transforms, (B, 3, frames, side, side) for a video model (16 frames unless --frames)."""
    name, o = spec.name, spec.options
    if name not in torchvision.models.list_models():
        raise SpecError(f"torchvision has no model {name!r}; list them with torchvision.models.list_models()")
    video = name in torchvision.models.list_models(module=torchvision.models.video)
    if o.frames and not video:
        raise SpecError(f"--frames applies to video models; {spec.text} takes images")
    builder = torchvision.models.get_model_builder(name)
    extra, notes = _as_its_weights_build(name, builder, notes)
    model = construct(lambda: builder(weights=None, **extra), device, notes, spec.text)
    if o.inputs:
        built = given(model, o, device, notes)
        built.work_fixed = _one_stage(name, model)
        return built
    side, word = torchvision_side(name) or ((_fixed_side(model), "fixed size") if _fixed_side(model) else (None, ""))
    if side is None and not o.input_shape:
        raise SpecError(_no_input_size(spec.text, name, model))
    frames = (o.frames or VIDEO_FRAMES,) if video else ()
    shape = image_shape((1, 3, *frames, side or 0, side or 0), o)
    note = (
        f"input from its weights' transforms: {word} {side}"
        if not (o.resolution or o.input_shape)
        else "input from the options"
    )
    if video and not o.input_shape:
        note += (
            f", {o.frames} frames (--frames)"
            if o.frames
            else f", {VIDEO_FRAMES} frames (the clip its published GFLOPS are counted on)"
        )
    return Built(model, (torch.empty(shape, device=device),), {}, notes + [note], _one_stage(name, model))

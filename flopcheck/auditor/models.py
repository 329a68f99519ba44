"""The reference for a claim: a reference model's formula, or the exact count of any model spec.

Specs: a reference model name ('DiT-XL/2'), 'timm:NAME' (built without weights), 'torchvision:NAME',
or 'package.module:factory'. Models other than the reference ones are counted exactly on meta
tensors; their input shape comes from the model's defaults or the claim's input_shape.
"""
from __future__ import annotations

import importlib
from dataclasses import replace
from typing import Any

from flopcheck.auditor.claims import Claim, ClaimError
from flopcheck.types import ATTENTION_KINDS, Breakdown, Kind, Term

DEFAULT_INPUT = (1, 3, 224, 224)


def _pixel_and_latent_breakdowns(claim: Claim) -> tuple[Breakdown, Breakdown, dict, dict, str, tuple]:
    from flopcheck.formula import formula_breakdown
    from reference_models import get_config

    cfg = get_config(claim.model)
    if claim.frames:
        raise ClaimError(f"frames apply to video models; {claim.model} is an image model")
    resolution = claim.resolution or cfg.resolution
    latent_cfg = get_config(claim.model, resolution=resolution)  # square and a multiple of 8 x patch, or ConfigError
    pixel_cfg = get_config(claim.model, resolution=resolution, space="pixel")
    latent = _part(formula_breakdown(claim.model, latent_cfg, batch=1), claim.part, cfg)
    pixel = _part(formula_breakdown(claim.model, pixel_cfg, batch=1), claim.part, cfg)
    tokens = {False: latent_cfg.tokens, True: pixel_cfg.tokens}
    # LayerNorm outputs: norm1 and norm2 per block and norm_final, T x d each
    layer_norms = {"model": 2 * cfg.depth + 1, "block": 2}.get(claim.part, 0)
    norms = {px: layer_norms * t * cfg.hidden_size for px, t in tokens.items()}
    return latent, pixel, tokens, norms, "formula", ()


def _latent_breakdowns(claim: Claim) -> tuple[Breakdown, None, dict, dict, str, tuple]:
    """A text-conditioned model's formula at the claim's resolution and frames (latents only)."""
    from flopcheck.formula import formula_breakdown
    from reference_models import get_config

    cfg = get_config(claim.model, resolution=claim.resolution, frames=claim.frames)
    b = _part(formula_breakdown(claim.model, cfg, batch=1), claim.part, cfg)
    return b, None, {False: cfg.image_tokens}, {False: 0}, "formula", ()


def _part(b: Breakdown, part: str, cfg) -> Breakdown:
    """The breakdown of one part: the whole model, the block linears, attention, the two embedding ends, or one
    block (of a family with one list of blocks)."""
    from flopcheck.formula import in_blocks
    from reference_models import family_of

    family = family_of(cfg)
    if part == "model":
        return b
    if part not in family.parts:
        raise ClaimError(f"part {part!r} does not apply to {b.model}: use {', '.join(family.parts)}")
    b = replace(b, symbols=())  # a part is not a whole model: no whole-model per-layer formula for it
    if part == "linear":  # seed 001's "linear": the blocks' q/k/v, output and MLP projections
        return replace(b, terms=tuple(t for t in b.terms if t.kind is Kind.LINEAR and in_blocks(t.path)))
    if part == "attention":
        return replace(b, terms=tuple(t for t in b.terms if t.kind in ATTENTION_KINDS))
    if part == "embeddings":
        return replace(b, terms=tuple(t for t in b.terms if t.path in family.embeddings))
    if part == "block":
        return replace(b, terms=tuple(replace(t, flops=t.flops // cfg.depth, formula=f"({t.formula})/L")
                                      for t in b.terms if t.path.startswith(family.blocks[0] + ".")))
    raise ClaimError(f"unknown part {part!r}: use model, linear, attention, embeddings or block")


def build_spec(spec: str) -> tuple[Any, tuple[int, ...]]:
    """A model (on meta, no weights) and its default input shape, from a spec."""
    import torch

    kind, _, name = spec.partition(":")
    try:
        with torch.device("meta"):
            if kind == "timm":
                import timm

                model = timm.create_model(name, pretrained=False)
                shape = (1, *model.pretrained_cfg.get("input_size", DEFAULT_INPUT[1:]))
            elif kind == "torchvision":
                import torchvision

                model, shape = torchvision.models.get_model(name, weights=None), DEFAULT_INPUT
            else:
                model, shape = getattr(importlib.import_module(kind), name)(), DEFAULT_INPUT
    except Exception as err:  # any import or construction failure is the spec's fault
        raise ClaimError(f"cannot build model {spec!r}: {_one_line(err)}") from None
    if not isinstance(model, torch.nn.Module):
        raise ClaimError(f"model {spec!r} gave a {type(model).__name__}, not a torch.nn.Module: point it at a "
                         f"function that returns the model")
    return model.eval(), shape


def _one_line(err: BaseException) -> str:
    """'TypeError: first line of the message', at most 160 characters of it."""
    return f"{type(err).__name__}: {(str(err).strip().splitlines() or [''])[0][:160]}"


def count_spec(spec: str, shape: tuple[int, ...] | None, resolution: tuple[int, int] | None) -> dict:
    """Build a spec model on meta and count one forward on its input: the terms, LayerNorm elements, the ops it had no
    formula for, and the shape used. Runs in the child process (spec_child.py): this is the user's code."""
    import torch

    from flopcheck.exact import count_forward

    model, default = build_spec(spec)
    shape = tuple(shape or default)
    if resolution:
        shape = (*shape[:-2], resolution[1], resolution[0])
    try:
        count = count_forward(model, (torch.empty(shape, device="meta"),), model=spec, device="meta")
    except Exception as err:  # the user's forward on this input: its failure is one line, not a traceback
        raise ClaimError(f"model {spec!r} failed on an input of shape {shape} on the meta device: "
                         f"{_one_line(err)}; give its input shape") from None
    return {"terms": [[t.path, t.kind.value, t.flops, t.formula] for t in count.terms()],
            "norm_elements": count.uncounted_by_category().get("norm", (0, 0))[1],
            "incomplete": list(count.incomplete), "incompleteness": count.incompleteness(), "shape": list(shape)}


SPEC_TIMEOUT_S = 600.0  # a factory and one forward on meta: seconds, unless the user's code never returns
_COUNTED: dict[tuple, dict] = {}  # (spec, shape, resolution) -> the child's answer, so a claims file counts once


def _counted(spec: str, shape, resolution, timeout_s: float) -> dict:
    """count_spec in a child process with a deadline: a crash, sys.exit, os._exit, a read of stdin or a hang there
    is one ClaimError here."""
    key = (spec, shape, resolution)
    if key not in _COUNTED:
        _COUNTED[key] = _count_in_child(spec, shape, resolution, timeout_s)
    if "error" in _COUNTED[key]:
        raise ClaimError(_COUNTED[key]["error"])
    return _COUNTED[key]


def _count_in_child(spec: str, shape, resolution, timeout_s: float) -> dict:
    """The child's answer, or {"error": one line} for whatever went wrong there."""
    import json
    import subprocess
    import sys

    job = json.dumps({"spec": spec, "shape": shape, "resolution": resolution, "paths": sys.path})
    try:
        proc = subprocess.run([sys.executable, "-m", "flopcheck.auditor.spec_child", job], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"error": f"model {spec!r} was not counted within {timeout_s:g} s and was stopped: does its factory "
                         f"or forward ever return?"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": f"model {spec!r} ended its process (exit code {proc.returncode}) before it was counted: "
                         f"does its code call sys.exit or os._exit, or crash?"}
    return json.loads(lines[-1])


def _spec_breakdowns(claim: Claim) -> tuple[Breakdown, None, dict, dict, str, tuple]:
    from flopcheck.types import Kind

    if ":" not in claim.model:
        from reference_models import UnknownModelError

        raise ClaimError(str(UnknownModelError(claim.model)) + "; or pass a spec: timm:NAME, torchvision:NAME, "
                                                               "package.module:factory")
    if claim.part != "model":
        raise ClaimError(f"part {claim.part!r} applies to reference models; a claim on {claim.model} covers the "
                         f"whole model")
    if claim.frames:
        raise ClaimError(f"frames apply to the video reference models; give {claim.model} its input shape instead")
    out = _counted(claim.model, claim.input_shape, claim.resolution, SPEC_TIMEOUT_S)
    terms = tuple(Term(path, Kind(kind), flops, formula) for path, kind, flops, formula in out["terms"])
    reference = "exact count" + (f" ({out['incompleteness']})" if out["incomplete"] else "")
    return (Breakdown(claim.model, terms), None, {False: 0}, {False: out["norm_elements"]}, reference,
            tuple(out["incomplete"]))


def reference_breakdowns(claim: Claim) -> tuple[Breakdown, Breakdown | None, dict, dict, str, tuple[str, ...]]:
    """(latent or only breakdown, pixel breakdown or None, tokens and LayerNorm elements by pixel flag,
    'formula' or 'exact count', the ops with multiply-adds the exact count has no formula for)."""
    from reference_models import family_of, get_config, list_models

    if claim.model in list_models():  # a family that runs on pixels too has the pixel readings
        pixels = family_of(get_config(claim.model)).pixel_space
        return _pixel_and_latent_breakdowns(claim) if pixels else _latent_breakdowns(claim)
    return _spec_breakdowns(claim)

"""The reference for a claim: a reference model's formula, or the exact count of any model spec.

Specs (flopcheck.specs): a reference model name ('DiT-XL/2'), 'timm:NAME', 'torchvision:NAME',
'diffusers:CLASS' with a config, or 'package.module:factory'. Models other than the reference ones
are built and counted exactly on meta in a child process (their code runs there, with a deadline);
their input comes from the model's own convention or the claim's resolution, frames or input shape.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from flopcheck.auditor.claims import Claim, ClaimError
from flopcheck.counted import ExactCount
from flopcheck.formula import formula_breakdown, in_blocks
from flopcheck.types import ATTENTION_KINDS, Breakdown, BySpace, Kind, ModelPart, Space, Term, Work
from reference_models import family_of, get_config
from reference_models.configs import DiTConfig, LatentTransformerConfig

if TYPE_CHECKING:  # a spec's measurement is read here, never taken: no torch
    from flopcheck.specs.blocks import BlockList
    from flopcheck.specs.measure import Measured


@dataclass(frozen=True)
class ClaimReference:
    """What a claim's readings are built from: the breakdown on the latent (or the only one) and on pixels, the
    tokens and LayerNorm elements of each, what the truth is in words, and the ops the exact count has no formula
    for."""

    latent: Breakdown
    pixel: Breakdown | None
    tokens: BySpace
    norms: BySpace
    label: str  # 'formula', or 'exact count at ...'
    incomplete: tuple[str, ...] = ()
    norm: str = "LayerNorm"  # the norms `norms` counts, by name: a spec's own ('BatchNorm' on a ResNet)


def _pixel_and_latent_breakdowns(claim: Claim) -> ClaimReference:
    cfg = get_config(claim.model)
    if claim.frames:
        raise ClaimError(f"frames apply to video models; {claim.model} is an image model")
    resolution = claim.resolution or cfg.resolution
    latent_cfg = get_config(claim.model, resolution=resolution)  # square and a multiple of 8 x patch, or ConfigError
    pixel_cfg = get_config(claim.model, resolution=resolution, space=Space.PIXEL)
    latent = _part(formula_breakdown(claim.model, latent_cfg, batch=1), claim.part, cfg)
    pixel = _part(formula_breakdown(claim.model, pixel_cfg, batch=1), claim.part, cfg)
    tokens = BySpace(latent_cfg.tokens, pixel_cfg.tokens)
    per_token = cfg.norm_outputs_per_token(claim.part)  # LayerNorm outputs per token
    return ClaimReference(
        latent, pixel, tokens, BySpace(per_token * tokens.latent, per_token * tokens.pixel), "formula"
    )


def _latent_breakdowns(claim: Claim) -> ClaimReference:
    """A text-conditioned model's formula at the claim's resolution and frames (latents only)."""
    cfg = get_config(claim.model, resolution=claim.resolution, frames=claim.frames)
    b = _part(formula_breakdown(claim.model, cfg, batch=1), claim.part, cfg)
    return ClaimReference(b, None, BySpace(cfg.image_tokens), BySpace(0), "formula")


def _part(b: Breakdown, part: ModelPart, cfg: DiTConfig | LatentTransformerConfig) -> Breakdown:
    """The breakdown of one part: the whole model, the block linears, attention, the two embedding ends, or one
    block (of a family with one list of blocks)."""
    family = family_of(cfg)
    if part is ModelPart.MODEL:
        return b
    if part not in family.parts:
        raise ClaimError(f"part {part!r} does not apply to {b.model}: use {', '.join(family.parts)}")
    b = replace(b, symbols=())  # a part is not a whole model: no whole-model per-layer formula for it
    if part is ModelPart.LINEAR:  # the inference arithmetic's "linear": the blocks' q/k/v, output and MLP projections
        return replace(b, terms=tuple(t for t in b.terms if t.kind is Kind.LINEAR and in_blocks(t.path)))
    if part is ModelPart.ATTENTION:
        return replace(b, terms=tuple(t for t in b.terms if t.kind in ATTENTION_KINDS))
    if part is ModelPart.EMBEDDINGS:
        return replace(b, terms=tuple(t for t in b.terms if t.path in family.embeddings))
    if part is ModelPart.BLOCK:
        return replace(
            b,
            terms=tuple(
                replace(t, flops=t.flops // cfg.depth, formula=f"({t.formula})/L")
                for t in b.terms
                if t.path.startswith(family.blocks[0] + ".")
            ),
        )
    raise ClaimError(f"unknown part {part!r}: use model, linear, attention, embeddings or block")


def _spec_breakdowns(claim: Claim, given: Measured | None = None) -> ClaimReference:
    """A spec's exact count (measured in a child process, or given) as the only breakdown, cut to the claim's
    part."""
    m = given or claim.subject.measured()
    b = spec_part(m, claim.part)
    reference = f"exact count at {m.inputs}" + (f" ({m.exact.incompleteness()})" if not m.exact.complete else "")
    norms = m.exact.uncounted_by_category().get(Work.NORM, (0, 0))[1] if claim.part is ModelPart.MODEL else 0
    # T=1: per sample
    return ClaimReference(b, None, BySpace(1), BySpace(norms), reference, m.exact.incomplete, norm_names(m.exact))


# a norm op's name (aten's, less 'native_' and the '_legit' variants) -> the layer people call it by
NORM_NAMES = {"layer_norm": "LayerNorm", "batch_norm": "BatchNorm", "group_norm": "GroupNorm"}
NORM_NAMES |= {"rms_norm": "RMSNorm", "instance_norm": "InstanceNorm"}


def norm_names(exact: ExactCount) -> str:
    """The norms an exact count ran, by the layers' names, in order of the elements they wrote ('BatchNorm',
    'LayerNorm/RMSNorm'); 'norms' for one it cannot name."""
    written: dict[str, int] = {}
    for r in exact.uncounted:
        if r.kind is Work.NORM:
            name = next((w for k, w in NORM_NAMES.items() if k in r.op), "norms")
            written[name] = written.get(name, 0) + r.elements
    return "/".join(sorted(written, key=lambda n: -written[n])) or "LayerNorm"


def no_embeddings(text: str) -> ClaimError:
    """Part 'embeddings' of a model without a hand formula (its source alone decides it): one line."""
    return ClaimError(
        f"part 'embeddings' applies to the reference models; {text} has no hand formula to "
        f"name its embedding terms: claim the model, linear, attention or block"
    )


def spec_part(m: Measured, part: ModelPart) -> Breakdown:
    """A part of a spec's exact count, found from its module tree: the block lists' linears, attention, or one
    block; a part the model does not have is refused, one line."""
    b = m.breakdown()
    blocks = ", ".join(f"{x.path} ({x.count} x {x.type_name})" for x in m.blocks)
    if part is ModelPart.MODEL:
        return b
    if part is ModelPart.EMBEDDINGS:
        raise no_embeddings(m.text)
    if part in (ModelPart.LINEAR, ModelPart.BLOCK) and not m.blocks:
        raise ClaimError(
            f"part {part!r}: {m.text} has no repeated blocks (no list of two or more modules of one "
            f"class): claim the whole model"
        )
    if part is ModelPart.LINEAR:
        return replace(b, terms=tuple(t for t in b.terms if t.kind is Kind.LINEAR and m.in_blocks(t.path)))
    if part is ModelPart.ATTENTION:
        terms = tuple(t for t in b.terms if t.kind in ATTENTION_KINDS)
        if not terms:
            raise ClaimError(
                f"part 'attention': {m.text} computes no attention (no QK^T or attn@V in its exact "
                f"count): claim the model, or its linears"
            )
        return replace(b, terms=terms)
    if len(m.blocks) > 1:
        raise ClaimError(
            f"part 'block' is ambiguous for {m.text}: it has {len(m.blocks)} block lists ({blocks}); "
            f"claim the model, linear or attention"
        )
    return replace(b, terms=_one_block(m.blocks[0], b.terms, m.text))


def _one_block(blocks: BlockList, terms: tuple[Term, ...], model: str) -> tuple[Term, ...]:
    """The terms of one block of a list of identical blocks: the list's terms / its length, each checked equal
    when the list keeps each block's path (an nn.Sequential)."""
    inside = [t for t in terms if t.path.startswith(blocks.path + ".")]
    per_index: dict[str, int] = {}
    for t in inside:
        index = t.path[len(blocks.path) + 1 :].split(".")[0]
        per_index[index] = per_index.get(index, 0) + t.flops
    if "*" not in per_index and len(set(per_index.values())) > 1:
        raise ClaimError(
            f"part 'block': the {blocks.count} blocks of {model}'s {blocks.path} differ in FLOPs "
            f"({min(per_index.values()):,} to {max(per_index.values()):,}): claim the model"
        )
    if "*" not in per_index:  # one block's terms, named as the first block
        first = next(iter(per_index))
        return tuple(t for t in inside if t.path.startswith(f"{blocks.path}.{first}."))
    return tuple(replace(t, flops=t.flops // blocks.count, formula=f"({t.formula})/{blocks.count}") for t in inside)


def reference_breakdowns(claim: Claim, given: Measured | None = None) -> ClaimReference:
    """What the claim's readings are built from: a reference model's formula (on the latent and, for a family that
    runs there too, on pixels), or a spec's (or a given model's) exact count."""
    if given is not None or not claim.subject.formula_family:
        return _spec_breakdowns(claim, given)
    if family_of(get_config(claim.model)).pixel_space:  # a family that runs on pixels too has the pixel readings
        return _pixel_and_latent_breakdowns(claim)
    return _latent_breakdowns(claim)

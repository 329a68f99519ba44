"""The exact count after reparameterization as a reading: timm benchmarks a model with train-time branches (RepVGG,
MobileOne, FastViT) after its reparameterize_model fuses them, so a figure from timm's table is the fused model's
count. Any timm model whose build notes such branches gets this reading, its cause (FC508) the fused minus the
built count."""

from __future__ import annotations

from typing import Any

from flopcheck.auditor.claims import Claim
from flopcheck.auditor.readings import FUSED, Convention, ToolReading
from flopcheck.errors import InputError
from flopcheck.reconciler import causes as K
from flopcheck.specs import REPARAMETERIZABLE, SpecSource
from flopcheck.types import Count, ModelPart, Space, Unit

WHO = "timm reparameterize_model"  # the tool that fused it, as a counter's library


def fused_subject(claim: Claim) -> Any:
    """The claim's timm model fused by reparameterize_model, where its build noted branches to fuse; else None."""
    s = claim.subject
    if (
        claim.part is not ModelPart.MODEL
        or claim.space is Space.PIXEL
        or s.spec is None
        or s.named.source is not SpecSource.TIMM
    ):
        return None
    if s.named.options.reparam or not any(REPARAMETERIZABLE in n for n in s.measured().notes):
        return None
    return s.with_options(reparam=True)


def readings(claim: Claim) -> tuple[list[ToolReading], list[str]]:
    """The fused model's exact count at the claim's scope, in MACs and in FLOPs, each with FC508 = fused - built
    (per sample); one line when the fused model could not be counted."""
    fused = fused_subject(claim)
    if fused is None:
        return [], []
    try:
        m, built = fused.measured(), claim.subject.measured()
    except InputError as err:  # a SpecError: the other readings still judge the claim
        return [], [f"{FUSED}: {err}"]
    batch = max(1, m.batch or 1)
    flops, base = m.exact.total // batch, built.exact.total // batch
    finding = K.REPARAMETERIZED.finding(flops - base, f"{WHO}: {base:,} FLOPs as built -> {flops:,} fused")
    words = "its train-time branches fused by timm's reparameterize_model"
    convention = Convention(words, (finding,), base)
    return [_reading(claim, unit, flops, convention) for unit in (Unit.MAC, Unit.FLOP)], []


def _reading(claim: Claim, unit: Unit, flops: int, convention: Convention) -> ToolReading:
    """The fused count of one sample in `unit` (reported = FLOPs / its FLOPs per unit), at the claim's stated scope."""
    count = Count(
        counter=FUSED,
        library=WHO,
        version="",
        unit=unit,
        model=claim.model,
        input_size=0,
        attn="",
        reported=flops / unit.flops_per_unit,
        flops=flops,
    )
    return ToolReading(count, claim.stated_factor, "", convention=convention)

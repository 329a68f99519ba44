"""The published formulas as readings of a claim (flopcheck.published): each formula that applies to the claim's
model, evaluated on its structure at the claim's scope, with its causes against the exact count, so a figure made
with one of them is named by it ("PaLM 6N + 12LHQT: causal attention not halved ...")."""

from __future__ import annotations

from typing import Any

from flopcheck.auditor.claims import Claim
from flopcheck.auditor.readings import Convention, ToolReading
from flopcheck.children import one_line
from flopcheck.published import FORMULAS, Formula
from flopcheck.published.applied import formula_results
from flopcheck.published.reconcile import names
from flopcheck.reconciler import causes as K
from flopcheck.types import Count, ModelPart, Reconciliation, Space

KIND_REFUSAL = " is a formula for "  # Formula.does_not_apply's words where the model is not of a kind it models
# the residual and the unit: not conventions of the formula's content
CLOSING = (K.UNEXPLAINED_RESIDUAL.code, K.MAC_CONVENTION.code)


def applied(subject: Any, training: bool, measured: Any = None) -> list[tuple[Formula, Reconciliation]]:
    """Every published formula, in the registry's order, with its reconciliation against the subject's exact count
    (formula_results explains each formula asked for, in the order asked); `measured`: the one measurement to read."""
    asked = names(["all"])
    found = formula_results(subject, asked, training=training, measured=measured)
    return list(zip((FORMULAS[n] for n in asked), found, strict=True))


def readings(claim: Claim, subject: Any = None) -> tuple[list[ToolReading], list[str]]:
    """Each applicable formula's reading of the claim on its subject (default: the claim's; training formulas only
    for a training claim), and one line when they could not be read."""
    if claim.part is not ModelPart.MODEL or claim.space is Space.PIXEL:
        return [], []
    try:
        subject = subject or claim.subject
        found = applied(subject, claim.training)
    except Exception as err:  # noqa: BLE001 - the counters' and formula readings still judge the claim
        return [], [f"published formulas: flopcheck failed to evaluate them, its own bug: {one_line(err)}"]
    kinds = [r.error for _, r in found if r.error and KIND_REFUSAL in r.error]
    if found and len(kinds) == len(found) and subject.formula_family:  # a reference model of no kind any formula
        # models (a text-to-video transformer; the DiT formulas are for DiT-XL/2's kind): said, as a reader expects them
        return [], [f"published formulas: none applies ({kinds[0].rpartition('; ')[2]})"]
    out = []
    for f, r in found:
        if r.error is None and r.counter_flops and (claim.training or not f.training):
            out.append(_reading(claim, r, f, subject.batch))
    return out, []


def _reading(claim: Claim, r: Reconciliation, f: Formula, batch: int) -> ToolReading:
    """A formula's value (at the subject's batch) as a reading: per sample, scaled to the claim's stated scope (its
    training x3 is its own)."""
    batch = max(1, batch)
    count = Count(
        counter=r.counter,
        library=f.title,
        version="",
        unit=r.unit,
        model=r.model,
        input_size=0,
        attn=r.attn,
        reported=(r.reported or 0) / batch,
        flops=(r.counter_flops or 0) // batch,
    )
    findings = tuple(f for f in r.findings if f.code not in CLOSING)
    departs = [K.of(f).slug for f in findings]
    words = f"{f.title} ({f.source}): " + (", ".join(departs) if departs else "every multiply-add, as the exact count")
    convention = Convention(words, findings, r.reference_flops, r.residual or 0, known=r.residual == 0)
    factor = claim.stated_factor // (3 if f.training else 1)
    return ToolReading(count, factor, "", convention=convention, formula=f.name)

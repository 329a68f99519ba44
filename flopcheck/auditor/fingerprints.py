"""A counter's fingerprint on a claim's model: what it did there, by the reconciler's causes, in words (MACs; fused
attention uncounted; norms at 5 MACs per element ...), cached per counter, model and input."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flopcheck.auditor.claims import Claim
from flopcheck.auditor.readings import Convention, ToolReading
from flopcheck.cache import FINGERPRINTS, count_key
from flopcheck.counters import COUNTERS
from flopcheck.reconciler import causes as K
from flopcheck.reconciler import explain
from flopcheck.types import ATTENTION_KINDS, Count, Finding, Reconciliation, Unit, Work

if TYPE_CHECKING:
    from flopcheck.reconciler.reference import Reference


def convention(t: ToolReading, claim: Claim) -> Convention:
    """What the counter did on this model, by the reconciler's causes: its words ('MACs; fused attention uncounted;
    norms counted ...', its library's convention where the reconciliation cannot be made) and its findings."""
    if t.convention is not None:
        return t.convention
    key = count_key(
        t.count.counter,
        {
            "model": t.count.model,
            "attn": t.count.attn,
            "input": t.count.input_size,
            "claim": claim.model,
            "resolution": claim.resolution,
        },
    )
    if key in FINGERPRINTS:
        cached: Convention = FINGERPRINTS.get(key)
        return cached
    try:
        ref = _reference(t, claim)
        r = explain(t.count, ref)
        found = Convention(fingerprint_words(t.count, ref, r), r.findings, ref.total, r.residual or 0)
    except Exception as err:  # noqa: BLE001  (its library's convention stands in, and its departure is unknown)
        words = f"{t.count.unit.value}s; {COUNTERS[t.count.counter].convention} (not reconciled: {err})"
        found = Convention(words, known=False)
    FINGERPRINTS.put(key, found)
    return found


def fingerprint_words(count: Count, ref: Reference, r: Reconciliation) -> str:
    """A count's convention in words, from its reconciliation `r` against `ref`."""
    findings = [f for f in r.findings if K.of(f) is not K.MAC_CONVENTION and f.delta]
    attention = (
        []
        if any(K.of(f).attention is not None or K.of(f) is K.QK_MISSING for f in findings)
        or not any(k in ATTENTION_KINDS for k in ref.formula.by_kind())
        else ["attention counted"]
    )
    words = [count.unit.value + "s", *attention] + [_words(f, count.unit, ref) for f in findings]
    if r.residual:
        words.append(f"{r.residual:+,} FLOPs unexplained")
    return "; ".join(words)


def _reference(t: ToolReading, claim: Claim) -> Reference:
    """The reference the counter's count is reconciled against: a reference model's formula and exact count on
    the count's path, or the spec's exact count on the count's path."""
    from flopcheck.reconciler import reference_for  # lazy: torch-free door (the reference builds models)

    if t.reference is not None:
        known: Reference = t.reference
        return known
    if t.count.input_size is not None:
        found: Reference = reference_for(t.count.model, t.count.input_size, t.count.attn, t.count.batch)
        return found
    return claim.subject.with_options(attn=None if t.count.attn == "sdpa" else t.count.attn).reference()


def _words(f: Finding, unit: Unit, ref: Reference) -> str:
    """A finding as fingerprint words: 'fused attention uncounted', 'norms counted at 5 MACs per element'."""
    words = f.title.replace("-", " ")
    if K.of(f) is K.NORM_COUNTED:
        elements = ref.exact.uncounted_by_category().get(Work.NORM, (0, 0))[1]
        rate = f.delta / unit.flops_per_unit / elements if elements else 0
        if rate and abs(rate - round(rate)) <= 0.05 * rate:
            return f"norms at {round(rate)} {unit.value}s per element"
    return words

"""The reconciler: a counter's number explained against the truth, cause by cause, to a residual.

counter (as FLOPs) = reference + sum(FLOP-cause deltas) + residual; closed when the residual is 0.
A MAC counter's FC101 comes last, from its number in FLOPs to the number it printed.
White box: the counter's own detail is read as exact parts (its module's reading, or a generic one),
and the causes' detectors (detectors.py) name every difference. Black box: the reading of its total.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from flopcheck.reconciler import blackbox as B
from flopcheck.reconciler import causes as K
from flopcheck.reconciler import detectors as D
from flopcheck.reconciler import op_causes as _op_causes  # noqa: F401  (registers its causes' detectors)
from flopcheck.reconciler.classify import by_kind, by_op_name, states_kinds
from flopcheck.types import (
    BySpace,
    Count,
    EvidenceKind,
    Failed,
    Finding,
    Mechanism,
    Outcome,
    Reconciled,
    Reconciliation,
    Unit,
    Unreconciled,
)

if TYPE_CHECKING:  # the reference builds models: torch, imported when a reconciliation needs it
    from flopcheck.reconciler.reference import Reference


def __getattr__(name: str) -> Any:
    if name in ("Reference", "reference_for"):
        from flopcheck.reconciler import reference  # lazy: torch-free door (the reference builds models)

        return getattr(reference, name)
    raise AttributeError(name)


def reading_of(count: Count) -> Callable[[Count, Reference], list[Any]]:
    """How to read a count's detail as parts: its counter's own reading, else by the kinds its items state,
    else op by op."""
    from flopcheck.counters import COUNTERS  # lazy: door start-up (the registry imports every adapter)

    spec = COUNTERS.get(count.counter)
    if spec is not None and spec.reader is not None:
        return spec.reader
    return by_kind if states_kinds(count) else by_op_name


def _residual(count: Count, reference_flops: int, findings: list[Finding]) -> int:
    """What no finding explains: counter (as FLOPs) - reference - sum of the FLOP findings' deltas."""
    return count.flops - reference_flops - sum(f.delta for f in findings)


def _closed(
    count: Count, ref: Reference, findings: list[Finding], residual: int, why: str, mode: str, nothing: bool = False
) -> Reconciled:
    """The reconciliation from a count and its FLOP findings: the residual (FC901) and the unit (FC101) close it;
    `nothing`: the counter counted nothing of a model with work (FC902 among the findings)."""
    findings = list(findings) + ([K.UNEXPLAINED_RESIDUAL.finding(0, why)] if residual else [])
    if count.unit is Unit.MAC:  # last: from the counter in FLOPs to the number it printed
        findings.append(K.in_macs(count.flops, round(count.reported), count.counter))
    return Reconciled(
        **_against(count, ref), reported=count.reported, counter_flops=count.flops, findings=tuple(findings),
        residual=residual, mode=mode, counted_nothing=nothing,
    )  # fmt: skip


def _unreconciled(count: Outcome, ref: Reference, error: str) -> Unreconciled:
    """No residual for this count: its error (a Failed's own, or why its count could not be read) in one line."""
    return Unreconciled(
        **_against(count, ref), reported=count.reported, counter_flops=count.flops, findings=(), residual=None,
        error=error,
    )  # fmt: skip


def _against(count: Outcome, ref: Reference) -> dict[str, Any]:
    """The fields every reconciliation of this count against this reference holds: who counted what, and the
    reference's total and label."""
    return dict(
        counter=count.counter,
        unit=count.unit,
        model=count.model,
        input_size=count.input_size,
        attn=count.attn,
        reference_flops=ref.total,
        reference=ref.label,
        incomplete=ref.exact.incompleteness(),  # against a lower bound nothing closes
    )


def _shared_modules(count: Count, ref: Reference) -> tuple[Count, Finding | None]:
    """A module shared at k paths. A counter that sums per path (thop, ptflops, calflops: causes.SUMS_PER_PATH) holds
    its count again at each later path, FC311; thop hooks it once per path too, so each call counted k times: its
    first path is read at 1/k of its item, the rest of its k^2 is FC311. Any other counter's rows at a later path are
    read at its first path, merged."""
    if not ref.aliases:
        return count, None
    if count.counter not in K.SUMS_PER_PATH:
        return replace(
            count, detail=tuple(replace(i, name=ref.aliases.get(i.name, i.name)) for i in count.detail)
        ), None
    k = Counter(ref.aliases.values())  # first path -> its later paths
    extra, kept = 0, []
    for i in count.detail:
        if i.where is not Mechanism.MODULE or not i.in_total:
            kept.append(i)
        elif i.name in ref.aliases:
            extra += i.flops
        elif K.SUMS_PER_PATH[count.counter] and i.name in k and i.flops % (k[i.name] + 1) == 0:
            n = k[i.name] + 1
            extra += i.flops - i.flops // n
            kept.append(replace(i, flops=i.flops // n, reported=i.reported / n))
        else:
            kept.append(i)
    if not extra:
        return count, None
    said = f"{sum(k.values())} more paths of {', '.join(sorted(k)[:3])}" + (" (+more)" if len(k) > 3 else "")
    return replace(count, detail=tuple(kept)), K.SHARED_MODULE_PER_PATH.finding(extra, said)


def _nothing(count: Count, ref: Reference) -> list[Finding]:
    """FC902 first, where the counter's number is 0 of a model with work: said with its own skips of work as the
    proof (each skip's cause follows with its delta), never read as a convention."""
    if count.flops or not ref.total:
        return []
    skips = [s for s in count.skipped if s.own_forward or s.work.multiply_adds]
    said = ", ".join(f"{s.name} x{s.calls}" for s in skips[:4]) + (f" (+{len(skips) - 4} more)" * (len(skips) > 4))
    why = f"its own skips: {said}" if skips else "it lists no skip"
    return [K.COUNTED_NOTHING.finding(0, f"{count.counter} counted 0 of {ref.total:,} FLOPs; {why}")]


def white_box(count: Count, ref: Reference) -> Reconciled:
    """Reconcile a count that has per-op or per-module detail (a per-sample count's module items read x its samples:
    ptflops divides its modules' sum by the batch and adds its patched functionals' whole)."""
    n = count.samples_divided
    count, shared = _shared_modules(count, ref)
    divided = [i for i in count.detail if i.where is Mechanism.MODULE]
    ids = set(map(id, divided))
    whole = count
    if n > 1:
        whole = replace(count, detail=tuple(replace(i, flops=i.flops * n) if id(i) in ids else i for i in count.detail))
    ev = D.Evidence(whole, ref, reading_of(count)(whole, ref))
    nothing = _nothing(count, ref)
    findings = nothing + D.detect(ev)
    if shared is not None:
        findings.append(shared)
    if n > 1:  # the library's division by the batch, exactly: its modules' sum x (1 - n)
        share = sum(i.flops for i in divided if i.in_total)
        findings.append(K.PER_SAMPLE_REPORTED.finding(share - share * n, f"its modules divided by {n} samples"))
    residual = _residual(count, ref.total, findings)
    return _closed(
        count, ref, findings, residual, D.residual_evidence(ev, residual), EvidenceKind.WHITE_BOX, bool(nothing)
    )


def black_box(count: Count, ref: Reference) -> Reconciled:
    """Reconcile a total with no detail: the reading (in the count's own unit) that reproduces it."""
    batches = sorted({1, max(1, count.batch // ref.batch)})
    candidates = [
        B.explain(r, ref.formula, None, BySpace(ref.tokens))
        for r in B.readings(units=(count.unit,), batches=batches)
        if B.applies(r, ref.formula)
    ]
    if not candidates or (count.reported == 0 and ref.total):  # a 0 is no convention: the counter saw nothing
        residual = _residual(count, ref.total, [])
        why = f"residual {residual:+,} FLOPs: {count.counter} counted nothing of a model with multiply-adds"
        return _closed(count, ref, [], residual, why, f"{EvidenceKind.BLACK_BOX}: no reading of a total applies")
    _, best = B.rank(float(count.reported), candidates)[0]
    findings = [f for f in best.findings if K.of(f) is not K.MAC_CONVENTION]
    residual = _residual(count, ref.total, findings)
    return _closed(
        count,
        ref,
        findings,
        residual,
        f"residual {residual:+,} FLOPs",
        f"{EvidenceKind.BLACK_BOX}: {best.reading.describe()}",
    )


def explain(count: Outcome, ref: Reference | None = None) -> Reconciliation:
    """Explain a count against the reference for its model, input and attention path: white box
    when the count has detail at the reference's batch, black box from its total otherwise."""
    from flopcheck.reconciler.reference import reference_for  # lazy: torch-free door (builds models)

    ref = ref or reference_for(count.model, count.input_size, count.attn, count.batch)
    if isinstance(count, Failed):
        return _unreconciled(count, ref, count.error)
    detail = (count.detail or count.skipped) and count.batch == ref.batch  # a 0 with its skips is detail too
    try:
        return (white_box if detail else black_box)(count, ref)
    except Exception as e:  # a reading that fails on a model loses this counter's reading only, in one line
        why = f"flopcheck could not read {count.counter}'s count of this model ({type(e).__name__}: {e})"
        return _unreconciled(count, ref, f"{why}: a flopcheck bug, please report it")


__all__ = ["Reference", "black_box", "explain", "reference_for", "white_box"]

"""The reconciler: a counter's number explained against the truth, cause by cause, to a residual.

counter (as FLOPs) = reference + sum(FLOP-cause deltas) + residual; closed when the residual is 0.
A MAC counter's FC101 comes last, from its number in FLOPs to the number it printed.
White box: the counter's own detail is read as exact parts (classify.py), each extra kind of work
a cause, each missing kind a cause named by the evidence (what the counter skipped).
"""
from __future__ import annotations

from collections import defaultdict

from flopcheck.counters.base import op_category
from flopcheck.reconcile import blackbox as B
from flopcheck.reconcile import classify as C
from flopcheck.reconcile.causes import CAUSES
from flopcheck.reconcile.reference import Reference, reference_for
from flopcheck.types import Count, Finding, Kind, Reconciliation, Unit

# a bucket of extra (or missing) work -> its cause
BUCKET_CAUSES = {
    C.NORM: "FC301", C.ELEMENTWISE: "FC302", C.PERMUTATION: "FC303", C.BIAS: "FC304",
    C.DOUBLE_ACTIVATION: "FC305", C.EMBEDDING: "FC306", C.PER_SAMPLE_RULE: "FC403", C.DROPPED: "FC206",
}


def finding(code: str, delta: int, evidence: str = "") -> Finding:
    """A Finding for a registered cause."""
    return Finding(code, CAUSES[code].slug, delta, evidence)


def _sources(parts: list[C.Part], limit: int = 3) -> str:
    names = list(dict.fromkeys(p.source for p in parts))
    return ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


def _attention_skips(count: Count):
    """(cause, skip) for the skipped things that could have carried the attention, most specific
    first: a fused kernel, an unhooked attention module, batched matmuls no patch covered."""
    found = []
    for s in count.skipped:
        module_rule = "forward()" in s.reason
        if not module_rule and op_category(s.name) == "attention":
            found.append((0, "FC201", s))
        elif module_rule and "attention" in s.name.lower():
            found.append((1, "FC204", s))
        elif not module_rule and C.bare(s.name) in ("bmm", "baddbmm", "matmul", "__matmul__"):
            found.append((2, "FC207", s))
    return [(code, s) for _, code, s in sorted(found, key=lambda f: f[0])]


def _attention_finding(counted: int, ref: Reference, count: Count, split: tuple[int, int] | None = None
                       ) -> Finding | None:
    """Name the attention the counter missed, from how much it has, how it split it, what it skipped."""
    score, value = ref.kinds(Kind.ATTN_SCORE), ref.kinds(Kind.ATTN_VALUE)
    if counted == score + value:
        return None
    if split is not None and split == (0, value) and score:
        return finding("FC205", -score, "attn@V counted, QK^T not")
    if counted == 0 and score + value:
        for code, skip in _attention_skips(count):
            return finding(code, -(score + value), f"skipped {skip.name} x{skip.calls}")
        return None
    if counted == score:
        return finding("FC202", -value, "attention counted equals QK^T alone")
    if counted == value:
        return finding("FC205", -score, "attention counted equals attn@V alone")
    return None


def white_box(count: Count, ref: Reference) -> Reconciliation:
    """Reconcile a count that has per-op or per-module detail."""
    parts = C.classify(count, ref)
    by_bucket: dict[str, list[C.Part]] = defaultdict(list)
    for p in parts:
        by_bucket[p.bucket].append(p)
    findings = []
    for bucket, code in BUCKET_CAUSES.items():
        if by_bucket.get(bucket):
            delta = sum(p.flops for p in by_bucket[bucket])
            if delta:
                findings.append(finding(code, delta, _sources(by_bucket[bucket])))
    score, value = (sum(p.flops for p in by_bucket.get(b, [])) for b in (C.ATTN_SCORE, C.ATTN_VALUE))
    attention = sum(p.flops for p in by_bucket.get(C.ATTENTION, [])) + score + value
    split = (score, value) if C.ATTN_SCORE in by_bucket or C.ATTN_VALUE in by_bucket else None
    att = _attention_finding(attention, ref, count, split)
    if att:
        findings.append(att)
    linear = sum(p.flops for p in by_bucket.get(C.LINEAR, []))
    if linear == 2 * ref.linear:
        findings.append(finding("FC402", ref.linear, "linear work is exactly twice the reference's"))
    residual = count.flops - ref.total - sum(f.delta for f in findings)
    if residual:
        findings.append(finding("FC901", 0, _unexplained(by_bucket, ref, residual)))
    if count.unit is Unit.MAC:  # last: from the counter in FLOPs to the number it printed
        findings.append(finding("FC101", round(count.reported) - count.flops,
                                f"{count.counter} reports MACs: {round(count.reported):,} = FLOPs / 2"))
    return Reconciliation(count.counter, count.unit, count.model, count.input_size, count.attn, count.reported,
                          count.flops, ref.total, tuple(findings), residual)


def _unexplained(by_bucket, ref: Reference, residual: int) -> str:
    """Where the residual sits: which matched kind differs from the reference, or what was left over."""
    gaps = {
        "linear": sum(p.flops for p in by_bucket.get(C.LINEAR, [])) - ref.linear
                  - sum(p.flops for p in by_bucket.get(C.DROPPED, [])),
        "conv": sum(p.flops for p in by_bucket.get(C.CONV, [])) - ref.kinds(Kind.CONV),
        "left over": sum(p.flops for p in by_bucket.get(C.UNEXPLAINED, [])),
    }
    said = ", ".join(f"{k} {v:+,}" for k, v in gaps.items() if v)
    return f"residual {residual:+,} FLOPs" + (f": {said}" if said else "")


def black_box(count: Count, ref: Reference) -> Reconciliation:
    """Reconcile a total with no detail: the reading (in the count's own unit) that reproduces it."""
    batches = sorted({1, max(1, count.batch // ref.batch)})
    candidates = [B.explain(r, ref.formula, None, {False: ref.config.tokens})
                  for r in B.readings(units=(count.unit,), batches=batches)]
    _, best = B.rank(float(count.reported), candidates)[0]
    flop_findings = tuple(f for f in best.findings if f.code != "FC101")
    residual = count.flops - best.flops
    findings = flop_findings + ((finding("FC901", 0, f"residual {residual:+,} FLOPs"),) if residual else ()) + tuple(
        f for f in best.findings if f.code == "FC101")
    if count.unit is Unit.MAC:  # FC101 from the counter's FLOPs, as in the white box
        findings = tuple(f for f in findings if f.code != "FC101") + (
            finding("FC101", round(count.reported) - count.flops, f"{count.counter} reports MACs"),)
    return Reconciliation(count.counter, count.unit, count.model, count.input_size, count.attn, count.reported,
                          count.flops, ref.total, findings, residual, mode=f"black box: {best.reading.describe()}")


def reconcile(count: Count, ref: Reference | None = None) -> Reconciliation:
    """Explain a count against the reference for its model, input and attention path: white box
    when the count has detail at the reference's batch, black box from its total otherwise."""
    ref = ref or reference_for(count.model, count.input_size, count.attn, count.batch)
    if not count.ok:
        return Reconciliation(count.counter, count.unit, count.model, count.input_size, count.attn, None, None,
                              ref.total, (), None, error=count.error)
    if count.detail and count.batch == ref.batch:
        return white_box(count, ref)
    return black_box(count, ref)


__all__ = ["Reference", "black_box", "finding", "reconcile", "reference_for", "white_box"]

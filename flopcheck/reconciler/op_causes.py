"""Detectors of causes that one op family proves: the experts' grouped matmul (FC221), torch.cdist (FC222) and
torch.einsum (FC229). Each names the op from the counter's own detail (a skip of it, or a complete per-op listing with
no item of it) and takes its delta from the exact count's records of that op, exactly."""

from __future__ import annotations

from flopcheck.op_names import Family, forward_op
from flopcheck.reconciler import causes as K
from flopcheck.reconciler.detectors import Evidence, detects, einsum_contractions, fast_roots_met
from flopcheck.types import Finding, Mechanism, Work


def _exact(ev: Evidence, family: Family) -> int:
    """The exact count's FLOPs in the forward ops of this family."""
    return int(sum(r.flops for r in ev.ref.exact.counted if forward_op(r.op, family)))


def _short(ev: Evidence) -> int:
    """How far the counter's layer and matmul work falls short of the reference's."""
    return int(ev.ref.linear) - ev.flops(Work.LINEAR, Work.MATMUL)


def _skipped(ev: Evidence, family: Family) -> list[str]:
    """'name xN' of the forward ops (not modules) of this family the counter skipped."""
    return [f"{s.name} x{s.calls}" for s in ev.count.skipped if not s.own_forward and forward_op(s.name, family)]


def _lists_every_op(ev: Evidence) -> bool:
    """The counter's detail is per op or per patched functional, and no module's own forward was lost: an op that
    did work and has no item there is an op it did not count."""
    items = all(i.where is not Mechanism.MODULE for i in ev.count.detail)
    return bool(ev.count.detail) and items and not any(s.own_forward for s in ev.count.skipped)


@detects(K.GROUPED_MM_UNCOUNTED)
def _grouped_mm(ev: Evidence) -> Finding | None:
    """The experts' grouped matmul missing: skipped by name, or absent from a per-op listing that names every op it
    counted; named when the counter's matmul work is short by at least the exact count's."""
    lost = _exact(ev, Family.GROUPED_MATMUL)
    if not lost or _short(ev) < lost:
        return None
    skipped = _skipped(ev, Family.GROUPED_MATMUL)
    if skipped:
        return K.GROUPED_MM_UNCOUNTED.finding(-lost, "skipped " + ", ".join(skipped))
    if _lists_every_op(ev) and not any(forward_op(i.name, Family.GROUPED_MATMUL) for i in ev.count.detail):
        return K.GROUPED_MM_UNCOUNTED.finding(-lost, "no aten._grouped_mm among the ops it counted")
    return None


@detects(K.DISTANCE_UNCOUNTED)
def _cdist(ev: Evidence) -> Finding | None:
    """torch.cdist skipped by name (aten::cdist in a trace, aten._euclidean_dist at dispatch): its exact matmul."""
    lost, skipped = _exact(ev, Family.DISTANCE), _skipped(ev, Family.DISTANCE)
    if not lost or not skipped or _short(ev) < lost:
        return None
    return K.DISTANCE_UNCOUNTED.finding(-lost, f"skipped {', '.join(skipped)}: torch.cdist's matmul")


@detects(K.EINSUM_UNPATCHED)
def _einsum(ev: Evidence) -> Finding | None:
    """torch.einsum skipped by name (a counter of patched functionals with no patch for it: ptflops' pytorch backend):
    the exact FLOPs of its contractions, named when the counter's matmul work is short by at least that much."""
    lost, skipped = einsum_contractions(ev.ref), _skipped(ev, Family.EINSUM)
    if not lost or not skipped or _short(ev) < lost:
        return None
    return K.EINSUM_UNPATCHED.finding(-lost, f"skipped {', '.join(skipped)}: no patch for torch.einsum")


@detects(K.TRACE_DROPPED_UNUSED)
def _unreached(ev: Evidence) -> Finding | None:
    """The weighted layers the counter's trace never reached (its own record of them: fvcore's uncalled_modules()),
    each at the exact count's FLOPs of that module, and those it reached on fewer calls than the exact count's there
    (a shared layer's unused later call), each at the exact FLOPs less what its own detail counted there; named when
    the counter's layer work is short by at least that."""
    fused = fast_roots_met(ev)  # a module inside a fused op (MHA's fast path) is that op's work, FC213's: not dropped
    paths = [s.name for s in ev.count.skipped if s.reason == K.UNREACHED_IN_TRACE and not _within(ev, s.name, fused)]
    lost = sum(ev.ref.per_instance(p) for p in paths if p in ev.ref.layers)
    partly = [(s, _calls(ev, s.name)) for s in ev.count.skipped if s.reason == K.PARTLY_REACHED_IN_TRACE]
    partly = [(s, n) for s, n in partly if n > s.calls and ev.ref.per_instance(s.name) > s.counted]
    lost += sum(ev.ref.per_instance(s.name) - s.counted for s, _ in partly)
    if not lost or _short(ev) < lost:
        return None
    said = [f"never reached in its trace: {_listed(paths)}"] * bool(paths)
    said += [
        f"{s.name}: {n - s.calls} of the exact count's {n} calls in its trace, {s.counted:,} of "
        f"{ev.ref.per_instance(s.name):,} FLOPs counted"
        for s, n in partly[:3]
    ] + [f"+{len(partly) - 3} more"] * (len(partly) > 3)
    return K.TRACE_DROPPED_UNUSED.finding(-lost, "; ".join(said))


def _within(ev: Evidence, path: str, roots: set[str]) -> bool:
    """The module at an exact path sits at or under one of these normalised paths."""
    norm = ev.ref.norm_path.get(path, path)
    return any(norm == r or norm.startswith(r + ".") for r in roots)


def _listed(paths: list[str]) -> str:
    """The first three, and how many more."""
    return ", ".join(paths[:3]) + (f" (+{len(paths) - 3} more)" if len(paths) > 3 else "")


def _calls(ev: Evidence, path: str) -> int:
    """The calls the exact count records at one module (an exact path): its ops' most calls, per instance."""
    norm = ev.ref.norm_path.get(path)
    if norm is None:
        return 0
    calls = max((r.calls for r in ev.ref.exact.counted if r.path == norm), default=0)
    return int(calls) // max(int(ev.ref.instances[norm]), 1)

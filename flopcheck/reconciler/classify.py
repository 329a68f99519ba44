"""Read a counter's own detail as parts of known work, exactly: the generic readings.

Each detail item (an op class, an op, a module, a functional) is split into components whose
values follow from the reference (the exact count per path, the layer's weights) and from the
library's documented rule for that item; whatever a rule does not account for is left over,
unexplained, and shows up in the residual. A rule is a hypothesis the residual checks.
A counter with a rule of its own writes its reading beside its adapter (counters/<name>.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flopcheck.op_names import Family, Operator, bare, family, operator, ran_as
from flopcheck.reconciler import causes as K
from flopcheck.reconciler.parts import Part, part
from flopcheck.types import Count, Item, Kind, Work

if TYPE_CHECKING:
    from flopcheck.reconciler.reference import Reference


def _served(ref: Reference, outside: frozenset[str] | set[str] = frozenset()) -> dict[str, dict[Work, int]]:
    """Bare op name -> the work it did in the exact count and its FLOPs ('bmm' -> {attention: ...}, 'addmm' ->
    {linear: ...}), outside the modules at these normalised paths."""
    out: dict[str, dict[Work, int]] = {}
    hidden = set(map(id, ref.inside(outside))) if outside else set()
    for r in (r for r in ref.exact.counted if id(r) not in hidden):
        work = (
            Work.ATTENTION
            if r.kind in (Kind.ATTN_SCORE, Kind.ATTN_VALUE)
            else (Work.CONV if r.kind is Kind.CONV else Work.LINEAR)
        )
        by = out.setdefault(bare(r.op), {})
        by[work] = by.get(work, 0) + r.flops
    return out


def ops_served(name: str, ref: Reference, outside: frozenset[str] | set[str] = frozenset()) -> dict[Work, int]:
    """What the op of that name did in the exact count, work -> FLOPs (through its alias: 'linear' ran as addmm),
    outside the modules at these normalised paths (those whose fused op a counter skipped)."""
    ops = _served(ref, outside)
    return next((ops[op] for op in (bare(name), *ran_as(name)) if ops.get(op)), {})


def op_work(name: str, ref: Reference, outside: frozenset[str] | set[str] = frozenset()) -> Work | K.Cause | None:
    """What an op-level item did, by its name and by what that op did in the exact count; a cause where the
    op is extra work by its nature; None where nothing says."""
    fam = family(name)
    if fam is Family.EINSUM and not ref.einsum_contracts():
        return K.PERMUTATION_EINSUM_COUNTED  # every einsum of the model only permutes: no multiply-adds
    if fam in _CAUSES:
        return _CAUSES[fam]
    if fam is not None and fam.reads_as is not None:
        return fam.reads_as
    served = ops_served(name, ref, outside)
    return next(iter(served)) if len(served) == 1 else None


# families counted by a convention of their own, whatever they did: a table lookup, a resampling
_CAUSES = {Family.EMBEDDING: K.EMBEDDING_LOOKUP_COUNTED, Family.RESAMPLE: K.UPSAMPLING_COUNTED}


def layer_work(item: Item, ref: Reference | None = None) -> Work | K.Cause:
    """What a module-level item's layer does, by its type: Linear, conv, a norm, an embedding table, or elementwise;
    with the reference, a subclass of a torch layer by the layer it subclasses (Gemma2's scaled word embedding is an
    nn.Embedding)."""
    layer = ref.layers.get(item.name) if ref is not None else None
    t = ((layer.subclass_of if layer is not None else None) or item.type).lower()
    if t == "linear":
        return Work.LINEAR
    if t.startswith("conv"):
        return Work.CONV
    fam = family(t)
    if fam is Family.NORM or ref is not None and _normalizes(ref, item.name):
        return Work.NORM
    return _CAUSES.get(fam, Work.ELEMENTWISE) if fam is not None else Work.ELEMENTWISE


def _normalizes(ref: Reference, path: str) -> bool:
    """The module at an exact path is a norm by what it ran in the exact count (a name is not evidence): a statistic
    of its input (mean, var) and a reciprocal root, and no multiply-adds of its own (Gemma's and Llama's RMSNorm)."""
    norm = ref.norm_path.get(path)
    if norm is None or any(r.path == norm for r in ref.exact.counted):
        return False
    ran = {family(r.op) for r in ref.exact.uncounted if r.path == norm}
    return Family.STATISTIC in ran and Family.ROOT in ran  # an RMSNorm: x * rsqrt(mean(x^2) + eps)


def read_bias(item: Item) -> Part | None:
    """An addmm's bias kept apart by its adapter (counters.base.bias_label): once per call (a 1-D bias), or per
    element; None for any other item."""
    if item.name.endswith(".bias_per_call"):
        return part(item.flops, item.name, K.BIAS_ONCE_PER_CALL)
    if item.name.endswith(".bias"):
        return part(item.flops, item.name, Work.BIAS)
    return None


def transposed_over_output(ref: Reference, path: str, every_channel: bool = False) -> int | None:
    """What counting a transposed convolution at an exact path over its output adds to its exact FLOPs:
    2 x output positions x its weights (x groups where the rule takes every input channel), less the exact; None if
    the layer is not a transposed convolution or its output was not recorded."""
    layer, positions = ref.layers.get(path), ref.positions(path)
    if layer is None or layer.transposed_groups is None or positions is None:
        return None
    groups = layer.transposed_groups if every_channel else 1
    return 2 * positions * layer.weight * groups - ref.per_instance(path)


def by_op_name(count: Count, ref: Reference) -> list[Part]:
    """Each item whole, as the work its op name says (fvcore, profiler, FlopCounterMode, torchprofile); an op that
    did several kinds of work (bmm: attention and an einsum's contraction) split as the exact count split it, when
    the counter's FLOPs for it are the exact count's (else it is left over, whole)."""
    parts = []
    for i in (i for i in count.detail if i.in_total):
        work, served = op_work(i.name, ref), ops_served(i.name, ref)
        if i.flops != sum(served.values()) and operator(i.name) is Operator.IS:
            calls = _matmul_calls(ref)
            if i.flops == sum(calls.values()):
                served, work = calls, next(iter(calls)) if len(calls) == 1 else None
        if work is None and len(served) > 1 and i.flops == sum(served.values()):
            parts += [Part(f, i.name, w) for w, f in served.items()]
        else:
            parts.append(part(i.flops, i.name, work))
    return parts


def _matmul_calls(ref: Reference) -> dict[Work, int]:
    """What torch.matmul and '@' ran as in the exact count, work -> FLOPs: its bmm records outside the fused
    attention calls (a trace sees those as aten::scaled_dot_product_attention) and its mm records outside the plain
    Linears (those trace as aten::linear): a batch by a weight, x @ W^T in a Linear subclass (FalconLinear)."""
    linears = {ref.norm_path[p] for p, layer in ref.layers.items() if layer.type_name == "Linear"}
    out: dict[Work, int] = {}
    for r in ref.exact.counted:
        if (bare(r.op) == "bmm" and r.path not in ref.exact.sdpa) or (bare(r.op) == "mm" and r.path not in linears):
            work = Work.ATTENTION if r.kind in (Kind.ATTN_SCORE, Kind.ATTN_VALUE) else Work.LINEAR
            out[work] = out.get(work, 0) + r.flops
    return out


def by_kind(count: Count, ref: Reference) -> list[Part]:
    """A counter that states each item's kind (flopcheck's own): QK^T and attn@V stay apart."""
    kinds: dict[str, Kind | Work] = {
        Kind.ATTN_SCORE.value: Kind.ATTN_SCORE,
        Kind.ATTN_VALUE.value: Kind.ATTN_VALUE,
        Kind.CONV.value: Work.CONV,
    }
    return [Part(i.flops, i.name, kinds.get(i.type, Work.LINEAR)) for i in count.detail if i.in_total]


def states_kinds(count: Count) -> bool:
    """Every item names a Kind in its type: the counter read its own detail as kinds."""
    names = {k.value for k in Kind}
    return bool(count.detail) and all(i.type in names for i in count.detail)


__all__ = [
    "by_kind",
    "by_op_name",
    "layer_work",
    "op_work",
    "ops_served",
    "read_bias",
    "states_kinds",
    "transposed_over_output",
]

"""Read a counter's own detail as parts of known work, exactly: the generic readings.

Each detail item (an op class, an op, a module, a functional) is split into components whose
values follow from the reference (the exact count per path, the layer's weights) and from the
library's documented rule for that item; whatever a rule does not account for is left over,
unexplained, and shows up in the residual. A rule is a hypothesis the residual checks.
A counter with a rule of its own writes its reading beside its adapter (counters/<name>.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flopcheck.reconciler import causes as K
from flopcheck.reconciler.parts import Part, bare, part
from flopcheck.types import Count, Item, Kind, Work

if TYPE_CHECKING:
    from flopcheck.reconciler.reference import Reference

_NORMS = {
    "layer_norm",
    "native_layer_norm",
    "group_norm",
    "native_group_norm",
    "batch_norm",
    "native_batch_norm",
    "instance_norm",
    "rms_norm",
    "layernorm",
    "groupnorm",
    "batchnorm1d",
    "batchnorm2d",
    "instancenorm2d",
}
_ELEMENTWISE = {
    "add",
    "add_",
    "mul",
    "mul_",
    "sub",
    "div",
    "gelu",
    "silu",
    "relu",
    "softmax",
    "_softmax",
    "sigmoid",
    "tanh",
    "exp",
    "cos",
    "sin",
    "leaky_relu",
    "elu",
    "relu6",
    "prelu",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "mean",
    "pool",
    "__add__",
    "__mul__",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool3d",
    "adaptive_max_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool3d",  # r3d_18's head: a mean over time and space
    "adaptive_max_pool3d",
    "hardswish",
    "hardsigmoid",
    "mish",
}
_ALIASES = {"matmul": "bmm", "__matmul__": "bmm", "__rmatmul__": "bmm", "linear": "addmm", "mm": "addmm"}
_THEN = {"linear": "mm"}  # where the first alias did nothing: a Linear with no bias runs as mm (a router)


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
    ops, n = _served(ref, outside), bare(name)
    return ops.get(n) or ops.get(_ALIASES.get(n, ""), {}) or ops.get(_THEN.get(n, ""), {})


def op_work(name: str, ref: Reference, outside: frozenset[str] | set[str] = frozenset()) -> Work | K.Cause | None:
    """What an op-level item did, by its name and by what that op did in the exact count; a cause where the
    op is extra work by its nature; None where nothing says."""
    n = bare(name)
    if any(k in n for k in ("scaled_dot_product", "flash_attention", "efficient_attention")):
        return Work.ATTENTION
    if "conv" in n:
        return Work.CONV
    if n in _NORMS:
        return Work.NORM
    if n == "einsum" and not ref.einsum_contracts():
        return K.PERMUTATION_EINSUM_COUNTED  # every einsum of the model only permutes: no multiply-adds
    if n == "embedding":
        return K.EMBEDDING_LOOKUP_COUNTED
    if _upsamples(n):
        return K.UPSAMPLING_COUNTED
    if n in _ELEMENTWISE:
        return Work.ELEMENTWISE
    served = ops_served(name, ref, outside)
    return next(iter(served)) if len(served) == 1 else None


def _upsamples(name: str) -> bool:
    """An op, functional or module that resamples (upsample_bilinear2d, F.interpolate, nn.Upsample, grid_sample)."""
    return name.startswith(("upsample", "interpolate", "_upsample", "grid_sampler", "grid_sample"))


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
    if t in _NORMS or ref is not None and _normalizes(ref, item.name):
        return Work.NORM
    if t == "embedding":
        return K.EMBEDDING_LOOKUP_COUNTED
    if _upsamples(t):
        return K.UPSAMPLING_COUNTED
    return Work.ELEMENTWISE


# a norm's statistic over its input, and the reciprocal root it scales by (an RMSNorm: x * rsqrt(mean(x^2) + eps))
_STATISTICS = frozenset({"mean", "var", "var_mean", "std", "std_mean"})
_ROOTS = frozenset({"rsqrt", "sqrt"})


def _normalizes(ref: Reference, path: str) -> bool:
    """The module at an exact path is a norm by what it ran in the exact count (a name is not evidence): a statistic
    of its input (mean, var) and a reciprocal root, and no multiply-adds of its own (Gemma's and Llama's RMSNorm)."""
    norm = ref.norm_path.get(path)
    if norm is None or any(r.path == norm for r in ref.exact.counted):
        return False
    ops = {bare(r.op) for r in ref.exact.uncounted if r.path == norm}
    return bool(ops & _STATISTICS and ops & _ROOTS)


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
        if i.flops != sum(served.values()) and bare(i.name) in _MATMUL_CALLS:
            calls = _matmul_calls(ref)
            if i.flops == sum(calls.values()):
                served, work = calls, next(iter(calls)) if len(calls) == 1 else None
        if work is None and len(served) > 1 and i.flops == sum(served.values()):
            parts += [Part(f, i.name, w) for w, f in served.items()]
        else:
            parts.append(part(i.flops, i.name, work))
    return parts


_MATMUL_CALLS = {"matmul", "__matmul__", "__rmatmul__"}  # a trace's or a patch's torch.matmul and '@'


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

"""Read a counter's own detail as parts of known kinds, exactly.

Each detail item (an op class, an op, a module, a functional) is split into components whose
values follow from the reference (the exact count per path, the layer's weights) and from the
library's documented rule for that item; whatever a rule does not account for is left over as
'unexplained' and shows up in the residual. A rule is a hypothesis the residual checks.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from flopcheck.reconcile.reference import ATTENTION_KINDS, LINEAR_KINDS, Reference
from flopcheck.types import Count, Item

# buckets that match reference kinds (attention whole, or split when a counter splits it)
LINEAR, CONV, ATTENTION, ATTN_SCORE, ATTN_VALUE = "linear", "conv", "attention", "attn_score", "attn_value"
MATCHED = (LINEAR, CONV, ATTENTION, ATTN_SCORE, ATTN_VALUE)
# buckets of work the reference does not count (each is a cause) and of work missing
NORM, ELEMENTWISE, PERMUTATION, BIAS = "norm", "elementwise", "permutation", "bias"
DOUBLE_ACTIVATION, EMBEDDING, PER_SAMPLE_RULE, DROPPED = "double_activation", "embedding", "per_sample_rule", "dropped"
UNEXPLAINED = "unexplained"

_NORMS = {"layer_norm", "native_layer_norm", "group_norm", "native_group_norm", "batch_norm", "native_batch_norm",
          "instance_norm", "rms_norm", "layernorm", "groupnorm", "batchnorm1d", "batchnorm2d", "instancenorm2d"}
_ELEMENTWISE = {"add", "add_", "mul", "mul_", "sub", "div", "gelu", "silu", "relu", "softmax", "_softmax", "sigmoid",
                "tanh", "exp", "cos", "sin", "leaky_relu", "elu", "relu6", "prelu", "upsample", "interpolate",
                "avg_pool2d", "adaptive_avg_pool2d", "mean", "pool", "__add__", "__mul__"}


@dataclass(frozen=True)
class Part:
    """A piece of a counter's number: bucket, FLOPs, the item it came from; counted=False for evidence only."""

    bucket: str
    flops: int
    source: str
    counted: bool = True


def bare(name: str) -> str:
    """'aten::addmm' / 'aten.addmm' / 'TensorBase.mul' -> 'addmm' / 'mul'."""
    return name.replace("aten::", "").replace("aten.", "").split(".")[-1].lower()


def _ops_map(ref: Reference) -> dict[str, set[str]]:
    """Bare op name -> the reference buckets it served in the exact count ('bmm' -> {'attention'})."""
    out: dict[str, set[str]] = {}
    for r in ref.exact.counted:
        kind = r.kind
        bucket = ATTENTION if kind in {k.value for k in ATTENTION_KINDS} else (
            CONV if kind == "conv" else LINEAR)
        out.setdefault(bare(r.op), set()).add(bucket)
    return out


_ALIASES = {"matmul": "bmm", "__matmul__": "bmm", "__rmatmul__": "bmm", "linear": "addmm", "mm": "addmm"}


def op_bucket(name: str, ref: Reference) -> str:
    """The bucket of an op-level item, by name and by what that op did in the exact count."""
    n = bare(name)
    if any(k in n for k in ("scaled_dot_product", "flash_attention", "efficient_attention")):
        return ATTENTION
    if "conv" in n:
        return CONV
    if n in _NORMS:
        return NORM
    if n == "einsum":
        return PERMUTATION  # the reference models' einsums permute (DiT's unpatchify); contractions run as bmm
    if n == "embedding":
        return EMBEDDING
    if n in _ELEMENTWISE:
        return ELEMENTWISE
    ops = _ops_map(ref)
    served = ops.get(n) or ops.get(_ALIASES.get(n, ""), set())
    return next(iter(served)) if len(served) == 1 else UNEXPLAINED


def split(item: Item, components: list[tuple[str, int]], counted: bool = True) -> list[Part]:
    """The item as its components, and whatever they leave over as 'unexplained'."""
    parts = [Part(b, f, item.name, counted) for b, f in components if f]
    left = item.flops - sum(f for _, f in components)
    return parts + ([Part(UNEXPLAINED, left, item.name, counted)] if left and counted else [])


# ---------------------------------------------------------------------------------------------
# Op-level counters
# ---------------------------------------------------------------------------------------------


def by_op_name(count: Count, ref: Reference) -> list[Part]:
    """Each item whole, in the bucket its op name says (fvcore, profiler, FlopCounterMode, torchprofile)."""
    return [Part(op_bucket(i.name, ref), i.flops, i.name) for i in count.detail if i.in_total]


def ptflops_aten(count: Count, ref: Reference) -> list[Part]:
    """ptflops' aten formulas add the bias: addmm = m*k*n + m*n, convolution = ... + numel(out)."""
    parts = []
    for i in count.detail:
        bias = 2 * ref.bias_elements(op=bare(i.name)) if bare(i.name) in ("addmm", "convolution") else 0
        parts += split(i, [(BIAS, bias), (op_bucket(i.name, ref), i.flops - bias)])
    return parts


def deepspeed_style(count: Count, ref: Reference) -> list[Part]:
    """DeepSpeed and calflops: conv2d = 2*MACs + one FLOP per output for the bias; the rest whole."""
    parts = []
    for i in count.detail:
        if bare(i.name).startswith("conv"):
            bias = ref.bias_elements(op="convolution")
            parts += split(i, [(BIAS, bias), (CONV, i.flops - bias)])
        else:
            parts.append(Part(op_bucket(i.name, ref), i.flops, i.name))
    return parts


# ---------------------------------------------------------------------------------------------
# Module-level counters
# ---------------------------------------------------------------------------------------------


def _layer_bucket(item: Item) -> str:
    t = item.type.lower()
    if t == "linear":
        return LINEAR
    if t.startswith("conv"):
        return CONV
    if t in _NORMS:
        return NORM
    if t == "embedding":
        return EMBEDDING
    return ELEMENTWISE


def thop(count: Count, ref: Reference) -> list[Part]:
    """thop: Linear = in_features x numel(out) and conv = the exact multiply-adds; norms 2 per element."""
    parts = []
    for i in count.detail:
        bucket = _layer_bucket(i)
        exact = ref.per_instance(i.name) if bucket in (LINEAR, CONV) else i.flops
        parts += split(i, [(bucket, exact)])
    return parts


def ptflops_pytorch(count: Count, ref: Reference) -> list[Part]:
    """ptflops, pytorch backend: Linear and conv hooks add one per bias element; its timm-Attention
    hook counts QK^T + attn@V plus T*d (q scaling) and heads*T^2 (softmax) per sample; modules
    inside a hooked one are computed but never summed; F.gelu is patched while nn.GELU is hooked."""
    cfg, n = ref.config, ref.batch
    hooked_gelu = any(type(m).__name__ == "GELU" for m in ref.modules.values())
    parts = []
    for i in count.detail:
        if i.where == "functional":
            double = bare(i.name) == "gelu" and hooked_gelu
            parts.append(Part(DOUBLE_ACTIVATION if double else op_bucket(i.name, ref), i.flops, i.name))
            continue
        bucket = _layer_bucket(i)
        if not i.in_total:  # computed, then dropped by accumulate_flops
            if bucket == LINEAR:
                parts.append(Part(DROPPED, -ref.per_instance(i.name), i.name, counted=False))
            continue
        if i.type == "Attention":
            attention = ref.per_instance(i.name, ("qk", "av"))
            extras = 2 * n * (cfg.tokens * cfg.hidden_size + cfg.num_heads * cfg.tokens**2)
            parts += split(i, [(ATTENTION, attention), (ELEMENTWISE, extras)])
        elif bucket in (LINEAR, CONV):
            parts += split(i, [(bucket, ref.per_instance(i.name)), (BIAS, 2 * ref.bias_elements(path=i.name))])
        else:
            parts += split(i, [(bucket, i.flops)])
    return parts


def torchinfo(count: Count, ref: Reference) -> list[Part]:
    """torchinfo: a conv adds weights x output positions (bias too); any other layer with weights
    adds (weights + bias) x batch, whatever its token count; an embedding table counts as weights."""
    n = ref.batch
    parts = []
    for i in count.detail:
        bucket = _layer_bucket(i)
        weights, bias = ref.weights(i.name)
        if bucket == CONV:
            parts += split(i, [(CONV, ref.per_instance(i.name)), (BIAS, 2 * ref.bias_elements(path=i.name))])
        elif bucket == LINEAR:
            exact = ref.per_instance(i.name)
            parts += split(i, [(LINEAR, exact), (PER_SAMPLE_RULE, 2 * n * weights - exact), (BIAS, 2 * n * bias)])
        else:
            parts += split(i, [(bucket, i.flops)])
    return parts


def by_kind(count: Count, ref: Reference) -> list[Part]:
    """A counter that states each item's kind (flopcheck's own): QK^T and attn@V stay apart."""
    buckets = {"attn_score": ATTN_SCORE, "attn_value": ATTN_VALUE, "conv": CONV}
    return [Part(buckets.get(i.type, LINEAR), i.flops, i.name) for i in count.detail if i.in_total]


CLASSIFIERS: dict[str, Callable[[Count, Reference], list[Part]]] = {
    "flopcheck_exact": by_kind,
    "fvcore_jit": by_op_name,
    "torch_profiler": by_op_name,
    "torch_dispatch": by_op_name,
    "torchprofile_jit": by_op_name,
    "ptflops_aten": ptflops_aten,
    "calflops_hooks": deepspeed_style,
    "deepspeed_profiler": deepspeed_style,
    "thop_hooks": thop,
    "ptflops_pytorch": ptflops_pytorch,
    "torchinfo_summary": torchinfo,
}


def classify(count: Count, ref: Reference) -> list[Part]:
    """The count's detail as parts; an unknown counter is read by the kinds its items state, or op by op."""
    kinds = {"linear", "attn_score", "attn_value", "conv", "per_sample", "head", "matmul"}
    states_kinds = bool(count.detail) and all(i.type in kinds for i in count.detail)
    return CLASSIFIERS.get(count.counter, by_kind if states_kinds else by_op_name)(count, ref)


__all__ = ["CLASSIFIERS", "LINEAR_KINDS", "MATCHED", "Part", "classify", "op_bucket"]

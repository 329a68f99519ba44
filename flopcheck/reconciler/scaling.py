"""A counter's convention carried from a model it ran on to one it cannot run on.

A reconciliation splits a counter's number into the truth and one delta per cause. Each cause's delta is
made of one quantity of the model: a fused-attention miss is minus the attention FLOPs, counted norms are
so many FLOPs per norm element, counted bias adds one per bias element. Measured on a stand-in of the same
architecture (fewer, narrower blocks, fewer tokens), each delta's rate (delta / the stand-in's quantity)
carried to the model (rate x the model's quantity) gives what the counter would report there:

    counter(model) = truth(model) + sum over causes of delta(stand-in) x Q(model) / Q(stand-in).

Exact where a cause's rate is uniform (attention missed, a norm rule per element, a bias per element);
where a rate mixes ops of different costs (elementwise work), the carried value is the stand-in's mix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from flopcheck.reconciler import causes as K
from flopcheck.types import Finding, Kind, Reconciliation, Work

if TYPE_CHECKING:
    from flopcheck.reconciler.reference import Reference

Quantity = Callable[["Reference"], int]


def _kinds(*kinds: Kind) -> Quantity:
    return lambda ref: ref.kinds(*kinds)


def _elements(*works: Work) -> Quantity:
    """Elements written by the uncounted ops of these categories."""
    return lambda ref: sum(ref.exact.uncounted_by_category().get(w, (0, 0))[1] for w in works)


def _permuting_einsums(ref: Reference) -> int:
    """Elements of the copies at the model's top level: where DiT's unpatchify einsum ('nhwpqc->nchpwq', which
    only permutes) writes its output; the exact count sees the einsum as the view and copy it dispatches."""
    return sum(r.elements for r in ref.exact.uncounted if r.path == "" and r.kind is Work.MOVEMENT)


def _embedding_tables(ref: Reference) -> int:
    """Weights of the lookup tables (nn.Embedding)."""
    return sum(layer.weight for layer in ref.layers.values() if layer.type_name == "Embedding")


def _per_sample_repeated(ref: Reference) -> int:
    """Per-sample layer FLOPs x (T - 1): what counting them per token adds."""
    return ref.kinds(Kind.PER_SAMPLE) * (ref.tokens - 1)


def _per_token_beyond_one(ref: Reference) -> int:
    """Per-token layer FLOPs x (T - 1) / T: what counting them once per sample leaves out."""
    per_token = ref.kinds(Kind.LINEAR)
    return per_token - per_token // ref.tokens


def _attention_module_linears(ref: Reference) -> int:
    """FLOPs of the layers inside the modules that compute attention (their q/k/v and output projections)."""
    homes = {ref.norm_path[p] for p, layer in ref.layers.items() if ref.type_computes_attention(layer.type_name)}
    return sum(
        r.flops
        for r in ref.exact.counted
        if r.kind not in (Kind.ATTN_SCORE, Kind.ATTN_VALUE) and any(r.path.startswith(h + ".") for h in homes)
    )


_ATTENTION = _kinds(Kind.ATTN_SCORE, Kind.ATTN_VALUE)

# cause -> the quantity of a model its delta is made of (a cause not here does not carry to another model)
QUANTITY: dict[K.Cause, Quantity] = {
    K.ATTENTION_UNCOUNTED: _ATTENTION,
    K.FUSED_ATTENTION_UNCOUNTED: _ATTENTION,
    K.MODULE_TYPE_NOT_HOOKED: _ATTENTION,
    K.MATMUL_OPERATOR_UNPATCHED: _ATTENTION,
    K.ATTN_V_MISSING: _kinds(Kind.ATTN_VALUE),
    K.QK_MISSING: _kinds(Kind.ATTN_SCORE),
    K.HOOKED_CONTAINER_DROPS_CHILDREN: _attention_module_linears,
    K.CONV_OP_UNCOUNTED: _kinds(Kind.CONV),
    K.NORM_COUNTED: _elements(Work.NORM),
    K.ELEMENTWISE_COUNTED: _elements(*K.ELEMENTWISE_COUNTED.accounts),
    K.ACTIVATION_DOUBLE_COUNTED: _elements(Work.ELEMENTWISE),
    K.BIAS_ADDS_COUNTED: _elements(Work.BIAS),
    K.PERMUTATION_EINSUM_COUNTED: _permuting_einsums,
    K.EMBEDDING_LOOKUP_COUNTED: _embedding_tables,
    K.PER_SAMPLE_COUNTED_PER_TOKEN: _per_sample_repeated,
    K.PER_TOKEN_COUNTED_PER_SAMPLE: _per_token_beyond_one,
    K.LINEAR_DOUBLE_COUNTED: lambda ref: ref.linear,
}


@dataclass(frozen=True)
class Carried:
    """A counter's FLOPs on a model by its convention on a stand-in; `uncertain`: the FLOPs carried at a rate that is
    not a whole number per unit (a mix of ops of different costs: exact on the stand-in, the stand-in's mix here)."""

    flops: int | None
    uncertain: int = 0
    why: str = ""  # why there is no value
    findings: tuple[Finding, ...] = ()  # each cause with its delta carried to the model (FC101 as on the stand-in)


def carried(rec: Reconciliation, stand_in: Reference, model: Reference) -> Carried:
    """The counter's FLOPs on `model` (a Reference) by its convention on `stand_in` (the Reference `rec` is of)."""
    if not rec.closed:
        why = "it did not run" if rec.residual is None else f"{rec.residual:+,} FLOPs unexplained"
        return Carried(None, why=f"its convention is not known on the stand-in ({why})")
    total, uncertain = Fraction(model.total), Fraction(0)
    findings = []
    for f in rec.findings:
        c = K.of(f)
        if c is K.MAC_CONVENTION:
            continue
        if c not in QUANTITY:
            return Carried(None, why=f"{f.code} {f.title} has no quantity to carry it by")
        q_stand_in, q_model = QUANTITY[c](stand_in), QUANTITY[c](model)
        if not q_stand_in:
            return Carried(None, why=f"{f.code} {f.title}: the stand-in has none of what it is made of")
        delta = Fraction(f.delta * q_model, q_stand_in)
        total += delta
        findings.append(replace(f, delta=round(delta)))
        if f.delta % q_stand_in:  # not a whole number of FLOPs per unit: a mix
            uncertain += abs(delta)
    return Carried(round(total), round(uncertain), findings=tuple(findings))

"""A counter's number on a model it cannot run, carried from models it ran on: the one place that carries.

Three ways, one `Carried` and one exact polynomial fit (`through`, Lagrange's interpolation in fractions, the x's
given as numbers):
- by quantity (`carried`): a reconciliation splits a counter's number into the truth and one delta per cause, each
  made of one quantity of the model (a fused-attention miss is minus the attention FLOPs, counted norms so many
  FLOPs per norm element, counted bias one per bias element). Measured on a stand-in of the same architecture, each
  delta's rate carried to the model gives what the counter would report there:

      counter(model) = truth(model) + sum over causes of delta(stand-in) x Q(model) / Q(stand-in),

  exact where a cause's rate is uniform; where a rate mixes ops of different costs (elementwise work), the carried
  value is the stand-in's mix (`uncertain`).
- by depth (`per_block`): a model of L identical blocks counted with 1 and 2 of them: the line through both, at L.
- by length (`fitted`): at fixed depth, width and every other axis, a transformer's work along one axis of its token
  grid is a + bn + cn^2 in its n columns of tokens (per token: bn; attention's T x T scores: cn^2; per sample: a),
  and so is each counter's count while its conventions do not change with n: three counts fix it exactly, a fourth
  checks it, and its value at the model's own n is the counter's own count there, to the FLOP.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from flopcheck.reconciler import causes as K
from flopcheck.types import Count, Finding, Item, Kind, Outcome, Reconciliation, Work

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
    """A counter's FLOPs on a model, carried from a stand-in by its convention there; `uncertain`: the FLOPs carried
    at a rate that is not a whole number per unit (a mix of ops of different costs: exact on the stand-in, the
    stand-in's mix here)."""

    flops: int | None
    uncertain: int = 0
    why: str = ""  # why there is no value
    findings: tuple[Finding, ...] = ()  # each cause with its delta carried to the model (FC101 as on the stand-in)


def carried(rec: Reconciliation, stand_in: Reference, model: Reference) -> Carried:
    """The counter's FLOPs on `model` (a Reference) by its convention on `stand_in` (the Reference `rec` is of)."""
    if rec.counted_nothing:  # a count of 0 carries as 0: it counts nothing on the model either, its skips the proof
        return Carried(0)
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


Polynomial = tuple[Fraction, ...]  # (a, b, c, ...): a + bn + cn^2 + ...

POINTS = (1, 2, 3)  # a length fit's widths, in steps of the input's width
CHECK = 4  # the width, in steps, whose count a length fit must give exactly


def through(points: list[tuple[int, Fraction]]) -> Polynomial:
    """The coefficients (a, b, ...) of the one polynomial of degree len(points) - 1 through the points: Lagrange's
    basis, sum of y_i prod_(j != i) (n - x_j) / (x_i - x_j), in exact fractions."""
    coeffs = [Fraction(0)] * len(points)
    for i, (xi, yi) in enumerate(points):
        basis, scale = [Fraction(1)], yi  # prod (n - x_j), lowest power first
        for j, (xj, _) in enumerate(points):
            if j != i:
                basis = [a - xj * b for a, b in zip([Fraction(0), *basis], [*basis, Fraction(0)])]
                scale /= xi - xj
        coeffs = [c + scale * b for c, b in zip(coeffs, basis)]
    return tuple(coeffs)


def at(p: Polynomial, n: int) -> Fraction:
    """a + bn + cn^2 + ..."""
    return sum((c * n**k for k, c in enumerate(p)), Fraction(0))


def exact(x: float | int) -> Fraction:
    """A number as reported, exactly (a float by its shortest repr: 4.61e9 is 4610000000)."""
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)


def per_block(one: float | int, two: float | int, blocks: int) -> Fraction:
    """A count of L blocks from counts of 1 and 2: the line through (1, c(1)) and (2, c(2)) at L, c(1) + (L - 1)
    (c(2) - c(1)), exact where the blocks are alike."""
    return at(through([(1, exact(one)), (2, exact(two))]), blocks)


def by_length(values: list[Fraction], full: int, whole: bool) -> Fraction | None:
    """The value at n = full of the quadratic through values at POINTS, when it gives values[CHECK] exactly (and,
    `whole`, has whole coefficients); None where it does not."""
    q = through(list(zip(POINTS, values)))
    if at(q, CHECK) != values[len(POINTS)] or (whole and any(x.denominator != 1 for x in q)):
        return None
    return at(q, full)


def fitted(counts: list[Outcome | None], full: int, widths: list[int]) -> Count | str:
    """The count at n = full from counts at POINTS then CHECK (at `widths` pixels): its total and each line of its
    detail fitted (the same lines at every length, their calls alike); or why not, in words."""
    for c, w in zip(counts, widths):
        if not isinstance(c, Count):
            return f"its count at {w} px wide gave none ({c.error if c is not None else 'no result'})"
    got = [c for c in counts if isinstance(c, Count)]  # every one, by the loop above
    if len({_convention(c) for c in got}) > 1:
        return "its detail or its skips differ between the cut lengths, so its convention changes with the length"
    flops = by_length([exact(c.flops) for c in got], full, True)
    reported = by_length([exact(c.reported) for c in got], full, False)
    if flops is None or reported is None:
        listed = ", ".join(f"{c.flops:,}" for c in got)
        return f"its counts at the cut lengths are not a + bT + cT^2 in whole FLOPs ({listed})"
    detail = []
    for lines in zip(*(c.detail for c in got)):
        item = _fitted_item(list(lines), full)
        if item is None:
            return f"its line {lines[0].name} is not a + bT + cT^2 in whole FLOPs over the cut lengths"
        detail.append(item)
    return replace(
        got[-1], reported=float(reported), flops=int(flops), detail=tuple(detail), time_s=None, peak_rss_mb=None
    )


def _convention(c: Count) -> tuple[object, ...]:
    """What must be alike at every cut length: its unit, its skips, and its detail's lines but for their numbers."""
    return c.unit, c.skipped, tuple((i.name, i.calls, i.where, i.type, i.in_total) for i in c.detail)


def _fitted_item(lines: list[Item], full: int) -> Item | None:
    """One line of a counter's detail at n = full, fitted like its total."""
    flops = by_length([Fraction(i.flops) for i in lines], full, True)
    reported = by_length([exact(i.reported) for i in lines], full, False)
    if flops is None or reported is None:
        return None
    return replace(lines[-1], flops=int(flops), reported=float(reported))

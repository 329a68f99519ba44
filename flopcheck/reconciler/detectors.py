"""White-box detection: a counter's detail read as parts (`parts.Part`), each matching the reference's work or
explained by a cause; each cause's one detector, run in the order registered here (then any a plugin registers),
turns the evidence into findings with exact deltas. The residual (FC901) and the unit (FC101) close every
reconciliation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flopcheck.op_names import FAST_PATH_CLASSES, Family, Operator, bare, fast_path_of, forward_op, operator, ran_as
from flopcheck.reconciler import causes as K
from flopcheck.reconciler import masked
from flopcheck.reconciler.attention_kinds import missing_half
from flopcheck.reconciler.parts import Part
from flopcheck.types import Count, Finding, Kind, Mechanism, Skip, Work


@dataclass
class Evidence:
    """What a detector sees: the count, the reference, and the count's detail read as parts."""

    count: Count
    ref: Any  # reconcile.reference.Reference
    parts: list[Part]

    def of_work(self, *works: Work | Kind) -> list[Part]:
        """Parts that did this work (and are not explained by a cause of their own)."""
        return [p for p in self.parts if p.cause is None and p.work in works]

    def flops(self, *works: Work | Kind) -> int:
        """FLOPs of the parts that did this work."""
        return sum(p.flops for p in self.of_work(*works))

    def explained_by(self, c: K.Cause) -> list[Part]:
        """Parts this cause explains: attributed to it, or doing the extra work it accounts for."""
        return [p for p in self.parts if p.cause is c or (p.cause is None and p.work in c.accounts)]

    def unexplained(self) -> list[Part]:
        """Parts neither matching work nor explained by any cause."""
        return [p for p in self.parts if p.cause is None and p.work is None]


Detector = Callable[[Evidence], "Finding | list[Finding] | None"]
DETECTORS: list[tuple[tuple[K.Cause, ...], Detector]] = []  # in registration order, each cause in one entry at most


def detects(*causes: K.Cause) -> Callable[[Detector], Detector]:
    """Decorator: `fn(evidence) -> Finding | list[Finding] | None` is these causes' one white-box detector."""

    def wrap(fn: Detector) -> Detector:
        taken = {c.code: f for cs, f in DETECTORS for c in cs}
        for i, c in enumerate(causes):
            if c.code in taken or c in causes[:i]:
                other = getattr(taken.get(c.code, fn), "__qualname__", "?")
                raise ValueError(
                    f"cause {c.code} ({c.slug}) has a detector already ({other}): a cause has one detector, "
                    f"so merge the two into one"
                )
        DETECTORS.append((causes, fn))
        return fn

    return wrap


def sources(parts: list[Part], limit: int = 3) -> str:
    """The items the parts came from, the first few by name."""
    names = list(dict.fromkeys(p.source for p in parts))
    return ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


def _work_counted(c: K.Cause) -> Detector:
    """The detector of a cause that names work counted beyond (or short of) the reference: its parts' sum."""

    def detect(ev: Evidence) -> Finding | None:
        parts = ev.explained_by(c)
        delta = sum(p.flops for p in parts)
        return c.finding(delta, sources(parts)) if delta else None

    return detect


for _c in (
    K.NORM_COUNTED,
    K.ELEMENTWISE_COUNTED,
    K.PERMUTATION_EINSUM_COUNTED,
    K.BIAS_ADDS_COUNTED,
    K.ACTIVATION_DOUBLE_COUNTED,
    K.EMBEDDING_LOOKUP_COUNTED,
    K.DOT_PRODUCT_2N_MINUS_1,
    K.EINSUM_NUMPY_COST,
    K.BIAS_ONCE_PER_CALL,
    K.UPSAMPLING_COUNTED,
    K.NAME_BASED_RULE,
    K.TRANSPOSED_CONV_OVER_OUTPUT,
    K.PER_TOKEN_COUNTED_PER_SAMPLE,
    K.HOOKED_CONTAINER_DROPS_CHILDREN,
):
    detects(_c)(_work_counted(_c))


def _unhooked_layer_work(ev: Evidence, subclass: bool) -> tuple[int, list[str]]:
    """(FLOPs, names) of the layer work (not attention) that skipped module types did in their own forward, per the
    exact count at those modules' own paths: subclasses of a torch layer, or the other types."""
    ref, lost = ev.ref, 0
    names: list[str] = []
    modules = set(ref.norm_path.values())
    for s in ev.count.skipped:
        if not (s.own_forward or s.where is Mechanism.MODULE):  # a module's, or a leaf's whole forward (torchinfo's)
            continue
        paths = {
            ref.norm_path[p]
            for p, layer in ref.layers.items()
            if layer.type_name == s.name and bool(layer.subclass_of and layer.weight) == subclass
        }
        own = sum(
            r.flops
            for r in ref.exact.counted
            if r.kind not in (Kind.ATTN_SCORE, Kind.ATTN_VALUE)
            and (
                r.path in paths
                or r.path.removesuffix(".matmul") in paths
                or (r.path.rpartition(".")[0] in paths and r.path not in modules)  # a fused op's piece: 'attn.in_proj'
            )
        )
        if own:
            lost, names = lost + own, names + [f"{s.name} x{s.calls}"]
    return lost, names


@detects(K.LAYER_SUBCLASS_UNHOOKED, K.OWN_FORWARD_LAYERS_UNCOUNTED)
def _own_forward_layers(ev: Evidence) -> list[Finding]:
    """Layer work the counter's rules never reached: a layer subclass, and a module multiplying in its own forward
    (by its weights, or a rotary embedding's inv_freq @ positions); each named only while the counter's layer work is
    short by at least what it and those before it lost."""
    ref = ev.ref
    counted = ev.flops(Work.LINEAR, Work.CONV, Work.MATMUL) + sum(
        p.flops for p in ev.explained_by(K.HOOKED_CONTAINER_DROPS_CHILDREN)
    )
    einsum = einsum_contractions(ref) if any(forward_op(s.name, Family.EINSUM) for s in ev.count.skipped) else 0
    short = ref.linear + ref.kinds(Kind.CONV) - counted - einsum  # a skipped einsum's share: FC229's (op_causes.py)
    found = []
    for subclass, c, why in (
        (True, K.LAYER_SUBCLASS_UNHOOKED, "a subclass of a torch layer"),
        (False, K.OWN_FORWARD_LAYERS_UNCOUNTED, "their own F.linear/matmul work"),
    ):
        lost, names = _unhooked_layer_work(ev, subclass)
        if not subclass:  # what a patched torch.matmul counted in those forwards (Mamba's scan), and the einsums
            lost -= _patched_matmuls(ev) + einsum
        if lost > 0 and short >= lost:
            found.append(c.finding(-lost, f"skipped {', '.join(names)}: {why}"))
            short -= lost
    return found


def _patched_matmuls(ev: Evidence) -> int:
    """The layer and matmul work the counter's patched functionals counted (ptflops' torch.matmul, wherever it ran:
    in an unhooked module's own forward too)."""
    patched = {i.name for i in ev.count.detail if i.where is Mechanism.FUNCTIONAL}
    return sum(p.flops for p in ev.of_work(Work.LINEAR, Work.MATMUL) if p.source.split(" + ")[0] in patched)


def einsum_contractions(ref: Any) -> int:
    """The exact count's FLOPs in the einsums' contractions other than attention (a product by a table, a free
    matmul): each two-operand call's ops of another kind than QK^T and attn@V (an einsum attention is the attention
    causes')."""
    attention = {Kind.ATTN_SCORE.value, Kind.ATTN_VALUE.value}
    return sum(f for _, shapes, ran in ref.exact.einsums if len(shapes) > 1 for k, f in ran if k not in attention)


# matmul families that never carry attention: an RNN layer's, the experts' grouped matmul, torch.cdist (each its own
# cause: RNN_OP_UNCOUNTED, GROUPED_MM_UNCOUNTED, DISTANCE_UNCOUNTED)
NOT_ATTENTION = (Family.RECURRENT, Family.GROUPED_MATMUL, Family.DISTANCE)


def fused_skips(count: Count) -> list[Skip]:
    """The counter's skips of a module's fused fast-path op (MultiheadAttention's, TransformerEncoderLayer's)."""
    return [s for s in count.skipped if not s.own_forward and fast_path_of(s.name)]


def fused_roots(count: Count, ref: Any) -> set[str]:
    """Normalised paths of the modules whose fused op the counter skipped: what ran inside them it never saw."""
    classes = {fast_path_of(s.name) for s in fused_skips(count)}
    if not classes:
        return set()
    return fast_path_roots(ref, classes)


def fast_path_roots(ref: Any, classes: frozenset[str] | set[str] = FAST_PATH_CLASSES) -> set[str]:
    """Normalised paths of the modules of these classes that torch's eval fast path runs as one op: every
    TransformerEncoderLayer, and each MultiheadAttention called as self-attention (a cross-attention takes none)."""
    fast = {p for p, (_, _, one) in ref.exact.mha.items() if one}
    return {
        ref.norm_path[p]
        for p, layer in ref.layers.items()
        if (hit := {layer.type_name, layer.subclass_of} & classes) and (hit != {"MultiheadAttention"} or p in fast)
    }


def _matmul_cause(skip: Skip) -> K.Cause:
    """A skipped matmul op's cause: an op '@' runs as, the operator unpatched (FC207); any other, an op with no
    formula (FC230: aten::baddbmm)."""
    return K.MATMUL_OPERATOR_UNPATCHED if operator(skip.name) is not None else K.MATMUL_OP_UNCOUNTED


def _attention_skips(ev: Evidence) -> list[tuple[K.Cause, Any]]:
    """(cause, skip) for the skipped things that could have carried the attention, most specific first: a fused
    kernel, a module type whose own forward holds the attention and has no rule, matmuls no patch covered."""
    found = []
    for s in ev.count.skipped:
        if fast_path_of(s.name):
            continue  # named by FC213, projections and all
        if not s.own_forward and s.work is Work.ATTENTION:
            found.append((0, K.FUSED_ATTENTION_UNCOUNTED, s))
        elif s.own_forward and ev.ref.type_computes_attention(s.name):
            found.append((1, K.MODULE_TYPE_NOT_HOOKED, s))
        elif not s.own_forward and s.work is Work.MATMUL and not forward_op(s.name, *NOT_ATTENTION):
            found.append((2, _matmul_cause(s), s))
    return [(c, s) for _, c, s in sorted(found, key=lambda f: f[0])]


def _fused_mha(ev: Evidence) -> tuple[int, int, int, list[Skip]]:
    """(projections, QK^T, attn@V) FLOPs of the exact count inside the modules whose fused op the counter skipped
    (MultiheadAttention, TransformerEncoderLayer; projections: every other multiply-add there), and those skips."""
    skips = fused_skips(ev.count)
    if not skips:
        return 0, 0, 0, []
    inside = ev.ref.inside(fused_roots(ev.count, ev.ref))
    score = sum(r.flops for r in inside if r.kind is Kind.ATTN_SCORE)
    value = sum(r.flops for r in inside if r.kind is Kind.ATTN_VALUE)
    return sum(r.flops for r in inside) - score - value, score, value, skips


@detects(K.FUSED_MHA_UNCOUNTED)
def _mha(ev: Evidence) -> Finding | None:
    """MultiheadAttention's fused op skipped: its projections and attention, exactly as the exact count has them."""
    projections, score, value, skips = _fused_mha(ev)
    if not skips or not projections + score + value:
        return None
    said = ", ".join(f"{s.name} x{s.calls}" for s in skips)
    return K.FUSED_MHA_UNCOUNTED.finding(-(projections + score + value), f"skipped {said}: projections and attention")


def _attention(ev: Evidence) -> Finding | None:
    """Name the attention the counter missed, from how much it has, how it split it, what it skipped."""
    ref = ev.ref
    _, in_score, in_value, _ = _fused_mha(ev)  # MultiheadAttention's own, named by FC213
    score, value = ref.kinds(Kind.ATTN_SCORE) - in_score, ref.kinds(Kind.ATTN_VALUE) - in_value
    got_score, got_value = ev.flops(Kind.ATTN_SCORE), ev.flops(Kind.ATTN_VALUE)
    counted = ev.flops(Work.ATTENTION) + got_score + got_value
    split = bool(ev.of_work(Kind.ATTN_SCORE, Kind.ATTN_VALUE))
    if counted == score + value or _masked_convention(ev):
        return None
    if split and (got_score, got_value) == (0, value) and score:
        return K.QK_MISSING.finding(-score, "attn@V counted, QK^T not")
    if counted == 0 and score + value:
        for c, skip in _attention_skips(ev):
            return c.finding(-(score + value), f"skipped {skip.name} x{skip.calls}")
        return None
    lost, unhooked = _unhooked_attention(ev)
    if lost and counted == score + value - lost:  # the attention of the modules it hooks counted, these not
        return K.MODULE_TYPE_NOT_HOOKED.finding(-lost, "skipped " + ", ".join(f"{s.name} x{s.calls}" for s in unhooked))
    attention_op = [s for c, s in _attention_skips(ev) if c is K.FUSED_ATTENTION_UNCOUNTED]
    # the SDPA calls the CPU ran fused; a trace of the composite op (fvcore's) misses the math-path calls too
    fast = fast_roots_met(ev)
    shares = (
        (_sdpa_attention(ref, fast), "run by SDPA"),
        (_sdpa_attention(ref, fast, math=True), "of every SDPA call"),
    )
    for fused, which in shares:
        if attention_op and fused and counted == score + value - fused:  # the explicit attention counted, SDPA's not
            said = f"skipped {attention_op[0].name} x{attention_op[0].calls}: the attention {which}"
            return K.FUSED_ATTENTION_UNCOUNTED.finding(-fused, said)
    return _half_missing(ev, counted, score, value)


def _unhooked_attention(ev: Evidence) -> tuple[int, list[Skip]]:
    """The exact count's attention inside the modules of the types the counter skipped whose own forward computes
    it (timm's CrossAttention in CrossViT, beside the Attention ptflops hooks), and those skips."""
    ref = ev.ref
    skips = [s for s in ev.count.skipped if s.own_forward and ref.type_computes_attention(s.name)]
    types = {s.name for s in skips}
    paths = {ref.norm_path[p] for p, layer in ref.layers.items() if layer.type_name in types}
    inside = (r for r in ref.exact.counted if r.kind in (Kind.ATTN_SCORE, Kind.ATTN_VALUE))
    return sum(r.flops for r in inside if r.path.rpartition(".")[0] in paths), skips


def _masked_convention(ev: Evidence) -> list[Finding]:
    """The counter's attention at its masks' needed pairs (or packed documents as padded), to the FLOP: the exact
    count's own records of the calls with those masks give each cause's delta (reconciler/masked.py)."""
    calls = ev.ref.exact.attention
    counted = ev.flops(Work.ATTENTION) + ev.flops(Kind.ATTN_SCORE) + ev.flops(Kind.ATTN_VALUE)
    dense = ev.ref.kinds(Kind.ATTN_SCORE, Kind.ATTN_VALUE)
    for found in (masked.needed(calls), masked.padded(calls)):
        if found and counted == dense + sum(f.delta for f in found):
            return found
    return []


@detects(*masked.MASKED_CAUSES)
def _masked(ev: Evidence) -> list[Finding]:
    """Masked attention counted under another convention than the dense headline: each pattern's cause."""
    return _masked_convention(ev)


def _half_missing(ev: Evidence, counted: int, score: int, value: int) -> Finding | None:
    """QK^T or attn@V missing, named by the op the counter skipped or counted (attention_kinds.missing_half); by
    size only where the two halves differ and the counter's detail names neither op."""
    ops = [p.source for p in ev.of_work(Work.ATTENTION)]
    stated = {p.work for p in ev.of_work(Kind.ATTN_SCORE, Kind.ATTN_VALUE)}  # a counter that names each item's kind
    half = missing_half(ev.count, ev.ref, ops, stated)
    for kind, c, size, rest in (
        (Kind.ATTN_VALUE, K.ATTN_V_MISSING, value, score),
        (Kind.ATTN_SCORE, K.QK_MISSING, score, value),
    ):
        if counted != rest or not size:
            continue
        if half is not None and half[0] is kind:
            return c.finding(-size, half[1])
        if half is None and score != value:
            words = "QK^T" if kind is Kind.ATTN_VALUE else "attn@V"
            return c.finding(-size, f"attention counted equals {words} alone (the counter's detail names no op)")
    return None


def _free_matmuls(ev: Evidence) -> list[Finding]:
    """Matmuls the counter never saw, by its skipped matmul ops: of two activations the exact count could not call
    attention (CaiT's talking heads; a rotary embedding's inv_freq @ positions), none of that work counted, so the
    exact count's whole; and a weight by a matmul op in a module's own forward (Mamba's dt_proj.weight @ x, a Linear
    subclass's x @ W^T: transformers' FalconLinear; RecurrentGemma's torch.baddbmm of its gates), the exact count's
    calls of those ops there, when they are exactly the skipped calls. Each named by its op: one '@' runs as, FC207;
    any other (aten::baddbmm), FC230."""
    named = (*NOT_ATTENTION, Family.EINSUM)  # ops a cause of their own names (op_causes.py)
    skips = [
        s for s in ev.count.skipped if not s.own_forward and s.work is Work.MATMUL and not forward_op(s.name, *named)
    ]
    work = ev.ref.kinds(Kind.MATMUL) - sum(
        r.flops for r in ev.ref.exact.counted if r.kind is Kind.MATMUL and forward_op(r.op, *named)
    )
    if not skips or ev.flops(Kind.MATMUL):
        return []
    lost: dict[K.Cause, int] = {}
    said: dict[K.Cause, list[str]] = {}
    if work and _free_counted(ev) < work:
        free = {bare(r.op) for r in ev.ref.exact.counted if r.kind is Kind.MATMUL}
        c = _matmul_cause(([s for s in skips if bare(s.name) in free] or skips)[0])
        lost[c], said[c] = work, [f"skipped {_named(skips, free)}: matmuls of activations"]
        skips = [s for s in skips if bare(s.name) not in free]
    own, hit = _own_forward_products(ev, skips)  # free matmuls counted by a patch: the skip was another matmul
    for s, flops in zip(hit, own, strict=True):
        c = _matmul_cause(s)
        how = "'@'" if c is K.MATMUL_OPERATOR_UNPATCHED else bare(s.name)
        lost[c] = lost.get(c, 0) + flops
        said.setdefault(c, []).append(f"skipped {s.name} x{s.calls}: a weight by {how} in a module's own forward")
    return [c.finding(-lost[c], "; ".join(said[c])) for c in lost]


def _named(skips: list[Skip], ops: set[str] | None) -> str:
    """The skipped ops (of these bare names, or all) as 'name xcalls', the first one where none is of them."""
    hit = [s for s in skips if ops is None or bare(s.name) in ops] or skips[:1]
    return ", ".join(f"{s.name} x{s.calls}" for s in hit)


def _free_counted(ev: Evidence) -> int:
    """What the counter's op items counted of an op that did free matmuls alone in the exact count (calflops'
    patched torch.matmul on Mamba's scan: bmm, every record of it a free matmul)."""
    out = 0
    for i in ev.count.detail:
        op = _ran_as_operator(i.name)
        kinds = {r.kind for r in ev.ref.exact.counted if bare(r.op) == op}
        out += i.flops if i.where is not Mechanism.MODULE and kinds == {Kind.MATMUL} else 0
    return out


def _ran_as_operator(name: str) -> str:
    """The op an item's name ran as in the exact count where it is '@' (torch.matmul on batches ran as bmm), else
    the name's own op."""
    return (ran_as(name) or (bare(name),))[0] if operator(name) is Operator.IS else bare(name)


def _own_forward_products(ev: Evidence, skips: list[Skip]) -> tuple[list[int], list[Skip]]:
    """(FLOPs of each, skips) of the skipped ops' calls outside any plain Linear or conv (a module's own forward:
    Mamba's dt_proj.weight @ x; a Linear subclass's forward is its own), each skip whose calls are exactly the exact
    count's."""
    ref = ev.ref
    layers = {ref.norm_path[p] for p, la in ref.layers.items() if _torch_layer(la.type_name)}
    lost, hit = list[int](), list[Skip]()
    for s in skips:
        recs = [r for r in ref.exact.counted if bare(r.op) == bare(s.name) and r.path not in layers]
        recs = [r for r in recs if r.kind not in (Kind.ATTN_SCORE, Kind.ATTN_VALUE)]
        if recs and sum(r.calls for r in recs) == s.calls:
            lost, hit = lost + [sum(r.flops for r in recs)], hit + [s]
    return lost, hit


def _torch_layer(type_name: str) -> bool:
    """A Linear or a convolution, whose own op a counter's layer patch or hook counts."""
    return type_name in ("Linear", "LazyLinear") or type_name.startswith(("Conv", "LazyConv"))


@detects(
    K.QK_MISSING,
    K.FUSED_ATTENTION_UNCOUNTED,
    K.MODULE_TYPE_NOT_HOOKED,
    K.MATMUL_OPERATOR_UNPATCHED,
    K.ATTN_V_MISSING,
    K.MATMUL_OP_UNCOUNTED,
)
def _matmuls_of_activations(ev: Evidence) -> list[Finding]:
    """The attention the counter missed, then the free matmuls it never saw (FC207 and FC230 can name both)."""
    attention = _attention(ev)
    return ([attention] if attention is not None else []) + _free_matmuls(ev)


def fast_roots_met(ev: Evidence) -> set[str]:
    """Normalised paths of the modules the counter ran by torch's fused fast path: those whose fused op it skipped or
    counted by name, and, unless the model ran as built in train mode, every module that path takes in eval (a
    counter that sees inside the fused op lists neither: torch.profiler). In train mode no fast path is taken, and the
    SDPA call inside each MultiheadAttention is the counter's to count."""
    met = [i.name for i in ev.count.detail] + [s.name for s in ev.count.skipped if not s.own_forward]
    classes = {c for name in met if (c := fast_path_of(name))}
    return (fast_path_roots(ev.ref, classes) if classes else set()) | (
        set() if ev.ref.train_mode else fast_path_roots(ev.ref)
    )


def _sdpa_attention(ref: Any, fast: set[str], math: bool = False) -> int:
    """The exact count's attention FLOPs inside the F.scaled_dot_product_attention calls the CPU ran fused (with math,
    every call: its math-path calls too), less those in the modules at `fast` that the counter ran by torch's fast
    path as one op (there SDPA is inside the fused op, named by FC213)."""
    calls = list(ref.exact.sdpa.items()) + (list(ref.exact.sdpa_math.items()) if math else [])
    return sum(f for p, f in calls if not any(p == r or p.startswith(r + ".") for r in fast))


@detects(K.CONV_OP_UNCOUNTED)
def _conv_ops(ev: Evidence) -> Finding | None:
    """A convolution op the counter skipped (not a module: an op with no formula in its list), named when its conv
    work is short of the reference's."""
    skips = [s for s in ev.count.skipped if not s.own_forward and s.work is Work.CONV]
    # the exact count's conv records, not its terms' kinds: a path whose own forward ran a conv and a matmul is one
    # term of the last op's kind (Mamba's mixer: F.conv1d and dt_proj.weight @ x, a 'linear' term of both)
    convs = sum(r.flops for r in ev.ref.exact.counted if r.kind is Kind.CONV)
    short = convs - ev.flops(Work.CONV)
    if not skips or short <= 0:
        return None
    return K.CONV_OP_UNCOUNTED.finding(-short, "skipped " + ", ".join(f"{s.name} x{s.calls}" for s in skips))


@detects(K.RNN_OP_UNCOUNTED)
def _rnn_ops(ev: Evidence) -> Finding | None:
    """An RNN op the counter skipped, named with the exact count of every recurrent layer when the counter's layer
    work is short by at least that much (a module rule that counted the layer is not short)."""
    skips = [s for s in ev.count.skipped if not s.own_forward and forward_op(s.name, Family.RECURRENT)]
    ref = ev.ref
    lost = sum(ref.per_instance(p) for p, layer in ref.layers.items() if layer.rnn is not None)
    short = ref.linear + ref.kinds(Kind.CONV) - ev.flops(Work.LINEAR, Work.CONV, Work.MATMUL)
    if not skips or not lost or short < lost:
        return None
    return K.RNN_OP_UNCOUNTED.finding(-lost, "skipped " + ", ".join(f"{s.name} x{s.calls}" for s in skips))


@detects(K.ADDMM_ACTIVATION_UNCOUNTED)
def _addmm_activation(ev: Evidence) -> Finding | None:
    """aten::_addmm_activation skipped once per TransformerEncoderLayer that took its fast path: each layer's
    linear1, exactly as the exact count has it (no other eager path runs the op)."""
    skips = [s for s in ev.count.skipped if not s.own_forward and bare(s.name) == "_addmm_activation"]
    layers = [
        p for p, layer in ev.ref.layers.items() if "TransformerEncoderLayer" in (layer.type_name, layer.subclass_of)
    ]
    if not skips or sum(s.calls for s in skips) != len(layers):
        return None
    lost = sum(ev.ref.per_instance(p, ("linear1",)) for p in layers)
    return K.ADDMM_ACTIVATION_UNCOUNTED.finding(
        -lost, f"skipped {skips[0].name} x{skips[0].calls}: each layer's linear1"
    )


@detects(K.LINEAR_DOUBLE_COUNTED)
def _linear_twice(ev: Evidence) -> Finding | None:
    linear = ev.flops(Work.LINEAR)
    if ev.ref.linear and linear == 2 * ev.ref.linear:
        return K.LINEAR_DOUBLE_COUNTED.finding(ev.ref.linear, "linear work is exactly twice the reference's")
    return None


def residual_evidence(ev: Evidence, residual: int) -> str:
    """FC901's evidence: where the residual sits (what of the counter's detail no work matched; else which matched
    work differs from the reference's) and why it is left."""
    gaps = {
        "linear": ev.flops(Work.LINEAR)
        - ev.ref.linear
        - sum(p.flops for p in ev.explained_by(K.HOOKED_CONTAINER_DROPS_CHILDREN)),
        "conv": ev.flops(Work.CONV) - ev.ref.kinds(Kind.CONV),
        "left over": sum(p.flops for p in ev.unexplained()),
    }
    if gaps["left over"]:  # the counter's own items that no work matched: the residual sits there
        gaps = {"left over": gaps["left over"]}
    said = ", ".join(f"{k} {v:+,}" for k, v in gaps.items() if v)
    why = f"no modelled rule of {ev.count.counter} accounts for it" + _same_size(ev.ref, abs(residual))
    return f"residual {residual:+,} FLOPs" + (f": {said}" if said else "") + f"; {why}"


def _same_size(ref: Any, flops: int) -> str:
    """Where the exact count has work or bias adds of just that size (or half of it), the first such module: a clue to
    which layer the counter ran or read otherwise."""
    by = ref.exact.by_path()
    bias: dict[str, int] = {}
    for r in ref.exact.uncounted:
        if r.kind is Work.BIAS:
            bias[r.path] = bias.get(r.path, 0) + 2 * r.elements
    for what, sizes in (("multiply-adds", by), ("bias adds", bias)):
        for path, size in sizes.items():
            for share, words in ((1, "the size of"), (2, "half")):
                if size and size == share * flops:
                    return f" ({words} the exact count's {what} at {path or 'the top'}, {size:,} FLOPs)"
    return ""


def detect(ev: Evidence) -> list[Finding]:
    """Every registered detector on the evidence, in registration order: the findings that fire."""
    found: list[Finding] = []
    for _, fn in DETECTORS:
        said = fn(ev)
        found += [said] if isinstance(said, Finding) else said or []
    return found

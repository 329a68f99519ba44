"""The causes: why counters and published numbers differ from the truth. Stable codes, one place.

Each cause is a registered object: its code, slug, what happened, the fix, the upstream report if
it is a bug, and how it is detected. Codes group by family: 1xx unit, 2xx attention, 3xx extra work
counted, 4xx layer bookkeeping, 5xx scope, 9xx unexplained. Everything else refers to a cause by its
object (`causes.FUSED_ATTENTION_UNCOUNTED`), never by its code string.

Detection, white box: a counter's detail is read as parts (`parts.Part`), each matching the
reference's work or explained by a cause; the detectors, run in the order they are registered here
(then any a plugin registers), turn the evidence into findings with exact deltas. The residual
(FC901) and the unit (FC101) close every reconciliation. Black box: the readings in blackbox.py
build their findings from these same objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flopcheck.reconciler.parts import Part, bare
from flopcheck.types import Attention, Count, Effect, Finding, Kind, Skip, Work


@dataclass(frozen=True, eq=False)
class Cause:
    """One diagnosis: code, slug, what happened, the fix, the upstream report if it is a bug; `accounts`: the
    kinds of extra work it names when a counter counts them; `attention`: what it says of attention; `effect`: what
    it does to the count against the model's multiply-adds (by default its code's family: Effect.of_code)."""

    code: str
    slug: str
    what: str
    fix: str
    upstream: str = ""
    accounts: tuple[Work, ...] = ()
    attention: Attention | None = None  # what it says of attention, if anything
    effect: Effect = Effect.UNEXPLAINED

    def finding(self, delta: int, evidence: str = "") -> Finding:
        """This cause with its exact signed effect on a number, in FLOPs."""
        return Finding(self.code, self.slug, delta, evidence)


CAUSES: dict[str, Cause] = {}


def cause(code: str, slug: str, what: str, fix: str, upstream: str = "", **how: Any) -> Cause:
    """Register a cause; a code registers once."""
    if code in CAUSES:
        raise ValueError(f"cause {code} is registered twice")
    how.setdefault("effect", Effect.of_code(code))
    CAUSES[code] = Cause(code, slug, what, fix, upstream, **how)
    return CAUSES[code]


def in_macs(flops: int, macs: int, who: str = "") -> Finding:
    """FC101: from a number in FLOPs to the same number printed in MACs (FLOPs / 2)."""
    said = f"{who} reports MACs: {macs:,} = FLOPs / 2" if who else "MACs: FLOPs / 2"
    return MAC_CONVENTION.finding(macs - flops, said)


def of(finding: Finding) -> Cause:
    """The cause a finding names."""
    return CAUSES[finding.code]


MAC_CONVENTION = cause(
    "FC101",
    "mac-convention",
    "the number is in MACs (1 per multiply-add), read as FLOPs it is half the truth",
    "multiply by 2, or label it MACs",
)
ATTENTION_UNCOUNTED = cause(
    "FC200",
    "attention-uncounted",
    "QK^T and attn@V are missing from a total (black box: the mechanism is not visible)",
    "add 4*T^2*d per layer",
    attention=Attention.MISSING,
)
FUSED_ATTENTION_UNCOUNTED = cause(
    "FC201",
    "fused-attention-uncounted",
    "a fused SDPA kernel ran and the counter has no formula for it: QK^T and attn@V count 0",
    "count on the math path (attn='math'), or use a counter that knows SDPA kernels",
    upstream="FlopCounterMode: pytorch/pytorch#195460 (no formula for "
    "aten._scaled_dot_product_flash_attention_for_cpu; fix in pytorch/pytorch#195801, not in torch 2.14.1); "
    "fvcore has no handle for aten::scaled_dot_product_attention (noted in MzeroMiko/VMamba#296); "
    "calflops does not patch F.scaled_dot_product_attention (MrYxJ/calculate-flops.pytorch#48)",
    attention=Attention.MISSING,
)
ATTN_V_MISSING = cause(
    "FC202",
    "attn-v-missing",
    "QK^T was counted but attn@V was not",
    "add 2*T^2*d per layer for attn@V",
    attention=Attention.QK_ONLY,
)
VIT_SHORTCUT = cause(
    "FC203",
    "vit-12td2-shortcut",
    "only the blocks' linear layers were counted (the ViT '12Td^2 per layer' "
    "shortcut in MACs): attention, embeddings, adaLN and the head are missing",
    "use 24Td^2 + 4T^2d per layer plus the embedding, adaLN and head terms",
)
MODULE_TYPE_NOT_HOOKED = cause(
    "FC204",
    "module-type-not-hooked",
    "a hook-based counter has no rule for the module that computes "
    "attention (timm's Attention): what its own forward() computes counts 0",
    "register a rule for the module, or use a dispatch-level counter",
    attention=Attention.MISSING,
)
QK_MISSING = cause("FC205", "qk-missing", "attn@V was counted but QK^T was not", "add 2*T^2*d per layer for QK^T")
HOOKED_CONTAINER_DROPS_CHILDREN = cause(
    "FC206",
    "hooked-container-drops-children",
    "the counter hooks a container (timm's Attention) and stops "
    "summing there, so the Linear layers inside it (qkv, proj) are computed and left out",
    "sum children of hooked modules too (ptflops: do not map timm's Attention)",
    upstream="the timm-Attention hook came in sovrasov/flops-counter.pytorch#124, which assumed the "
    "qkv and proj Linears would still be summed",
)
MATMUL_OPERATOR_UNPATCHED = cause(
    "FC207",
    "matmul-operator-unpatched",
    "explicit attention runs 'q @ k' through Tensor.__matmul__, which "
    "the counter does not patch: QK^T and attn@V count 0",
    "patch Tensor.__matmul__ too, or count at the dispatch level",
    upstream="MrYxJ/calculate-flops.pytorch#26 (q @ k^T not counted)",
    attention=Attention.MISSING,
)
BLOCKS_ONLY = cause(
    "FC208",
    "blocks-only",
    "only the transformer blocks were counted (L x (24Td^2 + 4T^2d)): patch "
    "embed, timestep MLP, adaLN and the final layer are missing",
    "add the embedding, adaLN and head terms",
)
OWN_FORWARD_LAYERS_UNCOUNTED = cause(
    "FC209",
    "own-forward-layers-uncounted",
    "a hook-based counter has no rule for a module that multiplies by its "
    "layers' weights in its own forward() (torchvision's ShiftedWindowAttention calls F.linear): that work counts 0",
    "register a rule for the module, or use a dispatch-level counter",
)
LAYER_SUBCLASS_UNHOOKED = cause(
    "FC210",
    "layer-subclass-unhooked",
    "the counter finds its rules by exact module type, so a subclass of a layer it "
    "knows (timm.layers.Linear subclasses nn.Linear) gets no rule and its work counts 0",
    "look rules up along the class's MRO, or count at the dispatch level",
)
CONV_OP_UNCOUNTED = cause(
    "FC211",
    "conv-op-uncounted",
    "the counter's list of op formulas lacks a convolution that ran (torch.profiler's has aten::conv2d, not "
    "aten::conv3d: a video model's 3D patch embedding): its multiply-adds count 0",
    "count at the dispatch level (aten.convolution covers every dimension), or add the op to the counter's formulas",
)
RNN_OP_UNCOUNTED = cause(
    "FC212",
    "rnn-op-uncounted",
    "an RNN/LSTM/GRU ran as one op per layer (aten.mkldnn_rnn_layer on CPU, aten._cudnn_rnn on a GPU, aten.lstm "
    "in a trace) that the counter has no formula for: the multiply-adds on its weight matrices count 0",
    "count at the dispatch level with a formula for the RNN op (flopcheck's exact count), or a counter with an RNN "
    "module rule (thop, ptflops' pytorch backend, torchinfo)",
)
FUSED_MHA_UNCOUNTED = cause(
    "FC213",
    "fused-mha-uncounted",
    "nn.MultiheadAttention in eval with no gradient ran as one op (aten._native_multi_head_attention, its fast "
    "path; a whole nn.TransformerEncoderLayer as aten._transformer_encoder_layer_fwd) that the counter has no "
    "formula for: its in and out projections and its attention (and the layer's feed-forward) all count 0",
    "count in train mode or with gradients on (the unfused path), or at the dispatch level with a formula for the op "
    "(flopcheck's exact count)",
    attention=Attention.MISSING,
)
ADDMM_ACTIVATION_UNCOUNTED = cause(
    "FC214",
    "addmm-activation-uncounted",
    "a linear and its activation ran as one op, aten::_addmm_activation (nn.TransformerEncoderLayer's fast path "
    "runs its first feed-forward linear so), which the counter has no formula for: that linear counts 0",
    "count at the dispatch level with a formula for the op (flopcheck's exact count), or in train mode",
)
NORM_COUNTED = cause(
    "FC301",
    "norm-counted",
    "LayerNorm/GroupNorm work was counted (a few FLOPs per element)",
    "leave norms out of a multiply-add count, or state the convention",
    accounts=(Work.NORM,),
)
ELEMENTWISE_COUNTED = cause(
    "FC302",
    "elementwise-counted",
    "elementwise work was counted: adds, multiplies, activations, softmax, attention scaling",
    "leave elementwise ops out of a multiply-add count, or state the convention",
    accounts=(Work.ELEMENTWISE, Work.SOFTMAX, Work.REDUCTION),
)
PERMUTATION_EINSUM_COUNTED = cause(
    "FC303",
    "permutation-einsum-counted",
    "an einsum that only permutes axes (DiT's unpatchify) was counted as work",
    "count an einsum's multiply-adds only when it contracts two operands",
)
BIAS_ADDS_COUNTED = cause(
    "FC304",
    "bias-adds-counted",
    "bias additions were counted",
    "leave bias adds out, or state the convention",
    accounts=(Work.BIAS,),
)
ACTIVATION_DOUBLE_COUNTED = cause(
    "FC305",
    "activation-double-counted",
    "an activation was counted twice: by its module hook and by a patched functional it calls",
    "count modules or functionals, not both",
)
EMBEDDING_LOOKUP_COUNTED = cause(
    "FC306",
    "embedding-lookup-counted",
    "a table lookup (the class-label embedding) was counted as multiply-adds",
    "a lookup is data movement: count 0",
)
DOT_PRODUCT_2N_MINUS_1 = cause(
    "FC307",
    "dot-product-2n-minus-1",
    "a dot product of length n was counted as 2n - 1 FLOPs (n multiplies, n - 1 adds), not 2n: one short per "
    "output element (calflops' RNN rule, for w_ih x and w_hh h)",
    "count 2 FLOPs per multiply-add, as for every other layer",
)
EINSUM_NUMPY_COST = cause(
    "FC308",
    "einsum-numpy-cost",
    "an einsum was counted from numpy's einsum_path printout: its cost plus 1, printed to 4 significant digits and "
    "parsed back (fvcore halves and floors it): off the exact 2 FLOPs per multiply-add by the +1 and the rounding",
    "count an einsum from its equation and shapes: 2 x the product of every index's size",
)
BIAS_ONCE_PER_CALL = cause(
    "FC309",
    "bias-once-per-call",
    "a 1-D bias given to addmm (transformers' Conv1D: torch.addmm(b, x, W)) was counted once per call, its length, "
    "not once per output row: bias adds counted, and too few of them",
    "leave bias adds out, or count one per output element",
)
UPSAMPLING_COUNTED = cause(
    "FC310",
    "upsampling-counted",
    "upsampling was counted as work: nearest at 1 per output element, bilinear at 4 (fvcore, torchprofile) or 11 "
    "(thop); interpolation has no multiply-adds of weights",
    "leave resampling out of a multiply-add count, or state the convention",
)
SHARED_MODULE_PER_PATH = cause(
    "FC311",
    "shared-module-counted-per-path",
    "one module reachable at k paths (CoaT's conv position encodings, shared by a stage's blocks) was counted k^2 "
    "times: the counter hooks it once per path, so each call counts k times, and sums it at each of the k paths",
    "sum each module object once (model.modules() does), not once per path in the tree",
)
# the counters whose total walks the module tree by path, so a shared module's count enters it once per path, and
# whether they also hook it once per path (thop's model.apply registers a hook at each; ptflops' once); a counter
# that lists a row per call (torchinfo) is read at the module's one path
SUMS_PER_PATH = {"thop_hooks": True, "ptflops_pytorch": False, "calflops_hooks": False}
PER_SAMPLE_COUNTED_PER_TOKEN = cause(
    "FC401",
    "per-sample-counted-per-token",
    "a once-per-sample layer (adaLN, timestep MLP) was counted once per token",
    "adaLN costs 12*d^2 per sample per block, not per token",
)
LINEAR_DOUBLE_COUNTED = cause(
    "FC402",
    "linear-double-counted",
    "Linear layers were counted twice (a module hook and a patched F.linear both fired)",
    "count each Linear once",
)
NAME_BASED_RULE = cause(
    "FC406",
    "name-based-rule",
    "the counter chose a layer's rule by its class name, and the name misleads: torchinfo's conv rule ('Conv' in the "
    "name: weights x output positions) applied to transformers' Conv1D, which is a Linear (x @ W + b)",
    "choose rules by what the layer computes (isinstance of a torch conv), or count at the dispatch level",
)
TRANSPOSED_CONV_OVER_OUTPUT = cause(
    "FC407",
    "transposed-conv-over-output",
    "a transposed convolution was counted as a convolution producing its output (output positions x its weights), "
    "but each input position scatters its kernel once: input positions x its weights are the multiply-adds "
    "(thop, torchinfo, torchprofile; torchprofile also takes every input channel, not those of a group)",
    "count a transposed convolution over its input positions, or at the dispatch level",
)
PER_TOKEN_COUNTED_PER_SAMPLE = cause(
    "FC403",
    "per-token-counted-per-sample",
    "a per-token layer was counted once per sample (weights x batch, not x tokens)",
    "multiply a per-token layer by the token count",
    effect=Effect.OMITS,
)
BATCH_NOT_NORMALISED = cause(
    "FC404",
    "batch-not-normalised",
    "the number covers a whole batch, not one sample",
    "divide by the batch",
    effect=Effect.SCOPE,
)
PER_SAMPLE_REPORTED = cause(
    "FC405",
    "per-sample-reported",
    "the counter divides its number by the batch of its input: it reports one "
    "sample (ptflops' pytorch backend divides by len(input[0]))",
    "multiply by the batch for the whole forward",
    effect=Effect.SCOPE,
)
CFG_INCLUDED = cause(
    "FC501",
    "cfg-included",
    "classifier-free guidance doubles the batch: the number covers 2 forwards",
    "divide by 2 for one forward",
)
STEPS_INCLUDED = cause("FC502", "steps-included", "the number covers every sampling step", "divide by the step count")
TRAINING_X3 = cause(
    "FC503", "training-x3", "the number is a training step, fwd + bwd = 3 x fwd", "divide by 3 for a forward"
)
PIXEL_SPACE = cause(
    "FC504",
    "pixel-space",
    "the model was counted on pixels (T = (H/p)^2), not on the VAE latent (T = (H/8p)^2)",
    "count on the latent the model runs on",
)
TRAINING_STEP = cause(
    "FC505",
    "training-step",
    "the number is one training step, forward + backward counted exactly (the backward "
    "is 2 x forward except where a layer needs no input gradient or its weights are frozen)",
    "subtract the exact backward for a forward",
)
UNEXPLAINED_RESIDUAL = cause(
    "FC901",
    "unexplained-residual",
    "what no cause explains",
    "look at the counter's detail; file the new behaviour as a cause",
)


# ---------------------------------------------------------------------------------------------
# White-box detection
# ---------------------------------------------------------------------------------------------


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

    def explained_by(self, c: Cause) -> list[Part]:
        """Parts this cause explains: attributed to it, or doing the extra work it accounts for."""
        return [p for p in self.parts if p.cause is c or (p.cause is None and p.work in c.accounts)]

    def unexplained(self) -> list[Part]:
        """Parts neither matching work nor explained by any cause."""
        return [p for p in self.parts if p.cause is None and p.work is None]


Detector = Callable[[Evidence], "Finding | None"]
DETECTORS: list[tuple[tuple[Cause, ...], Detector]] = []


def detects(*causes: Cause) -> Callable[[Detector], Detector]:
    """Decorator: `fn(evidence) -> Finding | None` detects these causes in a white-box reading."""

    def wrap(fn: Detector) -> Detector:
        DETECTORS.append((causes, fn))
        return fn

    return wrap


def sources(parts: list[Part], limit: int = 3) -> str:
    """The items the parts came from, the first few by name."""
    names = list(dict.fromkeys(p.source for p in parts))
    return ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


def _work_counted(c: Cause) -> Detector:
    """The detector of a cause that names work counted beyond (or short of) the reference: its parts' sum."""

    def detect(ev: Evidence) -> Finding | None:
        parts = ev.explained_by(c)
        delta = sum(p.flops for p in parts)
        return c.finding(delta, sources(parts)) if delta else None

    return detect


for _c in (
    NORM_COUNTED,
    ELEMENTWISE_COUNTED,
    PERMUTATION_EINSUM_COUNTED,
    BIAS_ADDS_COUNTED,
    ACTIVATION_DOUBLE_COUNTED,
    EMBEDDING_LOOKUP_COUNTED,
    DOT_PRODUCT_2N_MINUS_1,
    EINSUM_NUMPY_COST,
    BIAS_ONCE_PER_CALL,
    UPSAMPLING_COUNTED,
    NAME_BASED_RULE,
    TRANSPOSED_CONV_OVER_OUTPUT,
    PER_TOKEN_COUNTED_PER_SAMPLE,
    HOOKED_CONTAINER_DROPS_CHILDREN,
):
    detects(_c)(_work_counted(_c))


def _unhooked_layer_work(ev: Evidence, subclass: bool) -> tuple[int, list[str]]:
    """(FLOPs, names) of the layer work (not attention) that skipped module types did in their own forward, per the
    exact count at those modules' own paths: subclasses of a torch layer, or the other types."""
    ref, lost = ev.ref, 0
    names: list[str] = []
    modules = set(ref.norm_path.values())
    for s in ev.count.skipped:
        if not s.own_forward:
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


@detects(LAYER_SUBCLASS_UNHOOKED, OWN_FORWARD_LAYERS_UNCOUNTED)
def _own_forward_layers(ev: Evidence) -> Finding | None:
    """Layer work the counter's rules never reached: a layer subclass, or a module multiplying by its weights in its
    own forward; named only when the counter's layer work is short by at least that much."""
    ref = ev.ref
    counted = ev.flops(Work.LINEAR, Work.CONV, Work.MATMUL) + sum(
        p.flops for p in ev.explained_by(HOOKED_CONTAINER_DROPS_CHILDREN)
    )
    short = ref.linear + ref.kinds(Kind.CONV) - counted
    for subclass, c, why in (
        (True, LAYER_SUBCLASS_UNHOOKED, "a subclass of a torch layer"),
        (False, OWN_FORWARD_LAYERS_UNCOUNTED, "their own F.linear/matmul work"),
    ):
        lost, names = _unhooked_layer_work(ev, subclass)
        if lost and short >= lost:
            return c.finding(-lost, f"skipped {', '.join(names)}: {why}")
    return None


# the ops an RNN layer runs as, by bare name: oneDNN per layer, cuDNN and MIOpen whole, the traced aten.lstm
RNN_OPS = {"mkldnn_rnn_layer", "_cudnn_rnn", "miopen_rnn", "_lstm_mps", "lstm", "gru", "rnn_tanh", "rnn_relu"}


# torch's fast paths in eval with no gradient: the op a module runs whole, by bare name -> the module's class
FUSED_MHA_OPS = {
    "_native_multi_head_attention": "MultiheadAttention",
    "_transformer_encoder_layer_fwd": "TransformerEncoderLayer",
}


def fused_skips(count: Count) -> list[Skip]:
    """The counter's skips of a module's fused fast-path op (MultiheadAttention's, TransformerEncoderLayer's)."""
    return [s for s in count.skipped if not s.own_forward and bare(s.name) in FUSED_MHA_OPS]


def fused_roots(count: Count, ref: Any) -> set[str]:
    """Normalised paths of the modules whose fused op the counter skipped: what ran inside them it never saw."""
    classes = {FUSED_MHA_OPS[bare(s.name)] for s in fused_skips(count)}
    if not classes:
        return set()
    return fast_path_roots(ref, classes)


FUSED_CLASSES = frozenset(FUSED_MHA_OPS.values())


def fast_path_roots(ref: Any, classes: frozenset[str] | set[str] = FUSED_CLASSES) -> set[str]:
    """Normalised paths of the modules of these classes that torch's eval fast path runs as one op: every
    TransformerEncoderLayer, and each MultiheadAttention called as self-attention (a cross-attention takes none)."""
    fast = {p for p, (_, _, one) in ref.exact.mha.items() if one}
    return {
        ref.norm_path[p]
        for p, layer in ref.layers.items()
        if (hit := {layer.type_name, layer.subclass_of} & classes) and (hit != {"MultiheadAttention"} or p in fast)
    }


def _attention_skips(ev: Evidence) -> list[tuple[Cause, Any]]:
    """(cause, skip) for the skipped things that could have carried the attention, most specific first: a fused
    kernel, a module type whose own forward holds the attention and has no rule, matmuls no patch covered."""
    found = []
    for s in ev.count.skipped:
        if bare(s.name) in FUSED_MHA_OPS:
            continue  # named by FC213, projections and all
        if not s.own_forward and s.work is Work.ATTENTION:
            found.append((0, FUSED_ATTENTION_UNCOUNTED, s))
        elif s.own_forward and ev.ref.type_computes_attention(s.name):
            found.append((1, MODULE_TYPE_NOT_HOOKED, s))
        elif not s.own_forward and s.work is Work.MATMUL and bare(s.name) not in RNN_OPS:
            found.append((2, MATMUL_OPERATOR_UNPATCHED, s))
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


@detects(FUSED_MHA_UNCOUNTED)
def _mha(ev: Evidence) -> Finding | None:
    """MultiheadAttention's fused op skipped: its projections and attention, exactly as the exact count has them."""
    projections, score, value, skips = _fused_mha(ev)
    if not skips or not projections + score + value:
        return None
    said = ", ".join(f"{s.name} x{s.calls}" for s in skips)
    return FUSED_MHA_UNCOUNTED.finding(-(projections + score + value), f"skipped {said}: projections and attention")


@detects(QK_MISSING, FUSED_ATTENTION_UNCOUNTED, MODULE_TYPE_NOT_HOOKED, MATMUL_OPERATOR_UNPATCHED, ATTN_V_MISSING)
def _attention(ev: Evidence) -> Finding | None:
    """Name the attention the counter missed, from how much it has, how it split it, what it skipped."""
    ref = ev.ref
    _, in_score, in_value, _ = _fused_mha(ev)  # MultiheadAttention's own, named by FC213
    score, value = ref.kinds(Kind.ATTN_SCORE) - in_score, ref.kinds(Kind.ATTN_VALUE) - in_value
    got_score, got_value = ev.flops(Kind.ATTN_SCORE), ev.flops(Kind.ATTN_VALUE)
    counted = ev.flops(Work.ATTENTION) + got_score + got_value
    split = bool(ev.of_work(Kind.ATTN_SCORE, Kind.ATTN_VALUE))
    if counted == score + value:
        return None
    if split and (got_score, got_value) == (0, value) and score:
        return QK_MISSING.finding(-score, "attn@V counted, QK^T not")
    if counted == 0 and score + value:
        for c, skip in _attention_skips(ev):
            return c.finding(-(score + value), f"skipped {skip.name} x{skip.calls}")
        return None
    attention_op = [s for c, s in _attention_skips(ev) if c is FUSED_ATTENTION_UNCOUNTED]
    fused = _sdpa_attention(ref)
    if attention_op and fused and counted == score + value - fused:  # the explicit attention counted, SDPA's not
        said = f"skipped {attention_op[0].name} x{attention_op[0].calls}: the attention run by SDPA"
        return FUSED_ATTENTION_UNCOUNTED.finding(-fused, said)
    if counted == score:
        return ATTN_V_MISSING.finding(-value, "attention counted equals QK^T alone")
    if counted == value:
        return QK_MISSING.finding(-score, "attention counted equals attn@V alone")
    return None


@detects(MATMUL_OPERATOR_UNPATCHED)
def _free_matmuls(ev: Evidence) -> Finding | None:
    """Matmuls of two activations the exact count could not call attention (CaiT's talking heads mix the scores
    through a Linear between QK^T and the softmax) that the counter never saw: its skipped matmul op, and none of
    that work counted, so the exact count's whole."""
    skips = [s for s in ev.count.skipped if not s.own_forward and s.work is Work.MATMUL and bare(s.name) not in RNN_OPS]
    work = ev.ref.kinds(Kind.MATMUL)
    if not skips or not work or ev.flops(Kind.MATMUL):
        return None
    return MATMUL_OPERATOR_UNPATCHED.finding(
        -work, f"skipped {skips[0].name} x{skips[0].calls}: matmuls of activations"
    )


def _sdpa_attention(ref: Any) -> int:
    """The exact count's attention FLOPs inside F.scaled_dot_product_attention calls, less those in modules torch's
    fast path ran whole (there SDPA is inside the fused op, named by FC213)."""
    roots = fast_path_roots(ref)
    return sum(f for p, f in ref.exact.sdpa.items() if not any(p == r or p.startswith(r + ".") for r in roots))


@detects(CONV_OP_UNCOUNTED)
def _conv_ops(ev: Evidence) -> Finding | None:
    """A convolution op the counter skipped (not a module: an op with no formula in its list), named when its conv
    work is short of the reference's."""
    skips = [s for s in ev.count.skipped if not s.own_forward and s.work is Work.CONV]
    short = ev.ref.kinds(Kind.CONV) - ev.flops(Work.CONV)
    if not skips or short <= 0:
        return None
    return CONV_OP_UNCOUNTED.finding(-short, "skipped " + ", ".join(f"{s.name} x{s.calls}" for s in skips))


@detects(RNN_OP_UNCOUNTED)
def _rnn_ops(ev: Evidence) -> Finding | None:
    """An RNN op the counter skipped, named with the exact count of every recurrent layer when the counter's layer
    work is short by at least that much (a module rule that counted the layer is not short)."""
    skips = [s for s in ev.count.skipped if not s.own_forward and bare(s.name) in RNN_OPS]
    ref = ev.ref
    lost = sum(ref.per_instance(p) for p, layer in ref.layers.items() if layer.rnn is not None)
    short = ref.linear + ref.kinds(Kind.CONV) - ev.flops(Work.LINEAR, Work.CONV, Work.MATMUL)
    if not skips or not lost or short < lost:
        return None
    return RNN_OP_UNCOUNTED.finding(-lost, "skipped " + ", ".join(f"{s.name} x{s.calls}" for s in skips))


@detects(ADDMM_ACTIVATION_UNCOUNTED)
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
    return ADDMM_ACTIVATION_UNCOUNTED.finding(-lost, f"skipped {skips[0].name} x{skips[0].calls}: each layer's linear1")


@detects(LINEAR_DOUBLE_COUNTED)
def _linear_twice(ev: Evidence) -> Finding | None:
    linear = ev.flops(Work.LINEAR)
    if ev.ref.linear and linear == 2 * ev.ref.linear:
        return LINEAR_DOUBLE_COUNTED.finding(ev.ref.linear, "linear work is exactly twice the reference's")
    return None


def residual_evidence(ev: Evidence, residual: int) -> str:
    """FC901's evidence: where the residual sits (what of the counter's detail no work matched; else which matched
    work differs from the reference's) and why it is left."""
    gaps = {
        "linear": ev.flops(Work.LINEAR)
        - ev.ref.linear
        - sum(p.flops for p in ev.explained_by(HOOKED_CONTAINER_DROPS_CHILDREN)),
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
    return [f for _, fn in DETECTORS for f in [fn(ev)] if f is not None]

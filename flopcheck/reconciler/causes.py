"""The causes: why counters and published numbers differ from the truth. Stable codes, one place.

Each cause is a registered object: its code, slug, what happened, the fix, the upstream report if
it is a bug. Codes group by family: 1xx unit, 2xx attention, 3xx extra work counted, 4xx layer
bookkeeping, 5xx scope, 9xx unexplained. Everything else refers to a cause by its object
(`causes.FUSED_ATTENTION_UNCOUNTED`), never by its code string. How a cause is found is apart:
white box, its one detector in detectors.py; black box, the readings in blackbox.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flopcheck.types import Attention, Effect, Finding, Work


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
GROUPED_MM_UNCOUNTED = cause(
    "FC221",
    "grouped-mm-uncounted",
    "a mixture of experts ran its experts as one grouped matmul (aten._grouped_mm: transformers' Mixtral, each "
    "expert's tokens by its own weight) that the counter has no formula or patch for: the experts' multiply-adds "
    "count 0",
    "count at the dispatch level with a formula for aten._grouped_mm (flopcheck's exact count: 2 x rows x K x N "
    "summed over the groups), or run the experts as a loop of Linears",
)
DISTANCE_UNCOUNTED = cause(
    "FC222",
    "cdist-uncounted",
    "torch.cdist ran (aten::cdist, on the CPU aten._euclidean_dist: a matmul of [x, |x|^2, 1] by [y, 1, |y|^2]) and "
    "the counter has no formula or patch for it: its multiply-adds count 0",
    "count at the dispatch level with a formula for the distance op (flopcheck's exact count), or write the distance "
    "as a matmul the counter sees",
)
# masked attention's conventions (reconciler/masked.py): each against the exact count's dense headline, its delta from
# the count's own attention records of the calls with that mask (needed - dense, or padded - dense)
CAUSAL_AS_NEEDED = cause(
    "FC223",
    "causal-counted-as-needed",
    "causal attention was counted at the pairs its mask lets through, T(T+1)/2 of the T^2 a head (each query the keys "
    "up to it), where the dense count (the headline; PaLM's, torchtitan's) and a math kernel take all T^2",
    "state the convention: dense counts T^2 a head, needed T(T+1)/2 (flopcheck count gives both: 'attention')",
    attention=Attention.COUNTED,
    effect=Effect.CONVENTION,
)
WINDOW_AS_NEEDED = cause(
    "FC224",
    "window-counted-as-needed",
    "sliding-window attention was counted at the pairs its window lets through, sum over rows of min(i + 1, W) a head, "
    "where the dense count (the headline: the window ignored) and a math kernel take all T^2",
    "state the convention: dense counts T^2 a head, needed sum_i min(i + 1, W) (flopcheck count gives both)",
    attention=Attention.COUNTED,
    effect=Effect.CONVENTION,
)
PADDING_LEFT_OUT = cause(
    "FC225",
    "padding-left-out",
    "attention under a key-padding mask was counted over the real tokens' keys only (with causal, the keys up to each "
    "query), where the dense count (the headline: padding counted) and a math kernel take every padded key too",
    "state the convention: dense counts the padded length's T^2 a head, needed the mask's allowed pairs",
    attention=Attention.COUNTED,
    effect=Effect.CONVENTION,
)
PACKED_AS_NEEDED = cause(
    "FC226",
    "packed-counted-as-needed",
    "packed sequences (one row, a block-diagonal mask) were counted at sum s_i^2 a head (sum s_i(s_i+1)/2, causal "
    "within each), each document attending to itself, where the dense count (the headline) takes the row's T^2",
    "state the convention: dense counts (sum s_i)^2 a head, needed sum s_i^2 (flopcheck count --device cpu reads it)",
    attention=Attention.COUNTED,
    effect=Effect.CONVENTION,
)
PACKED_AS_PADDED = cause(
    "FC227",
    "packed-counted-as-padded",
    "packed sequences were counted as a padded batch, n sequences x max_len^2 a head (max_len(max_len+1)/2, causal), "
    "not the packed row's T^2 (dense, the headline) nor sum s_i^2 (needed)",
    "state the convention: padded n x max_len^2, packed dense (sum s_i)^2, needed sum s_i^2 a head",
    attention=Attention.COUNTED,
    effect=Effect.CONVENTION,
)
MASK_AS_NEEDED = cause(
    "FC228",
    "mask-counted-as-needed",
    "attention under a mask tensor of no pattern named here was counted at the pairs it lets through (its True "
    "entries), where the dense count (the headline) and a math kernel take every pair",
    "state the convention: dense counts every pair, needed the mask's allowed pairs (flopcheck count gives both)",
    attention=Attention.COUNTED,
    effect=Effect.CONVENTION,
)
EINSUM_UNPATCHED = cause(
    "FC229",
    "einsum-unpatched",
    "torch.einsum ran (MViT's relative positions); the counter patches torch.matmul, not einsum: its products count 0",
    "count at the dispatch level (an einsum runs as bmm there), or write the contraction as torch.matmul",
)
MATMUL_OP_UNCOUNTED = cause(
    "FC230",
    "matmul-op-uncounted",
    "a matmul op that no '@' runs as (torch.baddbmm, torch.addbmm: RecurrentGemma's gates, a batch of activations by "
    "a stack of per-head weights plus a bias) ran, and the counter has no formula for it (fvcore's handles, ptflops' "
    "aten formulas lack aten::baddbmm): its multiply-adds count 0",
    "count at the dispatch level with a formula for the op (flopcheck's exact count), or write the product as "
    "torch.matmul and add the bias",
)
TRACE_DROPPED_UNUSED = cause(
    "FC231",
    "trace-dropped-unused-work",
    "a counter that reads a torch.jit trace (fvcore, torchprofile) counts the traced graph, which keeps only the ops "
    "the model's outputs depend on: a layer that ran but whose result nothing returned uses (an MMDiT's last joint "
    "block: its text stream's output projection and feed-forward, QwenImage's) is never reached in the trace and "
    "counts 0; a shared layer run twice whose second result nothing uses (CogView4's last block's one feed-forward, "
    "on the text after the image) is reached on one call of its two",
    "count in eager mode (flopcheck's exact count counts what ran), or leave the unused layer out of the model",
)
# what an adapter of a traced counter gives a weighted module its trace never reached (FC231's evidence)
UNREACHED_IN_TRACE = "never reached in its jit trace: its result unused, dropped from the graph, counted 0"
# ... and a weighted module its trace reached on some calls only (a shared layer run twice, its later result unused)
PARTLY_REACHED_IN_TRACE = "calls its jit trace dropped: their result unused, dropped from the graph, counted 0"
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
    "(thop), F.grid_sample at 4 per output element (fvcore, torchprofile); interpolation has no multiply-adds of "
    "weights",
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
# what the published formulas do (flopcheck.published): each formula's conventions, against the exact count
CAUSAL_HALVED = cause(
    "FC215",
    "causal-halved",
    "the attention term is half the dense QK^T + attn@V: the causal mask's share (MaxText since PR #1988, Megatron-LM "
    "since core_v0.12; Kaplan's one 'mask' term), where a math kernel computes all T^2 scores",
    "state the convention: dense is 2x this; a causal mask needs T(T+1)/2 of the T^2 scores, not T^2/2",
)
GLU_AS_TWO_MATRICES = cause(
    "FC216",
    "glu-as-two-matrices",
    "a gated MLP (SwiGLU, GeGLU: three d x F matrices) was taken as two",
    "count 3 * 2 * d * F FLOPs per token for a gated MLP",
)
LM_HEAD_LEFT_OUT = cause(
    "FC217",
    "lm-head-left-out",
    "the LM head (2 * d * V FLOPs per token) was left out (Kaplan's non-embedding N)",
    "add 2 * d * V per token forward (6 * d * V training)",
)
ROUTER_LEFT_OUT = cause(
    "FC218",
    "router-left-out",
    "the mixture-of-experts router (2 * d * E FLOPs per token per layer) was left out",
    "add 2 * d * E per token per MoE layer forward",
)
WINDOW_COUNTED = cause(
    "FC219",
    "window-counted",
    "attention was counted over a sliding window's share, where a math kernel computes all T^2 scores",
    "state the convention: dense is T^2 per head; a window W needs sum over rows of min(i + 1, W)",
)
MLP_AS_4D = cause(
    "FC220",
    "mlp-as-4d",
    "the MLP was taken as GPT's, F = 4d (Megatron-LM's paper formula hard-wires it), not the model's width",
    "count 2 * m * d * F per token with the model's F and m",
)
NORM_PARAMS_COUNTED = cause(
    "FC312",
    "norm-params-counted",
    "norm weights were counted as matmul parameters (6 FLOPs each per token in a training 6N, 2 in a forward 2N)",
    "count only the matmuls' weights in N, or state it",
)
GQA_AS_MHA = cause(
    "FC408",
    "gqa-as-mha",
    "grouped-query attention was taken as multi-head: the K and V projections counted at H heads, not G",
    "count K and V at G * head_dim columns",
)
HEAD_DIM_AS_D_OVER_H = cause(
    "FC411",
    "head-dim-as-d-over-h",
    "the attention head dim was taken as d/H (q as d wide), where the model's head_dim is its own (Gemma 2, Qwen3, "
    "GPT-OSS): QK^T and attn@V, and the projections the formula sizes by it, counted at the wrong width",
    "count attention at H * head_dim and the q, k, v, o projections at their real widths",
)
ALL_EXPERTS_COUNTED = cause(
    "FC409",
    "all-experts-counted",
    "every expert of a mixture of experts was counted, not the top-k each token is routed to",
    "count k of E experts' parameters per token (N_active)",
)
BACKWARD_AS_2X = cause(
    "FC410",
    "backward-as-2x-forward",
    "the backward was taken as exactly 2 x forward (the 3x rule); the exact backward skips gradients nothing needs "
    "(the input's, a frozen weight's)",
    "count the training step (flopcheck count --training), or state the 3x rule",
)
CONTEXT_NOT_SEQUENCE = cause(
    "FC506",
    "context-not-sequence",
    "attention was counted at the model's context length (nanoGPT's block_size), not the sequence's tokens",
    "use the tokens the step runs at",
)
RECOMPUTE_COUNTED = cause(
    "FC507",
    "recompute-counted",
    "activation recomputation was counted (Megatron-LM's paper: 4 x forward for the layers): hardware FLOPs, not "
    "the model FLOPs MFU is defined on",
    "count 3 x forward for model FLOPs (MFU); keep the recompute for HFU",
)
REPARAMETERIZED = cause(
    "FC508",
    "reparameterized",
    "the model was counted fused for inference (timm's reparameterize_model, as timm's benchmark runs it: RepVGG's "
    "3x3 + 1x1 + identity branches as one 3x3), not with the train-time branches it is built with",
    "count the model as built for its training-time work; say 'fused' for the deployed model's",
)
UNEXPLAINED_RESIDUAL = cause(
    "FC901",
    "unexplained-residual",
    "what no cause explains",
    "look at the counter's detail; file the new behaviour as a cause",
)
COUNTED_NOTHING = cause(
    "FC902",
    "counted-nothing",
    "the counter counted nothing (0) of a model that does multiply-adds: no convention of it, every op with work it "
    "met was outside its formulas, patches or hooks (its own skip list, the evidence, says which)",
    "use a counter that covers those ops (flopcheck's exact count covers every aten op with multiply-adds)",
    effect=Effect.OMITS,
)

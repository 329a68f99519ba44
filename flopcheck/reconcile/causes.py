"""The causes: why counters and published numbers differ from the truth. Stable codes, one line each.

A registry: each cause has a code, a slug, what happened and the fix. Codes group by family:
1xx unit, 2xx attention, 3xx extra work counted, 4xx layer bookkeeping, 5xx scope, 9xx unexplained.
A cause whose origin is an upstream bug says so in `upstream`, so it can be retired when it ships.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    """One diagnosis: code, slug, what happened, the fix, and the upstream report if it is a bug."""

    code: str
    slug: str
    what: str
    fix: str
    upstream: str = ""


CAUSES: dict[str, Cause] = {}


def cause(code: str, slug: str, what: str, fix: str, upstream: str = "") -> Cause:
    """Register a cause; a code registers once."""
    if code in CAUSES:
        raise ValueError(f"cause {code} is registered twice")
    CAUSES[code] = Cause(code, slug, what, fix, upstream)
    return CAUSES[code]


cause("FC101", "mac-convention", "the number is in MACs (1 per multiply-add), read as FLOPs it is half the truth",
      "multiply by 2, or label it MACs")
cause("FC200", "attention-uncounted", "QK^T and attn@V are missing from a total (black box: the mechanism is not "
      "visible)", "add 4*T^2*d per layer")
cause("FC201", "fused-attention-uncounted", "a fused SDPA kernel ran and the counter has no formula for it: "
      "QK^T and attn@V count 0", "count on the math path (attn='math'), or use a counter that knows SDPA kernels",
      upstream="FlopCounterMode: pytorch/pytorch#195460 (no formula for "
               "aten._scaled_dot_product_flash_attention_for_cpu; fix in pytorch/pytorch#195801, not in torch 2.14.1); "
               "fvcore has no handle for aten::scaled_dot_product_attention (noted in MzeroMiko/VMamba#296); "
               "calflops does not patch F.scaled_dot_product_attention (MrYxJ/calculate-flops.pytorch#48)")
cause("FC202", "attn-v-missing", "QK^T was counted but attn@V was not", "add 2*T^2*d per layer for attn@V")
cause("FC203", "vit-12td2-shortcut", "only the blocks' linear layers were counted (the ViT '12Td^2 per layer' "
      "shortcut in MACs): attention, embeddings, adaLN and the head are missing",
      "use 24Td^2 + 4T^2d per layer plus the embedding, adaLN and head terms")
cause("FC204", "module-type-not-hooked", "a hook-based counter has no rule for the module that computes "
      "attention (timm's Attention): what its own forward() computes counts 0",
      "register a rule for the module, or use a dispatch-level counter")
cause("FC205", "qk-missing", "attn@V was counted but QK^T was not", "add 2*T^2*d per layer for QK^T")
cause("FC206", "hooked-container-drops-children", "the counter hooks a container (timm's Attention) and stops "
      "summing there, so the Linear layers inside it (qkv, proj) are computed and left out",
      "sum children of hooked modules too (ptflops: do not map timm's Attention)",
      upstream="the timm-Attention hook came in sovrasov/flops-counter.pytorch#124, which assumed the "
               "qkv and proj Linears would still be summed")
cause("FC207", "matmul-operator-unpatched", "explicit attention runs 'q @ k' through Tensor.__matmul__, which "
      "the counter does not patch: QK^T and attn@V count 0", "patch Tensor.__matmul__ too, or count at the "
      "dispatch level", upstream="MrYxJ/calculate-flops.pytorch#26 (q @ k^T not counted)")
cause("FC208", "blocks-only", "only the transformer blocks were counted (L x (24Td^2 + 4T^2d)): patch "
      "embed, timestep MLP, adaLN and the final layer are missing", "add the embedding, adaLN and head terms")
cause("FC301", "norm-counted", "LayerNorm/GroupNorm work was counted (a few FLOPs per element)",
      "leave norms out of a multiply-add count, or state the convention")
cause("FC302", "elementwise-counted", "elementwise work was counted: adds, multiplies, activations, softmax, "
      "attention scaling", "leave elementwise ops out of a multiply-add count, or state the convention")
cause("FC303", "permutation-einsum-counted", "an einsum that only permutes axes (DiT's unpatchify) was counted "
      "as work", "count an einsum's multiply-adds only when it contracts two operands")
cause("FC304", "bias-adds-counted", "bias additions were counted", "leave bias adds out, or state the convention")
cause("FC305", "activation-double-counted", "an activation was counted twice: by its module hook and by a "
      "patched functional it calls", "count modules or functionals, not both")
cause("FC306", "embedding-lookup-counted", "a table lookup (the class-label embedding) was counted as "
      "multiply-adds", "a lookup is data movement: count 0")
cause("FC401", "per-sample-counted-per-token", "a once-per-sample layer (adaLN, timestep MLP) was counted once "
      "per token", "adaLN costs 12*d^2 per sample per block, not per token")
cause("FC402", "linear-double-counted", "Linear layers were counted twice (a module hook and a patched F.linear "
      "both fired)", "count each Linear once")
cause("FC403", "per-token-counted-per-sample", "a per-token layer was counted once per sample "
      "(weights x batch, not x tokens)", "multiply a per-token layer by the token count")
cause("FC404", "batch-not-normalised", "the number covers a whole batch, not one sample", "divide by the batch")
cause("FC501", "cfg-included", "classifier-free guidance doubles the batch: the number covers 2 forwards",
      "divide by 2 for one forward")
cause("FC502", "steps-included", "the number covers every sampling step", "divide by the step count")
cause("FC503", "training-x3", "the number is a training step, fwd + bwd = 3 x fwd", "divide by 3 for a forward")
cause("FC504", "pixel-space", "the model was counted on pixels (T = (H/p)^2), not on the VAE latent "
      "(T = (H/8p)^2)", "count on the latent the model runs on")
cause("FC901", "unexplained-residual", "what no cause explains", "look at the counter's detail; file the new "
      "behaviour as a cause")

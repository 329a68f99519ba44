"""The causes several formulas share, each an exact delta in FLOPs against the exact count, for a step of s.n tokens;
`x` is 3 for a training formula (forward + backward, 2 x forward, as every formula here takes it) and 1 for one
forward."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flopcheck.published import Exact, Found
from flopcheck.published.structure import Structure
from flopcheck.reconciler import causes as K


def _found(cause: K.Cause, delta: int, evidence: str) -> list[Found]:
    return [(cause, delta, evidence)] if delta else []


def norms_in_n(s: Structure, x: int, params: int | None = None) -> list[Found]:
    """FC312: norm weights taken as matmul parameters, 2x per token each: + 2x * n * params."""
    p = s.n_norm if params is None else params
    return _found(K.NORM_PARAMS_COUNTED, 2 * x * s.n * p, f"{p:,} norm parameters in N, {2 * x} FLOPs per token each")


def biases_in_n(s: Structure, x: int, params: int | None = None) -> list[Found]:
    """FC304: additive parameters taken as matmul parameters, 2x per token each: + 2x * n * params; by default
    every matmul bias a token runs (the router's, its top-k experts' of the experts' k/E) and the attention-sink
    logits (added to the scores, no multiply)."""
    if params is not None:
        p, said = params, f"{params:,} bias parameters"
    else:
        p = s.n_bias + s.n_bias_router + s.n_bias_experts * s.k // s.E + s.n_sinks
        said = f"{p:,} bias parameters" + f" (with {s.n_sinks:,} attention-sink logits)" * bool(s.n_sinks)
    return _found(K.BIAS_ADDS_COUNTED, 2 * x * s.n * p, f"{said} in N, {2 * x} FLOPs per token each")


def embedding_in_n(s: Structure, x: int, params: int) -> list[Found]:
    """FC306: embedding tables taken as matmul parameters: + 2x * n * params."""
    return _found(
        K.EMBEDDING_LOOKUP_COUNTED,
        2 * x * s.n * params,
        f"{params:,} embedding parameters in N (a lookup, no multiply-adds), {2 * x} FLOPs per token each",
    )


def all_experts(s: Structure, x: int) -> list[Found]:
    """FC409: every expert's parameters in N: + 2x * n * n_experts * (E - k) / E."""
    idle = s.n_experts * (s.E - s.k) // s.E if s.moe else 0
    return _found(
        K.ALL_EXPERTS_COUNTED,
        2 * x * s.n * idle,
        f"{s.E} experts counted where each token runs {s.k}: {idle:,} idle expert parameters per token",
    )


def no_attention(s: Structure, x: int, e: Exact) -> list[Found]:
    """FC200: no attention term: - x * the exact QK^T + attn@V."""
    exact = f"no attention term; the exact QK^T + attn@V: {e.attention:,}"
    return _found(K.ATTENTION_UNCOUNTED, -x * e.attention, exact)


def causal_halved(s: Structure, x: int, e: Exact, how: str) -> list[Found]:
    """FC215: attention at half the dense: - x * the exact QK^T + attn@V / 2."""
    return _found(K.CAUSAL_HALVED, -x * e.attention // 2, f"{how}; the exact (dense) QK^T + attn@V: {e.attention:,}")


def lm_head_out(s: Structure, x: int) -> list[Found]:
    """FC217: the LM head left out: - x * 2 * n * d * V."""
    return _found(K.LM_HEAD_LEFT_OUT, -x * 2 * s.n * s.d * s.V, f"2 * d * V = {2 * s.d * s.V:,} per token forward")


def gqa_as_mha(s: Structure, x: int) -> list[Found]:
    """FC408: K and V at H heads: + x * 4 * n * L * d * (q - kv)."""
    return _found(
        K.GQA_AS_MHA,
        x * 4 * s.n * s.L * s.d * (s.q - s.kv),
        f"{s.G} kv heads taken as {s.H}: K and V at {s.q:,} columns, not {s.kv:,}",
    )


def glu_as_two(s: Structure, x: int) -> list[Found]:
    """FC216: a gated MLP as two matrices: - x * 2 * n * L * d * F * (m - 2)."""
    return _found(
        K.GLU_AS_TWO_MATRICES,
        -x * 2 * s.n * s.L * s.d * s.F * (s.m - 2),
        f"{s.m} d x F matrices taken as 2 (F = {s.F:,})",
    )


def softmax(s: Structure, x: int, per_score: int = 3) -> list[Found]:
    """FC302: softmax counted, per_score FLOPs per score: + x * per_score * B * L * H * T^2."""
    return _found(
        K.ELEMENTWISE_COUNTED,
        x * per_score * s.B * s.L * s.H * s.T * s.T,
        f"softmax at {per_score} FLOPs per score ({s.H} heads x T^2 per layer)",
    )


def window(s: Structure, x: int, counted: int, e: Exact, share: int, how: str) -> list[Found]:
    """FC219: attention counted over a window on the windowed layers only: counted (x-scaled) - x * those layers'
    share of the exact (dense) QK^T + attn@V, `share` halves of it (2: dense, 1: the causal half already named)."""
    dense = x * e.attention * share * s.L_window // (2 * s.L) if s.L else 0
    windows = sorted({w for w in s.layer_windows if w and w < s.T})
    said = f"{how} on {s.L_window} of {s.L} layers (window {', '.join(f'{w:,}' for w in windows)} of {s.T:,} tokens)"
    return _found(K.WINDOW_COUNTED, counted - dense, said)


def windowed(s: Structure) -> list[int]:
    """The windows shorter than the sequence, one per windowed layer."""
    return [w for w in s.layer_windows if w and w < s.T]


def router_out(s: Structure, x: int) -> list[Found]:
    """FC218: the router left out: - x * 2 * n * L_moe * d * E."""
    return _found(
        K.ROUTER_LEFT_OUT,
        -x * 2 * s.n * s.L_moe * s.d * s.E,
        f"2 * d * E = {2 * s.d * s.E:,} per token on each of {s.L_moe} MoE layers",
    )


@dataclass(frozen=True)
class DOverH:
    """How a formula's source takes the head dim as d/H: its line, which widths it sizes by it (q: H heads, o: H
    heads, kv: `kv` heads each for K and V, 0 when the formula reads them from the parameters), how many halves of
    the dense QK^T + attn@V its attention term is (2 dense, 1 causal halved), integer division or exact, and the
    model families it applies to (() every one)."""

    line: str
    q: bool = False
    o: bool = False
    kv: str = ""  # "G" or "H": the heads K and V are sized at (after FC408 for a formula that takes G as H)
    core: int = 2
    floor: bool = False
    families: tuple[str, ...] = ()


def head_dim_as_d_over_h(s: Structure, x: int, how: DOverH) -> list[Found]:
    """FC411: the head dim taken as h = d/H, not dh: x * (2 n L d (H [q] + 2 kv + H [o]) + core * 2 B L T^2 H)
    * (h - dh); none with MLA (its head dims are its own) or where h = dh."""
    if s.mla or not s.H or how.families and s.family not in how.families:
        return []
    head = Fraction(s.d // s.H) if how.floor else Fraction(s.d, s.H)
    step = head - s.dh
    kv = {"G": s.G, "H": s.H, "": 0}[how.kv]
    widths = s.H * how.q + 2 * kv + s.H * how.o
    delta = x * (2 * s.n * s.L * s.d * widths + how.core * 2 * s.B * s.L * s.T * s.T * s.H) * step
    sized = [w for w, on in (("q", how.q), ("k, v", bool(kv)), ("o", how.o)) if on]
    said = f"{how.line}: head dim d/H = {s.d:,}/{s.H} = {head} where the model's is {s.dh}, attention at that width"
    return _found(K.HEAD_DIM_AS_D_OVER_H, int(delta), said + f", {', '.join(sized)} sized by it" * bool(sized))


# the formulas whose source takes the head dim as d/H, each with what its line does (read at the commit its module
# cites: nanoGPT model.py L, H, Q, T = ..., cfg.n_embd//cfg.n_head; Levanter flop_utils.py head_dim = hidden_dim /
# num_heads; torchtitan train.py model_config.dim // model_config.n_heads; NeMo flops_formulas.py qwen3/llama3)
D_OVER_H: dict[str, DOverH] = {
    "nanogpt": DOverH("nanoGPT estimate_mfu takes Q = n_embd // n_head", floor=True),
    "torchtitan-2024": DOverH("torchtitan get_num_flop_per_token takes q = dim // n_heads", floor=True),
    "levanter": DOverH("Levanter lm_flops_per_token takes head_dim = hidden_dim / num_heads", q=True, o=True, kv="G"),
    "megatron-paper": DOverH(
        "the Megatron paper's 96 B s l h^2 sizes q, k, v, o and QK^T by the hidden size h", q=True, o=True, kv="H"
    ),
    "nemo": DOverH(
        "NeMo's formula sizes q and o as hs x hs, K and V as query_groups / attention_heads x hs^2",
        q=True,
        o=True,
        kv="G",
        core=1,
        families=("llama", "mixtral", "qwen3", "qwen3_moe"),
    ),
}


def head_dim_taken(name: str, s: Structure, x: int) -> list[Found]:
    """FC411 where the formula `name`'s source takes the head dim as d/H (D_OVER_H); none elsewhere."""
    how = D_OVER_H.get(name)
    return head_dim_as_d_over_h(s, x, how) if how else []

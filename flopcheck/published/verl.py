"""verl's `FlopsCounter` (verl/utils/flops_counter.py at b178a3cd): training FLOPs by the config's model_type
(`ESTIMATE_FUNC`): llama, qwen2, qwen3, mistral `_estimate_qwen2_flops` (6 x (L (3 d F + d (q + 2kv + q)) + 2 V d)
per token + 6 T^2 dh H L per sequence: attention at half the dense); qwen2_moe, qwen3_moe
`_estimate_qwen2_moe_flops` (the MLP as d k F 3 + the gate d E); deepseek_v3 `_estimate_deepseek_v3_flops` (MLA,
dense-first layers, (k + shared) experts, attention causal halved); gpt_oss `_estimate_gpt_oss_flops` (sliding layers
at T min(T, W)). Any other model_type is `_estimate_unknown_flops`: 0."""

from __future__ import annotations

from collections.abc import Callable

from flopcheck.published import LM, Exact, Formula, Found, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure

SOURCE = "volcengine/verl verl/utils/flops_counter.py at b178a3cd"


def attn_linear(s: Structure) -> int:
    """d (q + k + v + H dh) per layer."""
    return s.d * (2 * s.q + 2 * s.kv)


def qwen2(s: Structure) -> int:
    """6 n ((3 d F + attn_linear) L + 2 V d) + 6 B T^2 dh H L."""
    dense = (3 * s.d * s.F + attn_linear(s)) * s.L + 2 * s.V * s.d
    return 6 * dense * s.n + 6 * s.B * s.T * s.T * s.dh * s.H * s.L


def qwen2_moe(s: Structure) -> int:
    """6 n ((d k F 3 + d E + attn_linear) L + 2 V d) + 6 B T^2 dh H L."""
    dense = (s.d * s.k * s.F * 3 + s.d * s.E + attn_linear(s)) * s.L + 2 * s.V * s.d
    return 6 * dense * s.n + 6 * s.B * s.T * s.T * s.dh * s.H * s.L


def deepseek_v3(s: Structure) -> int:
    """6 n (L_moe (d E + d F (k + shared) 3 + mla) + L_dense (3 d F_dense + mla) + 2 V d) + 3 B T^2 L (qk + v) H;
    mla = d q_lora + H (nope + rope) q_lora + d (kv_lora + rope) + H (nope + v) kv_lora + H v d."""
    d, H = s.d, s.H
    mla = d * s.q_lora + H * s.dh_qk * s.q_lora if s.q_lora else d * H * s.dh_qk
    mla += d * (s.kv_lora + s.dh_rope) + H * (s.dh_nope + s.dh_v) * s.kv_lora + H * s.dh_v * d
    shared = s.F_shared // s.F
    moe = (d * s.E + d * s.F * (s.k + shared) * 3 + mla) * s.L_moe + (d * s.F_dense * 3 + mla) * s.L_dense
    return 6 * (moe + 2 * s.V * d) * s.n + 3 * s.B * s.T * s.T * s.L * (s.dh_qk + s.dh_v) * H


def gpt_oss(s: Structure) -> int:
    """6 n ((d E + d F 3 k + attn_linear) L + 2 V d) + 6 dh H B sum over layers T min(T, W) (T^2 when global)."""
    dense = (s.d * s.E + s.d * s.F * 3 * s.k + attn_linear(s)) * s.L + 2 * s.V * s.d
    pairs = sum(s.T * (min(s.T, w) if w else s.T) for w in s.layer_windows)
    return 6 * dense * s.n + 6 * s.B * pairs * s.dh * s.H


ESTIMATE: dict[str, Callable[[Structure], int]] = {
    "llama": qwen2,
    "qwen2": qwen2,
    "qwen3": qwen2,
    "mistral": qwen2,
    "qwen2_moe": qwen2_moe,
    "qwen3_moe": qwen2_moe,
    "deepseek_v3": deepseek_v3,
    "gpt_oss": gpt_oss,
}


def value(s: Structure) -> int:
    """The model_type's estimate (ESTIMATE)."""
    return ESTIMATE[s.family](s)


def causes(s: Structure, e: Exact) -> list[Found]:
    """The input embedding as a V x d matmul; attention at half the dense (6 T^2 dh H per layer: QK^T and attn@V at 3
    x 2 x T^2 / 2 each); GPT-OSS's sliding layers at T min(T, W)."""
    found = c.embedding_in_n(s, 3, s.V * s.d) + c.causal_halved(s, 3, e, "'6 * seqlen^2 * head_dim * heads'")
    if s.family == "gpt_oss" and s.L_window:
        local = 6 * s.B * s.T * sum(c.windowed(s)) * s.dh * s.H
        found += c.window(s, 3, local, e, 1, "6 T min(T, W) dh H per sliding layer")
    return found


def refuses(s: Structure) -> str:
    """verl estimates only the model_types in ESTIMATE_FUNC; any other gets 0."""
    if s.family in ESTIMATE:
        return ""
    return f"verl has no estimate for model_type {s.family or '?'!r}: its FlopsCounter logs 0 (_estimate_unknown_flops)"


register(
    Formula(
        "verl",
        "verl FlopsCounter",
        SOURCE,
        training=True,
        per="per batch (sum over sequences)",
        conventions="6 x (attention, MLP, gate and 2 V d: the input embedding as a matmul) per token; attention at "
        "half the dense (GPT-OSS's sliding layers at T min(T, W) of it); no norms or biases",
        kinds=(LM,),
        value=value,
        causes=causes,
        refuses=refuses,
    )
)

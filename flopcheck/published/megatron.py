"""Megatron-LM's formulas: the paper's (Narayanan et al. 2021, appendix "Floating-point operations": 96 B s l h^2
(1 + s/6h + V/16lh), full activation recomputation) and the code's `num_floating_point_operations`
(megatron/training/training.py) before core_v0.12 (attention dense) and since (causal halved, commit 8873b55d;
transcribed at d98e8a64: `transformer_flops`, its dense layers at ffn_hidden_size, MoE layers at
moe_ffn_hidden_size x topk + the shared expert, multi-latent attention's q_term, kv lora, rope and o terms with
their norms' "+ 1", attention at H (qk + rope) / 2 + H v / 2; no router term)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from flopcheck.published import LM, Applies, Exact, Formula, Found, no_experts, no_mla, refusing, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure
from flopcheck.reconciler import causes as K

CODE = "NVIDIA/Megatron-LM megatron/training/training.py num_floating_point_operations"


def paper(s: Structure) -> int:
    """96 B s l h^2 (1 + s / 6h + V / 16 l h) = 96 B s l h^2 + 16 B s^2 l h + 6 B s h V."""
    B, T, L, d = s.B, s.T, s.L, s.d
    return 96 * B * T * L * d * d + 16 * B * T * T * L * d + 6 * B * T * d * s.V


def paper_causes(s: Structure, e: Exact) -> list[Found]:
    """A fourth pass of the layers (recompute); q, k, v, o as d x d; the MLP as two d x 4d matrices."""
    recompute = 24 * s.n * s.L * s.d * s.d + 4 * s.B * s.L * s.T * s.T * s.d
    width = 3 * s.n * s.L * (16 * s.d * s.d - 4 * s.d * s.F)
    return [
        (K.RECOMPUTE_COUNTED, recompute, "4 x forward for the layers (their forward again in the backward)"),
        *c.gqa_as_mha(s, 3),
        *c.glu_as_two(s, 3),
        *([(K.MLP_AS_4D, width, f"F taken as 4d = {4 * s.d:,}, not {s.F:,}")] if width else []),
    ]


def code_v0_9(s: Structure) -> int:
    """12 B s L d^2 [(1 + G/H + s/d) (q/d) + (F/d) k (3/2 if gated) + V / (2 L d)]."""
    gated = Fraction(3, 2) if s.m == 3 else 1
    d = s.d
    bracket = (1 + Fraction(s.G, s.H) + Fraction(s.T, d)) * Fraction(s.q, d)
    bracket += Fraction(s.F, d) * s.k * gated + Fraction(s.V, 2 * s.L * d)
    return int(12 * s.B * s.T * s.L * d * d * bracket)


def code_v0_9_causes(s: Structure, e: Exact) -> list[Found]:
    """The router left out."""
    return c.router_out(s, 3)


def mlp_width(s: Structure) -> int:
    """Sum over layers of the MLP widths a token runs: dense ffn_hidden_size x num_dense_layers; MoE layers
    (moe_ffn_hidden_size x topk + shared_expert_ffn_hidden_size) x num_moe_layers."""
    if not s.moe:
        return s.F * s.L
    return (s.F_dense or s.F) * s.L_dense + (s.F * s.k + s.F_shared) * s.L_moe


def attention_linear(s: Structure) -> int:
    """One layer's attention projections per token (x 6 for the step): MLA q_term + kv_lora (d + H (qk + v) + 1)
    + d rope + H v d, q_term = q_lora (d + H (qk + rope) + 1) (d H (qk + rope) without q lora); else d (q + 2 kv)
    + q d."""
    if not s.mla:
        return s.d * (s.q + 2 * s.kv) + s.q * s.d
    H, d = s.H, s.d
    q_term = s.q_lora * (d + H * s.dh_qk + 1) if s.q_lora else d * H * s.dh_qk
    return q_term + s.kv_lora * (d + H * (s.dh_nope + s.dh_v) + 1) + d * s.dh_rope + H * s.dh_v * d


def core(s: Structure) -> int:
    """One layer's attention per (token x sequence), x 6, causal halved: MLA 3 H (qk + rope + v); else 6 q."""
    return 3 * s.H * (s.dh_qk + s.dh_v) if s.mla else 6 * s.q


def code(s: Structure) -> int:
    """n [6 d m sum(F) + 6 L attention_linear + 6 d V] + B s^2 L core (causal: half of the dense)."""
    per_token = 6 * s.d * s.m * mlp_width(s) + 6 * s.L * attention_linear(s) + 6 * s.d * s.V
    return s.n * per_token + s.B * s.T * s.T * s.L * core(s)


def code_causes(s: Structure, e: Exact) -> list[Found]:
    """Causal attention halved; the router left out; MLA's q and kv norms in its "+ 1" terms."""
    norms = c.norms_in_n(s, 3, s.L * (s.q_lora + s.kv_lora)) if s.mla else []
    return [*c.causal_halved(s, 3, e, "'causal mask (only half of the mask is non-zero)'"), *c.router_out(s, 3), *norms]


def no_mixed_mlp(name: str) -> Callable[[Structure], str]:
    """A refusal for a formula with one MLP width for every layer (no dense-first layers, no shared expert)."""
    return lambda s: (
        f"{name} has one MLP width for every layer: no term for {s.L_dense} dense-first layers or shared experts"
        * bool(s.moe and (s.L_dense or s.F_shared))
    )


COMMON = Applies(kinds=(LM,), training=True)
PER = "per step (B sequences)"
register(
    Formula(
        "megatron-paper",
        "Megatron-LM paper 96Bslh^2(1 + s/6h + V/16lh)",
        "Narayanan et al. 2021 (arXiv:2104.04473), appendix 'Floating-point operations'",
        conventions="4 x forward for the layers (activation recomputation), 3 x for the logits; q, k, v, o as d x d "
        "(multi-head); the MLP as GPT's two d x 4d; attention dense",
        value=paper,
        causes=paper_causes,
        refuses=refusing(no_experts("megatron-paper"), no_mla("megatron-paper")),
        per=PER,
        **COMMON,
    )
)
register(
    Formula(
        "megatron-v0.9",
        "Megatron-LM num_floating_point_operations (core_v0.9-v0.11)",
        f"{CODE} at core_v0.9.0 (1afee592)",
        conventions="3 x forward; GQA and SwiGLU handled; attention dense; the LM head counted; top-k experts, the "
        "router left out",
        value=code_v0_9,
        causes=code_v0_9_causes,
        refuses=refusing(no_mla("megatron-v0.9"), no_mixed_mlp("megatron-v0.9")),
        per=PER,
        **COMMON,
    )
)
register(
    Formula(
        "megatron",
        "Megatron-LM num_floating_point_operations (core_v0.12 on)",
        f"{CODE} since commit 8873b55d (core_v0.12.0)",
        conventions="3 x forward; GQA, MLA (its norms as '+ 1') and SwiGLU handled; causal attention halved; the LM "
        "head counted; top-k experts, shared experts and dense-first layers, the router left out; no MTP layers "
        "(the model runs none)",
        value=code,
        causes=code_causes,
        per=PER,
        **COMMON,
    )
)

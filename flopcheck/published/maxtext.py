"""MaxText's `calculate_tflops_training_per_device` (src/maxtext/utils/maxtext_utils.py at e591f30c): per device per
step, 3 x (ffn + qkv + proj) per layer + 3 x the unembedding + 3 x causal attention, halved since PR #1988
(commit a4c01726, 2025-07-18). Per model as its decoder block defines it: DeepSeek's dense-first layers, shared and
routed experts at moe_mlp_dim and the gate (`calculate_routed_and_shared_ffn_tflops_per_device`); MLA's q and kv
low-rank projections and attention at (qk_nope + qk_rope + v) / 2 (`calculate_mla_tflops_per_device`); Gemma 2's
local/global pairs and GPT-OSS's alternating layers, the local ones at 4 b (T W - W^2/2) H dh
(`calculate_gemma2_tflops_training_per_device`, `calculate_mixed_attention_model_tflops_training_per_device`)."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure


def layer_attention(s: Structure, w: int) -> int:
    """One layer's attention, forward: causal 2 b T^2 H dh; a window W < T: 4 b (T W - W^2 / 2) H dh."""
    if w and w < s.T:
        return s.B * (4 * s.T * w - 2 * w * w) * s.q
    return 2 * s.B * s.T * s.T * s.q


def ffn(s: Structure) -> int:
    """Every layer's MLP: dense 2 n F d m; MoE 2 n d E (gate) + 2 n F d m k + 2 n F_shared d m; DeepSeek's first
    L_dense layers dense at F_dense."""
    n, d, m = s.n, s.d, s.m
    if not s.moe:
        return 2 * n * s.F * d * m * s.L
    moe = 2 * n * d * s.E + 2 * n * s.F * d * m * s.k + 2 * n * s.F_shared * d * m
    return 2 * n * (s.F_dense or s.F) * d * m * s.L_dense + moe * s.L_moe


def mla(s: Structure) -> tuple[int, int, int]:
    """(qkv, attention, proj) per layer, forward: q 2 n (d q_lora + q_lora H (nope + rope)) (2 n d H (nope + rope)
    without q lora), kv 2 n (d (kv_lora + rope) + kv_lora H (nope + v)); attention 2 n T H (nope + rope + v) / 2;
    proj 2 n d H v."""
    n, d, H = s.n, s.d, s.H
    q = 2 * n * (d * s.q_lora + s.q_lora * H * s.dh_qk) if s.q_lora else 2 * n * d * H * s.dh_qk
    kv = 2 * n * (d * (s.kv_lora + s.dh_rope) + s.kv_lora * H * (s.dh_nope + s.dh_v))
    return q + kv, n * s.T * H * (s.dh_qk + s.dh_v), 2 * n * d * H * s.dh_v


def value(s: Structure) -> int:
    """3 * (ffn + (qkv + proj) * L + emb) + 3 * attention over the layers; emb = 2 n d V."""
    n, d = s.n, s.d
    if s.mla:
        qkv, attention, proj = mla(s)
        attention *= s.L
    else:
        qkv, proj = 2 * n * d * (s.H + 2 * s.G) * s.dh, 2 * n * d * s.H * s.dh
        attention = sum(layer_attention(s, w) for w in s.layer_windows)
    return 3 * (ffn(s) + (qkv + proj) * s.L + 2 * n * d * s.V) + 3 * attention


def causes(s: Structure, e: Exact) -> list[Found]:
    """Causal attention halved; a window's share on the windowed layers only."""
    found = c.causal_halved(s, 3, e, "'attn_causal = 4 b T^2 H dh / 2'")
    if s.L_window and not s.mla:
        local = 3 * sum(layer_attention(s, w) for w in c.windowed(s))
        found += c.window(s, 3, local, e, 1, "4 b (T W - W^2/2) H dh per local layer")
    return found


register(
    Formula(
        "maxtext",
        "MaxText calculate_tflops_training_per_device",
        "AI-Hypercomputer/maxtext src/maxtext/utils/maxtext_utils.py at e591f30c",
        training=True,
        per="per step (per device)",
        conventions="3 x forward; GQA, MLA and gated MLPs handled; causal attention halved, a window exact on its "
        "layers; routed experts at top-k, shared experts, dense-first layers, the router and the unembedding "
        "counted; no input embedding, norms or biases",
        kinds=(LM,),
        value=value,
        causes=causes,
    )
)

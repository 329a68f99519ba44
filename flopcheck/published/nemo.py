"""NVIDIA NeMo's per-model training FLOPs (nemo/utils/flops_formulas.py at 8cfedd72): `llama2`/`llama3`, `mixtral`,
`qwen3`, `deepseekv3` and `gpt_oss`, each for one global batch (fwd + bwd, 3 x 2 per multiply-add). The Llama and
Mixtral ones take q and o as d x d (12 + 12 G/H + 18 F/d (x top-k) + 6 T/d + 6 V/(L d)) per B T L d^2; Qwen3's
takes q as d too; DeepSeek-V3's counts MLA's projections without their norms and no router; GPT-OSS's counts each
attention at the pairs its mask lets through (T(T+1)/2 causal, W(W+1)/2 + (T - W) W windowed) and no router. NeMo
has no formula here for Gemma 2, Qwen2 or Mistral."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from flopcheck.published import LM, Exact, Formula, Found, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure
from flopcheck.reconciler import causes as K

SOURCE = "NVIDIA/NeMo nemo/utils/flops_formulas.py at 8cfedd72"


def llama(s: Structure) -> int:
    """llama2, llama3 and mixtral: B T L d^2 (12 + 12 G/H + 18 k F/d + 12 T/d x 0.5 + 6 V/(L d))."""
    d, L = s.d, s.L
    bracket = 12 + Fraction(12 * s.G, s.H) + Fraction(18 * s.k * s.F, d) + Fraction(6 * s.T, d)
    return int(s.B * s.T * L * d * d * (bracket + Fraction(6 * s.V, L * d)))


def qwen3(s: Structure) -> int:
    """6 B L T d^2 ((2 G/H + 1) + T/d + 1) + 6 B L T d 3 F k + 6 B T d V."""
    d, L, T = s.d, s.L, s.T
    attention = 6 * s.B * L * T * d * d * (Fraction(2 * s.G, s.H) + 1 + Fraction(T, d) + 1)
    return int(attention) + 6 * s.B * L * T * d * 3 * s.F * s.k + 6 * s.B * T * d * s.V


def deepseekv3(s: Structure) -> int:
    """B (6 (H (qk + rope) + H v) T^2 / 2 x L + 6 T (L mla + ffn) + 6 T V d); mla = d q_lora + q_lora (qk + rope)
    H + d rope + d kv_lora + kv_lora (qk + v) H + v H d; ffn = L_dense 3 d F_dense + L_moe (3 d F_shared + 3 d F k)."""
    H, d, T = s.H, s.d, s.T
    attention = 3 * (H * s.dh_qk + H * s.dh_v) * T * T * s.L
    mla = d * s.q_lora + s.q_lora * s.dh_qk * H + d * s.dh_rope + d * s.kv_lora + s.kv_lora * (s.dh_nope + s.dh_v) * H
    mla += s.dh_v * H * d
    ffn = s.L_dense * 3 * d * s.F_dense + s.L_moe * (3 * d * s.F_shared + 3 * d * s.F * s.k)
    return s.B * (attention + 6 * T * (s.L * mla + ffn) + 6 * T * s.V * d)


def needed_pairs(s: Structure, w: int) -> int:
    """2 x the pairs a head attends (NeMo's attention_mask_nz_elem, doubled to stay an integer): T (T + 1) causal,
    W (W + 1) + 2 (T - W) W in a window."""
    return w * (w + 1) + 2 * (s.T - w) * w if w else s.T * (s.T + 1)


def gpt_oss(s: Structure) -> int:
    """B (sum over layers 6 (T d dh (H + 2G) + T d dh H + H nz dh 2) + L 6 x 3 T k d F + 6 T d V)."""
    T, d = s.T, s.d
    linear = T * d * s.dh * (s.H + 2 * s.G) + T * d * s.dh * s.H
    attention = sum(6 * s.H * needed_pairs(s, w) * s.dh for w in s.layer_windows)
    return s.B * (6 * s.L * linear + attention + s.L * 6 * 3 * T * s.k * d * s.F + 6 * T * d * s.V)


FAMILY: dict[str, Callable[[Structure], int]] = {
    "llama": llama,
    "mixtral": llama,
    "qwen3": qwen3,
    "qwen3_moe": qwen3,
    "deepseek_v3": deepseekv3,
    "gpt_oss": gpt_oss,
}


def value(s: Structure) -> int:
    """The model family's NeMo formula (FAMILY)."""
    return FAMILY[s.family](s)


def causes(s: Structure, e: Exact) -> list[Found]:
    """Causal attention halved (GPT-OSS: counted at the pairs needed, causal and windowed); the router left out."""
    if s.family != "gpt_oss":
        return [*c.causal_halved(s, 3, e, "'0.5 if causal_self_attn'"), *c.router_out(s, 3)]
    per_layer = 3 * e.attention // s.L
    full = [w for w in s.layer_windows if not w]
    local = [w for w in s.layer_windows if w]
    causal = sum(6 * s.B * s.H * s.dh * needed_pairs(s, 0) for _ in full) - per_layer * len(full)
    window = sum(6 * s.B * s.H * s.dh * needed_pairs(s, w) for w in local) - per_layer * len(local)
    said = f"T (T + 1) / 2 pairs a head on {len(full)} full layers"
    return [
        *([(K.CAUSAL_AS_NEEDED, causal, said)] if causal else []),
        *(
            [(K.WINDOW_AS_NEEDED, window, f"W (W + 1) / 2 + (T - W) W pairs on {len(local)} windowed layers")]
            * bool(window)
        ),
        *c.router_out(s, 3),
    ]


def refuses(s: Structure) -> str:
    """NeMo has a formula for Llama 2/3, Mixtral, Qwen3, DeepSeek-V3 and GPT-OSS only."""
    return "" if s.family in FAMILY else f"nemo has no formula for {s.family or 'this model'} in {SOURCE}"


register(
    Formula(
        "nemo",
        "NeMo flops_formulas per model",
        SOURCE,
        training=True,
        per="per global batch",
        conventions="3 x forward; Llama/Mixtral/Qwen3 with q and o as d x d, causal halved; DeepSeek-V3 MLA without "
        "its norms, causal halved; GPT-OSS attention at the pairs needed (causal and windowed); no router; the "
        "logits counted; no embedding, norms or biases",
        kinds=(LM,),
        value=value,
        causes=causes,
        refuses=refuses,
    )
)

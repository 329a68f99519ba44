"""OLMo-core's `Transformer.num_flops_per_token` (src/olmo_core/nn/transformer/model.py at fa6c5014): the sum of
each block's and the LM head's own: `Attention.num_flops_per_token` (nn/attention/__init__.py) 6 x its parameters
(q, k, v, o with their biases, the q and k norms) + 12 H dh min(W, T) (a sliding window on its own layers);
`FeedForward` 6 x its parameters; `MoEBase` 6 x the router's + the shared MLP's + the experts' at top_k / E
(nn/moe/moe.py, parallel_mlp.py); `LMHead` 6 x its parameters (the final norm and V d). The blocks' norms are outside
every module it sums. OLMo-core has no multi-head latent attention."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, no_mla, per_norm, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure


def attention_params(s: Structure) -> int:
    """Every layer's attention module: L (d (q + 2 kv) + q d) + their biases + the q and k norms."""
    return s.L * (s.d * (s.q + 2 * s.kv) + s.q * s.d) + s.n_attn_bias + s.n_qk_norm


def ffn_params(s: Structure) -> int:
    """Every layer's feed-forward at the parameters a token runs: dense m d F; MoE the router d E + the shared MLP
    m d F_shared + the experts m d F k (top_k / E of E experts); the first L_dense layers dense at F_dense."""
    if not s.moe:
        return s.L * s.m * s.d * s.F
    moe = s.d * s.E + s.m * s.d * (s.F_shared + s.F * s.k)
    return s.L_dense * s.m * s.d * (s.F_dense or s.F) + s.L_moe * moe


def value(s: Structure) -> int:
    """D * (6 (attention + ffn + final norm + V d params) + 12 H dh sum over layers of min(W, T))."""
    t_eff = sum(min(w, s.T) if w else s.T for w in s.layer_windows)
    params = attention_params(s) + ffn_params(s) + per_norm(s) + s.V * s.d
    return s.n * (6 * params + 12 * s.q * t_eff)


def causes(s: Structure, e: Exact) -> list[Found]:
    """The final norm's and the q and k norms' weights, the attention biases as parameters; a window as min(W, T)
    on its own layers."""
    found = c.norms_in_n(s, 3, per_norm(s) + s.n_qk_norm) + c.biases_in_n(s, 3, s.n_attn_bias)
    if s.L_window:
        local = 12 * s.n * s.q * sum(c.windowed(s))
        found += c.window(s, 3, local, e, 2, "12 H dh min(W, T) per token")
    return found


register(
    Formula(
        "olmo",
        "OLMo-core num_flops_per_token",
        "allenai/OLMo-core src/olmo_core/nn/transformer/model.py at fa6c5014",
        training=True,
        per="per token",
        conventions="6 x attention, FFN and LM-head module parameters (the final norm, q and k norms and attention "
        "biases in, block norms out; routed experts at k/E, the router and shared experts in); attention dense at "
        "min(W, T) on each layer",
        kinds=(LM,),
        value=value,
        causes=causes,
        refuses=no_mla("olmo"),
    )
)

"""OLMo-core's `Transformer.num_flops_per_token` (src/olmo_core/nn/transformer/model.py at fa6c5014): 6 x each
attention, feed-forward and LM-head module's parameters plus 12 H dh min(W, T) per layer; the LM head's module holds
the final norm, the blocks' norms are outside every module it sums."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, per_norm, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure


def value(s: Structure) -> int:
    """D * (L * (6 attention params + 12 H dh T_eff + 6 ffn params) + 6 (final norm + V d)), T_eff = min(W, T)."""
    attention = s.d * (s.q + 2 * s.kv) + s.q * s.d
    ffn = s.m * s.d * s.F * s.k + (s.d * s.E if s.moe else 0)
    t_eff = min(s.W, s.T) if s.W else s.T
    return s.n * (s.L * (6 * attention + 12 * s.q * t_eff + 6 * ffn) + 6 * (per_norm(s) + s.V * s.d))


def causes(s: Structure, e: Exact) -> list[Found]:
    """The final norm's weights in the LM head's parameters; a window as min(W, T) per row."""
    found = c.norms_in_n(s, 3, per_norm(s))
    if s.W and s.W < s.T:
        found += c.window(s, 3, 12 * s.n * s.L * s.q * s.W, 3 * e.attention, "12 H dh min(W, T) per token per layer")
    return found


register(
    Formula(
        "olmo",
        "OLMo-core num_flops_per_token",
        "allenai/OLMo-core src/olmo_core/nn/transformer/model.py at fa6c5014",
        training=True,
        per="per token",
        conventions="6 x attention, FFN and LM-head module parameters (the final norm in, block norms out; routed "
        "experts at k/E); attention dense at min(W, T)",
        kinds=(LM,),
        value=value,
        causes=causes,
    )
)

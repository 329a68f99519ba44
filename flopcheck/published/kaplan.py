"""Kaplan et al. 2020, "Scaling Laws for Neural Language Models", section 2.1 and Table 1: C = 6ND with N the
non-embedding parameters, and its per-token forward 2N + 2 * n_layer * n_ctx * d_attn with N = 2 d L (2 d_attn + d_ff).
"""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, no_experts, no_mla, refusing, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure

SOURCE = "Kaplan et al. 2020 (arXiv:2001.08361), section 2.1, Table 1"


def non_embedding(s: Structure) -> int:
    """N: every parameter but the embedding tables and the LM head (its 'de-embedding')."""
    return s.n_all - s.n_embed - s.n_pos - s.n_head


def six_nd(s: Structure) -> int:
    """C = 6 * N * D, D = B * T tokens."""
    return 6 * non_embedding(s) * s.n


def six_nd_causes(s: Structure, e: Exact) -> list[Found]:
    """No attention, no LM head, norms and biases in N, every expert in N."""
    return [
        *c.no_attention(s, 3, e),
        *c.lm_head_out(s, 3),
        *c.norms_in_n(s, 3),
        *c.biases_in_n(s, 3),
        *c.all_experts(s, 3),
    ]


def forward(s: Structure) -> int:
    """C_forward = D * (2N + 2 * L * n_ctx * d_attn), N = 2 * d * L * (2 * d_attn + d_ff), d_attn = H * head_dim."""
    n = 2 * s.d * s.L * (2 * s.q + s.F)
    return s.n * (2 * n + 2 * s.L * s.T * s.q)


def forward_causes(s: Structure, e: Exact) -> list[Found]:
    """Its N takes K and V at d_attn and the MLP as two d x d_ff matrices, leaves out the LM head; its one 'mask'
    term is half of QK^T + attn@V."""
    return [
        *c.gqa_as_mha(s, 1),
        *c.glu_as_two(s, 1),
        *c.lm_head_out(s, 1),
        *c.causal_halved(s, 1, e, "one 'mask' term, 2 * n_ctx * d_attn per layer per token"),
    ]


register(
    Formula(
        "kaplan-6nd",
        "Kaplan 6ND",
        SOURCE,
        training=True,
        per="per token",
        conventions="6 x non-embedding parameters per token; no attention, no LM head; norms, biases, every expert "
        "in N",
        kinds=(LM,),
        value=six_nd,
        causes=six_nd_causes,
    )
)
register(
    Formula(
        "kaplan-forward",
        "Kaplan 2N + 2 n_layer n_ctx d_attn",
        SOURCE,
        training=False,
        per="per token",
        conventions="N = 2 d L (2 d_attn + d_ff): multi-head K and V, a two-matrix MLP, no LM head; attention as one "
        "'mask' term (half the dense)",
        kinds=(LM,),
        value=forward,
        causes=forward_causes,
        refuses=refusing(no_experts("kaplan-forward"), no_mla("kaplan-forward")),
    )
)

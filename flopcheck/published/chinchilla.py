"""Hoffmann et al. 2022 (Chinchilla), Appendix F: FLOPs per sequence term by term (embeddings as a one-hot matmul,
QKV, QK^T, softmax at 3 per score, attn@V, output projection, a two-matrix MLP, the final logits); training 3x."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, no_experts, no_mla, refusing, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure


def value(s: Structure) -> int:
    """3 * B * (2TVd + L * (6Tdq + 2T^2 q + 3HT^2 + 2T^2 q + 2Tqd + 4TdF) + 2TdV), q = key_size * H."""
    T, d, q = s.T, s.d, s.q
    layer = 6 * T * d * q + 2 * T * T * q + 3 * s.H * T * T + 2 * T * T * q + 2 * T * q * d + 2 * T * 2 * d * s.F
    return 3 * s.B * (2 * T * s.V * d + s.L * layer + 2 * T * d * s.V)


def causes(s: Structure, e: Exact) -> list[Found]:
    """The embedding as a matmul, K and V at H heads, a two-matrix MLP, softmax counted."""
    return [*c.embedding_in_n(s, 3, s.V * s.d), *c.gqa_as_mha(s, 3), *c.glu_as_two(s, 3), *c.softmax(s, 3)]


register(
    Formula(
        "chinchilla",
        "Chinchilla Appendix F",
        "Hoffmann et al. 2022 (arXiv:2203.15556), Appendix F",
        training=True,
        per="per sequence",
        conventions="embedding as a one-hot matmul, multi-head K and V, a two-matrix MLP, softmax at 3 per score, "
        "dense attention, the logits counted",
        kinds=(LM,),
        value=value,
        causes=causes,
        refuses=refusing(no_experts("chinchilla"), no_mla("chinchilla")),
    )
)

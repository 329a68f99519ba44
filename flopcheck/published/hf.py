"""Hugging Face transformers' `ModuleUtilsMixin.floating_point_ops(input_dict, exclude_embeddings=True)`
(src/transformers/modeling_utils.py): 6 x tokens x N, N the parameters less the nn.Embedding tables; "neglects the
quadratic dependency on the number of tokens" (Kaplan section 2.1)."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure


def value(s: Structure) -> int:
    """6 * B * T * (N - embedding tables); a tied LM head is the embedding's weight: not in N."""
    return 6 * s.n * (s.n_all - s.n_embed - s.n_pos)


def causes(s: Structure, e: Exact) -> list[Found]:
    """No attention; norms, biases and every expert in N; a tied LM head left out."""
    return [
        *c.no_attention(s, 3, e),
        *c.norms_in_n(s, 3),
        *c.biases_in_n(s, 3),
        *c.all_experts(s, 3),
        *(c.lm_head_out(s, 3) if s.tied else []),
    ]


register(
    Formula(
        "hf",
        "transformers floating_point_ops",
        "huggingface/transformers src/transformers/modeling_utils.py ModuleUtilsMixin.floating_point_ops",
        training=True,
        per="per batch",
        conventions="6 x tokens x non-embedding parameters (norms, biases, every expert in); no attention; a tied "
        "LM head not counted",
        kinds=(LM,),
        value=value,
        causes=causes,
    )
)

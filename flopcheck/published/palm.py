"""Chowdhery et al. 2022 (PaLM), Appendix B: model FLOPs per token 6N + 12 * L * H * Q * T (N every parameter,
attention dense); the MFU numerator nanoGPT's and torchtitan's formulas derive from."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, no_mla, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure


def value(s: Structure) -> int:
    """D * (6N + 12 * L * H * Q * T), N = every parameter, Q = head dim."""
    return s.n * (6 * s.n_all + 12 * s.L * s.H * s.dh * s.T)


def causes(s: Structure, e: Exact) -> list[Found]:
    """Embedding tables, norms, biases and every expert in N (a tied embedding is the LM head: not extra)."""
    return [
        *c.embedding_in_n(s, 3, s.n_pos + (0 if s.tied else s.n_embed)),
        *c.norms_in_n(s, 3),
        *c.biases_in_n(s, 3),
        *c.all_experts(s, 3),
    ]


register(
    Formula(
        "palm",
        "PaLM 6N + 12LHQT",
        "Chowdhery et al. 2022 (arXiv:2204.02311), Appendix B",
        training=True,
        per="per token",
        conventions="N = every parameter (embeddings, norms, biases, every expert); attention dense (causal not "
        "halved)",
        kinds=(LM,),
        value=value,
        causes=causes,
        refuses=no_mla("palm"),
    )
)

"""The 6N readings a figure is often made with, no attention term or a dense one: GPT-3's compute table (Brown et al.
2020, arXiv:2005.14165, Appendix D, Table D.1: 6 x total parameters x training tokens, "we ignore the attention
operation"), "6N alone" (the parameters a token runs, as an MFU is often quoted: torchtitan's N with no attention
term), and torchtitan's formula before PR #280 (2024-04-26, "exclude embedding in MFU computation"): 6 x every
parameter + 12 L H (d / H) T, attention dense."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, no_experts, no_mla, refusing, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure
from flopcheck.published.torchtitan import n_matmul


def all_parameters(s: Structure) -> int:
    """6 * D * N, N every parameter (embeddings, norms, biases, every expert)."""
    return 6 * s.n * s.n_all


def all_causes(s: Structure, e: Exact) -> list[Found]:
    """No attention; the embedding tables, norms, biases and every expert in N (a tied embedding is the LM head)."""
    return [
        *c.no_attention(s, 3, e),
        *c.embedding_in_n(s, 3, s.n_pos + (0 if s.tied else s.n_embed)),
        *c.norms_in_n(s, 3),
        *c.biases_in_n(s, 3),
        *c.all_experts(s, 3),
    ]


def active(s: Structure) -> int:
    """6 * D * N, N the parameters a token runs: less the embedding tables (a tied one kept: the LM head), routed
    experts at k/E."""
    return 6 * s.n * n_matmul(s)


def active_causes(s: Structure, e: Exact) -> list[Found]:
    """No attention; norms and biases in N."""
    return [*c.no_attention(s, 3, e), *c.norms_in_n(s, 3), *c.biases_in_n(s, 3)]


def torchtitan_2024(s: Structure) -> int:
    """D * (6 N + 12 * L * H * (d // H) * T), N every parameter."""
    return s.n * (6 * s.n_all + 12 * s.L * s.H * (s.d // s.H) * s.T)


def torchtitan_2024_causes(s: Structure, e: Exact) -> list[Found]:
    """The embedding tables, norms and biases in N."""
    return [*c.embedding_in_n(s, 3, s.n_pos + (0 if s.tied else s.n_embed)), *c.norms_in_n(s, 3), *c.biases_in_n(s, 3)]


register(
    Formula(
        "gpt3-6n",
        "GPT-3 compute table: 6 x all parameters",
        "Brown et al. 2020 (arXiv:2005.14165), Appendix D, Table D.1",
        training=True,
        per="per token",
        conventions="6 x every parameter (embeddings, norms, biases, every expert) per token; no attention",
        kinds=(LM,),
        value=all_parameters,
        causes=all_causes,
    )
)
register(
    Formula(
        "6n-active",
        "6N alone: the parameters a token runs, no attention",
        "the MFU convention 6 N_active per token (torchtitan's N, torchtitan/models/utils.py at b5bcd76c, with no "
        "attention term)",
        training=True,
        per="per token",
        conventions="6 x the parameters less the embedding tables (a tied one kept), routed experts at k/E (norms, "
        "biases in); no attention",
        kinds=(LM,),
        value=active,
        causes=active_causes,
    )
)
register(
    Formula(
        "torchtitan-2024",
        "torchtitan get_num_flop_per_token before PR #280",
        "pytorch/torchtitan train.py get_num_flop_per_token(get_num_params(model)) before PR #280 (2024-04-26)",
        training=True,
        per="per token",
        conventions="6 x every parameter (embeddings in) + 12 L H (d // H) T, attention dense; Llama only: no experts, "
        "no MLA",
        kinds=(LM,),
        value=torchtitan_2024,
        causes=torchtitan_2024_causes,
        refuses=refusing(no_experts("torchtitan-2024"), no_mla("torchtitan-2024")),
    )
)

"""torchtitan's `get_dense_model_nparams_and_flops` / `get_moe_model_nparams_and_flops` (torchtitan/models/utils.py
at b5bcd76c): 6 N + 6 L H head_dims T per token, N every parameter but the nn.Embedding tables (kept when tied), the
routed experts at k/E (router and shared experts in); "we follow the convention and do not account for sparsity in
causal attention", every layer with attention at the full T. head_dims is "the sum of qk and v head dimensions",
per model: llama3 2 (dim // n_heads) (torchtitan/models/llama3/model.py), qwen3 and gpt_oss 2 head_dim
(qwen3/model.py, gpt_oss/model.py), deepseek_v3 qk_nope + qk_rope + v (deepseek_v3/model.py)."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure


def n_matmul(s: Structure) -> int:
    """N: every parameter less the embedding tables (a tied one is the LM head: kept), the routed experts at k/E."""
    n = s.n_all - s.n_pos - (0 if s.tied else s.n_embed)
    return n - s.n_experts + s.n_experts * s.k // s.E if s.moe else n


def head_dims(s: Structure) -> int:
    """The sum of the qk and v head dims: nope + rope + v with MLA, else 2 head_dim (2 (d // H) on Llama)."""
    return s.dh_qk + s.dh_v if s.mla else 2 * s.dh


def value(s: Structure) -> int:
    """D * (6N + 6 * L * H * head_dims * T)."""
    return s.n * (6 * n_matmul(s) + 6 * s.L * s.H * head_dims(s) * s.T)


def causes(s: Structure, e: Exact) -> list[Found]:
    """Norm weights and biases in N."""
    return [*c.norms_in_n(s, 3), *c.biases_in_n(s, 3)]


register(
    Formula(
        "torchtitan",
        "torchtitan get_nparams_and_flops",
        "pytorch/torchtitan torchtitan/models/utils.py at b5bcd76c (6N + 12LHQT since PR #280)",
        training=True,
        per="per token",
        conventions="N = parameters less embedding tables (norms, biases in); routed experts at k/E; attention dense "
        "(causal not halved, no window) at the model's qk + v head dims; flash's recompute not counted",
        kinds=(LM,),
        value=value,
        causes=causes,
    )
)

"""torchtitan's `get_dense_model_nparams_and_flops` / `get_moe_model_nparams_and_flops` (torchtitan/models/utils.py
at b5bcd76c): 6 N + 12 L H (d/H) T per token, N every parameter but the nn.Embedding tables (kept when tied), the
routed experts at k/E; "we follow the convention and do not account for sparsity in causal attention"."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure


def n_matmul(s: Structure) -> int:
    """N: every parameter less the embedding tables (a tied one is the LM head: kept), the routed experts at k/E."""
    n = s.n_all - s.n_pos - (0 if s.tied else s.n_embed)
    return n - s.n_experts + s.n_experts * s.k // s.E if s.moe else n


def value(s: Structure) -> int:
    """D * (6N + 12 * L * H * (d // H) * T)."""
    return s.n * (6 * n_matmul(s) + 6 * s.L * s.H * 2 * (s.d // s.H) * s.T)


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
        "(causal not halved); flash's recompute not counted",
        kinds=(LM,),
        value=value,
        causes=causes,
    )
)

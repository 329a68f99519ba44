"""nanoGPT's `GPT.estimate_mfu` (karpathy/nanoGPT model.py at 3adf61e1): PaLM's 6N + 12 L H Q T per token with
N every parameter but the position embedding and T the model's block_size, not the batch's sequence length."""

from __future__ import annotations

from flopcheck.published import LM, Exact, Formula, Found, register
from flopcheck.published import common as c
from flopcheck.published.structure import Structure
from flopcheck.reconciler import causes as K


def block(s: Structure) -> int:
    """block_size: the model's context length (T when the config has none)."""
    return s.context or s.T


def value(s: Structure) -> int:
    """D * (6N + 12 * L * H * (d // H) * block_size), N = every parameter less the position embedding."""
    return s.n * (6 * (s.n_all - s.n_pos) + 12 * s.L * s.H * (s.d // s.H) * block(s))


def causes(s: Structure, e: Exact) -> list[Found]:
    """An untied token embedding, norms, biases and every expert in N; attention at block_size."""
    at = 12 * s.n * s.L * s.H * (s.d // s.H) * (block(s) - s.T)
    context = [(K.CONTEXT_NOT_SEQUENCE, at, f"attention at block_size {block(s):,}, the step's T is {s.T:,}")]
    return [
        *c.embedding_in_n(s, 3, 0 if s.tied else s.n_embed),
        *c.norms_in_n(s, 3),
        *c.biases_in_n(s, 3),
        *c.all_experts(s, 3),
        *(context if at else []),
    ]


register(
    Formula(
        "nanogpt",
        "nanoGPT estimate_mfu",
        "karpathy/nanoGPT model.py GPT.estimate_mfu at 3adf61e1",
        training=True,
        per="per token (x block_size per sequence)",
        conventions="N = parameters less the position embedding (an untied token embedding, norms, biases in); "
        "attention dense at block_size",
        kinds=(LM,),
        value=value,
        causes=causes,
    )
)
